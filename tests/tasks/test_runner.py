"""The task runner against live servers (scripted backends): groups, evals, errors, two servers, stopping, the CLI."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agentjet.cli.main import app
from agentjet.core import SwarmClient
from agentjet.core.backends.fakes import EchoBackend, ScriptedBackend
from agentjet.core.testing import RunningServer
from agentjet.tasks.base import Endpoint, Outcome, TaskItem
from agentjet.tasks.play.client_run import main as client_run_main
from agentjet.tasks.play.groups import member_seed
from agentjet.tasks.play.runner import RunSettings, TaskRunner
from agentjet.tasks.word import WORDS, FirstWord
from tests.signals import sigint_default
from tests.tasks.swarm_helpers import TOKEN, ChatFamily, chat, journal, say_the_word

ServerFactory = Callable[..., RunningServer]


@pytest.fixture
def word_server(
    live_server: ServerFactory, scripted_backend: Callable[..., ScriptedBackend], tmp_path: Path
) -> RunningServer:
    """Says the asked word for train words only: train reward 1, eval reward 0."""

    def reply(prompt: str) -> str:
        word = say_the_word(prompt)
        return word if word in WORDS else "no"

    return live_server(scripted_backend(reply))


def _run(family: Any, clients: Mapping[str, SwarmClient], **settings: Any) -> dict[str, Any]:
    return TaskRunner(family, clients, RunSettings(**settings)).run()


def test_groups_share_a_task_id_and_each_member_samples_with_its_own_seed(
    word_server: RunningServer, tmp_path: Path
) -> None:
    with SwarmClient(word_server.url, TOKEN) as client:
        summary = _run(FirstWord(), {"policy": client}, episodes=6, concurrency=3, group_size=3, seed=4)
        assert client.status()["episodes"]["in_flight"] == 0
    assert summary["episodes"] == 6 and summary["errors"] == 0 and summary["reward_mean"] == 1.0
    assert summary["group_size"] == 3 and summary["interrupted"] is False
    records = journal(tmp_path / "state")
    groups: dict[str, list[int]] = defaultdict(list)
    for record in records:
        assert (record.kind, record.agent, record.status, record.reward) == ("train", "word", "ended", 1.0)
        assert record.metadata["reply"] == record.metadata["word"]
        groups[record.task_id].append(record.calls[0].sampling["seed"])
    items = FirstWord().items("train", count=2, seed=4)
    assert sorted(groups) == sorted(item.task_id for item in items)
    for item in items:  # one seed per member: the group samples differently, reproducibly
        assert sorted(groups[item.task_id]) == sorted(member_seed(item.seed, k) for k in range(3))


def test_eval_every_runs_the_eval_split_as_eval_episodes(word_server: RunningServer, tmp_path: Path) -> None:
    with SwarmClient(word_server.url, TOKEN) as client:
        summary = _run(FirstWord(), {"policy": client}, episodes=4, group_size=2, eval_every=2, eval_episodes=3)
    assert summary["reward_mean"] == 1.0 and summary["episodes"] == 4
    assert [(e["after_episodes"], e["episodes"], e["reward_mean"]) for e in summary["evals"]] == [
        (2, 3, 0.0),
        (4, 3, 0.0),
    ]
    assert summary["eval_reward_mean"] == 0.0
    kinds = [(str(r.kind), r.task_id.split("-")[1]) for r in journal(tmp_path / "state")]
    assert kinds.count(("eval", "eval")) == 6 and kinds.count(("train", "train")) == 4  # eval items are eval episodes


@pytest.mark.parametrize("episodes", [0, 4])
def test_eval_first_begins_every_eval_episode_before_any_train_episode(
    word_server: RunningServer, tmp_path: Path, episodes: int
) -> None:
    with SwarmClient(word_server.url, TOKEN) as client:
        settings = {"episodes": episodes, "group_size": 2, "concurrency": 2, "eval_first": True, "eval_episodes": 3}
        summary = _run(FirstWord(), {"policy": client}, **settings)
    assert [(e["after_episodes"], e["episodes"], e["reward_mean"]) for e in summary["evals"]] == [(0, 3, 0.0)]
    assert summary["episodes"] == episodes and summary["errors"] == 0
    assert summary["reward_mean"] == (1.0 if episodes else None)  # train results are counted as train, not eval
    records = sorted(journal(tmp_path / "state"), key=lambda r: r.created_at)
    kinds = [str(r.kind) for r in records]
    assert kinds[:3] == ["eval"] * 3 and kinds.count("train") == episodes  # every eval episode was begun first


class _SlowEvalBegins(SwarmClient):
    """Eval begins take a while: a worker free for a train job would otherwise begin it first."""

    def begin_episode(self, task_id: str, **kwargs: Any) -> Any:
        if kwargs.get("kind") == "eval":
            time.sleep(0.3)
        return super().begin_episode(task_id, **kwargs)


def test_eval_first_holds_train_begins_until_slow_eval_begins_are_done(
    word_server: RunningServer, tmp_path: Path
) -> None:
    with _SlowEvalBegins(word_server.url, TOKEN) as client:
        settings = {"episodes": 8, "group_size": 2, "concurrency": 4, "eval_first": True, "eval_episodes": 3}
        summary = _run(FirstWord(), {"policy": client}, **settings)
    assert summary["episodes"] == 8 and summary["errors"] == 0
    kinds = [str(r.kind) for r in sorted(journal(tmp_path / "state"), key=lambda r: r.created_at)]
    assert kinds == ["eval"] * 3 + ["train"] * 8


def test_a_failing_or_malformed_run_aborts_its_episode_and_counts_an_error(
    live_server: ServerFactory, echo_backend: EchoBackend, tmp_path: Path
) -> None:
    server = live_server(echo_backend)
    family = ChatFamily(fail=frozenset({"chat-train-0-1"}))
    with SwarmClient(server.url, TOKEN) as client:
        summary = _run(family, {"policy": client}, episodes=4, group_size=2, concurrency=2)
        wrong = ChatFamily(name="wrong", rewards_override={"other": 1.0})
        bad = _run(wrong, {"policy": client}, episodes=2, group_size=1)
        assert client.status()["episodes"]["in_flight"] == 0
    assert summary["episodes"] == 2 and summary["errors"] == 2  # item 1's group: two episodes
    assert summary["error_messages"] == ["RuntimeError: agent broke on chat-train-0-1"] * 2
    assert (
        bad["errors"] == 2 and "rewards name ['other'], the family's servers are ['policy']" in bad["error_messages"][0]
    )
    status = {(r.task_id, r.status) for r in journal(tmp_path / "state")}
    assert status == {
        ("chat-train-0-0", "ended"),
        ("chat-train-0-1", "aborted"),
        ("wrong-train-0-0", "aborted"),
        ("wrong-train-0-1", "aborted"),
    }


def test_two_servers_hold_one_episode_each_and_get_their_own_reward(
    live_server: ServerFactory, echo_backend: EchoBackend, tmp_path: Path
) -> None:
    wolves = live_server(echo_backend, state_dir=tmp_path / "wolves")
    village = live_server(EchoBackend(echo_backend.tokenizer), state_dir=tmp_path / "village")
    family = ChatFamily(
        name="pair", servers=("wolves", "village"), reward=lambda s, i, r: 1.0 if s == "wolves" else -0.5
    )
    with SwarmClient(wolves.url, TOKEN) as w, SwarmClient(village.url, TOKEN) as v:
        summary = _run(family, {"wolves": w, "village": v}, episodes=4, group_size=2)
    assert summary["rewards"] == {"wolves": 1.0, "village": -0.5} and summary["errors"] == 0
    per_server = {name: journal(tmp_path / name) for name in ("wolves", "village")}
    assert {r.reward for r in per_server["wolves"]} == {1.0} and {r.reward for r in per_server["village"]} == {-0.5}
    assert sorted(r.task_id for r in per_server["wolves"]) == sorted(r.task_id for r in per_server["village"])
    assert all(r.agent == "pair" and len(r.calls) == 1 for rs in per_server.values() for r in rs)


class _Blocking:
    """A family whose agents make one call, then hold their episode until released."""

    name: str = "blocking"
    servers: Sequence[str] = ("policy",)

    def __init__(self) -> None:
        self.release = threading.Event()

    def items(self, split: str, *, count: int, seed: int) -> list[TaskItem]:
        return [TaskItem(f"b-{split}-{i}", i, {}) for i in range(count)]

    def run(self, item: TaskItem, llms: Mapping[str, Endpoint]) -> Outcome:
        chat(llms["policy"], "hold", item.seed)
        self.release.wait(timeout=60)
        return Outcome.single(1.0)


def _wait_in_flight(client: SwarmClient, count: int, calls: int) -> None:
    deadline = time.monotonic() + 30
    while (s := client.status())["episodes"]["in_flight"] < count or s["calls_total"] < calls:
        assert time.monotonic() < deadline, s
        time.sleep(0.02)


def test_stop_aborts_the_open_episodes_and_begins_no_more(
    live_server: ServerFactory, echo_backend: EchoBackend
) -> None:
    server = live_server(echo_backend)
    family = _Blocking()
    with SwarmClient(server.url, TOKEN) as client:
        runner = TaskRunner(family, {"policy": client}, RunSettings(episodes=8, concurrency=3, group_size=2))
        result: dict[str, Any] = {}
        thread = threading.Thread(target=lambda: result.update(runner.run()))
        thread.start()
        _wait_in_flight(client, 3, calls=3)
        runner.stop()
        thread.join(timeout=30)
        family.release.set()
        episodes = client.status()["episodes"]
    assert not thread.is_alive()
    assert result["interrupted"] is True and result["aborted_on_interrupt"] == 3 and result["episodes"] == 0
    assert episodes["in_flight"] == 0 and episodes["aborted"] == 3 and episodes["finished"] == 0


_SLOW_CLIENT = """
import threading
import httpx
from agentjet.tasks.base import Outcome, TaskItem

