"""The single generation loop: one worker thread that owns a causal LM and batches every request.

Between decode steps the loop reads its inbox: new sequences are prefilled together (left-padded)
and merged into the running `KVBatch`; cancelled ones leave it; adapter loads run there, so weights
never change under a forward pass. Each step samples one token for every row and hands the deltas
to the sequences' event loops (`outbox.py`). An error while serving some rows fails those rows with
`BackendError`; the loop carries on. A sequence may ask for the base weights (`GenerationRequest.base`):
its row's adapter is off in each forward (`RowAdapters`), its tokens carry version 0, and it has a
prefix cache of its own (the base's KV outlives a hot-load).

Other torch work can run on this thread too (`run_job`, `loop_jobs.py`: a training step on a CPU):
one stage of it per turn, between the decode steps. Serving goes on, slower, and one OpenMP team does both.
"""

from __future__ import annotations

import asyncio
import logging
import queue
import threading
from collections.abc import Callable, Generator, Sequence
from concurrent.futures import Future
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from agentjet.core.backends.kv_batch import KVBatch
from agentjet.core.backends.loop_jobs import Job, JobQueue
from agentjet.core.backends.lora_layers import RowAdapters
from agentjet.core.backends.outbox import Item, Outbox
from agentjet.core.backends.prefill_gather import PrefillGather
from agentjet.core.backends.prefix_cache import PrefixCache, prefill_in_groups
from agentjet.core.backends.sampling import sample_tokens
from agentjet.core.backends.textstream import TextStream, accept_token
from agentjet.core.errors import BackendError
from agentjet.core.types import FinishReason, GenerationRequest, TokenDelta

__all__ = ["DecodeLoop", "LiveSequence"]

log = logging.getLogger(__name__)

_IDLE_POLL_S = 0.5  # an idle loop wakes this often to notice a stop without a command
_ABORT = TokenDelta(token_ids=(), logprobs=(), text="", finish_reason="abort")


@dataclass(eq=False)
class LiveSequence:
    """A request in flight; its deltas carry the version of the weights that sampled each token."""

    key: int
    request: GenerationRequest
    loop: asyncio.AbstractEventLoop
    seed: int  # the request's seed, or a random one
    deltas: asyncio.Queue[Item] = field(default_factory=asyncio.Queue)


@dataclass(eq=False)
class _Row:
    """Worker-side state of one sequence in the running batch."""

    seq: LiveSequence
    text: TextStream
    generator: torch.Generator
    pending: int = -1  # the last sampled token: not yet in the KV cache
    sampled: list[int] = field(default_factory=list)


@dataclass
class _LoadAdapter:
    path: Path
    version: int
    done: Future[None]


@dataclass
class _Cancel:
    key: int


_Command = LiveSequence | _Cancel | _LoadAdapter | Job | None  # None stops the loop


