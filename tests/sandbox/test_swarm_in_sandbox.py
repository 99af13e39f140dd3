"""A swarm client inside a real sandbox trains a host server through the bridge (no network, no token inside).

`client run --sandbox` on docker and bwrap against a tiny training server on loopback: episodes
end in the server's journal and its step advances. A user's client file is staged in, and what it
can see and do from inside (no token, no config writes) comes back in the episodes' metadata.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentjet.cli.main import app
from agentjet.core import ConfigError, SwarmClient, TrainConfig
from agentjet.core.config import CollectConfig, GrpoConfig, OptimConfig
from agentjet.core.testing import RunningServer
from agentjet.core.types import EpisodeStatus
from agentjet.sandbox.result import RunResult, StopReason
from agentjet.tasks.play.runner import RunSettings
from agentjet.tasks.play.sandboxed_run import (
    SandboxedRun,
    client_limits,
    ending,
    explain,
    inner_command,
    parse_summary,
    run_in_sandbox,
)
from tests.tasks.swarm_helpers import TOKEN, journal, tiny_training_server, wait_for_step

CONFIG = TrainConfig(  # one update per group of two episodes
    grpo=GrpoConfig(group_size=2),
    collect=CollectConfig.model_validate({"strategy": "tasks", "tasks": 1}),
    optim=OptimConfig(lr=1e-3),
)

CLIENT_FILE = '''
import os
import sys
from pathlib import Path
import httpx
from openai import OpenAI
from agentjet.tasks.base import Outcome, TaskItem

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import probe_helper  # a sibling module, staged with the client's folder

class Probe:
    """Answers one chat call, and reports what the sandbox lets it see and do."""
    name = "probe"
    servers = ("policy",)

    def items(self, split, *, count, seed):
        return [TaskItem(f"probe-{split}-{i // 2}", seed + i, {}) for i in range(count)]

    def run(self, item, llms):
        endpoint = llms["policy"]
        llm = OpenAI(base_url=endpoint.base_url, api_key=endpoint.api_key, max_retries=0, timeout=120)
        reply = llm.chat.completions.create(model="tiny", messages=[{"role": "user", "content": "hi"}], max_tokens=4)
        server = os.environ["AGENTJET_SERVER"]
        config = httpx.get(f"{server}/swarm/config").json()["config"]
        put = httpx.put(f"{server}/swarm/config", json=config).status_code
        stop = httpx.post(f"{server}/swarm/engine/stop").status_code
        return Outcome.single(
            1.0 if reply.choices[0].message.content else 0.0,
            token_env="AGENTJET_TOKEN" in os.environ,
            base_url=endpoint.base_url,
            server=server,
            put_config=put,
            stop_engine=stop,
            uid=os.getuid(),
            helper=probe_helper.GREETING,
            data=(HERE / "data" / "items.txt").read_text().strip(),
            staged=sorted(p.relative_to(HERE).as_posix() for p in HERE.rglob("*") if p.is_file()),
        )

TASK = Probe()
'''


@pytest.fixture
def server(tmp_path: Path) -> Iterator[RunningServer]:
    with tiny_training_server(tmp_path / "state", CONFIG) as running:
        yield running


def _ended(state_dir: Path) -> list[dict[str, object]]:
    records = journal(state_dir)
    return [
        {"reward": r.reward, "task_id": r.task_id, **dict(r.metadata)}
        for r in records
        if r.status is EpisodeStatus.ENDED
    ]


def test_word_trains_from_inside_the_sandbox(backend: str, server: RunningServer, tmp_path: Path) -> None:
    settings = RunSettings(episodes=4, concurrency=2, group_size=2)
    run = run_in_sandbox(
        "word",
        backend=backend,
        servers=[server.url],
        token=TOKEN,
        settings=settings,
        limits=client_limits(timeout_s=300),
    )
    assert run.result.ok, (run.result.stopped_by, run.result.stderr[-3000:])
    assert run.summary is not None and run.summary["episodes"] == 4 and run.summary["errors"] == 0
    assert TOKEN not in run.result.stdout + run.result.stderr
    assert len(_ended(tmp_path / "state")) == 4  # the server journaled every episode the sandbox ran
    with SwarmClient(server.url, TOKEN) as host_side:
        status = wait_for_step(host_side, 1)  # and trained on them
        assert status["episodes"]["finished"] == 4 and status["episodes"]["in_flight"] == 0


def test_a_client_file_runs_sandboxed_from_the_cli_without_the_token(
    backend: str, server: RunningServer, tmp_path: Path
) -> None:
    folder = tmp_path / "my-agent"  # the client's folder is staged: sibling modules and data come along
    (folder / "data").mkdir(parents=True)
    client = folder / "probe_client.py"
    client.write_text(CLIENT_FILE)
    (folder / "probe_helper.py").write_text("GREETING = 'hello from a sibling'\n")
    (folder / "data" / "items.txt").write_text("three items\n")
    for never in (".git/config", ".venv/pyvenv.cfg", "__pycache__/x.pyc", "token", ".env"):
        (folder / never).parent.mkdir(parents=True, exist_ok=True)
        (folder / never).write_text(TOKEN)
    argv = ["client", "run", str(client), "--server", server.url, "--token", TOKEN, "--sandbox", backend]
    argv += ["--episodes", "2", "--group-size", "2", "--json", "--sandbox-timeout", "300"]
    result = CliRunner().invoke(app, argv)
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout[result.stdout.index("{") :])
    assert summary["episodes"] == 2 and summary["reward_mean"] == 1.0
    ended = _ended(tmp_path / "state")
    assert len(ended) == 2
    port = server.port
    for seen in ended:
        assert seen["token_env"] is False and seen["uid"] == 65534
        assert seen["server"] == f"http://127.0.0.1:{port}" and seen["base_url"] == f"http://127.0.0.1:{port}/v1"
        assert seen["put_config"] == 403 and seen["stop_engine"] == 403
        assert seen["helper"] == "hello from a sibling" and seen["data"] == "three items"
        assert seen["staged"] == ["data/items.txt", "probe_client.py", "probe_helper.py"]  # no git, venv, secrets
    with SwarmClient(server.url, TOKEN) as host_side:
        assert wait_for_step(host_side, 1)["state"] == "rolling"  # it trained, and was never stopped


TWO_SERVER_CLIENT = '''
from openai import OpenAI
from agentjet.tasks.base import Outcome, TaskItem

class TwoSides:
    """One chat call on each side's server; each side gets its own reward."""
    name = "two-sides"
    servers = ("wolves", "village")

    def items(self, split, *, count, seed):
        return [TaskItem(f"sides-{split}-{i // 2}", seed + i, {}) for i in range(count)]

    def run(self, item, llms):
        seen = {}
        for side in self.servers:
            endpoint = llms[side]
            llm = OpenAI(base_url=endpoint.base_url, api_key=endpoint.api_key, max_retries=0, timeout=120)
            llm.chat.completions.create(model="tiny", messages=[{"role": "user", "content": side}], max_tokens=3)
            seen[side] = endpoint.base_url
        return Outcome({"wolves": 1.0, "village": 0.25}, {"bases": seen})

