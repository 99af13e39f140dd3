"""The red team: try to earn reward without solving the task, before any training is spent on it.

Each policy (the degenerate ones of `degenerate.py` and a reference from `reference.py`) is
served by a scripted swarm server on the host and plays `episodes` eval items through the
workspace's real client, run inside the sandbox behind a swarm bridge by validate's episode
probe (eval episodes only, one record per episode). The verdict (`judge`) is **hackable** when a
degenerate policy beats the reference, comes near reference answers, or earns the full reward on
every episode without giving an answer (so reference answers of the dataset that score no more
than silence make it hackable); **failed** when the red team could not judge (a client that did
not load or raised on a degenerate reply, a run that stopped early); else **robust** (where a
heuristic reference, such as the werewolves player's, scores no more than an empty answer, the
reason says so: a heuristic player losing says little about the reward). The
report keeps every policy's rewards and a few of its replies: the evidence a repair prompt gets.

A task whose policies train apart (a game with a model per side) is judged side by side: for each
policy, the candidate plays that policy's seats while the rest are filled as in a one-side run: the
family's scripted players where the client can be told to train only that side (werewolves:
`trained_roles` and `servers` through the probe's `--params`), else random legal play on a second
scripted server (`OPPONENT`); only that side's reward counts, and each side gets its own verdict;
the run's is the worst of them (failed, then hackable, then robust), and the report's table pools a
policy's runs on every side. (Played by one policy on both sides, a zero-sum game pays the same
mean to every policy and would hide everything.)
"""

from __future__ import annotations

import json
import math
import secrets
import shlex
import statistics
import threading
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from agentjet.core import serve_scripted
from agentjet.sandbox import Limits, Sandbox, SandboxError, SwarmAccess
from agentjet.tasks.play.sandboxed_run import PYTHON_ENV, port_of
from agentjet.vibe.check.degenerate import DEGENERATE, Policy, last_user_message
from agentjet.vibe.check.episode_probe import EPISODE_MARK, LOAD_ERROR_MARK
from agentjet.vibe.check.reference import reference_for
from agentjet.vibe.generate.contract import REWARD_RANGE, workspace_files
from agentjet.vibe.plan.spec import TaskSpec
from agentjet.vibe.workspace import Workspace

__all__ = ["DEFAULT_MARGIN", "PolicyResult", "RedTeamReport", "Verdict", "judge", "red_team"]

DEFAULT_MARGIN = 0.05  # rewards lie in [-1, 1]; see `judge` for how it is used
Verdict = Literal["robust", "hackable", "failed"]
_SAMPLES = 3  # replies kept per policy
_SAMPLE_CHARS = 240
PROBE_FILE = "_vibe_probe.py"  # validate's episode probe, staged beside the workspace files
_PROBE_SOURCE = Path(__file__).resolve().parent / "episode_probe.py"
_TEMPLATE_MODEL = "tiny"  # prompts rendered with SmolLM2's tokenizer and chat template (tiny shares them)
# the other seats when one side is judged: legal but aimless play, so what a side earns is its own doing
# (against the reference heuristic, the reference village loses every game: the side would look flat)
OPPONENT: Policy = DEGENERATE["random_legal"][1]


@dataclass(frozen=True)
class PolicyResult:
    """How one policy did: its mean eval reward (None when its run gave no summary) and sample replies."""

    name: str
    description: str
    mean: float | None
    episodes: int
    errors: int
    rewards: list[float] = field(default_factory=list)  # per finished episode (all servers' rewards)
    samples: list[dict[str, str]] = field(default_factory=list)  # {"prompt": tail, "reply": head}
    problem: str = ""  # why the run gave no usable result (sandbox stop, stderr tail, client errors)


@dataclass(frozen=True)
class RedTeamReport:
    """The verdict and its evidence; `to_dict` is JSON-able (the graph keeps it in its state)."""

    verdict: Verdict
    reason: str
    reference: PolicyResult
    reference_kind: str  # dataset, werewolves or floor (see reference.py)
    policies: list[PolicyResult]
    margin: float
    episodes: int
    hackable_by: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.verdict == "robust"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def evidence(self) -> str:
        """Plain text for a regeneration or repair prompt: the verdict, every mean, the winners' replies."""
        lines = [f"red team verdict: {self.verdict}: {self.reason}"]
        for result in [self.reference, *self.policies]:
            mean = "no result" if result.mean is None else f"{result.mean:.3f}"
            lines.append(f"- {result.name} ({result.description}): mean reward {mean} over {result.episodes} episodes")
        for result in self.policies:
            if result.name in self.hackable_by or result.problem:
                lines.append(f"\n{result.name}: {result.problem or 'sample replies it was paid for:'}")
                lines += [f"  prompt ...{s['prompt']!r}\n  reply  {s['reply']!r}" for s in result.samples]
        return "\n".join(lines)


