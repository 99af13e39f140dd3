"""What one bad client can try against a running server, and what must still hold afterwards.

Each case takes a rolling `Target` (any AgentJet server: this version's, or an older one's for a
before/after comparison) and returns `{ok, tried, ...figures}`.
"""

from __future__ import annotations

import json
import math
import select
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
from safetensors.torch import load_file

from agentjet.bench.chaos.target import HealthProbe, Target, rss_mb

__all__ = ["end_during_call", "huge_request", "huge_reward", "long_prompt", "scopes", "slow_connections"]

_CHAT_TIMEOUT_S = 300.0


_PREFIX = b'{"model": "tiny", "max_tokens": 4, "messages": [{"role": "user", "content": "'
_SUFFIX = b'"}]}'


def _body_chunks(size: int) -> Iterator[bytes]:
    """A chat request body of exactly `size` bytes, in 64 KB pieces."""
    yield _PREFIX
    left = size - len(_PREFIX) - len(_SUFFIX)
    while left > 0:
        piece = min(65536, left)
        yield b"x" * piece
        left -= piece
    yield _SUFFIX


def _post_large(url: str, path: str, headers: dict[str, str], size: int) -> dict[str, Any]:
    """POST a `size`-byte JSON body over a raw socket, stopping as soon as the server answers.

    (An HTTP client writes the whole body before it reads: a server that refuses early and closes
    would look like a broken pipe.) Returns the status, bytes sent and seconds to the answer."""
    parts = urlsplit(url)
    head = f"POST {path} HTTP/1.1\r\nHost: {parts.netloc}\r\nContent-Type: application/json\r\n"
    head += "".join(f"{k}: {v}\r\n" for k, v in headers.items()) + f"Content-Length: {size}\r\n\r\n"
    started, sent = time.monotonic(), 0
    with socket.create_connection((parts.hostname or "127.0.0.1", parts.port or 80), timeout=_CHAT_TIMEOUT_S) as sock:
        sock.sendall(head.encode())
        for piece in _body_chunks(size):
            if select.select([sock], [], [], 0)[0]:
                break  # the server answered before the body was complete
            try:
                sock.sendall(piece)
            except OSError:
                break
            sent += len(piece)
        reply = b""
        try:
            while b"\r\n" not in reply and (data := sock.recv(65536)):
                reply += data
        except OSError:
            pass
    status = int(reply.split(b" ", 2)[1]) if reply.startswith(b"HTTP/1.1 ") else None
    return {"status": status, "body_bytes_sent": sent, "seconds": round(time.monotonic() - started, 3)}


def huge_request(target: Target, *, size_mb: int = 50) -> dict[str, Any]:
    """A body of `size_mb` MB: with a valid episode key, and without any credential."""
    episode = target.begin()
    before = rss_mb(target.pid)
    size = size_mb * 2**20
    with HealthProbe(target.url).running() as probe:
        keyed = _post_large(target.url, "/v1/chat/completions", {"Authorization": f"Bearer {episode['api_key']}"}, size)
        anonymous = _post_large(target.url, "/v1/chat/completions", {}, size)
    time.sleep(1.0)
    after = rss_mb(target.pid)
    alive = httpx.get(f"{target.url}/health", timeout=30).status_code == 200
    health = probe.figures()
    grew = None if before is None or after is None else round(after - before, 1)
    refused = keyed["status"] in (400, 413) and anonymous["status"] in (401, 413)
    ok = refused and alive and health["health_max_latency_s"] < 1.0 and (grew is None or grew < 200)
    return {
        "ok": ok,
        "tried": f"{size_mb} MB chat bodies, with an episode key and with no credential",
        "with_key": keyed,
        "without_credential": anonymous,
        **health,
        "rss_before_mb": before,
        "rss_after_mb": after,
        "rss_growth_mb": grew,
    }


