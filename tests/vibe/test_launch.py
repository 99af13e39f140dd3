"""Launching a vibe run's training on `tiny`: the server it starts (port, state dir, token file, committed
train.yaml), the time to the first step, the sandbox rule (refuse unless the user opted out), a
server adopted after a killed orchestrator, and a server reused by URL."""

from __future__ import annotations

import json
import os
import re
import signal
import stat
import time
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest
import yaml

from agentjet.core import process_mentions
from agentjet.core.testing import RunningServer
from agentjet.tasks.play import client_run
from agentjet.tasks.play.runner import RunSettings
from agentjet.vibe.errors import VibeError
from agentjet.vibe.plan.spec import SuccessMetric
from agentjet.vibe.report.writer import ReportInput, curve_series, write_report
from agentjet.vibe.run import sandboxed_client
from agentjet.vibe.run.client_process import ClientSettings, _argv, resolve_sandbox
from agentjet.vibe.run.evaluation import HeldOutEval
from agentjet.vibe.run.hot_swap import hot_swap
from agentjet.vibe.run.launch import CONFIG_FILE, base_apart, launch, stop
from agentjet.vibe.run.launch_options import LaunchOptions
from agentjet.vibe.run.sandboxed_client import client_files
from agentjet.vibe.run.swarm_server import read_launch_file
from agentjet.vibe.run.watch import WatchSettings, catch_up, training_record, watch
from tests.conftest import TOKEN
from tests.vibe.launch_helpers import TWO_SIDES_CLIENT, make_workspace, swarm_status, tiny_options

FAST = WatchSettings(poll_s=0.2, episode_check_every_s=0.5, budget_s=240.0)


def test_launch_starts_its_own_server_and_measures_the_first_step(tmp_path: Path) -> None:
    workspace = make_workspace(tmp_path / "ws")
    lines: list[str] = []
    started = time.time()
    run = launch(workspace, options=tiny_options(steps=3, eval_rounds=3), started_at=started, progress=lines.append)
    try:
        state = workspace.path / "state"
        token_file = state / "token"
        assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
        assert token_file.read_text().strip() == run.server.token
        assert run.server.url.startswith("http://127.0.0.1:") and run.server.pid is not None
        assert not process_mentions(run.server.pid, run.server.token)  # never in argv
        assert process_mentions(run.server.pid, str(state))
        committed = workspace.repo.git.show(f"HEAD:{CONFIG_FILE}")
        assert yaml.safe_load(committed)["grpo"]["group_size"] == 2
        assert any(CONFIG_FILE in subject for _, subject in workspace.history())
        result = watch(run, settings=FAST)
        with run.server.swarm() as swarm:  # the client ran on a client token of its own, not the admin's
            issued = [t for t in swarm.list_tokens() if t["name"] == f"vibe-{workspace.path.name}"]
            ended = swarm.status()["episodes"]["finished"]
        assert len(issued) == 1 and not issued[0]["revoked"] and ended > 0
        tokens = json.loads((state / "tokens.json").read_text())["tokens"]
        assert run.server.client_token("unused") not in json.dumps(tokens)  # stored hashed only
    finally:
        stop(run)
    assert result.status == "completed" and result.steps >= 3
    assert run.server.cold_start_s is not None and result.time_to_first_step_s is not None
    assert result.time_to_first_step_s >= run.server.cold_start_s  # measured from the caller's start
    assert any("server ready" in line for line in lines) and any("UNSANDBOXED" in line for line in lines)
    assert not run.server.is_alive() and run.client.exit_code is not None
    assert read_launch_file(workspace.path)["server_pid"] is None
    record = training_record(run, result)
    assert record["server"]["how"] == "started" and record["metrics"][0]["step"] == 1
    assert any(line.get("eval_reward_mean") is not None for line in record["metrics"])  # evals were run
    files = write_report(workspace, ReportInput("a sentence", "done", started, training=record))
    assert files["curves.png"].stat().st_size > 0
    assert json.loads(files["run.json"].read_text())["time_to_first_step_s"] == round(run.time_to_first_step_s, 2)


