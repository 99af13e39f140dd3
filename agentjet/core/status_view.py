"""Terminal view of one swarm server's GET /swarm/status, polled live for `agentjet server status`.

`render_status` is pure (a status dict in, a rich renderable out) so it is tested without a
server; `watch_status` is the loop around it, polling through a `SwarmClient`.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from typing import Any, Literal

from rich.console import Console, Group, RenderableType
from rich.live import Live
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from agentjet.core.client import SwarmClient
from agentjet.core.errors import AgentJetError, EngineNotReady, ServerOffline

__all__ = ["render_status", "watch_status"]

log = logging.getLogger(__name__)

_STATE_STYLES = {
    "rolling": "bold green",
    "draining": "bold yellow",
    "updating": "bold yellow",
    "booting": "bold blue",
    "offline": "bold red",
}
_EPISODE_COUNTS = ("in_flight", "finished", "aborted", "reclaimed")
_Outcome = Literal["shown", "unreachable", "failed"]


def _format_value(value: Any) -> str:
    """One cell: thousands separators for counts, 2-4 significant places for rates and losses."""
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return f"{value:,.2f}" if abs(value) >= 1 or value == 0 else f"{value:.4g}"
    if isinstance(value, Mapping):
        return ", ".join(f"{k}={_format_value(v)}" for k, v in value.items())
    if isinstance(value, list | tuple):
        return ", ".join(_format_value(v) for v in value)
    return str(value)


def _format_duration(seconds: Any) -> str:
    if not isinstance(seconds, int | float) or isinstance(seconds, bool):
        return "-"
    whole = int(seconds)
    days, rest = divmod(whole, 86_400)
    hours, rest = divmod(rest, 3_600)
    minutes, secs = divmod(rest, 60)
    if days:
        return f"{days}d {hours:02d}h {minutes:02d}m"
    if hours:
        return f"{hours}h {minutes:02d}m {secs:02d}s"
    if minutes:
        return f"{minutes}m {secs:02d}s"
    return f"{seconds:.1f}s"


def _rate(status: Mapping[str, Any], per_s: str, total: str) -> str:
    rate = f"{_format_value(status.get(per_s))}/s"
    return f"{rate} ({_format_value(status.get(total))} total)" if total in status else rate


def _episode_counts(episodes: Any) -> str:
    if not isinstance(episodes, Mapping):
        return "-"
    parts = [f"{_format_value(episodes.get(k))} {k.replace('_', ' ')}" for k in _EPISODE_COUNTS]
    return " · ".join(parts)


def _main_rows(status: Mapping[str, Any]) -> list[tuple[str, RenderableType]]:
    state = str(status.get("state", "unknown"))
    return [
        ("state", Text(state, style=_STATE_STYLES.get(state, "bold"))),
        ("model", _format_value(status.get("model"))),
        ("policy version", _format_value(status.get("policy_version"))),
        ("step", _format_value(status.get("step"))),
        ("episodes", _episode_counts(status.get("episodes"))),
        ("active clients", _format_value(status.get("active_clients"))),
        ("calls", _rate(status, "calls_per_s", "calls_total")),
        ("tokens", _rate(status, "tokens_per_s", "tokens_total")),
        ("uptime", _format_duration(status.get("uptime_s"))),
    ]


def _add_section(table: Table, title: str, values: Any) -> None:
    """Extra rows for an open-ended dict (pool statistics, the last training step's metrics)."""
    if not isinstance(values, Mapping) or not values:
        return
    table.add_row(Text(title, style="bold magenta"), "")
    for key, value in values.items():
        table.add_row(f"  {key}", _format_value(value))


def _plus_minus(metrics: Mapping[str, Any], mean: str, std: str) -> str:
    if metrics.get(std) is None:
        return _format_value(metrics.get(mean))
    return f"{_format_value(metrics.get(mean))} ± {_format_value(metrics.get(std))}"


def _metric_rows(metrics: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The last step at a glance; every value is in metrics.jsonl (names in docs/metrics.md)."""
    reward = _plus_minus(metrics, "reward_mean", "reward_std")
    if metrics.get("group_reward_std") is not None:
        reward += f" (within-group std {_format_value(metrics['group_reward_std'])})"
    eval_reward = _plus_minus(metrics, "eval_reward_mean", "eval_reward_std")
    if "eval_episodes" in metrics:
        eval_reward += f" ({_format_value(metrics['eval_episodes'])} episodes)"
    drifts = {k.removeprefix("drift_"): v for k, v in metrics.items() if k.startswith("drift_") and v}
    merge = _format_value(metrics.get("merge_ratio")) + (f" · drifts {_format_value(drifts)}" if drifts else "")
    return [
        ("reward", reward),
        ("eval reward", eval_reward),
        ("loss", _format_value(metrics.get("loss"))),
        ("kl", _format_value(metrics.get("kl"))),
        ("clip fraction", _format_value(metrics.get("clip_fraction"))),
        ("tokens trained", _format_value(metrics.get("tokens_trained"))),
        ("merge ratio", merge),
        ("step time", _format_duration(metrics.get("step_time_s"))),
    ]


def _add_metrics(table: Table, metrics: Any) -> None:
    if not isinstance(metrics, Mapping) or not metrics:
        return
    table.add_row(Text("last step", style="bold magenta"), _format_value(metrics.get("step")))
    for label, value in _metric_rows(metrics):
        table.add_row(f"  {label}", value)


def render_status(status: Mapping[str, Any], *, url: str | None = None) -> RenderableType:
    """A panel of the server's state, counters and rates, plus `pool` and the last step's metrics."""
    table = Table.grid(padding=(0, 2))
    table.add_column(style="cyan", no_wrap=True)
    table.add_column()
    for label, value in _main_rows(status):
        table.add_row(label, value)
    _add_section(table, "pool", status.get("pool"))
    _add_metrics(table, status.get("latest_metrics"))
    title = f"AgentJet server {url}" if url else "AgentJet server"
    return Panel(table, title=title, title_align="left", expand=False)


def _unreachable_text(url: str, exc: ServerOffline) -> str:
    cause = exc.__cause__
    reason = (str(cause) or type(cause).__name__) if cause is not None else str(exc)
    return f"server at {url} is not reachable ({reason})"


def _poll(client: SwarmClient) -> tuple[RenderableType, _Outcome]:
    """One status request as something to show, and whether waiting could change the answer."""
    try:
        return render_status(client.status(), url=client.url), "shown"
    except ServerOffline as exc:
        log.info("status poll failed: %s", exc)
        return Text(_unreachable_text(client.url, exc), style="bold red"), "unreachable"
    except EngineNotReady as exc:
        return Text(f"server at {client.url} is not ready: {exc}", style="yellow"), "unreachable"
    except AgentJetError as exc:  # a bad token or a foreign server: polling again will not help
        refused = f"server at {client.url} refused the status request: {exc}"
        return Text(refused, style="red"), "failed"


def _watch_live(client: SwarmClient, interval_s: float, console: Console, polls: int | None) -> int:
    done = 0
    with Live(console=console, auto_refresh=False, transient=False) as live:
        while polls is None or done < polls:
            view, outcome = _poll(client)
            if outcome == "unreachable":
                hint = Text(f"retrying every {interval_s:g}s; Ctrl-C to quit", style="dim")
                view = Group(view, hint)
            live.update(view, refresh=True)
            if outcome == "failed":
                return 1
            done += 1
            if polls is None or done < polls:
                time.sleep(interval_s)
    return 0


def watch_status(
    client: SwarmClient,
    *,
    interval_s: float = 1.0,
    once: bool = False,
    console: Console | None = None,
    polls: int | None = None,
) -> int:
    """Show the server's status once, or live until Ctrl-C (or `polls` polls); returns the exit
    code: 1 when `once` finds the server unreachable or refusing, or a live view is refused."""
    console = console or Console()
    if once:
        view, outcome = _poll(client)
        console.print(view)
        return 0 if outcome == "shown" else 1
    try:
        return _watch_live(client, interval_s, console, polls)
    except KeyboardInterrupt:
        return 0