class Slow:
    name, servers = "slow", ("policy",)

    def items(self, split, *, count, seed):
        return [TaskItem(f"slow-{split}-{i}", i, {}) for i in range(count)]

    def run(self, item, llms):
        ep = llms["policy"]
        httpx.post(f"{ep.base_url}/chat/completions", headers={"Authorization": f"Bearer {ep.api_key}"},
                   json={"model": "m", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 2}, timeout=60)
        threading.Event().wait(120)  # an agent that takes its time: Ctrl-C must not wait for it
        return Outcome.single(1.0)

TASK = Slow()
"""


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_ctrl_c_or_kill_aborts_every_open_episode(
    live_server: ServerFactory, echo_backend: EchoBackend, tmp_path: Path, signum: int
) -> None:
    server = live_server(echo_backend)
    client_file = tmp_path / "slow_task.py"
    client_file.write_text(_SLOW_CLIENT)
    command = [
        sys.executable,
        "-m",
        "agentjet.cli.main",
        "client",
        "run",
        str(client_file),
        "--server",
        server.url,
        "--concurrency",
        "3",
        "--episodes",
        "9",
        "--group-size",
        "3",
        "--json",
    ]
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTJET_") or k == "AGENTJET_CACHE_DIR"}
    proc = subprocess.Popen(
        command,
        env={**env, "AGENTJET_TOKEN": TOKEN},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=sigint_default,
    )
    try:
        with SwarmClient(server.url, TOKEN) as client:
            _wait_in_flight(client, 3, calls=3)
            proc.send_signal(signum)
            out, err = proc.communicate(timeout=120)  # generous: for a loaded machine
            episodes = client.status()["episodes"]
    finally:
        proc.kill()
    assert proc.returncode == 130, err.decode()
    summary = json.loads(out)
    assert summary["interrupted"] is True and summary["aborted_on_interrupt"] == 3
    assert episodes == {"in_flight": 0, "finished": 0, "aborted": 3, "reclaimed": 0}


def test_cli_runs_a_task_with_a_client_token_from_the_env(word_server: RunningServer) -> None:
    with SwarmClient(word_server.url, token=TOKEN) as admin:
        client_token = admin.create_token("runner")["token"]  # least privilege: no admin token needed
    args = [
        "client",
        "run",
        "word",
        "--server",
        word_server.url,
        "--episodes",
        "4",
        "--group-size",
        "2",
        "--json",
        "--param",
        "max_tokens=3",
        "--eval-every",
        "4",
        "--eval-episodes",
        "2",
    ]
    result = CliRunner().invoke(app, args, env={"AGENTJET_TOKEN": client_token})
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["task"] == "word" and summary["servers"] == {"policy": word_server.url}
    assert summary["episodes"] == 4 and summary["reward_mean"] == 1.0 and summary["evals"][0]["reward_mean"] == 0.0
    table = CliRunner().invoke(app, args[:-7], env={"AGENTJET_TOKEN": TOKEN})
    assert table.exit_code == 0 and "reward mean" in table.stdout and "4 ended of 4 requested" in table.stdout


@pytest.mark.parametrize(
    "args, message",
    [
        (["chess", "--server", "http://127.0.0.1:9"], "unknown task 'chess': registered tasks are arithmetic"),
        (["word", "--server", "a=http://127.0.0.1:9"], "needs servers policy .*unknown a"),
        (["word", "--server", "http://127.0.0.1:9", "--param", "nope"], "key=value"),
        (["word", "--server", "ftp://x"], "server url must look like http://HOST:PORT"),
    ],
)
def test_cli_errors_exit_2_with_a_message(args: list[str], message: str) -> None:
    result = CliRunner().invoke(app, ["client", "run", *args])
    assert result.exit_code == 2
    assert re.search(message, result.stderr), result.stderr


def test_the_module_entry_is_client_run_without_the_cli(
    word_server: RunningServer, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`python -m agentjet.tasks.play.client_run` (vibe's host clients): the CLI's flags, output and exit statuses."""
    monkeypatch.setenv("AGENTJET_TOKEN", TOKEN)
    args = ["word", "--server", word_server.url, "--episodes", "4", "--group-size", "2", "--param", "max_tokens=3"]
    assert client_run_main([*args, "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["task"] == "word" and summary["episodes"] == 4 and summary["reward_mean"] == 1.0
    assert client_run_main(args) == 0 and "4 ended of 4 requested" in capsys.readouterr().out
    assert client_run_main(["chess", "--server", "http://127.0.0.1:9"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: unknown task 'chess'") and len(err.strip().splitlines()) == 1


def test_member_seeds_differ_and_member_zero_keeps_the_item_seed() -> None:
    seeds = [member_seed(12, k) for k in range(8)]
    assert seeds[0] == 12 and len(set(seeds)) == 8 and seeds == [member_seed(12, k) for k in range(8)]


def test_the_client_file_example_in_the_docs_runs(
    live_server: ServerFactory, scripted_backend: Callable[..., ScriptedBackend], tmp_path: Path
) -> None:
    docs = (Path(__file__).parents[2] / "docs" / "tasks.md").read_text()
    source = re.search(r"```python\n(# my_task\.py.*?)```", docs, re.S)
    assert source, "docs/tasks.md lost its client file example"
    client_file = tmp_path / "my_task.py"
    client_file.write_text(source.group(1))
    cities = {"France": "Paris", "Japan": "Tokyo", "Peru": "Lima", "Kenya": "Nairobi"}
    server = live_server(scripted_backend(lambda prompt: next(c for k, c in cities.items() if k in prompt)))
    args = ["client", "run", str(client_file), "--server", server.url, "--token", TOKEN, "--json"]
    result = CliRunner().invoke(app, [*args, "--episodes", "6", "--group-size", "2", "--param", "max_tokens=4"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["task"] == "capitals" and summary["episodes"] == 6 and summary["reward_mean"] == 1.0


def test_a_wrong_token_fails_before_any_episode(live_server: ServerFactory, echo_backend: EchoBackend) -> None:
    server = live_server(echo_backend)
    result = CliRunner().invoke(app, ["client", "run", "word", "--server", server.url, "--token", "wrong"])
    assert result.exit_code == 2 and "error:" in result.stderr and "token" in result.stderr.lower(), result.stderr
    with SwarmClient(server.url, TOKEN) as client:
        assert client.status()["episodes"] == {"in_flight": 0, "finished": 0, "aborted": 0, "reclaimed": 0}


def test_run_settings_from_a_command_line_take_its_fields_and_default_the_rest() -> None:
    import argparse

    options = argparse.Namespace(episodes=5, concurrency=2, seed=9, server=["http://x"], as_json=True)
    settings = RunSettings.from_options(options)
    assert (settings.episodes, settings.concurrency, settings.seed) == (5, 2, 9)
    assert settings.eval_episodes == RunSettings().eval_episodes and settings.update_every is None
    with pytest.raises(ValueError, match="concurrency"):
        RunSettings.from_options(argparse.Namespace(concurrency=0))


def test_the_begin_gate_opens_after_every_eval_begin_and_lets_go_when_stopping() -> None:
    from agentjet.tasks.play.runner import _BeginGate

    gate = _BeginGate(2)
    waited: list[float] = []
    waiter = threading.Thread(target=lambda: (gate.wait(lambda: False), waited.append(time.monotonic())))
    waiter.start()
    gate.begun()
    time.sleep(0.3)
    assert not waited  # one of two eval begins settled: train begins still wait
    opened = time.monotonic()
    gate.begun()
    waiter.join(timeout=5)
    assert waited and waited[0] >= opened
    stuck = _BeginGate(1)
    started = time.monotonic()
    stuck.wait(lambda: time.monotonic() - started > 0.3)  # stop(): the wait ends without the gate opening
    assert time.monotonic() - started < 2
    _BeginGate(0).wait(lambda: False)  # no eval episode: open from the start