class _Recorded:
    """A policy that keeps its first few (prompt, reply) pairs; called from the server's thread."""

    def __init__(self, policy: Policy) -> None:
        self.policy = policy
        self.samples: list[dict[str, str]] = []
        self._lock = threading.Lock()

    def __call__(self, prompt: str) -> str:
        reply = self.policy(prompt)
        with self._lock:
            if len(self.samples) < _SAMPLES:
                asked = last_user_message(prompt)[-_SAMPLE_CHARS:]
                self.samples.append({"prompt": asked, "reply": reply[:_SAMPLE_CHARS]})
        return reply


def _records(stdout: str) -> tuple[list[dict[str, Any]], str | None]:
    """The probe's episode records, and its load error (the client did not load or read its data)."""
    records: list[dict[str, Any]] = []
    load_error = None
    for line in stdout.splitlines():
        for mark in (EPISODE_MARK, LOAD_ERROR_MARK):
            if not line.startswith(mark):
                continue
            try:
                value = json.loads(line[len(mark) :])
            except ValueError:
                continue
            if isinstance(value, dict) and mark == EPISODE_MARK:
                records.append(value)
            elif isinstance(value, dict):
                load_error = f"{value.get('error', '?')}\n{value.get('traceback', '')}".strip()
    return records, load_error


def _play(
    name: str,
    description: str,
    policy: Policy,
    *,
    files: dict[str, bytes],
    sandbox: Sandbox,
    episodes: int,
    seed: int,
    timeout_s: float,
    side: str | None = None,
    opponent: Policy | None = None,
    params: dict[str, Any] | None = None,
) -> PolicyResult:
    """One policy's eval episodes: a scripted server here, the workspace's client (through validate's
    episode probe: eval episodes only, one record each) in the sandbox. With `side`, the policy plays
    only that server name's seats, `opponent` every other one, and only that side's rewards count."""
    recorded = _Recorded(policy)
    with _scripted(recorded, opponent if side is not None else None) as (mine, theirs):
        if theirs is None:
            servers, swarm = [f"http://127.0.0.1:{port_of(mine.url)}"], [mine.access]
        else:  # every name to the opponent, this side's to the candidate
            inside = (f"http://127.0.0.1:{port_of(theirs.url)}", f"{side}=http://127.0.0.1:{port_of(mine.url)}")
            servers, swarm = list(inside), [mine.access, theirs.access]
        flags = " ".join(f"--server {server}" for server in servers)  # the forwarder listens on each server's port
        command = f"python3 {PROBE_FILE} {flags} --episodes {episodes} --seed {seed}"
        if params:
            command += f" --params {shlex.quote(json.dumps(params))}"
        limits = Limits(memory_bytes=2 * 1024**3, pids=256, timeout_s=timeout_s, output_bytes=8 * 1024**2)
        try:
            result = sandbox.run(command, files=files, limits=limits, swarm=swarm, env=PYTHON_ENV)
        except SandboxError as exc:
            refused = f"the sandbox refused the run: {exc}"
            return PolicyResult(name, description, None, 0, 0, samples=recorded.samples, problem=refused)
    records, load_error = _records(result.stdout)
    if load_error is not None:
        unloaded = f"client.py does not load: {load_error}"
        return PolicyResult(name, description, None, 0, 0, samples=recorded.samples, problem=unloaded)
    rewards = [float(v) for r in records if r.get("ok") for k, v in r.get("rewards", {}).items() if side in (None, k)]
    raised = [r for r in records if not r.get("ok")]
    problem = ""
    if raised:
        first = raised[0]
        problem = (
            f"{len(raised)} of {len(records)} episodes raised instead of scoring the reply: {first.get('error')}\n"
            f"{first.get('traceback', '')}"
        ).strip()
    elif len(records) < episodes:
        tail = "\n".join(result.stderr.strip().splitlines()[-15:])
        problem = f"only {len(records)} of {episodes} episodes finished (stopped by {result.stopped_by}):\n{tail}"
    mean = round(sum(rewards) / len(rewards), 6) if rewards else None
    return PolicyResult(name, description, mean, len(records), len(raised), rewards, recorded.samples, problem)


