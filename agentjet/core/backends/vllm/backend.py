"""The vLLM backend: the `Backend` contract over a `vllm serve` process on loopback.

Token ids go in and come out: each request is `/v1/completions` with `prompt` = our rendered
prompt ids (never re-tokenised), `return_token_ids` and `logprobs: 0` (the sampled token's
logprob; the server runs with `--logprobs-mode processed_logprobs`, i.e. log-softmax of the
temperature-scaled logits, as our contract says). EOS, stop strings and `max_tokens` are
decided here by the same rule as the transformers backend (`textstream.accept_token`): on a
stop string the stream is closed, which aborts the request inside vLLM, as does a consumer
that stops reading. Continuous batching and prefix caching are vLLM's own.

Each policy version is loaded under a new adapter name (`/v1/load_lora_adapter`): vLLM keys
cached prefix blocks by adapter name, so a same-name reload could serve stale KV. An old
adapter is unloaded once no running stream uses it. With top_p < 1 vLLM's processed logprobs
are renormalised over the nucleus, where ours are not: the trainer's ratio models neither.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
from collections import Counter
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx

from agentjet.core.backends.base import collect_generation
from agentjet.core.backends.textstream import TextStream, accept_token
from agentjet.core.backends.validation import eos_token_ids, validate_request
from agentjet.core.backends.vllm.process import VllmProcess
from agentjet.core.config import ServerSettings
from agentjet.core.errors import BackendError, ContextLengthExceeded, InvalidRequest
from agentjet.core.placement import Placement
from agentjet.core.types import FinishReason, Generation, GenerationRequest, TokenDelta

__all__ = ["VllmBackend"]

log = logging.getLogger(__name__)

_CONTEXT_WORDS = ("maximum context length", "max_model_len", "context length")


class VllmBackend:
    """Samples through vLLM; implements the `Backend` contract. Event-loop only.

    Either `process` (a `VllmProcess` we start and stop) or `url` (a `vllm serve` someone else
    runs, with `VLLM_ALLOW_RUNTIME_LORA_UPDATING=True`, `--enable-lora` and
    `--logprobs-mode processed_logprobs`, able to read our adapter folders).
    """

    def __init__(
        self,
        model_path: Path,
        *,
        name: str,
        placement: Placement,
        process: VllmProcess | None = None,
        url: str | None = None,
        stall_timeout_s: float = 600.0,
    ) -> None:
        if (process is None) == (url is None):
            raise BackendError("VllmBackend needs exactly one of a process to start or the url of a running one")
        self.name = name
        self.policy_version = 0
        self.max_context = 0  # known after start()
        self.tokenizer: Any = None
        self.placement = placement
        self._model_path = Path(model_path)
        self._process = process
        self._url = url or (process.url if process is not None else "")
        self._stall_timeout_s = stall_timeout_s
        self._http: httpx.AsyncClient | None = None
        self._base_model = name  # the id vLLM serves the base weights under
        self._model = name  # what new requests ask for: the base, or the newest adapter
        self._in_use: Counter[str] = Counter()
        self._retired: set[str] = set()  # old adapters waiting for their last stream to end
        self._names = itertools.count(1)
        self._vocab_size = 0
        self._eos_ids: frozenset[int] = frozenset()
        self._decoder: Any = None
        self._is_closed = False

    @classmethod
    def from_settings(
        cls, settings: ServerSettings, model_path: Path, placement: Placement, *, name: str
    ) -> VllmBackend:
        """From `--vllm-url` (attach) or `--vllm-python` (start our own `vllm serve`); flags checked by the factory."""
        if settings.vllm_url is not None:
            return cls(model_path, name=name, placement=placement, url=settings.vllm_url.rstrip("/"))
        assert settings.vllm_python is not None
        process = VllmProcess(
            settings.vllm_python, model_path, served_name=name, placement=placement,
            log_path=settings.state_dir / "vllm.log", extra_args=settings.vllm_args,
        )  # fmt: skip
        return cls(model_path, name=name, placement=placement, process=process)

    # ---- Backend contract ----------------------------------------------------------------
    async def start(self) -> None:
        """Load the tokenizer, start (or reach) vLLM, read its context length and served model id."""
        if self._is_closed:
            raise BackendError(f"backend {self.name} is closed")
        if self._http is not None:
            return
        await asyncio.to_thread(self._load_tokenizer)
        if self._process is not None:
            self._process.launch()  # from the event-loop thread: see VllmProcess.launch
            await asyncio.to_thread(self._process.wait_healthy)
        timeout = httpx.Timeout(connect=10.0, read=self._stall_timeout_s, write=60.0, pool=None)
        limits = httpx.Limits(max_connections=None, max_keepalive_connections=64)
        self._http = httpx.AsyncClient(base_url=self._url, timeout=timeout, limits=limits, trust_env=False)
        models = await self._get_json("/v1/models")
        served = [m for m in models.get("data", []) if not m.get("parent")]  # adapters name their base as parent
        if not served:
            raise BackendError(f"vLLM at {self._url} serves no base model")
        self._base_model = self._model = str(served[0]["id"])
        self.max_context = int(served[0].get("max_model_len") or 0)
        if self.max_context <= 0:
            raise BackendError(f"vLLM at {self._url} did not say its max_model_len")
        log.info(
            "backend started name=%s model=%s via vllm %s at %s", self.name, self._model_path, self._url,
            self.placement.describe(),
        )  # fmt: skip

    async def close(self) -> None:
        """Close every open stream (they end with "abort") and stop the vLLM process we started."""
        self._is_closed = True
        if self._http is not None:
            await self._http.aclose()
        if self._process is not None:
            await asyncio.to_thread(self._process.stop)
        log.info("backend closed name=%s", self.name)

    def stream(self, request: GenerationRequest) -> AsyncIterator[TokenDelta]:
        """Validate now (raising `InvalidRequest`/`ContextLengthExceeded`), stream when iterated."""
        self._require_http()
        validate_request(request, max_context=self.max_context, vocab_size=self._vocab_size)
        if request.base:  # the base weights, served under their own id beside every adapter
            self._check_base_beside_adapter()
            return self._deltas(request, self._base_model, 0)
        return self._deltas(request, self._model, self.policy_version)  # the adapter name and its version, together

    async def generate(self, request: GenerationRequest) -> Generation:
        """`stream` collected; tagged with the version whose weights sample it (fixed at admission)."""
        version = 0 if request.base else self.policy_version
        return await collect_generation(self.stream(request), version_if_none=version, finish_if_none="abort")

    async def load_adapter(self, path: Path, version: int) -> None:
        """Load the PEFT adapter at `path` under a new name; new requests use it from now on."""
        self._require_http()
        path = Path(path).resolve()
        if not (path / "adapter_config.json").is_file():
            raise BackendError(f"{path} is not a PEFT adapter folder (no adapter_config.json)")
        name = f"{self.name}-v{version}-{next(self._names)}"
        reply = await self._post("/v1/load_lora_adapter", {"lora_name": name, "lora_path": str(path)})
        if reply.status_code == 404 and "load_lora_adapter" in reply.text:
            raise BackendError(
                f"vLLM at {self._url} has no runtime LoRA loading: start it with VLLM_ALLOW_RUNTIME_LORA_UPDATING=True"
            )
        if reply.status_code != 200:
            raise BackendError(f"vLLM refused adapter {path} (HTTP {reply.status_code}): {_message(reply.text)}")
        previous, self._model, self.policy_version = self._model, name, version
        log.info("adapter loaded name=%s version=%d path=%s", name, version, path)
        if previous != self._base_model:
            self._retired.add(previous)
            await self._unload_idle()

    def memory_report(self) -> dict[str, Any]:
        """Placement and the vLLM process tree's peak resident memory (vLLM holds the weights)."""
        pid = self._process.pid if self._process is not None else None
        return {
            "device": self.placement.device,
            "dtype": self.placement.dtype,
            "param_bytes": None,
            "peak_bytes": _tree_peak_rss(pid) if pid is not None else None,
            "peak_of": "vllm process tree (resident)" if pid is not None else "attached vllm (not measured)",
        }

    # ---- internals -----------------------------------------------------------------------
    def _check_base_beside_adapter(self) -> None:
        """vLLM's CUDA LoRA kernels skip a row without an adapter; its CPU build's torch ops index the adapter
        slots with that row's -1 and give it the last slot's adapter (vllm 0.32.0, `lora/ops/torch_ops`): its
        base would not be the base, so on a CPU it is refused while an adapter serves."""
        if self.placement.device == "cpu" and self._model != self._base_model:
            raise InvalidRequest(
                "this server's vLLM CPU build cannot sample the base beside a trained adapter (its LoRA ops give "
                "a row without an adapter the last adapter's weights): use the embedded backend or a GPU",
                param="base_model",
            )

    def _load_tokenizer(self) -> None:
        from transformers import AutoConfig, AutoTokenizer, GenerationConfig

        try:
            self.tokenizer = AutoTokenizer.from_pretrained(self._model_path)
            self._decoder = AutoTokenizer.from_pretrained(self._model_path)  # no shared Rust borrow across threads
            config = AutoConfig.from_pretrained(self._model_path)
        except (OSError, ValueError) as exc:
            raise BackendError(f"could not load the tokenizer of {self._model_path}: {exc}") from exc
        try:
            generation = GenerationConfig.from_pretrained(self._model_path)
        except OSError:
            generation = None
        text_config = config.get_text_config() if hasattr(config, "get_text_config") else config
        self._vocab_size = int(text_config.vocab_size)
        self._eos_ids = eos_token_ids(self.tokenizer, generation, text_config)

    def _require_http(self) -> httpx.AsyncClient:
        if self._is_closed:
            raise BackendError(f"backend {self.name} is closed")
        if self._http is None:
            raise BackendError(f"backend {self.name} is not started; call start() first")
        return self._http

    def _decode(self, ids: Any) -> str:
        return str(self._decoder.decode(list(ids), skip_special_tokens=True))

    async def _deltas(self, request: GenerationRequest, model: str, version: int) -> AsyncIterator[TokenDelta]:
        params = request.params
        payload: dict[str, Any] = {
            "model": model,
            "prompt": list(request.prompt_ids),
            "max_tokens": params.max_tokens,
            "temperature": params.temperature,
            "top_p": params.top_p,
            "logprobs": 0,
            "return_token_ids": True,
            "stream": True,
            "ignore_eos": True,  # EOS, stop strings and max_tokens are ours to decide (accept_token)
        }
        if params.seed is not None:
            payload["seed"] = params.seed
        text = TextStream(self._decode, params.stop)
        sampled = 0
        self._in_use[model] += 1
        try:
            async with self._require_http().stream("POST", "/v1/completions", json=payload) as reply:
                if reply.status_code != 200:
                    raise _request_error(reply.status_code, (await reply.aread()).decode(errors="replace"))
                async for line in reply.aiter_lines():
                    chunk = _event(line)
                    if chunk is None:
                        continue
                    choice = chunk["choices"][0]
                    ids = [int(t) for t in choice.get("token_ids") or []]
                    logprobs = [float(v) for v in (choice.get("logprobs") or {}).get("token_logprobs") or []]
                    if len(ids) != len(logprobs):
                        raise BackendError(f"vLLM sent {len(ids)} token ids but {len(logprobs)} logprobs")
                    kept_ids: list[int] = []
                    pieces: list[str] = []
                    reason: FinishReason | None = None
                    for token in ids:
                        sampled += 1
                        kept_ids.append(token)
                        reason, piece = accept_token(
                            text, token, sampled, eos_ids=self._eos_ids, max_tokens=params.max_tokens
                        )
                        pieces.append(piece)
                        if reason is not None:
                            break
                    if reason is None and choice.get("finish_reason"):  # vLLM ended it: a reason we did not see
                        reason = "length" if choice["finish_reason"] == "length" else "stop"
                        pieces.append(text.flush())
                    if kept_ids or reason is not None:
                        kept = tuple(logprobs[: len(kept_ids)])
                        yield TokenDelta(tuple(kept_ids), kept, "".join(pieces), reason, version)
                    if reason is not None:
                        return  # leaving the `async with` closes the stream: vLLM aborts the request
            yield TokenDelta((), (), text.flush(), "abort")  # the stream ended without a finish
        except httpx.HTTPError as exc:
            if self._is_closed:
                yield TokenDelta((), (), "", "abort")
                return
            raise BackendError(f"vLLM request {request.request_id} failed: {type(exc).__name__}: {exc}") from exc
        finally:
            self._in_use[model] -= 1
            if model in self._retired and self._in_use[model] <= 0:
                asyncio.get_running_loop().create_task(self._unload_idle())

    async def _unload_idle(self) -> None:
        """Unload retired adapters that no stream uses any more (a failure is logged, not raised)."""
        for name in [n for n in self._retired if self._in_use[n] <= 0]:
            self._retired.discard(name)
            try:
                reply = await self._post("/v1/unload_lora_adapter", {"lora_name": name})
                if reply.status_code != 200:
                    log.warning("unload of adapter %s refused: %s", name, _message(reply.text))
            except (BackendError, httpx.HTTPError) as exc:
                log.warning("unload of adapter %s failed: %s", name, exc)

    async def _post(self, route: str, body: dict[str, Any]) -> httpx.Response:
        try:
            return await self._require_http().post(route, json=body)
        except httpx.HTTPError as exc:
            raise BackendError(f"vLLM {route} failed: {type(exc).__name__}: {exc}") from exc

    async def _get_json(self, route: str) -> dict[str, Any]:
        try:
            reply = await self._require_http().get(route)
        except httpx.HTTPError as exc:
            raise BackendError(f"cannot reach vLLM at {self._url}{route}: {exc}") from exc
        if reply.status_code != 200:
            raise BackendError(f"vLLM {route} answered HTTP {reply.status_code}: {_message(reply.text)}")
        data: dict[str, Any] = reply.json()
        return data


