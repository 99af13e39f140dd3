"""AgentJet: an open platform for agentic reinforcement learning of LLMs.

The public API is the core's (`agentjet.core.__all__`), loaded on first use.

a3r/      A3R campaigns (issue: "A3R campaigns"): Optuna studies over pools of swarm servers.
bench/    Benchmarks behind `agentjet bench`: each measures one speed claim against real servers on loopback.
chat/     `agentjet chat`: a web page on loopback to talk to policies and inspect what servers captured.
cli/      The `agentjet` command line (Typer). Only this package installs log handlers and prints.
core/     The swarm training core. Public API only: what vibe, a3r and users may import.
deploy/   Deployment: the swarm server as a container image built without a registry, and a compose example.
llm/      One chat call to an LLM through litellm (a provider model name or an OpenAI-compatible URL): used by vibe
          and A3R alike.
nightly/  Nightly regression benchmarks (`agentjet nightly`): speed and training quality per commit, judged over
          a history.
sandbox/  Run generated and untrusted code where it cannot harm the host, leak the token or reach a network.
tasks/    Task families, client side, and the rounds that play them against servers.
vibe/     Vibe training: a sentence -> a planned, generated, sandbox-validated, red-teamed, watched training run and
          a report.
"""

from __future__ import annotations

from importlib import metadata
from typing import TYPE_CHECKING, Any

from agentjet import core as _core
from agentjet.core import __all__

try:  # the installed distribution's version (pyproject.toml's), also for an editable install
    __version__ = metadata.version("agentjet")
except metadata.PackageNotFoundError:  # a bare checkout on PYTHONPATH: say so rather than guess
    __version__ = "0+unknown"

if TYPE_CHECKING:
    from agentjet.core import *  # noqa: F403


def __getattr__(name: str) -> Any:
    if name not in __all__:
        raise AttributeError(f"module 'agentjet' has no attribute {name!r}")
    return getattr(_core, name)


def __dir__() -> list[str]:
    return sorted(__all__)
