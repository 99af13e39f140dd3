"""`python -m agentjet.bench.serving.serve_worker KIND`: one server for `agentjet bench serve`, in its own process.

The benchmark client and the server must not share a GIL or an event loop, or the numbers
measure their contention instead of the server. KIND is `echo` (the swarm server on the
zero-cost EchoBackend: its latency is our overhead), `bare` (a FastAPI app whose one route
parses the same request model and returns a fixed completion: the floor any FastAPI server
pays) or `model` (the swarm server on a real model: `--backend transformers` or `vllm`). The worker binds
127.0.0.1 on a free port and writes `PORT <n>` as its first stdout line.
"""

from __future__ import annotations

import argparse
import socket
import sys
from pathlib import Path
from typing import Any

import uvicorn
from fastapi import FastAPI

from agentjet.core.server.openai_models import ChatCompletionIn

__all__ = ["build_app", "main"]

KINDS = ("echo", "bare", "model")

_FIXED_COMPLETION: dict[str, Any] = {
    "id": "chatcmpl-bare",
    "object": "chat.completion",
    "created": 0,
    "model": "bare",
    "system_fingerprint": "policy-v0",
    "choices": [
        {
            "index": 0,
            "message": {"role": "assistant", "content": "<|im_end|>\n<|im_start|>assistant\n"},
            "logprobs": None,
            "finish_reason": "stop",
        }
    ],
    "usage": {"prompt_tokens": 40, "completion_tokens": 8, "total_tokens": 48},
}


def bare_app() -> FastAPI:
    """The floor: FastAPI + the same pydantic request model, no auth, no engine, no tokenizer."""
    app = FastAPI(title="bare baseline")

    @app.post("/v1/chat/completions")
    async def chat_completions(body: ChatCompletionIn) -> dict[str, Any]:
        return _FIXED_COMPLETION

    @app.get("/health")
    async def health() -> dict[str, str]:
        return {"status": "ok", "state": "rolling"}

    return app


def build_app(
    kind: str,
    *,
    model: str,
    state_dir: Path,
    token: str,
    max_batch_size: int,
    device: str,
    backend_name: str = "transformers",
    vllm_python: Path | None = None,
) -> FastAPI:
    """The app for one KIND; the swarm kinds are built exactly as `agentjet server start` builds them."""
    if kind == "bare":
        return bare_app()
    from agentjet.core.backends.base import Backend
    from agentjet.core.config import ServerSettings
    from agentjet.core.models import resolve_model
    from agentjet.core.server.app import create_app

    path = resolve_model(model)
    backend: Backend
    if kind == "echo":
        from agentjet.core.backends.fakes import EchoBackend, load_tokenizer

        backend = EchoBackend(load_tokenizer(path), name=model)
    settings = ServerSettings(
        model=model, state_dir=state_dir, token=token, max_batch_size=max_batch_size, device=device,
        backend=backend_name, vllm_python=vllm_python,
    )  # fmt: skip
    if kind == "model":
        from agentjet.core.backends.factory import build_backend

        backend = build_backend(settings)
    return create_app(settings, backend=backend)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m agentjet.bench.serving.serve_worker")
    parser.add_argument("kind", choices=KINDS)
    parser.add_argument("--model", default="tiny")
    parser.add_argument("--state-dir", type=Path, required=True)
    parser.add_argument("--token", required=True)
    parser.add_argument("--max-batch-size", type=int, default=32)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--backend", default="transformers", choices=("transformers", "vllm"))
    parser.add_argument("--vllm-python", type=Path, default=None)
    args = parser.parse_args(argv)
    app = build_app(
        args.kind,
        model=args.model,
        state_dir=args.state_dir,
        token=args.token,
        max_batch_size=args.max_batch_size,
        device=args.device,
        backend_name=args.backend,
        vllm_python=args.vllm_python,
    )
    # proto must be IPPROTO_TCP: asyncio sets TCP_NODELAY on accepted sockets only then, and without it
    # Nagle + delayed ACKs add ~40 ms to every keep-alive call
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sys.stdout.write(f"PORT {sock.getsockname()[1]}\n")
    sys.stdout.flush()
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on", backlog=2048)
    uvicorn.Server(config).run(sockets=[sock])


if __name__ == "__main__":
    main()
