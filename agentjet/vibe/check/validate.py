"""Validate a generated workspace in a sandbox before any training: its tests, its data, dry and real episodes.

Four checks, in order, each `ok` or failed with the log tail a repair prompt needs:

1. `tests`: `python3 tests/test_task.py` in the sandbox;
2. `dataset`: the JSONL files against the contract (read on the host: they are data, never run);
3. `dry_run`: a few eval episodes of the client, in the sandbox, against a scripted policy
   (`dry_policy.plausible_reply` behind a real swarm server, reached through the swarm bridge):
   every episode must finish with a finite reward in `REWARD_RANGE`;
4. `real_run`: the same against a swarm server serving the real policy model (given, or started
   here for the check), `kind="eval"` so nothing is trained.

The dry and real runs are skipped when an earlier check failed: they would fail the same way, and
the real model's time is the dearest.
"""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from agentjet.sandbox import Limits, RunResult, Sandbox, SandboxError, SwarmAccess
from agentjet.tasks.play.sandboxed_run import PYTHON_ENV, port_of
from agentjet.vibe.check.dataset_check import check_rows
from agentjet.vibe.check.episode_probe import EPISODE_MARK, LOAD_ERROR_MARK
from agentjet.vibe.check.model_server import model_server
from agentjet.vibe.errors import VibeError
from agentjet.vibe.generate.contract import DATA_FILES, REWARD_RANGE, TESTS, workspace_files
from agentjet.vibe.plan.spec import TaskSpec
from agentjet.vibe.workspace import Workspace

__all__ = ["Check", "Report", "ValidateOptions", "log_tail", "open_sandbox", "validate"]

PROBE_FILE = "_vibe_probe.py"  # the episode probe's name inside the sandbox work dir
_PROBE_SOURCE = Path(__file__).resolve().parent / "episode_probe.py"
_TAIL_LINES, _TAIL_CHARS = 40, 4000


@dataclass(frozen=True)
class ValidateOptions:
    dry_episodes: int = 4
    real_episodes: int = 2
    real: bool = True  # False: stop after the dry run (e.g. the caller trains at once and watches)
    dry_model: str = "tiny"  # the tokenizer/chat template the scripted policy's prompts are rendered with
    seed: int = 0
    tests_timeout_s: float = 180.0
    dry_timeout_s: float = 300.0
    real_timeout_s: float = 900.0


@dataclass(frozen=True)
class Check:
    """One check: whether it passed, one line saying how, and the log tail a repair needs."""

    name: str
    ok: bool
    summary: str
    log_tail: str = ""
    seconds: float = 0.0
    skipped: bool = False
    details: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Report:
    """All checks of one validation, in order. JSON-able through `to_dict` (graph state)."""

    checks: tuple[Check, ...]
    backend: str

    @property
    def ok(self) -> bool:
        return all(check.ok for check in self.checks)

    @property
    def failures(self) -> list[Check]:
        return [check for check in self.checks if not check.ok and not check.skipped]

    def logs(self) -> str:
        """The failed checks' summaries and log tails, as a repair prompt quotes them."""
        return "\n\n".join(f"[{c.name}] {c.summary}\n{c.log_tail}".rstrip() for c in self.failures)

    def to_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, "backend": self.backend, "checks": [asdict(check) for check in self.checks]}


def log_tail(text: str, lines: int = _TAIL_LINES, chars: int = _TAIL_CHARS) -> str:
    """The end of a log: its last `lines` lines, at most `chars` characters."""
    tail = "\n".join(text.strip().splitlines()[-lines:])
    return tail[-chars:]


def open_sandbox(backend: str = "auto") -> Sandbox:
    """A checked sandbox, or a VibeError that says how to find out why there is none."""
    try:
        return Sandbox(backend)
    except SandboxError as exc:
        raise VibeError(
            f"generated code only runs in a sandbox and none works here: {exc}. "
            "Run `agentjet sandbox doctor` to see what each backend needs."
        ) from exc


