"""Terminal view of one swarm server's GET /swarm/status, polled live for `agentjet server status`.

`render_status` is pure (a status dict in, a rich renderable out) so it is tested without a
server; `watch_status` is the loop around it, polling through a `SwarmClient`.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from typing import Any, Literal

from rich.console import Console, Group, RenderableType
from rich.live import Live
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from agentjet.core.errors import AgentJetError, EngineNotReady, ServerOffline
from agentjet.core.sdk.client import SwarmClient

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
_GROUPS_SHOWN = 8  # task groups listed in the pool section; the rest are counted
_IDS_SHOWN = 6  # client ids listed per line
_LABEL_CHARS = 24
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
        ("training", _training_line(status.get("training"))),
    ]


def _training_line(training: Any) -> Text:
    """`ready · last step 12 (4s ago)`, or `FAILED: <why>`; refusals and quarantine when there were any."""
    if not isinstance(training, Mapping):
        return Text("-")
    state = str(training.get("state", "unknown"))
    style = "bold red" if state == "failed" else ("green" if state == "ready" else "yellow")
    parts = [state.upper() if state == "failed" else state]
    if training.get("last_step") is not None:
        parts.append(f"last step {_format_value(training.get('last_step'))}")
    for key, label in (("refused_steps", "refused steps"), ("quarantined_episodes", "quarantined episodes"),
                       ("failed_updates", "failed updates")):  # fmt: skip
        if isinstance(training.get(key), int) and training[key]:
            parts.append(f"{training[key]} {label}")
    if training.get("last_error"):
        parts.append(f"last error: {_clip(str(training['last_error']), 120)}")
    return Text(" · ".join(parts), style=style)


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _reward(group: Mapping[str, Any]) -> str:
    mean, std = group.get("reward_mean"), group.get("reward_std")
    if not isinstance(mean, int | float) or not isinstance(std, int | float):
        return "-"
    return f"{mean:.2f} ± {std:.2f}"


def _add_group_rows(table: Table, groups: list[Any], tasks: Any) -> None:
    """One line per pooled task group, oldest first: episodes, ✓ when complete, reward mean ± std."""
    total = tasks if isinstance(tasks, int) else len(groups)
    table.add_row("  groups", f"{total:,} task(s), oldest first (✓ = complete group)")
    shown = [g for g in groups if isinstance(g, Mapping)][:_GROUPS_SHOWN]
    for group in shown:
        mark = " ✓" if group.get("complete") else ""
        line = f"{_format_value(group.get('episodes'))} ep{mark} · reward {_reward(group)}"
        table.add_row(Text("    " + _clip(str(group.get("task_id")), _LABEL_CHARS)), line)
    if total > len(shown):
        table.add_row("    …", f"+{total - len(shown):,} more")


def _some_ids(ids: Any, count: Any) -> str:
    listed = [str(i) for i in ids] if isinstance(ids, list) else []
    total = count if isinstance(count, int) else len(listed)
    shown = [_clip(i, _LABEL_CHARS) for i in listed[:_IDS_SHOWN]]
    more = f" +{total - len(shown)}" if total > len(shown) else ""
    return f"{total} ({', '.join(shown)}{more})" if shown else str(total)


def _clients_line(clients: Mapping[str, Any]) -> Text:
    """`2 active (a, b) · 1 asked for an update (a)`: who C4/C5 count and who they wait for."""
    active = _some_ids(clients.get("active_ids"), clients.get("active"))
    requested = _some_ids(clients.get("requested_ids"), clients.get("requested"))
    return Text(f"{active} active · {requested} asked for an update")


def _add_pool_section(table: Table, pool: Any) -> None:
    """The pool's counters, a compact line per task group and one for the clients."""
    if not isinstance(pool, Mapping) or not pool:
        return
    table.add_row(Text("pool", style="bold magenta"), "")
    for key, value in pool.items():
        if key == "groups" and isinstance(value, list):
            _add_group_rows(table, value, pool.get("tasks"))
        elif key == "clients" and isinstance(value, Mapping):
            table.add_row("  clients", _clients_line(value))
        elif key != "tasks" or not isinstance(pool.get("groups"), list):  # tasks heads the groups
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
    _add_pool_section(table, status.get("pool"))
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


def _poll_each(
    client: SwarmClient, interval_s: float, polls: int | None, show: Callable[[RenderableType], None]
) -> int:
    """Poll until `polls` (or forever), handing each view to `show`; 1 when the server refuses."""
    done = 0
    while polls is None or done < polls:
        view, outcome = _poll(client)
        if outcome == "unreachable":
            view = Group(view, Text(f"retrying every {interval_s:g}s; Ctrl-C to quit", style="dim"))
        show(view)
        if outcome == "failed":
            return 1
        done += 1
        if polls is None or done < polls:
            time.sleep(interval_s)
    return 0


def _watch_live(client: SwarmClient, interval_s: float, console: Console, polls: int | None) -> int:
    if not console.is_terminal:  # rich's Live draws only its last frame there: each poll is printed as it comes

        def show_next(view: RenderableType) -> None:
            console.print(view)
            console.file.flush()

        return _poll_each(client, interval_s, polls, show_next)
    with Live(console=console, auto_refresh=False, transient=False) as live:
        return _poll_each(client, interval_s, polls, lambda view: live.update(view, refresh=True))


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