def test_no_sandbox_is_refused_unless_the_user_opted_out(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(VibeError, match="opt-out"):
        resolve_sandbox("none", allow_unsandboxed=False, progress=lambda line: None)
    monkeypatch.setenv("AGENTJET_SANDBOX_BACKEND", "docker")
    monkeypatch.setenv("AGENTJET_DOCKER_HOST", f"unix://{tmp_path}/no-engine.sock")
    workspace = make_workspace(tmp_path / "ws")
    options = LaunchOptions(model="tiny", steps=1, sandbox="auto")
    with pytest.raises(VibeError, match="agentjet sandbox doctor"):
        launch(workspace, options=options, started_at=time.time())
    assert not (workspace.path / "state").exists()  # nothing was started
    said: list[str] = []
    assert resolve_sandbox("auto", allow_unsandboxed=True, progress=said.append) == "none"
    assert "UNSANDBOXED" in said[0]


def test_a_relaunch_adopts_the_running_server_and_replaces_the_stray_client(tmp_path: Path) -> None:
    workspace = make_workspace(tmp_path / "ws")
    first = launch(workspace, options=tiny_options(steps=40), started_at=time.time())
    second = None
    try:
        hot_swap(first, workspace.path / "client.py")  # the client is now a former standby: no path in its argv
        # the orchestrator "died" here: nothing was stopped
        second = launch(workspace, options=tiny_options(steps=40), started_at=time.time())
        assert second.server.adopted and second.server.pid == first.server.pid
        assert second.target_step == first.target_step  # the run's goal is kept
        assert first.client.process.wait(timeout=30) is not None  # the stray client was stopped
        assert read_launch_file(workspace.path)["client_pid"] == second.client.process.pid
    finally:
        stop(second or first)
        stop(first)
    assert not first.server.is_alive()


def test_a_server_given_by_url_is_reused_and_left_running(
    tmp_path: Path, live_server: Callable[..., RunningServer]
) -> None:
    config = tmp_path / "train.yaml"
    config.write_text("grpo:\n  group_size: 2\ncollect:\n  tasks: 1\n")
    server = live_server(config=config)
    workspace = make_workspace(tmp_path / "ws")
    run = launch(workspace, options=tiny_options(steps=2, server_url=server.url, token=TOKEN), started_at=time.time())
    try:
        assert not run.server.is_ours and run.group_size == 2
        result = watch(run, settings=FAST)
    finally:
        stop(run)
    assert result.status == "completed"
    assert not (workspace.path / CONFIG_FILE).exists()  # the server's own config stays in force
    with run.server.swarm() as swarm:
        assert swarm.status()["step"] >= 2  # still answering after stop()


def test_a_wrong_token_for_a_reused_server_is_a_clear_error(
    tmp_path: Path, live_server: Callable[..., RunningServer]
) -> None:
    server = live_server()
    workspace = make_workspace(tmp_path / "ws")
    with pytest.raises(VibeError, match="does not answer"):
        launch(workspace, options=tiny_options(server_url=server.url, token="wrong"), started_at=time.time())


def test_the_sandbox_gets_the_workspace_files_but_not_the_run_state(tmp_path: Path) -> None:
    workspace = make_workspace(tmp_path / "ws")
    (workspace.path / "state" / "logs").mkdir(parents=True)
    (workspace.path / "state" / "token").write_text("secret")
    (workspace.path / "state" / "logs" / "server.log").write_text("log")
    name, files = client_files(workspace.path, workspace.path / "client.py")
    assert name == "client.py"
    assert {"client.py", "reward.py", "data/train.jsonl", "data/eval.jsonl"} <= set(files)
    assert not any(path.startswith(("state/", ".git/")) for path in files)
    outside = tmp_path / "other_client.py"
    outside.write_text("TASK = None\n")
    name, files = client_files(workspace.path, outside)
    assert name == "other_client.py" and files[name] == b"TASK = None\n"


@pytest.mark.parametrize("sandbox", ["none", "bwrap"])
def test_a_client_process_gets_every_setting_as_a_flag_its_module_accepts(tmp_path: Path, sandbox: str) -> None:
    settings = ClientSettings(
        episodes=12, concurrency=3, group_size=4, eval_every=8, eval_episodes=2, seed=5, params=("max_tokens=3",)
    )
    argv = _argv(tmp_path, tmp_path / "client.py", sandbox, ["http://127.0.0.1:9"], settings)
    parser = client_run._parser() if sandbox == "none" else sandboxed_client._parser()
    options = parser.parse_args(argv[3:])  # what follows `python -m MODULE`, as a standby gets it too
    assert RunSettings.from_options(options) == settings.run_settings()
    assert settings.run_settings().episodes == 12 and settings.run_settings().eval_every == 8
    assert options.param == ["max_tokens=3"]
    assert options.server == ["http://127.0.0.1:9"]
    two = _argv(tmp_path, tmp_path / "client.py", sandbox, ["a=http://127.0.0.1:9", "b=http://127.0.0.1:10"], settings)
    assert parser.parse_args(two[3:]).server == ["a=http://127.0.0.1:9", "b=http://127.0.0.1:10"]


def test_a_step_landing_after_a_spent_budget_is_said_before_the_final_round_and_is_what_it_measures(
    tmp_path: Path,
) -> None:
    """The budget ran out while the client trained on: the steps that land before the final round are said as
    they land (not after the round), and the final round measures the last of them."""
    workspace = make_workspace(tmp_path / "ws")
    lines: list[str] = []
    options = tiny_options(steps=50, eval_episodes=2, eval_params=("temperature=0",))
    run = launch(workspace, options=options, started_at=time.time(), progress=lines.append)
    spent = WatchSettings(poll_s=0.2, episode_check_every_s=1e9, budget_s=1e-3)
    try:
        evaluation = HeldOutEval(run, SuccessMetric(description="replies of even length", success_reward=0.5))
        result = watch(run, settings=spent, on_poll=evaluation.poll)
        assert result.status == "budget_exhausted"
        stopped_at, deadline = result.steps, time.monotonic() + 120
        while swarm_status(run.server.url, run.server.token)["step"] <= stopped_at and time.monotonic() < deadline:
            time.sleep(0.2)  # a step past the watch's lands (the client trains on until the final round)
        evaluation.after(on_settled=lambda: catch_up(run, result, lambda line: lines.append(f"landed {line['step']}")))
        outcome = evaluation.outcome()
    finally:
        stop(run)
    landed = [i for i, line in enumerate(lines) if line.startswith("landed ")]
    final = next(i for i, line in enumerate(lines) if line.startswith("held-out round of the final policy (step"))
    assert landed and max(landed) < final, lines  # said as they landed, before the round
    assert (
        lines[final].startswith(f"held-out round of the final policy (step {result.steps})")
        and result.steps > stopped_at
    )
    assert outcome.after is not None and outcome.after.step == result.steps


def test_a_server_that_dies_before_the_final_round_fails_the_run_at_once_not_after_a_long_wait(
    tmp_path: Path,
) -> None:
    """The final round waits for the served step to settle; a dead server never settles, so waiting for it is
    a one-line error that says how to go on, within seconds."""
    workspace = make_workspace(tmp_path / "ws")
    options = tiny_options(steps=50, eval_episodes=2, eval_params=("temperature=0",))
    run = launch(workspace, options=options, started_at=time.time(), progress=lambda line: None)
    try:
        evaluation = HeldOutEval(run, SuccessMetric(description="replies of even length", success_reward=0.5))
        assert run.server.pid is not None
        os.kill(run.server.pid, signal.SIGKILL)
        began = time.monotonic()
        with pytest.raises(VibeError, match=rf"pid {run.server.pid}\) exited .*resume the run") as caught:
            evaluation.after()
        assert time.monotonic() - began < 120 and "\n" not in str(caught.value)
    finally:
        stop(run)


def test_rounds_every_step_between_draw_the_curve_and_training_goes_on_after_each(tmp_path: Path) -> None:
    """`every_steps` (vibe's --eval-every): a round on the held policy at each step between the base's and the
    final one, each counted at the step it played, and the training client back after it."""
    workspace = make_workspace(tmp_path / "ws")
    lines: list[str] = []
    options = tiny_options(steps=4, eval_episodes=2, eval_params=("temperature=0",))
    run = launch(workspace, options=options, started_at=time.time(), progress=lines.append)
    try:
        metric = SuccessMetric(description="replies of even length", success_reward=0.5)
        evaluation = HeldOutEval(run, metric, every_steps=1)
        evaluation.before()
        result = watch(run, settings=FAST, on_poll=evaluation.poll)
        evaluation.after(on_settled=lambda: catch_up(run, result))
        outcome = evaluation.outcome()
        saved = read_launch_file(workspace.path)
        with run.server.swarm() as swarm:
            between = [swarm.get_episode(i) for i in saved["eval_between"]]
    finally:
        stop(run)
    assert result.status == "completed" and outcome.before is not None and outcome.after is not None
    middle = [p for p in outcome.curve if outcome.before.step < p.step < outcome.after.step]
    assert middle and all(p.episodes == 2 for p in middle), outcome.curve  # each round measured at its own step
    assert [p.step for p in outcome.curve] == sorted({p.step for p in outcome.curve})
    assert {e["kind"] for e in between} == {"eval"} and len(between) == 2 * len(middle)
    for episode in between:  # held still: every call of a round at one version
        assert len({c["policy_version"] for c in episode["calls"]}) == 1
    said = [
        int(m.group(1))
        for line in lines
        if (m := re.match(r"held-out round of the policy in training \(step (\d+)\): 2 ep", line))
    ]
    assert said == [p.step for p in middle], lines  # one round a step, said with the step it measures
    tallied = [
        int(m.group(1))
        for line in lines
        if (m := re.match(r"held-out round of the policy in training \(step (\d+)\): (?!2 ep)", line))
    ]
    assert tallied == said, lines  # and each tally says its step too
    assert outcome.after.step not in said  # a round due just as an update reached the target is the final one
    assert outcome.after.step >= options.steps  # training went on after each round to the target


@pytest.mark.parametrize("steps", [1, 2])
def test_held_out_rounds_measure_the_base_and_the_final_policy_on_the_same_items(tmp_path: Path, steps: int) -> None:
    """The base's round is played on the base weights beside training, once the first step is in (the first
    update waits for no eval); the final round holds the final policy (one step: both rounds after it)."""
    workspace = make_workspace(tmp_path / "ws")
    lines: list[str] = []
    options = tiny_options(steps=steps, eval_episodes=4, eval_params=("temperature=0",))
    run = launch(workspace, options=options, started_at=time.time(), progress=lines.append)
    try:
        assert run.eval_client is None and run.client.generation == 1  # training alone first
        evaluation = HeldOutEval(run, SuccessMetric(description="replies of even length", success_reward=0.5))
        evaluation.before()
        assert run.eval_client is None and read_launch_file(workspace.path)["eval_launch_step"] == 0
        result = watch(run, settings=FAST, on_poll=evaluation.poll)
        evaluation.after(on_settled=lambda: catch_up(run, result))  # as vibe does
        outcome = evaluation.outcome()
        saved = read_launch_file(workspace.path)
        with run.server.swarm() as swarm:
            before = [swarm.get_episode(i) for i in saved["eval_before"]]
            after = [swarm.get_episode(i) for i in saved["eval_after"]]
            held = httpx.get(f"{run.server.url}/swarm/config", headers={"Authorization": f"Bearer {run.server.token}"})
        first_step_at = next(line["time"] for line in result.metrics if line["step"] == 1)
    finally:
        stop(run)
    assert result.status == "completed" and outcome.before is not None and outcome.after is not None
    assert (outcome.before.step, outcome.before.episodes, outcome.after.episodes) == (0, 4, 4)
    # the final round played the final policy (a tiny round may finish, and train, before the hold lands)
    assert outcome.after.step == run.last_step >= result.steps >= steps
    assert {e["kind"] for e in before + after} == {"eval"}
    assert {c["policy_version"] for e in before for c in e["calls"]} == {0}
    assert all(e["base_model"] for e in before) and not any(e["base_model"] for e in after)
    assert min(e["created_at"] for e in before) >= first_step_at  # begun after the first update
    assert {c["policy_version"] for e in after for c in e["calls"]} == {outcome.after.step}
    assert sorted(e["task_id"] for e in before) == sorted(e["task_id"] for e in after)  # the same held-out items
    assert held.json()["config"]["collect"]["hold"] is False  # released after the last round
    assert any("on the base weights beside training: 4 episodes" in line for line in lines), lines
    assert any("held-out round of the base policy: success rate" in line for line in lines), lines
    assert outcome.verdict in ("improved", "no change detectable", "worse")
    assert (workspace.path / "state" / "logs" / "client-0.log").is_file()  # the base round's own client


@pytest.mark.parametrize(
    ("record", "step", "apart"),
    [({}, 0, True), ({}, 3, False), ({"eval_launch_step": 0}, 3, True), ({"eval_launch_step": 2}, 2, False)],
)
def test_the_base_round_goes_beside_training_only_when_the_run_began_at_the_base(
    record: dict[str, int], step: int, apart: bool
) -> None:
    """A resumed run that began at step 0 still plays the base; a run launched from a trained policy plays that."""
    assert base_apart(record, step) is apart


def test_policies_apart_train_on_a_server_each_and_each_is_measured(tmp_path: Path) -> None:
    workspace = make_workspace(tmp_path / "ws", client=TWO_SIDES_CLIENT)
    lines: list[str] = []
    options = tiny_options(steps=2, eval_episodes=4, policies=("wolves", "village"))
    started = time.time()
    run = launch(workspace, options=options, started_at=started, progress=lines.append)
    try:
        wolves, village = run.policy_servers["wolves"], run.policy_servers["village"]
        assert run.server is wolves and village.url != wolves.url
        assert wolves.state_dir == workspace.path / "state"
        assert village.state_dir == workspace.path / "state" / "policies" / "village"
        assert read_launch_file(workspace.path)["policy_servers"]["village"]["pid"] == village.pid
        evaluation = HeldOutEval(run, SuccessMetric(description="replies of even length", success_reward=0.5))
        evaluation.before()
        result = watch(run, settings=FAST, on_poll=evaluation.poll)
        evaluation.after()
        outcomes = evaluation.outcomes()
        saved = read_launch_file(workspace.path)["policy_evals"]
        played: dict[str, list[dict[str, object]]] = {}
        for name, server in run.policy_servers.items():
            with server.swarm() as swarm:
                played[name] = [swarm.get_episode(i) for phase in ("before", "after") for i in saved[name][phase]]
                status = swarm.status()
                issued = [t for t in swarm.list_tokens() if t["name"] == f"vibe-{workspace.path.name}"]
            assert status["step"] >= 2 and status["episodes"]["finished"] > 0, name  # both trained
            assert len(issued) == 1, name  # each server issued the client its own token
        record = training_record(run, result) | {"outcome": evaluation.outcome().to_dict()}
        record["policy_outcomes"] = {name: o.to_dict() for name, o in outcomes.items()}
    finally:
        stop(run)
    assert result.status == "completed" and result.steps >= 2
    assert sorted(outcomes) == ["village", "wolves"]
    for name, outcome in outcomes.items():
        assert outcome.before is not None and outcome.after is not None, name
        assert (outcome.before.step, outcome.before.episodes, outcome.after.episodes) == (0, 4, 4)
        assert {e["kind"] for e in played[name]} == {"eval"}
        before = played[name][:4]
        assert {c["policy_version"] for e in before for c in e["calls"]} == {0}  # type: ignore[attr-defined]
    # the same held-out games, seen from each side: the same items on both servers
    assert sorted(e["task_id"] for e in played["wolves"]) == sorted(e["task_id"] for e in played["village"])
    assert not any(server.is_alive() for server in run.all_servers())  # both stopped
    assert read_launch_file(workspace.path)["policy_servers"] == {}
    assert any("held-out round of the base policy: wolves: success rate" in line for line in lines), lines
    files = write_report(workspace, ReportInput("a sentence", "done", started, training=record))
    report, summary = files["report.md"].read_text(), json.loads(files["run.json"].read_text())
    assert "### Policy `wolves`" in report and "### Policy `village`" in report
    assert sorted(summary["policy_outcomes"]) == ["village", "wolves"]
    assert (
        summary["outcome_line"].startswith("wolves: success rate")
        and "; village: success rate" in summary["outcome_line"]
    )
    assert summary["policy_outcomes"]["village"]["verdict"] in ("improved", "no change detectable", "worse")
    # the chart has a train curve and a held-out curve for each policy, from its own server's metrics
    assert sorted(record["policy_metrics"]) == ["village", "wolves"]
    for name in ("wolves", "village"):
        steps = [line["step"] for line in record["policy_metrics"][name]]
        assert steps[:2] == [1, 2], name
    series = {each.name: each for each in curve_series(ReportInput("a sentence", "done", started, training=record))}
    assert sorted(series) == ["village", "wolves"]
    assert series["village"].metrics == record["policy_metrics"]["village"] != series["wolves"].metrics
    assert [p["step"] for p in series["village"].held_out] == [0, outcomes["village"].after.step]
    assert files["curves.png"].stat().st_size > 0