def long_prompt(target: Target, *, size_mb: float = 3.5) -> dict[str, Any]:
    """A prompt of `size_mb` MB: under the body limit, far over any context. Is the server frozen meanwhile?"""
    episode = target.begin()
    before = rss_mb(target.pid)
    with HealthProbe(target.url).running() as probe:
        time.sleep(0.2)
        reply = _post_large(
            target.url, "/v1/chat/completions", {"Authorization": f"Bearer {episode['api_key']}"}, int(size_mb * 2**20)
        )
        time.sleep(0.2)
    after = rss_mb(target.pid)
    health = probe.figures()
    grew = None if before is None or after is None else round(after - before, 1)
    ok = reply["status"] == 400 and health["health_max_latency_s"] < 1.0 and health["health_failures"] == 0
    return {"ok": ok, "tried": f"a {size_mb} MB prompt with an episode key", "reply": reply, **health,
            "rss_before_mb": before, "rss_after_mb": after, "rss_growth_mb": grew}  # fmt: skip


def _end(target: Target, episode_id: str, reward: float | str) -> int:
    raw = f'{{"reward": {reward}}}'.encode()
    headers = {**target.headers, "content-type": "application/json"}
    reply = httpx.post(f"{target.url}/swarm/episodes/{episode_id}/end", content=raw, headers=headers, timeout=60)
    return reply.status_code


def _chat(target: Target, key: str, max_tokens: int = 4) -> int:
    body = {"model": "tiny", "messages": [{"role": "user", "content": "hi"}], "max_tokens": max_tokens}
    reply = httpx.post(
        f"{target.url}/v1/chat/completions", json=body, headers={"Authorization": f"Bearer {key}"}, timeout=120
    )
    return reply.status_code


def _finite_adapter(state_dir: Path | None, step: int) -> bool | None:
    if state_dir is None or step < 1:
        return None
    path = state_dir / "adapters" / f"step-{step}" / "adapter_model.safetensors"
    if not path.is_file():
        return None
    return all(bool(t.isfinite().all()) for t in load_file(str(path)).values())


_POISON = {"both-huge": ("1.7e308", "1.7e308"), "plus-minus": ("1e308", "-1e308")}  # NaN / overflow in old maths


def huge_reward(target: Target) -> dict[str, Any]:
    """Two GRPO groups (group_size 2) whose rewards are near the float maximum, then an ordinary group:
    are the rewards refused, does training go on, and are the weights it serves finite?"""
    step0 = int(target.status()["step"])
    codes: dict[str, list[int]] = {}
    for group, rewards in _POISON.items():
        codes[group] = []
        for reward in rewards:
            episode = target.begin(group)
            _chat(target, episode["api_key"])
            code = _end(target, episode["episode_id"], reward)
            codes[group].append(code)
            if code != 200:  # refused: the episode is still open, the client reports a sane reward instead
                _end(target, episode["episode_id"], 1.0 if len(codes[group]) == 1 else 0.0)
    for ordinary in (1.0, 0.0):
        episode = target.begin("ordinary")
        _chat(target, episode["api_key"])
        _end(target, episode["episode_id"], ordinary)
    step, seen = _wait_steps(target, step0 + 3, timeout_s=120)
    finite = _finite_adapter(target.state_dir, step)
    after_chat = _chat(target, target.begin("after")["api_key"])
    refused = all(code == 422 for group in codes.values() for code in group)
    ok = refused and step >= step0 + 3 and finite is True and seen == [200]
    return {
        "ok": ok,
        "tried": "end groups with rewards (1.7e308, 1.7e308) and (1e308, -1e308), then an ordinary group",
        "end_status_codes": codes,
        "steps_trained": step - step0,
        "adapter_finite": finite,
        "status_codes_meanwhile": seen,
        "chat_after": after_chat,
    }


def _wait_steps(target: Target, step: int, *, timeout_s: float) -> tuple[int, list[int]]:
    """(the step reached, the distinct status codes `/swarm/status` gave) polling until `step` or the timeout."""
    deadline, seen, reached = time.monotonic() + timeout_s, set(), 0
    while time.monotonic() < deadline:
        reply = httpx.get(f"{target.url}/swarm/status", headers=target.headers, timeout=30)
        seen.add(reply.status_code)
        if reply.status_code == 200:
            reached = int(reply.json()["step"])
            if reached >= step and reply.json()["state"] == "rolling":
                break
        time.sleep(0.2)
    return reached, sorted(seen)