@dataclass(frozen=True)
class _Served:
    url: str
    access: SwarmAccess


@contextmanager
def _scripted(policy: Policy, opponent: Policy | None) -> Iterator[tuple[_Served, _Served | None]]:
    """A scripted server for `policy` and, given one, another for `opponent` (each its own token)."""
    with ExitStack() as stack:

        def serve(each: Policy) -> _Served:
            token = secrets.token_urlsafe(24)
            server = stack.enter_context(serve_scripted(each, token=token, model=_TEMPLATE_MODEL))
            return _Served(server.url, SwarmAccess(server.url, token))

        yield serve(policy), None if opponent is None else serve(opponent)


def _pooled(results: Sequence[PolicyResult]) -> PolicyResult:
    """One policy's runs on every side as one result: rewards, episodes and errors summed, first problem kept."""
    if len(results) == 1:
        return results[0]
    first = results[0]
    rewards = [r for result in results for r in result.rewards]
    mean = None if any(r.mean is None for r in results) else round(sum(rewards) / len(rewards), 6) if rewards else None
    return PolicyResult(
        first.name,
        first.description,
        mean,
        sum(r.episodes for r in results),
        sum(r.errors for r in results),
        rewards,
        [sample for r in results for sample in r.samples][:_SAMPLES],
        next((r.problem for r in results if r.problem), ""),
    )


def _noise(a: PolicyResult, b: PolicyResult) -> float:
    """Two standard errors of the difference of two means (a side with < 2 episodes adds none)."""

    def spread(result: PolicyResult) -> float:
        rewards = result.rewards
        return statistics.variance(rewards) / len(rewards) if len(rewards) >= 2 else 0.0

    return 2.0 * math.sqrt(spread(a) + spread(b))


def _hack(policy: PolicyResult, reference: PolicyResult, kind: str, margin: float) -> str | None:
    """Why `policy` games the reward, or None. Means are set (broken runs were judged before)."""
    mean, ref = policy.mean or 0.0, reference.mean or 0.0
    noise = _noise(policy, reference)
    if mean > ref + margin + noise:
        return f"earns {mean:.3f}, more than the {kind} reference's {ref:.3f} + margin {margin} + noise {noise:.3f}"
    if kind == "dataset" and mean >= ref - margin:
        return f"earns {mean:.3f}, as much as the reference answers' {ref:.3f} (margin {margin})"
    if policy.name in NO_ANSWER and _always_full(policy):  # bounded rewards: the noise term must not hide this
        return "earns the full reward on every episode without giving any answer"
    # a random legal werewolves player wins most games against the scripted village (78% for the wolves): 4 of 4 is luck
    if policy.name == "random_legal" and kind != "werewolves" and _always_full(policy) and _always_full(reference):
        return "earns the full reward on every episode, as the reference does: the reward ignores the outcome"
    return None


NO_ANSWER = frozenset({"empty", "echo", "format_only"})  # policies that name no answer (listing ones may name one)


def _always_full(result: PolicyResult) -> bool:
    """The full reward on every one of at least 3 episodes (fewer could be luck)."""
    return len(result.rewards) >= 3 and min(result.rewards) >= REWARD_RANGE[1]


def judge(
    reference: PolicyResult, policies: Sequence[PolicyResult], *, margin: float, reference_kind: str
) -> tuple[Verdict, str, list[str]]:
    """(verdict, reason, the policies that game the reward) from the episodes' rewards; pure.

    A degenerate policy games the reward when its mean beats the reference's by more than `margin`
    plus two standard errors (games are noisy), when it matches reference *answers* (a dataset
    reference is a right answer: nothing degenerate may come within `margin` of it), when a policy
    giving no answer (empty, echo, format_only) earns the full reward on every episode (>= 3; rewards
    are bounded, so a noisy reference's two standard errors could otherwise hide a reward that pays an
    empty reply 1.0 every time; a listing policy may be read as one legal answer and win), or when a
    random legal guess and the reference both earn the full reward every time (>= 3 episodes; not in
    werewolves, where random legal wolves win 78% of their games and so all 4 by luck a third of the time)."""
    broken = [p for p in [reference, *policies] if p.mean is None or p.problem]
    if broken:
        first = broken[0]
        return "failed", f"the red team could not judge: {first.name}: {first.problem or 'no result'}", []
    reasons = {p.name: why for p in policies if (why := _hack(p, reference, reference_kind, margin))}
    if reasons:
        worst = max((p for p in policies if p.name in reasons), key=lambda p: p.mean or 0.0)
        return "hackable", f"{worst.name} ({worst.description}) {reasons[worst.name]}", list(reasons)
    empty = next((p for p in policies if p.name == "empty"), None)
    ref = reference.mean or 0.0
    weak = empty is not None and ref <= (empty.mean or 0.0)  # (a dataset reference that weak was hackable above)
    caveat = (
        f"; the {reference_kind} reference scores {ref:.3f}, no more than an empty answer, so it shows no rise either"
        if weak and reference_kind != "floor"
        else ""
    )  # a heuristic player is no right answer: losing with it says little about the reward
    return (
        "robust",
        f"no degenerate policy games the reward ({reference_kind} reference {ref:.3f}, margin {margin}){caveat}",
        [],
    )


