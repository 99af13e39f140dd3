"""`agentjet server start|repair|token`: one clear line per refusal, nothing left behind, least-privileged tokens."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from typer.testing import CliRunner

from agentjet.cli.main import app
from agentjet.core.episodes.journal import Journal
from agentjet.core.testing import RunningServer
from tests.conftest import TOKEN
from tests.core.test_journal_repair import _record

runner = CliRunner()


def _one_error_line(output: str) -> str:
    lines = [line for line in output.strip().splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), output
    assert "Traceback" not in output
    return lines[0]


@pytest.mark.parametrize("model", ["/nonexistent/model", "gpt-9", "./not-here"])
def test_a_bad_model_is_one_line_and_leaves_nothing_behind(tmp_path: Path, model: str) -> None:
    state = tmp_path / "state"
    result = runner.invoke(app, ["server", "start", "--model", model, "--state-dir", str(state)])
    assert result.exit_code == 2
    _one_error_line(result.output)
    assert not state.exists()


def test_an_adapter_on_more_layers_than_the_model_has_is_one_line_before_anything_starts(tmp_path: Path) -> None:
    """`lora.layers` past the model's depth would fail the first update minutes in: refused at the start."""
    config = tmp_path / "train.yaml"
    config.write_text("lora:\n  layers: 5\n")  # tiny has 2 layers
    state = tmp_path / "state"
    result = runner.invoke(
        app, ["server", "start", "--model", "tiny", "--config", str(config), "--state-dir", str(state)]
    )
    assert result.exit_code == 2
    assert _one_error_line(result.output) == "error: lora.layers is 5, but the model has 2 layers: give at most 2"
    assert not state.exists()


def test_a_short_token_is_refused_before_anything_starts(tmp_path: Path) -> None:
    result = runner.invoke(
        app, ["server", "start", "--model", "tiny", "--state-dir", str(tmp_path / "s")], env={"AGENTJET_TOKEN": "short"}
    )
    assert result.exit_code == 2 and "at least 24" in _one_error_line(result.output)
    assert not (tmp_path / "s").exists()


def _damaged_state(tmp_path: Path) -> Path:
    state = tmp_path / "state"
    journal = Journal(state / "journal.sqlite")
    for index in range(200):
        journal.append(_record(index))
    journal.close()
    path = state / "journal.sqlite"
    data = bytearray(path.read_bytes())
    middle = len(data) // 2 // 4096 * 4096
    data[middle : middle + 4096] = random.Random(1).randbytes(4096)
    path.write_bytes(bytes(data))
    return state


def test_a_damaged_journal_stops_the_start_and_repair_salvages_it(tmp_path: Path, free_port: int) -> None:
    state = _damaged_state(tmp_path)
    refused = runner.invoke(app, ["server", "start", "--model", "tiny", "--state-dir", str(state)])
    assert refused.exit_code == 2
    assert f"agentjet server repair {state}" in _one_error_line(refused.output)
    repaired = runner.invoke(app, ["server", "repair", str(state)])
    assert repaired.exit_code == 0 and "salvaged" in repaired.output and "lost" in repaired.output
    again = runner.invoke(app, ["server", "repair", str(state), "--json"])
    assert again.exit_code == 0 and '"damaged_copy": null' in again.output  # intact now
    env = {**os.environ, "AGENTJET_TOKEN": TOKEN}
    command = [sys.executable, "-m", "agentjet.cli.main", "server", "start", "--model", "tiny", "--port",
               str(free_port), "--state-dir", str(state), "--log-level", "WARNING"]  # fmt: skip
    proc = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                if httpx.get(f"http://127.0.0.1:{free_port}/ready", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert proc.poll() is None and time.monotonic() < deadline
            time.sleep(0.1)
        status = httpx.get(f"http://127.0.0.1:{free_port}/swarm/status", headers={"Authorization": f"Bearer {TOKEN}"})
        assert 100 <= status.json()["episodes"]["finished"] < 200  # the salvaged episodes, and only those
    finally:
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=30)


def test_repair_refuses_a_state_dir_a_server_is_using(
    live_server: Callable[..., RunningServer], echo_backend: Any, tmp_path: Path
) -> None:
    live_server(echo_backend)
    result = runner.invoke(app, ["server", "repair", str(tmp_path / "state")])
    assert result.exit_code == 2 and "stop it first" in _one_error_line(result.output)


