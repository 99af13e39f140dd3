"""Least privilege, as a matrix: every route x {no token, client token, other client's token, admin, episode key}.

Client A owns the episode and the client id each cell acts on; client B is another client token
on the same server. Each cell starts from fresh objects (a new episode, a new client id), so a
cell that closes an episode or revokes a token cannot change what the next one sees. A test
checks that the matrix names every route the app serves: a new route needs its row.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from fastapi.routing import APIRoute

from agentjet.core.backends.fakes import EchoBackend
from agentjet.core.server.app import create_app
from agentjet.core.testing import RunningServer, serve_in_thread
from tests.conftest import TOKEN

CREDENTIALS = ("none", "client", "other_client", "admin", "episode_key")
CHAT = {"model": "tiny", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 4}


@dataclass
class Cell:
    """What one request acts on, made fresh for each cell by client A."""

    episode_id: str
    api_key: str
    client_id: str
    throwaway_token: str  # a client token name the admin may revoke


@dataclass(frozen=True)
class Row:
    method: str
    path: str  # {episode}, {client}, {throwaway} are filled from the cell
    expected: tuple[int, int, int, int, int]  # in CREDENTIALS order
    body: Callable[[Cell], Any] | None = None


def _end(cell: Cell) -> dict[str, Any]:
    return {"reward": 1.0}


MATRIX: list[Row] = [
    Row("GET", "/health", (200, 200, 200, 200, 200)),
    Row("GET", "/ready", (200, 200, 200, 200, 200)),
    Row("GET", "/v1/models", (401, 200, 200, 200, 200)),
    Row("POST", "/v1/chat/completions", (401, 401, 401, 401, 200), lambda c: CHAT),
    Row("POST", "/swarm/episodes", (401, 200, 200, 200, 401), lambda c: {"task_id": "t"}),
    Row("GET", "/swarm/episodes", (401, 403, 403, 200, 401)),
    Row("GET", "/swarm/episodes/{episode}", (401, 200, 403, 200, 401)),
    Row("POST", "/swarm/episodes/{episode}/end", (401, 200, 403, 200, 401), _end),
    Row("POST", "/swarm/episodes/{episode}/abort", (401, 200, 403, 200, 401)),
    Row("GET", "/swarm/status", (401, 200, 200, 200, 401)),
    Row("GET", "/swarm/config", (401, 200, 200, 200, 401)),
    Row("PUT", "/swarm/config", (401, 403, 403, 200, 401), lambda c: {}),
    Row("POST", "/swarm/engine/start", (401, 403, 403, 200, 401)),
    Row("POST", "/swarm/engine/stop", (401, 403, 403, 200, 401)),
    Row("POST", "/swarm/clients/{client}/update", (401, 200, 403, 200, 401), lambda c: {"ready": True}),
    Row("POST", "/swarm/clients/{client}/heartbeat", (401, 200, 403, 200, 401)),
    Row("POST", "/swarm/tokens", (401, 403, 403, 200, 401), lambda c: {"name": "made-in-a-cell"}),
    Row("GET", "/swarm/tokens", (401, 403, 403, 200, 401)),
    Row("DELETE", "/swarm/tokens/{throwaway}", (401, 403, 403, 200, 401)),
    Row("GET", "/docs", (404, 404, 404, 404, 404)),
    Row("GET", "/openapi.json", (404, 404, 404, 404, 404)),
]


@pytest.fixture(scope="module")
def server(tiny_tokenizer: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    from agentjet.core.config import ServerSettings

    settings = ServerSettings(model="tiny", state_dir=tmp_path_factory.mktemp("state"), token=TOKEN)
    with serve_in_thread(create_app(settings, backend=EchoBackend(tiny_tokenizer))) as running:
        httpx.post(f"{running.url}/swarm/engine/start", headers=_auth(TOKEN))
        yield running


def _auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


@pytest.fixture(scope="module")
def clients(server: RunningServer) -> dict[str, str]:
    made = {}
    for name in ("client", "other_client"):
        reply = httpx.post(f"{server.url}/swarm/tokens", json={"name": name}, headers=_auth(TOKEN))
        assert reply.status_code == 200, reply.text
        made[name] = reply.json()["token"]
    return made


def _fresh_cell(server: RunningServer, client_token: str) -> Cell:
    client_id = f"c-{uuid.uuid4().hex[:8]}"
    begun = httpx.post(
        f"{server.url}/swarm/episodes", json={"task_id": "t", "client_id": client_id}, headers=_auth(client_token)
    )
    assert begun.status_code == 200, begun.text
    throwaway = httpx.post(f"{server.url}/swarm/tokens", json={"name": f"tmp-{client_id}"}, headers=_auth(TOKEN))
    body = begun.json()
    return Cell(body["episode_id"], body["api_key"], client_id, throwaway.json()["token_id"])


@pytest.mark.parametrize("row", MATRIX, ids=lambda r: f"{r.method} {r.path}")
def test_scope_matrix(server: RunningServer, clients: dict[str, str], row: Row) -> None:
    for credential, expected in zip(CREDENTIALS, row.expected, strict=True):
        cell = _fresh_cell(server, clients["client"])
        bearer = {
            "none": None,
            "client": clients["client"],
            "other_client": clients["other_client"],
            "admin": TOKEN,
            "episode_key": cell.api_key,
        }[credential]
        path = row.path.format(episode=cell.episode_id, client=cell.client_id, throwaway=cell.throwaway_token)
        reply = httpx.request(
            row.method,
            f"{server.url}{path}",
            json=row.body(cell) if row.body else None,
            headers=_auth(bearer) if bearer else {},
        )
        assert reply.status_code == expected, f"{row.method} {path} as {credential}: {reply.status_code} {reply.text}"
        if expected in (401, 403):
            assert reply.json()["error"]["code"] in ("invalid_token", "invalid_api_key", "permission_denied")
        if row.path == "/swarm/engine/stop" and expected == 200:
            httpx.post(f"{server.url}/swarm/engine/start", headers=_auth(TOKEN))
        if expected in (401, 403) and "/episodes/{episode}" in row.path:
            assert _status_of(server, cell.episode_id) == "open"  # a refused end or abort changed nothing


def _status_of(server: RunningServer, episode_id: str) -> str:
    reply = httpx.get(f"{server.url}/swarm/episodes/{episode_id}", headers=_auth(TOKEN))
    status: str = reply.json()["status"]
    return status


def test_the_matrix_covers_every_route(server: RunningServer) -> None:
    served = {
        (method, route.path) for route in server.app.routes if isinstance(route, APIRoute) for method in route.methods
    }
    placeholders = {"{episode}": "{episode_id}", "{client}": "{client_id}", "{throwaway}": "{which}"}
    named = set()
    for row in MATRIX:
        path = row.path
        for ours, theirs in placeholders.items():
            path = path.replace(ours, theirs)
        named.add((row.method, path))
    assert served - named == set(), "routes without a row in the scope matrix"


def test_a_client_token_sees_only_its_own_client_ids(server: RunningServer, clients: dict[str, str]) -> None:
    mine, theirs = f"mine-{uuid.uuid4().hex[:6]}", f"theirs-{uuid.uuid4().hex[:6]}"
    httpx.post(f"{server.url}/swarm/clients/{mine}/update", json={"ready": True}, headers=_auth(clients["client"]))
    httpx.post(f"{server.url}/swarm/clients/{theirs}/heartbeat", headers=_auth(clients["other_client"]))
    status = httpx.get(f"{server.url}/swarm/status", headers=_auth(clients["client"])).json()
    listed = set(status["pool"].get("clients", {}).get("active_ids", [])) if "clients" in status["pool"] else set()
    view = httpx.post(f"{server.url}/swarm/clients/{mine}/heartbeat", headers=_auth(clients["client"])).json()
    assert mine in view["active_clients"] and theirs not in view["active_clients"]
    assert theirs not in listed
    admin_view = httpx.post(f"{server.url}/swarm/clients/{mine}/heartbeat", headers=_auth(TOKEN)).json()
    assert {mine, theirs} <= set(admin_view["active_clients"])


def test_a_revoked_token_and_its_episode_keys_stop_working(server: RunningServer) -> None:
    token = httpx.post(f"{server.url}/swarm/tokens", json={"name": "laptop"}, headers=_auth(TOKEN)).json()
    begun = httpx.post(f"{server.url}/swarm/episodes", json={"task_id": "t"}, headers=_auth(token["token"])).json()
    ok = httpx.post(f"{server.url}/v1/chat/completions", json=CHAT, headers=_auth(begun["api_key"]))
    assert ok.status_code == 200
    revoked = httpx.delete(f"{server.url}/swarm/tokens/{token['token_id']}", headers=_auth(TOKEN))
    assert revoked.status_code == 200 and revoked.json()["tokens"][0]["revoked"] is True
    assert httpx.get(f"{server.url}/swarm/status", headers=_auth(token["token"])).status_code == 401
    late = httpx.post(f"{server.url}/v1/chat/completions", json=CHAT, headers=_auth(begun["api_key"]))
    assert late.status_code == 401 and "revoked" in late.json()["error"]["message"]
    assert httpx.delete(f"{server.url}/swarm/tokens/{token['token_id']}", headers=_auth(TOKEN)).status_code == 404


def test_a_client_id_belongs_to_the_first_client_token_that_uses_it(
    server: RunningServer, clients: dict[str, str]
) -> None:
    cid = f"shared-{uuid.uuid4().hex[:6]}"
    body = {"task_id": "t", "client_id": cid}
    assert httpx.post(f"{server.url}/swarm/episodes", json=body, headers=_auth(clients["client"])).status_code == 200
    stolen = httpx.post(f"{server.url}/swarm/episodes", json=body, headers=_auth(clients["other_client"]))
    assert stolen.status_code == 403 and stolen.json()["error"]["code"] == "permission_denied"
    vote = httpx.post(
        f"{server.url}/swarm/clients/{cid}/update", json={"ready": True}, headers=_auth(clients["other_client"])
    )
    assert vote.status_code == 403
    requested = httpx.get(f"{server.url}/swarm/status", headers=_auth(TOKEN)).json()["pool"]
    assert cid not in requested.get("clients", {}).get("requested_ids", [])
