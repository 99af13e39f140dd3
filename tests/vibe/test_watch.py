"""Watching a run: the pure detectors and policy on scripted data, then real runs on `tiny` where a
client crashes and is hot-swapped (the server keeps its pid and its step never goes back), a
scripted constant reward shows zero variance, and greedy completions show degenerate outputs."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from agentjet.core import TrainConfig
from agentjet.vibe.run.budget import Budget, last_update_s
from agentjet.vibe.run.hot_swap import hot_swap
from agentjet.vibe.run.launch import launch, stop
from agentjet.vibe.run.trouble import (
    ActionKind,
    Finding,
    Tried,
    Trouble,
    client_errors,
    decide,
    degenerate_outputs,
    flat_curve,
    zero_variance,
)
from agentjet.vibe.run.watch import WatchSettings, catch_up, watch
from tests.vibe.launch_helpers import (
    CONSTANT_REWARD,
    StepRecorder,
    client_source,
    make_workspace,
    swarm_status,
    tiny_options,
)

FAST = WatchSettings(poll_s=0.2, zero_variance_steps=2, episode_check_every_s=0.5, budget_s=240.0)


def _line(step: int, reward: float, group_std: float) -> dict[str, Any]:
    return {"step": step, "reward_mean": reward, "group_reward_std": group_std}


# ---- pure detectors ------------------------------------------------------------------------


def test_zero_variance_needs_k_consecutive_steps() -> None:
    lines = [_line(1, 0.5, 0.2), _line(2, 0.5, 0.0), _line(3, 0.5, 0.0)]
    assert zero_variance(lines, steps=3) is None  # step 1 had signal
    assert zero_variance(lines[1:], steps=3) is None  # only two steps so far
    found = zero_variance([*lines, _line(4, 0.5, 0.0)], steps=3)
    assert found is not None and found.trouble is Trouble.ZERO_VARIANCE and found.step == 4
    assert "0.5" in found.detail


def test_flat_curve_compares_the_halves_of_the_window() -> None:
    rising = [_line(i, 0.1 * i, 0.3) for i in range(1, 7)]
    assert flat_curve(rising, window=6, min_gain=0.01) is None
    flat = [_line(i, 0.3 + (0.01 if i % 2 else 0.0), 0.3) for i in range(1, 7)]
    found = flat_curve(flat, window=6, min_gain=0.01)
    assert found is not None and found.trouble is Trouble.FLAT_CURVE
    assert flat_curve(flat[:4], window=6, min_gain=0.01) is None  # not enough steps yet


@dataclass
class _Pace:  # what the budget reads of a run
    started_at: float = 1000.0
    first_step_at: float | None = None
    step_at_launch: int = 0
    last_step: int = 0
    target_step: int = 4


@pytest.mark.parametrize(
    ("budget_s", "run", "now", "said"),
    [
        (None, _Pace(first_step_at=1100.0, last_step=1), 1100.0, None),  # no budget, no note
        (600.0, _Pace(), 1050.0, None),  # no step yet
        (600.0, _Pace(first_step_at=1100.0, last_step=1), 1100.0, None),  # 100 s a step: all 4 fit
        (600.0, _Pace(first_step_at=1274.0, last_step=1), 1274.0, "~274 s a step, the 10.0 min budget stops "
         "training near step 2 of 4"),  # make demo in fp32: validation's time counts in the first step's
        (600.0, _Pace(first_step_at=1274.0, last_step=2), 1603.0, "~329 s a step"),  # paced since step 1 now
        (600.0, _Pace(first_step_at=1200.0, last_step=2, target_step=6), 1300.0, "near step 5 of 6"),
        (600.0, _Pace(first_step_at=1200.0, last_step=4), 1700.0, None),  # the target reached
        (600.0, _Pace(first_step_at=1700.0, last_step=1), 1700.0, "near step 1 of 4"),  # past the budget already
        (600.0, _Pace(first_step_at=1300.0, step_at_launch=3, last_step=4, target_step=7), 1300.0, "step 5 of 7"),
    ],
)  # fmt: skip
def test_the_budget_says_early_where_training_will_stop(
    budget_s: float | None, run: _Pace, now: float, said: str | None
) -> None:
    note = Budget(budget_s).pace_note(run, now=now)
    if said is None:
        assert note is None
    else:
        assert note is not None and said in note and note.endswith("the final held-out round follows"), note


def test_the_budget_runs_out_past_its_seconds_and_says_each_projection_once() -> None:
    budget, run = Budget(600.0), _Pace(first_step_at=1274.0, last_step=1)
    assert budget.ran_out(run, now=1600.0) is None and Budget(None).ran_out(run, now=1e12) is None
    assert budget.ran_out(run, now=1600.5) == "the 10.0 min budget ran out at step 1 of 4"
    assert budget.pace_note(run, now=1274.0) is not None
    run.last_step = 2
    assert budget.pace_note(run, now=1603.0) is None  # still near step 2: said already


def test_the_budget_stops_training_when_what_is_left_is_shorter_than_an_update() -> None:
    budget, run = Budget(600.0), _Pace(first_step_at=1274.0, last_step=1)
    assert budget.ran_out(run, now=1500.0, update_s=80.0) is None  # 100 s left: an update still fits
    said = budget.ran_out(run, now=1500.0, update_s=120.0)
    assert said == "the 10.0 min budget leaves 100 s, less than an update takes here (~120 s), at step 1 of 4"
    assert budget.ran_out(run, now=1500.0) is None  # no update landed yet: only the budget's end stops it
    assert Budget(None).ran_out(run, now=1e12, update_s=1e9) is None
    assert last_update_s([]) is None and last_update_s([{"step": 1}]) is None
    assert last_update_s([{"train_time_s": 90.0}, {"train_time_s": 120.5}]) == 120.5


def _episode(status: str, *texts: str) -> dict[str, Any]:
    return {"status": status, "calls": [{"completion_text": t, "tool_calls": None} for t in texts]}


def test_degenerate_outputs_empty_and_identical() -> None:
    varied = [_episode("ended", f"answer {i}") for i in range(6)]
    assert degenerate_outputs(varied, least=4, step=1) is None
    empty = [_episode("ended", "  ") for _ in range(6)]
    found = degenerate_outputs(empty, least=4, step=1)
    assert found is not None and "empty" in found.detail
    same = [_episode("ended", "Answer: 7") for _ in range(6)]
    found = degenerate_outputs(same, least=4, step=2)
    assert found is not None and "same text" in found.detail and "Answer: 7" in found.evidence
    assert degenerate_outputs(same[:3], least=4, step=2) is None  # too few to judge
    assert degenerate_outputs([_episode("open", "") for _ in range(6)], least=4, step=2) is None


def test_client_errors_counts_aborted_episodes() -> None:
    mostly_aborted = [_episode("aborted") for _ in range(3)] + [_episode("ended", "x"), _episode("open")]
    found = client_errors(mostly_aborted, share=0.5, least=4, step=3)
    assert found is not None and "3 of the client's last 4" in found.detail
    assert client_errors([_episode("ended", "x")] * 3 + [_episode("aborted")], share=0.5, least=4, step=3) is None


def test_decide_tries_config_then_a_new_client_and_never_loops() -> None:
    zero = Finding(Trouble.ZERO_VARIANCE, "zero", 3)
    tried = Tried()
    first = decide(zero, tried, group_size=4, lr=1e-4)
    assert first.kind is ActionKind.ADJUST_CONFIG and first.changes == {"grpo.group_size": 8}
    tried.group_size_raises = 1
    assert decide(zero, tried, group_size=8, lr=1e-4).kind is ActionKind.REGENERATE_CLIENT
    crash = Finding(Trouble.CLIENT_EXITED, "exit 3", 2)
    no_llm = Tried(can_regenerate=False)
    assert decide(crash, no_llm, group_size=4, lr=1e-4).kind is ActionKind.RESTART_CLIENT
    no_llm.restarts_after_crash = 1
    assert decide(crash, no_llm, group_size=4, lr=1e-4).kind is ActionKind.STOP
    flat = Finding(Trouble.FLAT_CURVE, "flat", 9)
    assert decide(flat, Tried(), group_size=4, lr=1e-4).changes == {"optim.lr": 2e-4}
    assert decide(flat, Tried(lr_raises=2), group_size=4, lr=4e-4).kind is ActionKind.NOTE
    capped = decide(flat, Tried(lr_raises=1), group_size=4, lr=1e-3)
    assert capped.kind is ActionKind.NOTE and "at 0.001, the most the watcher sets" in capped.why
    measured = decide(flat, Tried(keep_lr=True), group_size=4, lr=1e-4)  # a recipe measured to learn keeps its lr
    assert measured.kind is ActionKind.NOTE and "measured to learn" in measured.why
    spent = Tried(regenerations=3, max_regenerations=3)
    assert decide(Finding(Trouble.DEGENERATE_OUTPUTS, "empty", 1), spent, group_size=4, lr=1e-4).kind is ActionKind.NOTE
    assert decide(Finding(Trouble.SERVER_DOWN, "gone", 1), Tried(), group_size=4, lr=1e-4).kind is ActionKind.STOP


# ---- real runs on tiny ---------------------------------------------------------------------


def test_a_crashing_client_is_replaced_while_the_server_keeps_its_step(tmp_path: Path) -> None:
    workspace = make_workspace(tmp_path / "ws", client=client_source(crash_after=5))
    run = launch(workspace, options=tiny_options(steps=5), started_at=time.time())
    server_pid = run.server.pid
    regenerated: list[Finding] = []

    def regenerate(finding: Finding) -> Path:  # stands in for the graph's regenerate-and-commit
        regenerated.append(finding)
        path = workspace.write("client.py", client_source())
        workspace.commit("repair(launch_and_watch): client without the crash", ["client.py"])
        return path

    try:
        with StepRecorder(run.server.url, run.server.token) as recorder:
            result = watch(run, settings=FAST, regenerate=regenerate)
        assert result.status == "completed", result.reason
        assert [f.trouble for f in regenerated] == [Trouble.CLIENT_EXITED]
        assert "status 3" in regenerated[0].detail
        # generation 2 is the hot-swapped client; a client that used up its episodes before the
        # server trained to the target is started again (run.restarts), and so is one whose group size
        # the watch raised (a zero-variance group, likelier on a loaded machine): each a generation more
        resized = [a for a in result.actions if a["kind"] == "adjust_config" and "grpo.group_size" in a["changes"]]
        restarted = [a for a in result.actions if a["kind"] == "restart_client"]
        assert run.client.generation == 2 + run.restarts + len(resized) + len(restarted), result.actions
        assert run.server.pid == server_pid and run.server.is_alive()
        assert recorder.steps == sorted(recorder.steps), "the server's step went back"
        assert recorder.steps[-1] >= 5 and len(result.hot_swaps) == 1
        assert result.hot_swaps[0]["latency_s"] >= 0.0  # measured; no timing assertion here
        crashed_at = regenerated[0].step
        assert crashed_at >= 1 and min(s for s in recorder.steps if s >= crashed_at) == crashed_at
    finally:
        stop(run)
    assert not run.server.is_alive()


def test_hot_swap_returns_the_latency_to_the_new_clients_first_episode(tmp_path: Path) -> None:
    workspace = make_workspace(tmp_path / "ws")
    run = launch(workspace, options=tiny_options(steps=50), started_at=time.time())
    try:
        step_before = swarm_status(run.server.url, run.server.token)["step"]
        assert run.standby is not None and run.standby.wait_ready(120.0)  # the next client, warm and waiting
        standby_pid = run.standby.process.pid
        new = workspace.write("client_v2.py", client_source(temperature=0.7))
        latency = hot_swap(run, new)
        first = run.client.tap.episodes()[0]
        assert 0.0 <= latency < 300.0 and run.hot_swaps[-1]["first_episode"] == first.episode_id
        assert swarm_status(run.server.url, run.server.token)["step"] >= step_before
        assert run.client.path == new and run.client.generation == 2
        assert run.client.process.pid == standby_pid and run.standby.generation == 3
        unused = run.standby.process
    finally:
        stop(run)
    assert unused.wait(timeout=10) == 0  # a standby never needed just ends


def test_a_scripted_constant_reward_is_seen_as_zero_variance(tmp_path: Path) -> None:
    workspace = make_workspace(tmp_path / "ws", reward=CONSTANT_REWARD)
    run = launch(workspace, options=tiny_options(steps=8), started_at=time.time())
    metrics_only = WatchSettings(poll_s=0.2, zero_variance_steps=2, episode_check_every_s=1e9, budget_s=240.0)
    try:
        result = watch(run, settings=metrics_only)  # what tiny writes is not judged here, only the reward
        headers = {"Authorization": f"Bearer {run.server.token}"}
        config = httpx.get(f"{run.server.url}/swarm/config", headers=headers, timeout=5).json()["config"]
    finally:
        stop(run)
    troubles = [f["trouble"] for f in result.findings]
    assert troubles[:2] == ["zero_variance", "zero_variance"], result.findings
    assert [a["kind"] for a in result.actions[:2]] == ["adjust_config", "note"]  # no LLM: reported after that
    assert config["grpo"]["group_size"] == 4 and run.group_size == 4
    assert yaml.safe_load(workspace.read("train.yaml"))["grpo"]["group_size"] == 4  # a restart would keep it
    assert any(subject.startswith("watch: grpo.group_size=4") for _, subject in workspace.history())
    assert result.status == "completed"


def test_greedy_identical_completions_are_degenerate(tmp_path: Path) -> None:
    """One prompt, greedy, updates too small to change the argmax: every completion is the same (empty) text."""
    workspace = make_workspace(tmp_path / "ws", client=client_source(temperature=0.0, prompt="Say hello."))
    frozen = TrainConfig.model_validate({"grpo": {"group_size": 2}, "collect": {"tasks": 1}, "optim": {"lr": 1e-12}})
    options = tiny_options(steps=30, train_config=frozen, concurrency=1)  # one request at a time: no batch effects
    run = launch(workspace, options=options, started_at=time.time())
    only_episodes = WatchSettings(poll_s=0.2, zero_variance_steps=1000, episode_check_every_s=0.5, budget_s=240.0)
    try:
        result = watch(run, settings=only_episodes, regenerate=lambda finding: None)  # the hook gives up
    finally:
        stop(run)
    assert result.status == "failed" and "no new client" in result.reason
    assert [f["trouble"] for f in result.findings] == ["degenerate_outputs"], result.findings
    detail = result.findings[0]["detail"]  # tiny's greedy reply here decodes to nothing but whitespace
    assert ("are empty" in detail or "same text" in detail) and result.actions[-1]["kind"] == "regenerate_client"


def test_a_regenerated_client_that_dies_at_once_is_regenerated_again(tmp_path: Path) -> None:
    workspace = make_workspace(tmp_path / "ws", client=client_source(crash_after=2))
    run = launch(workspace, options=tiny_options(steps=3), started_at=time.time())
    replies = iter(["import a_module_that_does_not_exist\n", client_source()])

    def regenerate(finding: Finding) -> Path:
        return workspace.write("client.py", next(replies))

    try:
        result = watch(run, settings=FAST, regenerate=regenerate)
    finally:
        stop(run)
    assert result.status == "completed", result.reason
    kinds = [a["kind"] for a in result.actions]
    assert kinds == ["regenerate_client", "hot_swap_failed", "regenerate_client"], result.actions
    assert "before its first episode" in result.actions[1]["why"] and len(result.hot_swaps) == 1
    assert run.client.generation == 3


def test_a_client_whose_episodes_all_fail_is_reported_and_the_run_gives_up(tmp_path: Path) -> None:
    workspace = make_workspace(tmp_path / "ws", client=client_source(broken=True))
    run = launch(workspace, options=tiny_options(steps=2), started_at=time.time())
    try:
        result = watch(run, settings=FAST)  # no regenerate hook: nothing can fix it here
    finally:
        stop(run)
    assert [a["kind"] for a in result.actions] == ["note"] and result.findings[0]["trouble"] == "client_errors"
    assert "broken" in result.findings[0]["evidence"]  # the client's log tail
    assert result.status == "failed" and "finished 3 times" in result.reason and run.restarts == 2


@pytest.mark.bwrap
def test_a_sandboxed_crashing_client_is_hot_swapped(tmp_path: Path) -> None:
    from tests.sandbox.conftest import sandbox_for

    sandbox_for("bwrap")
    workspace = make_workspace(tmp_path / "ws", client=client_source(crash_after=3))
    run = launch(
        workspace, options=tiny_options(steps=3, sandbox="bwrap", allow_unsandboxed=False), started_at=time.time()
    )
    server_pid = run.server.pid

    def regenerate(finding: Finding) -> Path:
        return workspace.write("client.py", client_source())

    try:
        result = watch(run, settings=FAST, regenerate=regenerate)
        assert result.status == "completed", result.reason
        assert result.findings[0]["trouble"] == "client_exited" and run.sandbox == "bwrap"
        assert run.server.pid == server_pid and len(result.hot_swaps) == 1
    finally:
        stop(run)


def test_a_spent_budget_stops_the_watch_and_steps_landing_after_join_the_record(tmp_path: Path) -> None:
    """The budget ran out at once: the watch stops and says so; the client, not yet replaced by a final round,
    trains on, and `catch_up` adds those steps' metrics (said like watched ones) and the step reached."""
    workspace = make_workspace(tmp_path / "ws")
    lines: list[str] = []
    run = launch(workspace, options=tiny_options(steps=50), started_at=time.time(), progress=lines.append)
    spent = WatchSettings(poll_s=0.2, episode_check_every_s=1e9, budget_s=1e-3)
    try:
        result = watch(run, settings=spent)
        assert result.status == "budget_exhausted" and result.reason.startswith("the 0.0 min budget ran out at step")
        assert any("training stops (an update under way still lands)" in line for line in lines), lines
        stopped_at = result.steps
        deadline = time.monotonic() + 120
        while swarm_status(run.server.url, run.server.token)["step"] < stopped_at + 2 and time.monotonic() < deadline:
            time.sleep(0.2)
        seen: list[int] = []
        catch_up(run, result, lambda line: seen.append(int(line["step"])))
    finally:
        stop(run)
    steps = [int(line["step"]) for line in result.metrics]
    assert steps == list(range(1, steps[-1] + 1)) and steps[-1] >= stopped_at + 2  # every step, in order
    assert seen == [s for s in steps if s > stopped_at] and result.steps == steps[-1]
    assert result.reason.endswith(f"the update under way then landed as step {steps[-1]}")
