"""Incremental detokenisation with stop strings for one sampled sequence.

Pure (no torch, no tokenizer import): the caller passes a `decode(ids) -> str` function. Tokens
arrive one at a time; `push` returns only text that is final: never half a UTF-8 character
(a trailing "\\ufffd" means the next token completes it) and never text that could still turn
out to be the start of a stop string. Once a stop string appears, the sequence is stopped and
its text ends right before the stop string. Decoding looks back only a few tokens (the
prefix/read offset scheme of TGI/vLLM), so a step costs O(1) in the sequence length.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence

from agentjet.core.types import FinishReason

__all__ = ["TextStream", "accept_token", "held_back_length"]

Decode = Callable[[Sequence[int]], str]
_INCOMPLETE = "\ufffd"


def held_back_length(text: str, stops: Sequence[str]) -> int:
    """Length of the longest suffix of `text` that is a proper prefix of some stop string."""
    longest = 0
    for stop in stops:
        for size in range(min(len(stop) - 1, len(text)), longest, -1):
            if text.endswith(stop[:size]):
                longest = size
                break
    return longest


class TextStream:
    """Turns sampled token ids into safe-to-emit text deltas, cutting at the first stop string.

    Not thread-safe; one instance per sequence. Feed every sampled token except an EOS token
    (EOS carries no text), then call `flush()` when the sequence ends for a reason other than a
    stop string, to release text held back because it looked like a stop string's beginning.
    """

    def __init__(self, decode: Decode, stop: Sequence[str] = ()) -> None:
        self._decode = decode
        self._stops = tuple(s for s in stop if s)
        self._ids: list[int] = []
        self._prefix_offset = 0  # tokens before this are no longer decoded
        self._read_offset = 0  # tokens before this have their text in `_text`
        self._text = ""  # all decoded text so far (may extend past a stop string)
        self._emitted = 0  # characters of `_text` already returned
        self._final_len: int | None = None  # set once stopped: length of the final text

    @property
    def is_stopped(self) -> bool:
        """True once a stop string has been seen; further pushes are ignored."""
        return self._final_len is not None

    @property
    def text(self) -> str:
        """Everything emitted so far (after `flush()` or a stop: the final text)."""
        return self._text[: self._emitted]

    def push(self, token_id: int) -> str:
        """Add one sampled token; return the text that became final because of it."""
        if self.is_stopped:
            return ""
        self._ids.append(token_id)
        old_len = len(self._text)
        self._text += self._decode_new(allow_incomplete=False)
        return self._release(search_from=old_len)

    def flush(self) -> str:
        """End of sequence: return all text still held back (incomplete characters included)."""
        if self.is_stopped:
            return ""
        old_len = len(self._text)
        self._text += self._decode_new(allow_incomplete=True)
        released = self._release(search_from=old_len)
        if self.is_stopped:
            return released
        rest = self._text[self._emitted :]
        self._emitted = len(self._text)
        return released + rest

    def _decode_new(self, *, allow_incomplete: bool) -> str:
        """Text added by the tokens after `_read_offset`, decoded with a little left context
        so that tokenizers which strip a leading space or merge bytes decode correctly."""
        if self._read_offset == len(self._ids):
            return ""
        prefix = self._decode(self._ids[self._prefix_offset : self._read_offset])
        full = self._decode(self._ids[self._prefix_offset :])
        if len(full) <= len(prefix) or (full.endswith(_INCOMPLETE) and not allow_incomplete):
            return ""  # wait: the next token completes a character
        self._prefix_offset = self._read_offset
        self._read_offset = len(self._ids)
        return full[len(prefix) :]

    def _release(self, *, search_from: int) -> str:
        """Emit what is safe; on a stop string, emit up to it and mark the stream stopped."""
        longest_stop = max((len(s) for s in self._stops), default=0)
        start = max(0, search_from - longest_stop + 1)
        hits = [i for i in (self._text.find(s, start) for s in self._stops) if i >= 0]
        if hits:
            self._final_len = min(hits)
            out = self._text[self._emitted : self._final_len]
            self._text = self._text[: self._final_len]
            self._emitted = self._final_len
            return out
        safe_end = len(self._text) - held_back_length(self._text, self._stops)
        out = self._text[self._emitted : safe_end] if safe_end > self._emitted else ""
        self._emitted = max(self._emitted, safe_end)
        return out


def accept_token(
    text: TextStream, token: int, n_sampled: int, *, eos_ids: Collection[int], max_tokens: int
) -> tuple[FinishReason | None, str]:
    """One sampled token (the `n_sampled`-th): whether the sequence ends with it, and the text it adds.

    The one rule every backend follows: an EOS token ends it ("stop", no text), then a stop
    string ("stop", text cut before it), then the `max_tokens`-th token ("length"). The token
    that ends a sequence is always part of its completion ids.
    """
    if token in eos_ids:
        return "stop", text.flush()
    delta = text.push(token)
    if text.is_stopped:
        return "stop", delta
    if n_sampled >= max_tokens:
        return "length", delta + text.flush()
    return None, delta