class DecodeLoop:
    """Serves all sequences of one model from one thread.

    Thread-safety: `submit`, `cancel`, `load_adapter`, `run_job` and `stop` may be called from any
    thread; everything else runs on the worker. `load_weights(path)` runs on the worker and returns the
    module to run forward passes on from then on.
    """

    def __init__(
        self,
        model: torch.nn.Module,
        *,
        decode: Callable[[Sequence[int]], str],
        eos_ids: frozenset[int],
        pad_id: int,
        max_batch_size: int,
        max_prefill_tokens: int,
        load_weights: Callable[[Path], torch.nn.Module],
        num_threads: int | None = None,
        prefix_cache_tokens: int = 0,
        gather: PrefillGather | None = None,  # None: gather on a CPU, admit at once elsewhere
        rows: RowAdapters | None = None,  # the LoRA layers' per-row switch: base rows beside adapter rows
    ) -> None:
        self._model = model
        self._decode = decode
        self._eos_ids = eos_ids
        self._pad_id = pad_id
        self._max_batch_size = max_batch_size
        self._max_prefill_tokens = max_prefill_tokens
        self._load_weights = load_weights
        self._num_threads = num_threads
        self._prefix = PrefixCache(prefix_cache_tokens) if prefix_cache_tokens > 0 else None
        self._base_prefix = PrefixCache(prefix_cache_tokens) if prefix_cache_tokens > 0 else None
        self._switch = rows
        self._device = next(model.parameters()).device
        self._gather = gather or (PrefillGather() if self._device.type == "cpu" else PrefillGather.immediate())
        self._inbox: queue.SimpleQueue[_Command] = queue.SimpleQueue()
        self._waiting: list[LiveSequence] = []
        self._rows: list[_Row] = []
        self._batch: KVBatch | None = None
        self._jobs = JobQueue()
        self._version = 0
        self._running = True
        self._thread = threading.Thread(target=self._run, name="agentjet-decode", daemon=True)

    # -- any thread ------------------------------------------------------------------------
    def start(self) -> None:
        self._thread.start()

    @property
    def is_alive(self) -> bool:
        """False once the loop has stopped or crashed: nothing would serve a new sequence."""
        return self._running and self._thread.is_alive()

    def submit(self, seq: LiveSequence) -> None:
        self._inbox.put(seq)

    def cancel(self, key: int) -> None:
        self._inbox.put(_Cancel(key))

    def load_adapter(self, path: Path, version: int) -> Future[None]:
        done: Future[None] = Future()
        self._inbox.put(_LoadAdapter(path, version, done))
        return done

    def run_job(self, stages: Generator[None, None, Any]) -> Future[Any]:
        """Run `stages` here, one stage per turn between decode steps; the future gets its result or error.

        Once started it cannot be cancelled; `stop` closes it at its next pause (`BackendError`).
        """
        done: Future[Any] = Future()
        self._inbox.put(Job(stages, done))
        return done

    def stop(self, timeout_s: float) -> None:
        """Ask the loop to finish open sequences with "abort" and exit; wait for the thread."""
        self._inbox.put(None)
        self._thread.join(timeout_s)
        if self._thread.is_alive():
            log.error("decode loop did not stop within %.1f s", timeout_s)

    # -- worker thread ---------------------------------------------------------------------
    def _run(self) -> None:
        if self._num_threads:
            torch.set_num_threads(self._num_threads)
        try:
            with torch.inference_mode():
                while self._running:
                    try:
                        self._iterate()
                    except Exception as exc:  # bookkeeping failed mid-way: the running batch is unusable
                        log.exception("decode loop iteration failed running=%d", len(self._rows))
                        outbox = Outbox()
                        self._fail(self._rows, exc, outbox)
                        self._rows, self._batch = [], None
                        outbox.send()
        except BaseException as exc:  # the thread itself is going down: fail everyone, log it
            log.exception("decode loop crashed")
            self._fail_all(BackendError(f"decode loop crashed: {exc!r}"), cause=exc)
        else:
            self._fail_all(None)

    def _iterate(self) -> None:
        """One turn: read commands, one stage of the current job, admit newcomers, one decode step for every row."""
        self._read_inbox(block=not self._rows and not self._waiting and not self._jobs)
        if self._running and self._jobs:
            self._jobs.advance()
        free = self._max_batch_size - len(self._rows)
        if self._running and self._gather.due(len(self._waiting), len(self._rows), free):
            self._admit()
        if self._running and self._rows:
            self._decode_step()
            self._gather.stepped(len(self._waiting))

    def _read_inbox(self, *, block: bool) -> None:
        try:
            command = self._inbox.get(timeout=_IDLE_POLL_S) if block else self._inbox.get_nowait()
            while True:
                self._handle(command)
                command = self._inbox.get_nowait()
        except queue.Empty:
            return

    def _handle(self, command: _Command) -> None:
        if command is None:
            self._running = False
        elif isinstance(command, LiveSequence):
            self._waiting.append(command)
        elif isinstance(command, _Cancel):
            self._drop(command.key)
        elif isinstance(command, Job):
            self._jobs.add(command, accepting=self._running)
        elif not command.done.set_running_or_notify_cancel():
            log.warning("adapter load abandoned by its caller path=%s", command.path)
        elif self._running:
            self._swap_adapter(command)
        else:
            command.done.set_exception(BackendError("backend closed before the adapter was loaded"))

    def _swap_adapter(self, command: _LoadAdapter) -> None:
        """Runs with `command.done` already running, so the caller can no longer cancel it."""
        try:
            self._model = self._load_weights(command.path)
        except Exception as exc:
            log.exception("adapter load failed path=%s", command.path)
            error = BackendError(f"could not load adapter {command.path}: {exc}")
            error.__cause__ = exc
            command.done.set_exception(error)
            return
        self._version = command.version
        if self._prefix is not None:  # its KV came from the old weights (the base's cache stays right)
            self._prefix.clear()
        log.info("adapter loaded path=%s policy_version=%d", command.path, command.version)
        command.done.set_result(None)

    def _drop(self, key: int) -> None:
        """A consumer went away: forget the sequence whether it waits or runs."""
        self._waiting = [s for s in self._waiting if s.key != key]
        keep = [i for i, row in enumerate(self._rows) if row.seq.key != key]
        if len(keep) != len(self._rows):
            self._keep_rows(keep)
            log.debug("cancelled key=%d running=%d", key, len(self._rows))

    def _keep_rows(self, keep: list[int]) -> None:
        self._rows = [self._rows[i] for i in keep]
        if not self._rows:
            self._batch = None
        elif self._batch is not None:
            self._batch.select(keep)

    def _admit(self) -> None:
        """Prefill the waiting sequences that fit (slots, prefill budget) and merge them in."""
        seqs = self._take_admissible()
        if not seqs:
            return
        rows = [self._new_row(seq) for seq in seqs]
        outbox = Outbox()
        try:
            batch, logits = self._prefill(seqs)
            finished = self._sample_and_emit(rows, logits, outbox)
        except Exception as exc:
            log.exception("prefill failed for %d sequences", len(rows))
            self._fail(rows, exc, outbox)
        else:
            keep = [i for i in range(len(rows)) if i not in finished]
            if keep:
                self._merge(batch, [rows[i] for i in keep], keep, len(rows))
            log.debug("admitted n=%d running=%d waiting=%d", len(rows), len(self._rows), len(self._waiting))
        outbox.send()

    def _take_admissible(self) -> list[LiveSequence]:
        """FIFO, up to the free slots and `max_prefill_tokens` of left-padded prefill (at least one):
        one huge prefill would stall every running stream and could exhaust memory."""
        free = self._max_batch_size - len(self._rows)
        chosen: list[LiveSequence] = []
        width = 0
        for seq in self._waiting[: max(free, 0)]:
            width = max(width, len(seq.request.prompt_ids))
            if chosen and width * (len(chosen) + 1) > self._max_prefill_tokens:
                break
            chosen.append(seq)
        self._waiting = self._waiting[len(chosen) :]
        return chosen

    def _new_row(self, seq: LiveSequence) -> _Row:
        generator = torch.Generator(device=self._device)
        generator.manual_seed(seq.seed)
        return _Row(seq=seq, text=TextStream(self._decode, seq.request.params.stop), generator=generator)

    def _prefill(self, seqs: list[LiveSequence]) -> tuple[KVBatch, torch.Tensor]:
        """Forward passes over every prompt (one per group of like length), minus the cached prefixes."""
        prompts = [seq.request.prompt_ids for seq in seqs]
        caches = [self._cache_of(seq.request) for seq in seqs]
        hits = [cache.lookup(p) if cache is not None else None for p, cache in zip(prompts, caches, strict=True)]
        if any(hits):
            log.debug("prefix hits n=%d reused=%d", sum(1 for h in hits if h), sum(h[0] for h in hits if h))
        base = [seq.request.base for seq in seqs]
        return prefill_in_groups(
            self._model, prompts, hits, pad_id=self._pad_id, device=self._device, split=self._gather.groups,
            rows_of=lambda group: self._switched([base[i] for i in group]),
        )  # fmt: skip

    def _cache_of(self, request: GenerationRequest) -> PrefixCache | None:
        return self._base_prefix if request.base else self._prefix

    def _switched(self, base: list[bool]) -> AbstractContextManager[None]:
        """The next forward's rows: those asking for the base get no adapter (a no-op when none asks)."""
        return self._switch.only([not b for b in base], self._device) if self._switch is not None else nullcontext()

    def _merge(self, batch: KVBatch, rows: list[_Row], keep: list[int], n_prefilled: int) -> None:
        if len(keep) != n_prefilled:
            batch.select(keep)
        if self._batch is None:
            self._batch = batch
        else:
            self._batch.extend(batch)
        self._rows.extend(rows)

    def _decode_step(self) -> None:
        assert self._batch is not None  # rows exist only together with their batch
        outbox = Outbox()
        try:
            ids = torch.tensor([[row.pending] for row in self._rows], dtype=torch.long, device=self._device)
            mask, positions = self._batch.step_inputs()
            with self._switched([row.seq.request.base for row in self._rows]):
                out = self._model(input_ids=ids, attention_mask=mask, position_ids=positions, cache=self._batch.cache)
            finished = self._sample_and_emit(self._rows, out.logits[:, -1, :], outbox)
        except Exception as exc:
            log.exception("decode step failed for %d sequences", len(self._rows))
            self._fail(self._rows, exc, outbox)
            self._rows, self._batch = [], None
        else:
            if finished:
                self._remember(finished)
                self._keep_rows([i for i in range(len(self._rows)) if i not in finished])
                log.debug("retired n=%d running=%d", len(finished), len(self._rows))
        outbox.send()

    def _remember(self, finished: set[int]) -> None:
        """Offer finished rows' KV (prompt + sampled tokens but the last) to the prefix cache."""
        if self._batch is None:
            return
        for i in sorted(finished):
            row = self._rows[i]
            cache = self._cache_of(row.seq.request)
            ids = row.seq.request.prompt_ids + tuple(row.sampled[:-1])
            if cache is not None and len(ids) >= cache.min_match and int(self._batch.mask[i].sum()) == len(ids):
                cache.store(ids, self._batch.row_kv(i))

    def _sample_and_emit(self, rows: list[_Row], logits: torch.Tensor, outbox: Outbox) -> set[int]:
        """Sample a token for each row, queue its delta; return the indices of finished rows."""
        params = [row.seq.request.params for row in rows]
        tokens, logprobs = sample_tokens(
            logits, [p.temperature for p in params], [p.top_p for p in params], [row.generator for row in rows]
        )
        finished: set[int] = set()
        for i, (row, token, logprob) in enumerate(zip(rows, tokens, logprobs, strict=True)):
            reason, text = self._accept(row, token)
            version = 0 if row.seq.request.base else self._version
            outbox.put(row.seq, TokenDelta((token,), (logprob,), text, reason, version))
            if reason is not None:
                finished.add(i)
        return finished

    def _accept(self, row: _Row, token: int) -> tuple[FinishReason | None, str]:
        """Record a sampled token; decide whether the sequence is done and what text it adds."""
        row.pending = token
        row.sampled.append(token)
        max_tokens = row.seq.request.params.max_tokens
        return accept_token(row.text, token, len(row.sampled), eos_ids=self._eos_ids, max_tokens=max_tokens)

    def _fail(self, rows: list[_Row], exc: Exception, outbox: Outbox) -> None:
        for row in rows:
            error = BackendError(f"generation failed for request {row.seq.request.request_id}: {exc}")
            error.__cause__ = exc
            outbox.put(row.seq, error)

    def _fail_all(self, error: BackendError | None, cause: BaseException | None = None) -> None:
        """End every open sequence: with `error`, or with an "abort" delta on a clean stop."""
        self._running = False  # from here on, queued adapter loads and jobs are refused, not run
        if error is not None:
            error.__cause__ = cause
        self._read_inbox(block=False)  # sequences, adapters and jobs queued behind the stop
        self._jobs.close_all(error)
        outbox = Outbox()
        for seq in [row.seq for row in self._rows] + self._waiting:
            outbox.put(seq, _ABORT if error is None else error)
        self._rows, self._waiting, self._batch = [], [], None
        outbox.send()