def validate(
    workspace: Workspace | Path,
    spec: TaskSpec,
    *,
    sandbox: Sandbox | None = None,
    server: SwarmAccess | Callable[[], SwarmAccess] | None = None,
    options: ValidateOptions | None = None,
    on_check: Callable[[Check], None] | None = None,
) -> Report:
    """Run the checks; a failed check is in the report (never raised). VibeError only when no sandbox works.

    `server` serves the real policy for check 4 (reused, e.g. the run's own server), or is a callable that
    waits for one still starting (a VibeError from it fails the check); without one a server for
    `spec.model` is started for the check and stopped after. `on_check` hears each check as
    it ends (progress: the real episodes take most of a minute on a CPU)."""
    options = options or ValidateOptions()
    root = workspace.path if isinstance(workspace, Workspace) else Path(workspace).resolve()
    sandbox = sandbox or open_sandbox()
    checks: list[Check] = []

    def add(check: Check) -> None:
        checks.append(check)
        if on_check is not None:
            on_check(check)

    add(_timed(lambda: _tests(sandbox, root, options)))
    add(_timed(lambda: _dataset(root, spec)))
    if all(check.ok for check in checks):
        add(_timed(lambda: _dry_run(sandbox, root, options)))
    else:
        add(Check("dry_run", False, "skipped: an earlier check failed", skipped=True))
    if not options.real:
        add(Check("real_run", True, "skipped: not asked for", skipped=True))
    elif all(check.ok for check in checks):
        add(_timed(lambda: _real_run(sandbox, root, spec, server, options)))
    else:
        add(Check("real_run", False, "skipped: an earlier check failed", skipped=True))
    return Report(tuple(checks), sandbox.name)


def _timed(run: Callable[[], Check]) -> Check:
    started = time.monotonic()
    check = run()
    return Check(**{**asdict(check), "seconds": round(time.monotonic() - started, 2)})


def _stopped(result: RunResult) -> str:
    """How a sandboxed run ended, when not by itself with status 0."""
    how = f"exit {result.exit_code}" if result.stopped_by == "exited" else f"stopped by {result.stopped_by}"
    return how + (f" ({result.detail})" if result.detail else "")


def _tests(sandbox: Sandbox, root: Path, options: ValidateOptions) -> Check:
    if not (root / TESTS).is_file():
        return Check("tests", False, f"{TESTS} is missing", f"the workspace has no {TESTS}")
    limits = Limits(memory_bytes=1024**3, timeout_s=options.tests_timeout_s)
    result = sandbox.run(f"python3 {TESTS}", files=workspace_files(root), limits=limits, env=PYTHON_ENV)
    output = "\n".join(part for part in (result.stdout.strip(), result.stderr.strip()) if part)
    last = output.splitlines()[-1] if output else "(no output)"
    if result.ok:
        return Check("tests", True, last)
    failed = "\n".join(line for line in result.stdout.splitlines() if line.startswith("FAIL"))
    return Check("tests", False, f"{TESTS} failed: {_stopped(result)}; {failed or last}", log_tail(output, 60, 6000))


def _dataset(root: Path, spec: TaskSpec) -> Check:
    problems: list[str] = []
    counts: dict[str, int] = {}
    ids: dict[str, set[str]] = {}
    for split, relpath in DATA_FILES.items():
        path = root / relpath
        if not path.is_file():
            problems.append(f"{relpath} is missing (run dataset.py)")
            continue
        found, split_ids, split_problems = check_rows(path.read_text(errors="replace"), relpath)
        counts[split], ids[split] = found, split_ids
        problems += split_problems
    planned = {"train": spec.dataset.train_items, "eval": spec.dataset.eval_items}
    problems += [
        f"{DATA_FILES[s]} has {n} items, the plan asks for {planned[s]}" for s, n in counts.items() if n != planned[s]
    ]
    shared = ids.get("train", set()) & ids.get("eval", set())
    if shared:
        problems.append(f"train and eval share {len(shared)} task_id(s), e.g. {sorted(shared)[:3]}")
    if problems:
        return Check(
            "dataset", False, f"{len(problems)} problem(s): {problems[0]}", "\n".join(problems[:30]), details=counts
        )
    return Check("dataset", True, f"{counts['train']} train and {counts['eval']} eval items", details=counts)


def _dry_run(sandbox: Sandbox, root: Path, options: ValidateOptions) -> Check:
    from agentjet.core import serve_scripted
    from agentjet.vibe.check.dry_policy import plausible_reply

    token = secrets.token_urlsafe(32)
    with serve_scripted(plausible_reply, token=token, model=options.dry_model) as server:
        access = SwarmAccess(server.url, token)
        return _episodes("dry_run", sandbox, root, access, options.dry_episodes, options.dry_timeout_s, options.seed)


