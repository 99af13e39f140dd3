"""Starting a server: private state, where the admin token comes from, readiness, TLS, and no silent outage."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import shutil
import stat
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from agentjet.core import SwarmClient
from agentjet.core.backends.fakes import EchoBackend
from agentjet.core.config import ServerSettings
from agentjet.core.engine import Engine
from agentjet.core.errors import ConfigError, TrainingDown
from agentjet.core.server.app import admin_token, create_app
from agentjet.core.server.http_server import is_loopback, uvicorn_config
from agentjet.core.state_lock import StateDirLock
from agentjet.core.testing import RunningServer, serve_in_thread
from agentjet.core.training.loop import TrainingLoop
from agentjet.core.types import EpisodeKind
from tests.conftest import TOKEN
from tests.core.test_training_loop import CONFIG, FakeTrainer

HEADERS = {"Authorization": f"Bearer {TOKEN}"}


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_state_is_private(live_server: Callable[..., RunningServer], echo_backend: Any, tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir(mode=0o755)
    (state / "journal.sqlite").touch(mode=0o644)  # left world-readable by an older version
    server = live_server(echo_backend)
    httpx.post(f"{server.url}/swarm/tokens", json={"name": "laptop"}, headers=HEADERS)
    assert _mode(state) == 0o700
    for name in ("token", "secret", "journal.sqlite", "tokens.json", "server.lock"):
        assert _mode(state / name) == 0o600, name
    assert TOKEN not in (state / "tokens.json").read_text()


def test_the_admin_token_comes_from_env_or_file_never_short_and_is_kept_across_restarts(tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir()
    generated, was_new = admin_token(ServerSettings(state_dir=state))
    assert was_new and len(generated) >= 24 and (state / "token").read_text() == generated
    assert admin_token(ServerSettings(state_dir=state)) == (generated, False)  # a restart keeps it
    token_file = tmp_path / "admin.token"
    token_file.write_text("from-a-file-0123456789-abcdef\nignored second line\n")
    assert admin_token(ServerSettings(state_dir=state, token_file=token_file))[0] == "from-a-file-0123456789-abcdef"
    assert (state / "token").read_text() == "from-a-file-0123456789-abcdef"  # status finds it there
    for weak in ("short", "   "):
        with pytest.raises(ConfigError, match="at least 24"):
            admin_token(ServerSettings(state_dir=state, token=weak + "x"))
    token_file.write_text("")
    with pytest.raises(ConfigError, match="empty"):
        admin_token(ServerSettings(state_dir=state, token_file=token_file))


def test_one_server_per_state_dir(live_server: Callable[..., RunningServer], echo_backend: Any, tmp_path: Path) -> None:
    live_server(echo_backend)
    assert StateDirLock(tmp_path / "state").holder() == os.getpid()
    second = create_app(ServerSettings(model="tiny", state_dir=tmp_path / "state", token=TOKEN), backend=echo_backend)
    with pytest.raises(RuntimeError, match="died during startup"), serve_in_thread(second):
        pass


class SlowStart(EchoBackend):
    """A backend that boots when told to: /ready must wait for it."""

    def __init__(self, tokenizer: Any) -> None:
        super().__init__(tokenizer)
        self.go = threading.Event()

    async def start(self) -> None:
        await asyncio.to_thread(self.go.wait, 30)
        await super().start()


def test_ready_says_503_until_episodes_can_begin(tiny_tokenizer: Any, tmp_path: Path) -> None:
    backend = SlowStart(tiny_tokenizer)
    settings = ServerSettings(model="tiny", state_dir=tmp_path / "state", token=TOKEN)
    with serve_in_thread(create_app(settings, backend=backend)) as server:
        health = httpx.get(f"{server.url}/health").json()
        assert health["status"] == "ok" and health["ready"] is False and health["state"] == "booting"
        not_ready = httpx.get(f"{server.url}/ready")
        assert not_ready.status_code == 503 and not_ready.json()["error"]["code"] == "engine_not_ready"
        threading.Timer(0.5, backend.go.set).start()
        with SwarmClient(server.url, token=TOKEN) as client:
            started = time.monotonic()
            assert client.wait_ready(timeout_s=20)["ready"] is True
            assert time.monotonic() - started >= 0.3
            client.begin_episode("t").abort()  # no 503 once wait_ready returned


def _self_signed(folder: Path) -> tuple[Path, Path]:
    if shutil.which("openssl") is None:
        if os.environ.get("AGENTJET_REQUIRE_SANDBOX"):  # make test (CI) installs it: never skip there
            pytest.fail("openssl is missing: make test installs it")
        pytest.skip("the openssl command makes the test certificate: apt-get install openssl")
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1",
         "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(key), "-out", str(cert)],
        check=True, capture_output=True,
    )  # fmt: skip
    return cert, key


def test_tls(tiny_tokenizer: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cert, key = _self_signed(tmp_path)
    settings = ServerSettings(
        model="tiny", state_dir=tmp_path / "state", token=TOKEN, ssl_certfile=cert, ssl_keyfile=key
    )
    with serve_in_thread(create_app(settings, backend=EchoBackend(tiny_tokenizer))) as server:
        assert server.url.startswith("https://")
        assert httpx.get(f"{server.url}/health", verify=str(cert)).status_code == 200
        monkeypatch.setenv("SSL_CERT_FILE", str(cert))  # how the SDK trusts a private CA (docs/security.md)
        with SwarmClient(server.url, token=TOKEN) as client:
            assert client.status()["state"] == "rolling"
        with pytest.raises(httpx.HTTPError):
            httpx.get(f"http://127.0.0.1:{server.port}/health", timeout=5)  # plain HTTP is not served


def test_tls_needs_both_files(tmp_path: Path) -> None:
    app = create_app(ServerSettings(state_dir=tmp_path, ssl_certfile=tmp_path / "cert.pem"))
    with pytest.raises(ConfigError, match="both"):
        uvicorn_config(app, host="127.0.0.1", port=0)


def test_a_non_loopback_bind_warns(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    app = create_app(ServerSettings(state_dir=tmp_path))
    with caplog.at_level(logging.WARNING):
        uvicorn_config(app, host="127.0.0.1", port=0)
        assert not caplog.records
        uvicorn_config(app, host="0.0.0.0", port=8710)
    assert "not loopback" in caplog.text and "no TLS" in caplog.text
    assert is_loopback("::1") and is_loopback("localhost") and not is_loopback("192.168.1.5")


async def test_a_failed_restore_is_shown_and_train_episodes_are_refused(tmp_path: Path, make_engine: Any) -> None:
    engine: Engine = await make_engine(train_config=CONFIG)
    checkpoint = tmp_path / "state" / "checkpoints" / "step-3"
    (checkpoint / "adapter").mkdir(parents=True)
    (checkpoint / "meta.json").write_text(json.dumps({"step": 3, "policy_version": 3, "consumed": [1]}))

    def broken(path: Path, config: Any) -> FakeTrainer:
        raise RuntimeError("CUDA out of memory")

    loop = TrainingLoop(engine, model_path=tmp_path, state_dir=tmp_path / "state", trainer_factory=broken)
    await loop.run()  # returns: training is off, serving goes on
    status = engine.status()
    assert status["training"]["state"] == "failed" and "CUDA out of memory" in status["training"]["last_error"]
    with pytest.raises(TrainingDown, match="training is down"):
        engine.begin_episode("t", kind=EpisodeKind.TRAIN, agent=None, client_id=None)
    episode, _ = engine.begin_episode("t", kind=EpisodeKind.EVAL, agent=None, client_id=None)  # evals still run
    await engine.abort_episode(episode.episode_id)


def test_run_server_refuses_a_start_in_one_line_and_leaves_nothing_behind(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`agentjet.core.run_server` (a campaign's local servers): the refusals of `agentjet server start`, status 2."""
    from agentjet.core import run_server

    state = tmp_path / "state"
    assert run_server({"model": "gpt-9", "state_dir": state}, log_level="WARNING") == 2
    err = capsys.readouterr().err
    assert err.startswith("error: unknown model 'gpt-9'") and len(err.strip().splitlines()) == 1
    assert not state.exists()
    assert run_server({"model": "tiny", "state_dir": state, "token": "short"}, log_level="WARNING") == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "at least 24" in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize(
    ("make", "words"),
    [
        (lambda tmp: {"config": tmp / "missing.yaml"}, "cannot read config"),
        (lambda tmp: {"config": _written(tmp / "bad.yaml", "optim: {lr: abc}\n")}, "optim.lr"),
        (lambda tmp: {"config": _written(tmp / "list.yaml", "- 1\n")}, "must be a mapping"),
        (lambda tmp: {"state_dir": _written(tmp / "a-file", "x")}, "it is a file, not a folder"),
        (lambda tmp: {"state_dir": _written(tmp / "a-file", "x") / "below"}, "cannot use"),
    ],
)
def test_a_bad_config_or_state_dir_is_one_line_before_anything_serves(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], make: Callable[[Path], dict[str, Any]], words: str
) -> None:
    """Refused in preflight, not in the app's lifespan (which would print a traceback and leave a state dir)."""
    from agentjet.core import run_server

    fields = {"model": "tiny", "state_dir": tmp_path / "state", **make(tmp_path)}
    assert run_server(fields, log_level="WARNING") == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and words in err and len(err.strip().splitlines()) == 1, err
    assert not (tmp_path / "state").exists()


def _written(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def test_a_transformers_without_the_cache_argument_is_one_line_before_anything_serves(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """An older transformers (forward takes `past_key_values=`) is refused from the model class, not its weights."""
    from transformers import LlamaForCausalLM

    from agentjet.core import run_server

    def older_forward(self: Any, input_ids: Any = None, past_key_values: Any = None) -> None: ...

    monkeypatch.setattr(LlamaForCausalLM, "forward", older_forward)  # tiny is a Llama
    assert run_server({"model": "tiny", "state_dir": tmp_path / "state"}, log_level="WARNING") == 2
    err = capsys.readouterr().err
    assert err.startswith("error: transformers ") and len(err.strip().splitlines()) == 1, err
    assert "LlamaForCausalLM.forward takes no `cache=` argument; pip install 'transformers==" in err
    assert not (tmp_path / "state").exists()
