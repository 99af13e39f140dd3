"""The embedded inference backend: a transformers causal LM served by one continuous-batching loop.

`TransformersBackend` is the event-loop face of `DecodeLoop` (one worker thread that owns the
model): it validates requests, hands them to the loop and turns the per-sequence delta queues
into async streams. Requests of any number of concurrent callers share that one loop.

Every delta carries the version of the weights that sampled its tokens (`TokenDelta.policy_version`,
read in the worker as it samples). An adapter loaded while a sequence runs also applies to its later
tokens, which then say so; the engine holds new calls for the hot-load, so in training a sequence
straddles two versions only past a drain timeout, and its record takes the older one. A request for
the base (`GenerationRequest.base`) is sampled without the adapter, beside the others, at version 0.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import os
import secrets
from collections.abc import AsyncIterator, Generator
from pathlib import Path
from typing import Any, TypeVar

import torch

from agentjet.core.backends.base import collect_generation
from agentjet.core.backends.decode_loop import DecodeLoop, LiveSequence
from agentjet.core.backends.lora_layers import RowAdapters, run_lora_in_input_dtype
from agentjet.core.backends.prefill_gather import PrefillGather
from agentjet.core.backends.validation import eos_token_ids, validate_request
from agentjet.core.errors import BackendError, ConfigError
from agentjet.core.models import check_cache_argument, model_loading
from agentjet.core.placement import avoid_cudnn_attention, memory_report, parameter_bytes
from agentjet.core.types import Generation, GenerationRequest, TokenDelta

__all__ = ["TransformersBackend"]

log = logging.getLogger(__name__)

T = TypeVar("T")


class TransformersBackend:
    """Samples from a local Hugging Face causal LM; implements the `Backend` contract.

    Event-loop only (every public method is called from one asyncio loop). Only models whose
    every layer uses full attention are supported (Llama, Qwen2 without sliding windows, ...).

    `max_batch_size` rows decode together (more requests wait, FIFO); one prefill pads at most
    `max_prefill_tokens` tokens (a longer single prompt still runs alone); `num_threads` sets
    torch's intra-op threads (default on CPU: every usable core; batched decoding needs them);
    `stall_timeout_s` bounds the wait for a stream's next token or an adapter load;
    `prefix_cache_tokens` bounds the KV of finished sequences kept so that a prompt extending one
    (the next chat round, a shared system prompt) skips re-prefilling it (0 disables; about
    46 KB per token for smollm2-135m, so the default 8192 holds under 400 MB; base-model requests get a cache of
    their own of the same size); `prefill_gather` is when newcomers
    are prefilled (None: a busy CPU loop gathers them into batches, `prefill_gather.py`).
    """

    def __init__(
        self,
        model_path: Path,
        *,
        name: str,
        max_batch_size: int = 32,
        device: str = "cpu",
        dtype: torch.dtype = torch.float32,
        max_prefill_tokens: int = 8192,
        num_threads: int | None = None,
        stall_timeout_s: float = 600.0,
        prefix_cache_tokens: int = 8192,
        prefill_gather: PrefillGather | None = None,
    ) -> None:
        if max_batch_size < 1 or max_prefill_tokens < 1:
            raise ConfigError(f"max_batch_size={max_batch_size}, max_prefill_tokens={max_prefill_tokens}: need >= 1")
        if prefix_cache_tokens < 0:
            raise ConfigError(f"prefix_cache_tokens={prefix_cache_tokens} must be >= 0 (0 disables the cache)")
        self.name = name
        self.policy_version = 0
        self.max_context = 0  # known after start()
        self.tokenizer: Any = None
        self._model_path = Path(model_path)
        self._max_batch_size = max_batch_size
        self._max_prefill_tokens = max_prefill_tokens
        self._device = torch.device(device)
        self._dtype = dtype
        self._num_threads = num_threads or (_cpu_count() if self._device.type == "cpu" else None)
        self._stall_timeout_s = stall_timeout_s
        self._prefix_cache_tokens = prefix_cache_tokens
        self._prefill_gather = prefill_gather
        self._loop: DecodeLoop | None = None
        self._is_closed = False
        self._keys = itertools.count()
        self._vocab_size = 0
        self._base: torch.nn.Module | None = None
        self._param_bytes = 0  # this copy's (the base, then with its adapter), counted at each load, not per poll
        self._peft: Any = None  # a peft.PeftModel once the first adapter is loaded
        self._rows = RowAdapters()  # which rows of a forward get the adapter (base rows beside policy rows)
        self._n_adapters = 0

    async def start(self) -> None:
        """Load the tokenizer and the model (in a thread) and start the generation loop."""
        if self._is_closed:
            raise BackendError(f"backend {self.name} is closed")
        if self._loop is None:
            self._loop = await asyncio.to_thread(self._load)
            self._loop.start()
            log.info(
                "backend started name=%s model=%s at %s %s",
                self.name,
                self._model_path,
                self._device,
                str(self._dtype).removeprefix("torch."),
            )

    async def close(self) -> None:
        """Stop the loop; open streams end with finish_reason "abort". Idempotent."""
        self._is_closed = True
        if self._loop is not None:
            await asyncio.to_thread(self._loop.stop, 30.0)
            log.info("backend closed name=%s", self.name)

    def stream(self, request: GenerationRequest) -> AsyncIterator[TokenDelta]:
        """Validate now (raising `InvalidRequest`/`ContextLengthExceeded`), stream when iterated."""
        return self._deltas(self._prepare(request))

    async def generate(self, request: GenerationRequest) -> Generation:
        """`stream` collected; its version is the one its deltas carry (the weights that sampled them)."""
        seq = self._prepare(request)
        deltas = self._deltas(seq)
        return await collect_generation(deltas, version_if_none=self.policy_version, finish_if_none="abort")

    async def load_adapter(self, path: Path, version: int) -> None:
        """Load a PEFT LoRA adapter folder between decode steps; later tokens carry `version`."""
        loop = self._require_loop()
        path = Path(path)
        if not (path / "adapter_config.json").is_file():
            raise BackendError(f"{path} is not a PEFT adapter folder (no adapter_config.json)")
        done = loop.load_adapter(path, version)
        try:
            await asyncio.wait_for(asyncio.wrap_future(done), self._stall_timeout_s)
        except TimeoutError as exc:
            raise BackendError(f"adapter {path} not loaded within {self._stall_timeout_s:.0f} s") from exc
        self.policy_version = version

    @property
    def device(self) -> torch.device:
        """Where this backend's model runs."""
        return self._device

    async def run_between_steps(self, stages: Generator[None, None, T]) -> T:
        """Run `stages` on the decode loop's thread, one stage between two decode steps (`DecodeLoop.run_job`).

        Why: on a CPU that thread's OpenMP team then does the work too; a second thread's team beside
        it made an update 1.2-1.5x slower (`step/stages.py`). Serving goes on meanwhile, slower; no stall
        timeout applies (a training step takes what it takes). If the awaiting task is cancelled, the
        stages still run to their end, as a worker thread's would.
        """
        loop = self._require_loop()
        result: T = await asyncio.wrap_future(loop.run_job(stages))
        return result

    def memory_report(self) -> dict[str, Any]:
        """This copy's placement, parameter bytes and peak memory (`placement.memory_report`)."""
        return memory_report(str(self._device), str(self._dtype).removeprefix("torch."), self._param_bytes)

    # -- internals -------------------------------------------------------------------------
    def _require_loop(self) -> DecodeLoop:
        if self._is_closed:
            raise BackendError(f"backend {self.name} is closed")
        if self._loop is None:
            raise BackendError(f"backend {self.name} is not started; call start() first")
        if not self._loop.is_alive:
            raise BackendError(f"backend {self.name}: the generation loop has stopped (see the log)")
        return self._loop

    def _prepare(self, request: GenerationRequest) -> LiveSequence:
        self._require_loop()
        validate_request(request, max_context=self.max_context, vocab_size=self._vocab_size)
        seed = request.params.seed if request.params.seed is not None else secrets.randbits(63)
        return LiveSequence(next(self._keys), request, asyncio.get_running_loop(), seed)

    async def _deltas(self, seq: LiveSequence) -> AsyncIterator[TokenDelta]:
        loop = self._require_loop()
        loop.submit(seq)
        is_finished = False
        try:
            while not is_finished:
                item = await self._next_item(seq)
                if isinstance(item, BaseException):
                    is_finished = True
                    raise item
                is_finished = item.finish_reason is not None
                yield item
        finally:
            if not is_finished:  # the consumer left early: free the slot
                loop.cancel(seq.key)

    async def _next_item(self, seq: LiveSequence) -> TokenDelta | BaseException:
        try:
            return await asyncio.wait_for(seq.deltas.get(), self._stall_timeout_s)
        except TimeoutError as exc:
            raise BackendError(
                f"no token for request {seq.request.request_id} within {self._stall_timeout_s:.0f} s"
            ) from exc

    def _load(self) -> DecodeLoop:
        """Runs in a worker thread: load the tokenizer(s) and the model, build the loop."""
        from transformers import AutoModelForCausalLM, AutoTokenizer

        try:
            self.tokenizer = AutoTokenizer.from_pretrained(self._model_path)
            decoder = AutoTokenizer.from_pretrained(self._model_path)  # the loop's own: no shared Rust borrow
            with model_loading():
                model = AutoModelForCausalLM.from_pretrained(
                    self._model_path, dtype=self._dtype, attn_implementation="sdpa"
                )
        except (OSError, ValueError) as exc:
            raise BackendError(f"could not load model {self._model_path}: {exc}") from exc
        model.to(self._device).eval()  # type: ignore[arg-type]  # transformers' stub wants a model, not a device
        avoid_cudnn_attention(str(self._device))
        _check_full_attention(model)
        check_cache_argument(model)
        self._base = model
        self._param_bytes = parameter_bytes(model.parameters())  # once: a status poll asks often
        self.max_context = int(model.config.max_position_embeddings)
        self._vocab_size = int(model.get_input_embeddings().num_embeddings)  # type: ignore[arg-type]
        eos_ids = eos_token_ids(self.tokenizer, getattr(model, "generation_config", None), model.config)
        pad_id = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else min(eos_ids, default=0)
        return DecodeLoop(
            model,
            decode=lambda ids: str(decoder.decode(list(ids), skip_special_tokens=True)),
            eos_ids=eos_ids,
            pad_id=int(pad_id),
            max_batch_size=self._max_batch_size,
            max_prefill_tokens=self._max_prefill_tokens,
            load_weights=self._apply_adapter,
            num_threads=self._num_threads,
            prefix_cache_tokens=self._prefix_cache_tokens,
            gather=self._prefill_gather,
            rows=self._rows,
        )

    def _apply_adapter(self, path: Path) -> torch.nn.Module:
        """Runs on the loop thread: make the adapter at `path` the only active one."""
        from peft import PeftModel

        self._n_adapters += 1
        name = f"policy{self._n_adapters}"
        if self._peft is None:
            base = self._base
            if base is None:
                raise BackendError("load_adapter before start()")
            with model_loading():
                self._peft = PeftModel.from_pretrained(base, path, adapter_name=name, is_trainable=False)
        else:
            previous = self._peft.active_adapter
            with model_loading():
                self._peft.load_adapter(path, adapter_name=name, is_trainable=False)
            self._peft.set_adapter(name)
            self._peft.delete_adapter(previous)
        self._peft.eval()
        run_lora_in_input_dtype(self._peft, self._rows)  # the trainer's LoRA math (`step/policy_model.py`)
        model: torch.nn.Module = self._peft.get_base_model()  # LoRA layers are injected in place
        self._param_bytes = parameter_bytes(model.parameters())  # the adapter's weights too, once per load
        return model


def _cpu_count() -> int:
    """Cores this process may use (respects taskset/cgroup affinity, unlike os.cpu_count)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def _check_full_attention(model: torch.nn.Module) -> None:
    from transformers import DynamicCache
    from transformers.cache_utils import DynamicLayer

    layers = DynamicCache(config=model.config).layers  # type: ignore[arg-type]
    kinds = {type(layer).__name__ for layer in layers if type(layer) is not DynamicLayer}
    if kinds:
        raise BackendError(f"continuous batching supports full-attention models only; this one uses {sorted(kinds)}")