def _real_run(
    sandbox: Sandbox,
    root: Path,
    spec: TaskSpec,
    server: SwarmAccess | Callable[[], SwarmAccess] | None,
    options: ValidateOptions,
) -> Check:
    if callable(server):
        try:
            server = server()
        except VibeError as exc:
            return Check("real_run", False, f"no {spec.model} server to play against: {exc}", log_tail(str(exc)))
    if server is not None:  # maybe the run's own: its journal keeps no reward of a check
        return _episodes(
            "real_run", sandbox, root, server, options.real_episodes, options.real_timeout_s, options.seed, discard=True
        )
    try:
        with model_server(spec.model) as started:
            return _episodes(
                "real_run", sandbox, root, started, options.real_episodes, options.real_timeout_s, options.seed
            )
    except VibeError as exc:
        return Check("real_run", False, f"no {spec.model} server to play against: {exc}", log_tail(str(exc)))


def _episodes(
    name: str,
    sandbox: Sandbox,
    root: Path,
    server: SwarmAccess,
    count: int,
    timeout_s: float,
    seed: int,
    *,
    discard: bool = False,
) -> Check:
    """Play `count` eval episodes through the probe in the sandbox; judge every episode's record. With
    `discard` they are aborted once scored (the server keeps no reward: its eval metrics stay the run's)."""
    files = {**workspace_files(root), PROBE_FILE: _PROBE_SOURCE.read_bytes()}
    port = port_of(server.url)  # the forwarder listens on the server's own port inside
    command = f"python3 {PROBE_FILE} --server http://127.0.0.1:{port} --episodes {count} --seed {seed}"
    command += " --discard" if discard else ""
    limits = Limits(memory_bytes=2 * 1024**3, pids=256, timeout_s=timeout_s, output_bytes=8 * 1024**2)
    result = sandbox.run(command, files=files, limits=limits, swarm=server, env=PYTHON_ENV)
    records, load_error = _records(result.stdout)
    if load_error is not None:
        tail = log_tail(f"{load_error.get('error', '')}\n{load_error.get('traceback', '')}\n{result.stderr}")
        return Check(name, False, f"client.py does not load: {load_error.get('error', '?')}", tail)
    return _judge(name, records, count, result)


def _records(stdout: str) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
    records, load_error = [], None
    for line in stdout.splitlines():
        for mark in (EPISODE_MARK, LOAD_ERROR_MARK):
            if line.startswith(mark):
                try:
                    value = json.loads(line[len(mark) :])
                except ValueError:
                    continue
                if isinstance(value, dict):
                    if mark == LOAD_ERROR_MARK:
                        load_error = value
                    else:
                        records.append(value)
    return records, load_error


def _out_of_range(rewards: Mapping[str, Any]) -> dict[str, Any]:
    low, high = REWARD_RANGE
    return {k: v for k, v in rewards.items() if not isinstance(v, int | float) or not low <= v <= high}


def _judge(name: str, records: Sequence[dict[str, Any]], count: int, result: RunResult) -> Check:
    problems: list[str] = []
    for record in records:
        where = f"episode {record.get('task_id')}"
        if not record.get("ok"):
            problems.append(f"{where} raised {record.get('error')}\n{record.get('traceback', '')}".rstrip())
        elif bad := _out_of_range(record.get("rewards", {})):
            problems.append(f"{where}: reward {bad} outside {list(REWARD_RANGE)} for reply {record.get('reply', '')!r}")
    if len(records) < count:
        problems.append(
            f"only {len(records)} of {count} episodes finished: the probe {_stopped(result)}\n"
            + log_tail(result.stderr, 20)
        )
    rewards = [
        float(v) for r in records if r.get("ok") for v in r.get("rewards", {}).values() if isinstance(v, int | float)
    ]
    details = {
        "episodes": len(records),
        "rewards": rewards,
        "replies": [str(r.get("reply", ""))[:120] for r in records],
    }
    if problems:
        return Check(
            name, False, problems[0].splitlines()[0][:300], log_tail("\n\n".join(problems), 60, 6000), details=details
        )
    mean = sum(rewards) / len(rewards) if rewards else 0.0
    spread = f"min {min(rewards, default=0.0):.3f}, max {max(rewards, default=0.0):.3f}"
    summary = f"{len(records)} episodes, reward mean {mean:.3f} ({spread})"
    return Check(name, True, summary, details=details)
