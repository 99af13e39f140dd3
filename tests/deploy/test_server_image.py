"""The server image and the compose example on a real Docker engine: the image is built without a registry,
starts and answers /health over its socket, and the compose example trains `tiny` from client containers
that have no network, no admin token and no way to the admin routes."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentjet.deploy.compose import ComposeSettings, write_compose
from agentjet.deploy.image import ServerImage, build_server_image
from agentjet.sandbox.errors import SandboxError, SandboxUnavailable
from tests.sandbox.conftest import require_sandbox

pytestmark = [pytest.mark.docker, pytest.mark.heavy]

UDS = "/run/agentjet/swarm.sock"
# Run inside a container of the image: GET a path over the server's socket, with a token file when given.
ASK = (
    "import httpx, json, sys; path, token_file = sys.argv[1], sys.argv[2];"
    " headers = {'Authorization': 'Bearer ' + open(token_file).read().strip()} if token_file else {};"
    " c = httpx.Client(transport=httpx.HTTPTransport(uds='" + UDS + "'), base_url='http://server');"
    " r = c.get(path, headers=headers); print(json.dumps({'status': r.status_code, 'body': r.json()}))"
)


def _unavailable(message: str) -> None:
    if require_sandbox():
        pytest.fail(message + " (AGENTJET_REQUIRE_SANDBOX=1)")
    pytest.skip(message)


@pytest.fixture(scope="module")
def server_image() -> ServerImage:
    try:
        return build_server_image(progress=lambda _: None)
    except SandboxUnavailable as exc:
        _unavailable(f"no Docker engine or sandbox image here: {exc}")
    except SandboxError as exc:
        pytest.fail(f"the server image did not build: {exc}")
    raise AssertionError("unreachable")


def _engine_env() -> dict[str, str]:
    from agentjet.sandbox.docker.engine import engine_host

    return {**os.environ, "DOCKER_HOST": engine_host()}


def _compose(folder: Path, project: str, *args: str, timeout_s: float = 300) -> str:
    done = subprocess.run(
        ["docker-compose", "-p", project, *args], cwd=folder, env=_engine_env(), capture_output=True, text=True,
        timeout=timeout_s,
    )  # fmt: skip
    assert done.returncode == 0, f"docker-compose {' '.join(args)}: {done.stderr[-3000:]}"
    return done.stdout


def _ask(folder: Path, project: str, service: str, path: str, token_file: str = "") -> dict[str, Any]:
    out = _compose(folder, project, "exec", "-T", service, "python3", "-c", ASK, path, token_file)
    answer: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    return answer


@pytest.fixture
def compose_up(server_image: ServerImage, tmp_path: Path) -> Iterator[tuple[Path, str]]:
    if shutil.which("docker-compose") is None:
        _unavailable("docker-compose is not installed (apt-get install docker-compose)")
    folder = tmp_path / "deploy"
    write_compose(folder, ComposeSettings(image=server_image.content_tag, clients=2, episodes=8))
    project = f"ajtest{os.getpid()}"
    try:
        _compose(folder, project, "up", "-d")
        yield folder, project
    finally:
        logs = subprocess.run(["docker-compose", "-p", project, "logs", "--no-color"], cwd=folder,
                              env=_engine_env(), capture_output=True, text=True, timeout=120)  # fmt: skip
        (tmp_path / "compose.log").write_text(logs.stdout + logs.stderr)
        subprocess.run(["docker-compose", "-p", project, "down", "-v", "--timeout", "30"], cwd=folder,
                       env=_engine_env(), capture_output=True, timeout=300)  # fmt: skip


def _container(project: str, service: str, index: int = 1) -> dict[str, Any]:
    from agentjet.sandbox.docker.engine import connect

    attrs: dict[str, Any] = connect().containers.get(f"{project}_{service}_{index}").attrs
    return attrs


def test_compose_trains_tiny_from_sandboxed_clients(compose_up: tuple[Path, str]) -> None:
    folder, project = compose_up
    deadline = time.monotonic() + 600
    while _container(project, "server")["State"].get("Health", {}).get("Status") != "healthy":
        assert time.monotonic() < deadline, "the server never became healthy"
        time.sleep(2)
    health = _ask(folder, project, "server", "/health")
    assert health["status"] == 200 and health["body"]["state"] == "rolling" and health["body"]["model"] == "tiny"

    deadline = time.monotonic() + 600
    for index in (1, 2):
        while _container(project, "client", index)["State"]["Status"] != "exited":
            assert time.monotonic() < deadline, f"client {index} still running"
            time.sleep(2)
        assert _container(project, "client", index)["State"]["ExitCode"] == 0

    status = _ask(folder, project, "server", "/swarm/status", "/var/lib/agentjet/state/token")
    assert status["status"] == 200
    # 2 clients x 8 episodes, groups of 4, one group an update: trained, every episode ended
    assert status["body"]["step"] >= 1, status["body"]
    assert status["body"]["episodes"]["finished"] == 16, status["body"]["episodes"]

    for index in (1, 2):  # the clients ran sandboxed: no network, unprivileged, read-only, no state volume
        client = _container(project, "client", index)
        assert client["HostConfig"]["NetworkMode"] == "none" and client["HostConfig"]["ReadonlyRootfs"] is True
        assert client["Config"]["User"] == "65534:65534" and client["HostConfig"]["CapDrop"] == ["ALL"]
        assert {m["Destination"] for m in client["Mounts"]} == {"/run/agentjet", "/run/agentjet-client"}

    # what a client container can do with what it holds: its own episodes, not the admin routes
    probe = ["run", "--rm", "--no-deps", "--entrypoint", "python3", "client", "-c", ASK]
    token = "/run/agentjet-client/token"
    for path, expected in (("/swarm/status", 200), ("/swarm/tokens", 403), ("/swarm/episodes", 403)):
        answer = json.loads(_compose(folder, project, *probe, path, token).strip().splitlines()[-1])
        assert answer["status"] == expected, (path, answer)
    interfaces = _compose(folder, project, "run", "--rm", "--no-deps", "--entrypoint", "ls", "client", "/sys/class/net")
    assert interfaces.split() == ["lo"]


def test_a_build_removes_the_images_it_superseded_and_keeps_tagged_ones(
    server_image: ServerImage, tmp_path: Path
) -> None:
    """Each content tag is a 2 GB image: one that only an earlier build's content tag names goes; one someone
    tagged for themselves stays."""
    import io

    from agentjet.sandbox.docker.engine import connect

    client = connect()
    stale, kept = "agentjet/server:0.0.0-000000000000", "agentjet/server:0.0.0-111111111111"
    for tag, label in ((stale, "stale"), (kept, "kept")):
        dockerfile = io.BytesIO(f"FROM {server_image.content_tag}\nLABEL org.agentjet.test={label}\n".encode())
        client.images.build(fileobj=dockerfile, tag=tag, network_mode="none", rm=True)
    client.images.get(kept).tag("my/own", "keep-me")
    try:
        again = build_server_image(progress=lambda _: None)
        assert again.content_tag == server_image.content_tag and not again.built  # nothing changed: reused
        names = {tag for image in client.images.list(name="agentjet/server") for tag in image.tags}
        assert stale not in names and kept in names and server_image.content_tag in names
    finally:
        for tag in (stale, kept, "my/own:keep-me"):
            with contextlib.suppress(Exception):
                client.images.remove(tag)