def scopes(target: Target) -> dict[str, Any]:
    """A client token tries the admin's routes and another client's episode."""
    made = httpx.post(f"{target.url}/swarm/tokens", json={"name": "chaos-client"}, headers=target.headers, timeout=30)
    if made.status_code != 200:
        return {"ok": False, "tried": "client tokens", "error": f"cannot issue a client token: {made.status_code}"}
    client = {"Authorization": f"Bearer {made.json()['token']}"}
    others = target.begin("admins")
    attempts = {
        "PUT /swarm/config": httpx.put(f"{target.url}/swarm/config", json={}, headers=client),
        "POST /swarm/engine/stop": httpx.post(f"{target.url}/swarm/engine/stop", headers=client),
        "GET /swarm/tokens": httpx.get(f"{target.url}/swarm/tokens", headers=client),
        "end another's episode": httpx.post(
            f"{target.url}/swarm/episodes/{others['episode_id']}/end", json={"reward": 1}, headers=client
        ),
        "GET /openapi.json": httpx.get(f"{target.url}/openapi.json"),
    }
    codes = {what: reply.status_code for what, reply in attempts.items()}
    ok = all(code in (403, 404) for code in codes.values()) and target.status()["state"] == "rolling"
    return {"ok": ok, "tried": "a client token on admin routes and on another's episode", "status_codes": codes}


def slow_connections(target: Target, *, silent: int = 200, slow: int = 20, wait_s: float = 12.0) -> dict[str, Any]:
    """`silent` connections that send nothing and `slow` ones that drip a request head."""
    parts = urlsplit(target.url)
    address = (parts.hostname or "127.0.0.1", parts.port or 80)
    sockets = [socket.create_connection(address, timeout=5) for _ in range(silent + slow)]
    stop = threading.Event()

    def drip() -> None:
        for _ in range(int(wait_s * 2)):
            for sock in sockets[silent:]:
                try:
                    sock.send(b"X")
                except OSError:
                    continue
            if stop.wait(0.5):
                return

    with HealthProbe(target.url).running() as probe:
        dripper = threading.Thread(target=drip, daemon=True)
        dripper.start()
        time.sleep(wait_s)
        stop.set()
        dripper.join()
    closed = sum(_closed(sock) for sock in sockets)
    for sock in sockets:
        sock.close()
    health = probe.figures()
    ok = closed == len(sockets) and health["health_failures"] == 0
    return {"ok": ok, "tried": f"{silent} silent + {slow} slow-drip connections for {wait_s:.0f} s",
            "closed_by_server": closed, "connections": len(sockets), **health}  # fmt: skip


def _closed(sock: socket.socket) -> bool:
    sock.setblocking(False)
    try:
        return sock.recv(1) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True


def end_during_call(target: Target) -> dict[str, Any]:
    """`end` sent while the episode's only call is still sampling: is the call in the record?"""
    episode = target.begin()
    codes: list[int] = []
    call = threading.Thread(target=lambda: codes.append(_chat(target, episode["api_key"], max_tokens=400)))
    call.start()
    deadline = time.monotonic() + 30
    while target.status()["calls_in_flight"] == 0 and time.monotonic() < deadline:
        time.sleep(0.01)
    ended = _end(target, episode["episode_id"], 1.0)
    call.join()
    record = httpx.get(f"{target.url}/swarm/episodes/{episode['episode_id']}", headers=target.headers).json()
    calls = len(record.get("calls") or [])
    ok = codes == [200] and ((ended == 200 and calls == 1) or ended == 409)
    return {"ok": ok, "tried": "end while the only call samples", "chat_status": codes, "end_status": ended,
            "calls_recorded": calls}  # fmt: skip


def as_json_safe(value: Any) -> Any:
    """Figures with non-finite floats as strings (JSON has no NaN)."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, dict):
        return {k: as_json_safe(v) for k, v in value.items()}
    if isinstance(value, list):
        return [as_json_safe(v) for v in value]
    return value


if __name__ == "__main__":  # pragma: no cover - the before/after comparison against any server
    import sys

    found = Target(sys.argv[1], sys.argv[2], int(sys.argv[3]), Path(sys.argv[4]))
    cases = {"huge_request": huge_request, "long_prompt": long_prompt, "huge_reward": huge_reward}
    results = {name: cases[name](found) for name in sys.argv[5:] or cases}
    sys.stdout.write(json.dumps(as_json_safe(results), indent=2) + "\n")