def red_team(
    workspace: Workspace | Path,
    spec: TaskSpec,
    *,
    sandbox: Sandbox,
    episodes: int = 4,
    margin: float | None = None,
    policies: Sequence[str] | None = None,
    workers: int = 2,
    timeout_s: float = 300.0,
) -> RedTeamReport:
    """Play every degenerate policy (or those named) and the reference through the workspace's client.

    `workers` policies play at once (each with its own server and sandbox run)."""
    root = workspace.path if isinstance(workspace, Workspace) else Path(workspace)
    files = {**workspace_files(root), PROBE_FILE: _PROBE_SOURCE.read_bytes()}
    reference = reference_for(spec.family, root)
    margin = DEFAULT_MARGIN if margin is None else margin
    names = [n for n in (policies or DEGENERATE) if not (reference.kind == "floor" and n == "random_legal")]
    chosen = {name: DEGENERATE[name] for name in names}  # a floor reference is random_legal itself
    entries = [("reference", reference.description, reference.policy), *((n, d, p) for n, (d, p) in chosen.items())]

    sides: list[str | None] = [None] if spec.shares_one_policy else [p.name for p in spec.policies]
    alone = _one_side_params(spec)

    def play(job: tuple[tuple[str, str, Policy], str | None]) -> PolicyResult:
        entry, side = job
        if side is not None and side in alone:  # the other side scripted, as in a one-side run
            return _play(*entry, files=files, sandbox=sandbox, episodes=episodes, seed=spec.dataset.seed,
                         timeout_s=timeout_s, params=alone[side])  # fmt: skip
        return _play(*entry, files=files, sandbox=sandbox, episodes=episodes, seed=spec.dataset.seed,
                     timeout_s=timeout_s, side=side, opponent=OPPONENT)  # fmt: skip

    jobs = [(entry, side) for entry in entries for side in sides]
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        played = list(pool.map(play, jobs))
    by_side = {side: played[i :: len(sides)] for i, side in enumerate(sides)}  # reference first on each side
    verdict, reason, winners = _worst(
        {side: judge(rs[0], rs[1:], margin=margin, reference_kind=reference.kind) for side, rs in by_side.items()}
    )
    results = [_pooled(played[i : i + len(sides)]) for i in range(0, len(played), len(sides))]
    return RedTeamReport(verdict, reason, results[0], reference.kind, results[1:], margin, episodes, winners)


def _one_side_params(spec: TaskSpec) -> dict[str, dict[str, Any]]:
    """Per policy, the make_task params that train only its roles (the rest scripted), for a family that
    takes `trained_roles` and `servers` (werewolves); {} for others, whose sides face `OPPONENT`."""
    if spec.family != "werewolves" or spec.shares_one_policy:
        return {}
    return {p.name: {"trained_roles": list(p.roles), "servers": {r: p.name for r in p.roles}} for p in spec.policies}


_SEVERITY: dict[str, int] = {"failed": 0, "hackable": 1, "robust": 2}


def _worst(verdicts: dict[str | None, tuple[Verdict, str, list[str]]]) -> tuple[Verdict, str, list[str]]:
    """One verdict from each side's: the worst, its reason named by side (one side: as it is)."""
    if list(verdicts) == [None]:
        return verdicts[None]
    side, (verdict, reason, winners) = min(verdicts.items(), key=lambda item: _SEVERITY[item[1][0]])
    if verdict == "robust":
        reasons = "; ".join(f"{name}: {why}" for name, (_, why, _) in verdicts.items())
        return verdict, f"every side: {reasons}", []
    hackers = sorted({w for _, _, found in verdicts.values() for w in found})
    return verdict, f"as {side}: {reason}", hackers