TASK = TwoSides()
'''


def test_one_sandboxed_client_trains_two_servers_each_on_its_own_side(backend: str, tmp_path: Path) -> None:
    folder = tmp_path / "agent"
    folder.mkdir()
    (folder / "sides.py").write_text(TWO_SERVER_CLIENT)
    with (
        tiny_training_server(tmp_path / "wolves", CONFIG) as wolves,
        tiny_training_server(tmp_path / "village", CONFIG) as village,
    ):
        run = run_in_sandbox(
            str(folder / "sides.py"),
            backend=backend,
            servers=[f"wolves={wolves.url}", f"village={village.url}"],
            token=TOKEN,
            settings=RunSettings(episodes=2, concurrency=2, group_size=2),
            limits=client_limits(timeout_s=300),
        )
        assert run.result.ok, (run.result.stopped_by, run.result.stderr[-3000:])
        assert run.summary is not None and run.summary["episodes"] == 2 and run.summary["errors"] == 0
        for side, server, reward in (("wolves", wolves, 1.0), ("village", village, 0.25)):
            ended = _ended(tmp_path / side)
            assert [e["reward"] for e in ended] == [reward, reward]  # each server journaled its own side
            for seen in ended:  # every side reached its own server on that server's port inside the sandbox
                assert seen["bases"] == {
                    "wolves": f"http://127.0.0.1:{wolves.port}/v1",
                    "village": f"http://127.0.0.1:{village.port}/v1",
                }
            with SwarmClient(server.url, TOKEN) as host_side:
                assert wait_for_step(host_side, 1)["state"] == "rolling"  # and both trained


# ---- flags -> the inner run (no sandbox needed) --------------------------------------------------------


def test_the_inner_command_repeats_every_run_setting_as_a_flag_the_cli_accepts() -> None:
    settings = RunSettings(
        episodes=9, concurrency=3, eval_every=4, eval_episodes=5, group_size=3, update_every=6, seed=7
    )
    inner = inner_command("word", "http://127.0.0.1:8710", params=["max_tokens=3"], settings=settings, log_level="INFO")
    assert inner[:5] == ["python3", "-m", "agentjet", "client", "run"]
    flags = dict(zip(inner[5::2], inner[6::2], strict=False))
    assert flags["--episodes"] == "9" and flags["--eval-every"] == "4" and flags["--update-every"] == "6"
    assert flags["--group-size"] == "3" and flags["--seed"] == "7" and flags["--param"] == "max_tokens=3"
    checked = CliRunner().invoke(app, [*inner[3:], "--help"])  # an unknown flag would fail here, not in the sandbox
    assert checked.exit_code == 0, checked.output


@pytest.mark.parametrize(
    ("task", "servers", "sandbox", "error"),
    [
        ("word", ["http://127.0.0.1:1", "http://127.0.0.1:2"], "docker", "need a NAME=URL each"),
        ("word", ["a=http://127.0.0.1:1", "b=http://localhost:1"], "docker", "share one"),
        ("word", [], "docker", "needs a --server"),
        ("word", ["ftp://x"], "docker", "must look like http"),
        ("missing_client.py", ["http://127.0.0.1:1"], "docker", "does not exist"),
        ("word", ["http://127.0.0.1:1"], "chroot", "unknown sandbox 'chroot'"),
    ],
)
def test_bad_sandbox_flags_fail_before_any_sandbox_starts(
    task: str, servers: list[str], sandbox: str, error: str
) -> None:
    with pytest.raises(ConfigError, match=error):
        run_in_sandbox(task, backend=sandbox, servers=servers, token=None, settings=RunSettings())


def test_a_run_without_a_summary_is_explained_by_how_it_ended() -> None:
    result = RunResult(
        backend="bwrap",
        exit_code=137,
        stopped_by=StopReason.MEMORY,
        stdout="no json here\n",
        stderr="".join(f"line {n}\n" for n in range(20)),
        stdout_truncated=False,
        stderr_truncated=False,
        wall_s=1.0,
        cpu_s=None,
        peak_memory_bytes=None,
        detail="over 2g",
    )
    assert ending(result) == "exit 137, stopped by memory: over 2g"
    run = SandboxedRun(parse_summary(result.stdout), result)
    assert run.summary is None
    message = str(explain(run))
    assert message.startswith("the sandboxed client run ended without a summary (exit 137, stopped by memory: over 2g)")
    assert message.endswith("line 19") and "line 5\n" in message and "line 4\n" not in message  # the last 15 lines
