"""How every benchmark hands its figures over: JSON or an aligned table on stdout, PNG charts."""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

__all__ = ["print_result", "save_chart"]


def print_result(result: Mapping[str, Any], *, as_json: bool) -> None:
    """The result as indented JSON (`--json`) or one `key  value` line per figure."""
    if as_json:
        sys.stdout.write(json.dumps(result, indent=2) + "\n")
        return
    width = max((len(k) for k in result), default=0)
    sys.stdout.write("".join(f"{key:<{width}}  {value}\n" for key, value in result.items()))


def save_chart(fig: Any, ax: Any, path: Path) -> Path:
    """Grid, legend, tight layout, write the PNG (parents created) and free the figure."""
    from matplotlib import pyplot as plt

    ax.grid(alpha=0.3)
    ax.legend(loc="best")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    plt.close(fig)
    return path
