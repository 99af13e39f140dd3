"""What `agentjet chat --terminal` shows, as Rich `Text`: replies, logprob-coloured tokens, episodes' calls and samples.

Pure functions of the server's dicts. Every model or server string goes in with `Text(...)` or
`Text.append(...)`, never `Text.from_markup`, so a reply that says `[bold]` shows `[bold]`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from rich.style import Style
from rich.text import Text

__all__ = [
    "TRAINED",
    "CONTEXT",
    "Reply",
    "Turn",
    "call_text",
    "fork_messages",
    "logprob_style",
    "logprob_text",
    "sample_text",
    "token_texts",
    "turns_text",
]

TRAINED = Style(bgcolor="dark_green", color="white")  # sampled by the policy: in the loss
CONTEXT = Style(dim=True)  # prompt and tool text: conditioning only
_ROLE_STYLES = {"user": "bold cyan", "assistant": "bold green", "system": "bold magenta", "error": "bold red"}


def _byte_of_char() -> dict[str, int]:
    """Byte-level BPE (GPT-2, SmolLM2, Llama 3, Qwen) writes each byte as one printable character; reversed."""
    printable = [*range(33, 127), *range(161, 173), *range(174, 256)]
    table: dict[str, int] = {}
    extra = 0
    for b in range(256):
        if b in printable:
            table[chr(b)] = b
        else:
            table[chr(256 + extra)] = b
            extra += 1
    return table


_BYTE_OF_CHAR = _byte_of_char()


def token_texts(tokens: Sequence[str]) -> list[str]:
    """Tokens -> the text each adds (`Ġ` a space, `Ċ` a newline), as the web page shows them.

    A character split over several tokens shows on the token that completes it; tokens that are not
    byte-level (SentencePiece's `▁`) pass through."""
    texts: list[str] = []
    pending = b""
    for token in tokens:
        if not all(c in _BYTE_OF_CHAR for c in token):
            texts.append(token.replace("▁", " "))
            continue
        pending += bytes(_BYTE_OF_CHAR[c] for c in token)
        text, pending = _decode_prefix(pending)
        texts.append(text)
    return texts


def _decode_prefix(data: bytes) -> tuple[str, bytes]:
    """The longest decodable prefix of `data` and the (at most 3) bytes of an unfinished character."""
    for cut in range(len(data), max(len(data) - 4, -1), -1):
        try:
            return data[:cut].decode("utf-8"), data[cut:]
        except UnicodeDecodeError:
            continue
    return data.decode("utf-8", "replace"), b""


def logprob_style(logprob: float) -> Style:
    """Probability -> a background from red (unlikely) to green (likely), as the web's token view."""
    p = math.exp(max(float(logprob), -20.0))
    red, green = int(200 * (1 - p)), int(160 * p)
    return Style(bgcolor=f"rgb({red},{green},40)", color="white")


def logprob_text(tokens: Sequence[dict[str, Any]]) -> Text:
    """One styled segment per sampled token (`{"token", "logprob"}`), coloured by its logprob."""
    text = Text()
    for shown, entry in zip(token_texts([str(t["token"]) for t in tokens]), tokens, strict=True):
        text.append(shown, logprob_style(float(entry["logprob"])))
    return text


def sample_text(sample: dict[str, Any]) -> Text:
    """A merged sample's tokens: the trained ones (loss mask 1) highlighted, the context dim."""
    tokens = [str(t) for t in sample["tokens"]]
    mask = sample.get("loss_mask") or [1] * len(tokens)
    text = Text()
    for shown, trained in zip(token_texts(tokens), mask, strict=True):
        text.append(shown, TRAINED if trained else CONTEXT)
    return text


@dataclass
class Reply:
    """One choice of one policy's reply as it streams: its text, then its tokens and finish reason."""

    choice: int
    streamed: str = ""
    tokens: list[dict[str, Any]] | None = None
    finish_reason: str | None = None

    def text(self, *, show_logprobs: bool) -> Text:
        if show_logprobs and self.tokens is not None and self.finish_reason is not None:
            return logprob_text(self.tokens)
        return Text(self.streamed)


@dataclass
class Turn:
    """One block of a column: a message (`role`, `content`) or a streamed `reply`."""

    role: str
    content: str = ""
    reply: Reply | None = field(default=None)


def turns_text(turns: Sequence[Turn], *, show_logprobs: bool, n: int = 1) -> Text:
    """A column's conversation as one Text: each turn under its role, replies with their finish."""
    text = Text()
    for turn in turns:
        label = "assistant" if turn.reply is not None else turn.role
        if turn.reply is not None and n > 1:
            label += f" (choice {turn.reply.choice})"
        text.append(f"{label}: ", _ROLE_STYLES.get(turn.role, "bold"))
        if turn.reply is None:
            text.append(turn.content)
        else:
            text.append_text(turn.reply.text(show_logprobs=show_logprobs))
            if turn.reply.finish_reason is not None:
                text.append(f"  [finish: {turn.reply.finish_reason}]", "dim italic")
        text.append("\n\n")
    text.rstrip()
    return text


def _content(message: dict[str, Any]) -> str:
    content = message.get("content")
    return content if isinstance(content, str) else "" if content is None else str(content)


def call_text(call: dict[str, Any]) -> Text:
    """One recorded call: its heading, the messages it was sent and the completion it sampled."""
    choice = f" (choice {call['choice_index']})" if call.get("choice_index") else ""
    text = Text(
        f"Turn {call['call_index'] + 1}{choice} · policy v{call['policy_version']} · "
        f"{len(call['prompt_ids'])} prompt + {len(call['completion_ids'])} completion tokens · "
        f"finish {call['finish_reason']}\n",
        "bold",
    )
    for message in call["messages"]:
        role = str(message.get("role", "?"))
        text.append(f"{role}: ", _ROLE_STYLES.get(role, "bold"))
        text.append(_content(message) + "\n")
    text.append("completion (sampled): ", "bold green")
    if call.get("forced_text"):  # tool_choice's opening of the call: in the prompt, not sampled
        text.append(str(call["forced_text"]), "dim")
    text.append(str(call.get("completion_text") or ""))
    return text


def fork_messages(call: dict[str, Any]) -> list[dict[str, str]]:
    """Call k's messages as a playground conversation (the web's fork: developer -> system, tool -> user)."""
    renamed = {"developer": "system", "tool": "user"}
    messages = []
    for message in call["messages"]:
        role = renamed.get(str(message.get("role")), str(message.get("role")))
        if role in ("system", "user", "assistant"):
            messages.append({"role": role, "content": _content(message)})
    return messages
