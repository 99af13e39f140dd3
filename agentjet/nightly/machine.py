"""Which machine a sample comes from, and with which packages: history is only comparable within one machine.

The fingerprint hashes what makes timings comparable (CPU model and count, memory, OS, Python,
torch threads), not the host name: a rebuilt container on the same hardware keeps its history.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import subprocess
import sys
from pathlib import Path
from typing import Any

__all__ = ["fingerprint", "installed_packages", "machine_info"]


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _memory_gib() -> int:
    try:
        pages, size = os.sysconf("SC_PHYS_PAGES"), os.sysconf("SC_PAGE_SIZE")
        return round(pages * size / 1024**3)
    except (ValueError, OSError):
        return 0


def machine_info() -> dict[str, Any]:
    return {
        "cpu": _cpu_model(),
        "cpus": os.cpu_count() or 1,
        "memory_gib": _memory_gib(),
        "os": f"{platform.system()} {platform.release().split('-')[0]}",
        "arch": platform.machine(),
        "python": platform.python_version(),
    }


def fingerprint(info: dict[str, Any] | None = None) -> str:
    """A short stable hash of `machine_info()`."""
    text = json.dumps(info or machine_info(), sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:12]


_LIST_PACKAGES = (
    "import importlib.metadata as m, json; "
    "print(json.dumps({d.metadata['Name']: d.version for d in m.distributions() if d.metadata['Name']}))"
)


def installed_packages(python: str | Path = sys.executable) -> dict[str, str]:
    """Distribution name -> version in the environment of `python` (empty if it cannot say)."""
    try:
        done = subprocess.run([str(python), "-c", _LIST_PACKAGES], capture_output=True, text=True, timeout=60)
        return (
            dict(sorted(json.loads(done.stdout).items(), key=lambda kv: kv[0].lower())) if done.returncode == 0 else {}
        )
    except (OSError, ValueError, subprocess.TimeoutExpired):
        return {}