def test_tokens_from_the_state_dir(
    live_server: Callable[..., RunningServer], echo_backend: Any, tmp_path: Path
) -> None:
    server = live_server(echo_backend)
    state = str(tmp_path / "state")
    created = runner.invoke(app, ["server", "token", "create", "laptop", "--state-dir", state])
    assert created.exit_code == 0
    secret = created.stdout.strip().splitlines()[-1]
    assert secret.startswith("ajc_") and secret not in (tmp_path / "state" / "tokens.json").read_text()
    client = {"Authorization": f"Bearer {secret}"}
    assert httpx.get(f"{server.url}/swarm/status", headers=client).status_code == 200  # the running server sees it
    assert httpx.put(f"{server.url}/swarm/config", json={}, headers=client).status_code == 403
    listed = runner.invoke(app, ["server", "token", "list", "--state-dir", state])
    assert "laptop" in listed.output and "live" in listed.output and secret not in listed.output
    revoked = runner.invoke(app, ["server", "token", "revoke", "laptop", "--state-dir", state])
    assert revoked.exit_code == 0 and "revoked" in revoked.output
    assert httpx.get(f"{server.url}/swarm/status", headers=client).status_code == 401
    missing = runner.invoke(app, ["server", "token", "revoke", "laptop", "--state-dir", state])
    assert missing.exit_code == 2 and "no live client token" in _one_error_line(missing.output)


def test_tokens_over_http_and_the_argv_warning(live_server: Callable[..., RunningServer], echo_backend: Any) -> None:
    server = live_server(echo_backend)
    quiet = runner.invoke(app, ["server", "token", "create", "ci", "--url", server.url], env={"AGENTJET_TOKEN": TOKEN})
    assert quiet.exit_code == 0 and "warning" not in quiet.output
    secret = quiet.stdout.strip().splitlines()[-1]
    loud = runner.invoke(app, ["server", "token", "list", "--url", server.url, "--token", TOKEN, "--json"])
    assert loud.exit_code == 0 and "visible to other users" in loud.output and '"ci"' in loud.output
    assert secret not in loud.output
    as_client = runner.invoke(
        app, ["server", "token", "create", "x", "--url", server.url], env={"AGENTJET_TOKEN": secret}
    )
    assert as_client.exit_code == 2 and "admin token" in _one_error_line(as_client.output)


@pytest.mark.parametrize(
    ("flags", "words"),
    [
        (["--backend", "vllm"], "needs --vllm-python"),
        (["--backend", "vllm", "--vllm-python", "/nonexistent/python"], "does not exist"),
        (["--backend", "vllm", "--vllm-python", "/bin/sh", "--vllm-url", "http://127.0.0.1:1"], "not both"),
        (["--backend", "vllm", "--vllm-url", "127.0.0.1:8000"], "http:// or https://"),
        (["--vllm-url", "http://127.0.0.1:8000"], "need --backend vllm"),
        (["--backend", "tgi"], "backend"),
        (["--device", "cuda:7"], "cuda:7"),
        (["--device", "tpu"], "not one of"),
        (["--dtype", "float16"], "dtype"),
    ],
)
def test_a_backend_or_placement_mistake_is_one_line_and_leaves_nothing_behind(
    tmp_path: Path, flags: list[str], words: str
) -> None:
    state = tmp_path / "state"
    result = runner.invoke(app, ["server", "start", "--model", "tiny", "--state-dir", str(state), *flags])
    assert result.exit_code == 2
    assert words in _one_error_line(result.output)
    assert not state.exists()


@pytest.mark.parametrize(
    ("env", "words"),
    [({"AGENTJET_DTYPE": "float16"}, "float16"), ({"AGENTJET_DEVICE": "tpu"}, "tpu")],
)
def test_placement_from_the_environment_is_read_and_checked(tmp_path: Path, env: dict[str, str], words: str) -> None:
    """What vibe and campaigns pass on to the servers they launch: refused as the flag would be."""
    state = tmp_path / "state"
    result = runner.invoke(app, ["server", "start", "--model", "tiny", "--state-dir", str(state)], env=env)
    assert result.exit_code == 2
    assert words in _one_error_line(result.output)
    assert not state.exists()