def _event(line: str) -> dict[str, Any] | None:
    """One server-sent event's JSON, None for blank lines and `[DONE]`; an error event raises."""
    if not line.startswith("data:"):
        return None
    data = line[5:].strip()
    if not data or data == "[DONE]":
        return None
    chunk: dict[str, Any] = json.loads(data)
    if "error" in chunk:
        raise BackendError(f"vLLM stream error: {_message(data)}")
    if not chunk.get("choices"):
        return None
    return chunk


def _message(body: str) -> str:
    try:
        error = json.loads(body).get("error", {})
        return str(error.get("message", body) if isinstance(error, dict) else error)[:500]
    except (ValueError, AttributeError):
        return body[:500]


def _request_error(status: int, body: str) -> Exception:
    message = _message(body)
    if status == 400 and any(word in message for word in _CONTEXT_WORDS):
        return ContextLengthExceeded(f"vLLM: {message}", param="messages")
    if 400 <= status < 500:
        return InvalidRequest(f"vLLM refused the request: {message}")
    return BackendError(f"vLLM answered HTTP {status}: {message}")


def _tree_peak_rss(pid: int) -> int | None:
    """Sum of VmHWM (peak resident set) over a process and its descendants, from /proc."""
    total, stack, seen = 0, [pid], set()
    while stack:
        current = stack.pop()
        if current in seen:
            continue
        seen.add(current)
        try:
            for line in Path(f"/proc/{current}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    total += int(line.split()[1]) * 1024
            for task in Path(f"/proc/{current}/task").iterdir():
                stack += [int(c) for c in (task / "children").read_text().split()]
        except (OSError, ValueError):
            continue
    return total or None
