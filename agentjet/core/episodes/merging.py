"""Timeline merging: fold an episode's calls into training samples (pure; no I/O, no clock).

A later call whose prompt token ids extend an earlier sample's whole sequence (prompt +
sampled completion) is appended to that sample: the earlier completion's sampled tokens stay
trainable positions, the new prompt tokens are context, the new completion is trainable.
Calls that extend nothing start a sample of their own, and a `Drift` says why they did not
join the timeline they share most with (history edited, other agent, tools changed, ...).

Levels: `token` needs the new prompt to extend the timeline token for token; `text` needs its
messages to extend the earlier call's messages plus that call's reply (by text), then splices:
the timeline's exact sampled tokens stand where the prompt re-rendered the reply, and the new
prompt's tokens after that turn follow (`CallRecord.last_assistant_end` marks the cut).
`off` keeps every call apart.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Literal

from agentjet.core.chat_format import parse_tool_calls
from agentjet.core.types import CallRecord

__all__ = ["Drift", "DriftReason", "MatchLevel", "Sample", "common_prefix", "merge_timelines", "sampling_temperature"]

MatchLevel = Literal["token", "text", "off"]
_PROMPT_VERSION = -1  # policy version recorded on positions that were not sampled


def sampling_temperature(call: CallRecord) -> float:
    """The temperature a call's behaviour logprobs were taken at: log_softmax(logits / T).

    The trainer must score the same tempered distribution, or the PPO ratio is off by the
    temperature alone (at T = 0.5, 19-46% of a fresh batch's tokens clipped before any update). Greedy
    calls (T = 0) record plain log_softmax, so they count as 1.0, as does a record without one.
    """
    value = call.sampling.get("temperature")
    return float(value) if isinstance(value, int | float) and value > 0 else 1.0


class DriftReason(StrEnum):
    OTHER_AGENT = "other_agent"  # the timeline it shares most with belongs to another agent
    TOOLS_CHANGED = "tools_changed"  # the offered tools differ from the timeline's
    HISTORY_EDITED = "history_edited"  # the prompt rewrites context the timeline had shown
    COMPLETION_EDITED = "completion_edited"  # the prompt rewrites what the model had sampled
    HISTORY_TRUNCATED = "history_truncated"  # the prompt is a strict prefix of the timeline
    FORKED = "forked"  # extends an earlier state of a timeline that another call extended since
    TOKENS_DIFFER = "tokens_differ"  # messages extend the timeline by text, but the tokens do not
    NO_TURN_BOUNDARY = "no_turn_boundary"  # text matches, but the template gave no clean cut point
    MERGE_OFF = "merge_off"  # merging is disabled by config


@dataclass(frozen=True)
class Drift:
    """Why one call stayed a separate sample. `shared_tokens` = common prefix with the timeline."""

    call: tuple[int, int]  # (call_index, choice_index)
    timeline: tuple[int, int]  # first call of the timeline it was compared with
    reason: DriftReason
    shared_tokens: int


@dataclass(frozen=True)
class Sample:
    """One training sequence. Masks and per-token values are aligned with `token_ids`."""

    episode_id: str
    token_ids: tuple[int, ...]
    loss_mask: tuple[bool, ...]  # True exactly on sampled tokens
    behaviour_logprobs: tuple[float, ...]  # 0.0 on context positions
    policy_versions: tuple[int, ...]  # -1 on context positions
    calls: tuple[tuple[int, int], ...]  # (call_index, choice_index) of every call folded in
    temperatures: tuple[float, ...] = ()  # the sampling temperature of each token's call (1.0 on context); () = all 1.0

    def trainable_pairs(self) -> list[tuple[int, float]]:
        return [(t, lp) for t, lp, m in zip(self.token_ids, self.behaviour_logprobs, self.loss_mask, strict=True) if m]


@dataclass
class _Timeline:
    agent: str | None
    tools: list[dict[str, object]] | None
    tokens: list[int] = field(default_factory=list)
    mask: list[bool] = field(default_factory=list)
    logprobs: list[float] = field(default_factory=list)
    versions: list[int] = field(default_factory=list)
    temperatures: list[float] = field(default_factory=list)
    calls: list[tuple[int, int]] = field(default_factory=list)
    prompt_ends: list[int] = field(default_factory=list)  # where each folded call's prompt ended
    lengths: list[int] = field(default_factory=list)  # sequence length after each folded call
    records: list[CallRecord] = field(default_factory=list)

    def extends(self, call: CallRecord) -> bool:
        n = len(self.tokens)
        return call.agent == self.agent and len(call.prompt_ids) >= n and tuple(self.tokens) == call.prompt_ids[:n]

    def extends_text(self, call: CallRecord) -> bool:
        return (
            call.agent == self.agent
            and call.tools == self.tools
            and call.last_assistant_end is not None
            and _replies_to(call, self.records[-1])
        )

    def fold(self, call: CallRecord, *, start: int | None = None) -> None:
        """Append `call`: its prompt from `start` (default: where the timeline ends) is context."""
        context = call.prompt_ids[len(self.tokens) if start is None else start :]
        self.tokens += [*context, *call.completion_ids]
        self.mask += [False] * len(context) + [True] * len(call.completion_ids)
        self.logprobs += [0.0] * len(context) + list(call.completion_logprobs)
        self.versions += [_PROMPT_VERSION] * len(context) + [call.policy_version] * len(call.completion_ids)
        self.temperatures += [1.0] * len(context) + [sampling_temperature(call)] * len(call.completion_ids)
        self.calls.append((call.call_index, call.choice_index))
        self.prompt_ends.append(len(call.prompt_ids))
        self.lengths.append(len(self.tokens))
        self.records.append(call)
        self.tools = call.tools

    def sample(self, episode_id: str) -> Sample:
        return Sample(
            episode_id,
            tuple(self.tokens),
            tuple(self.mask),
            tuple(self.logprobs),
            tuple(self.versions),
            tuple(self.calls),
            tuple(self.temperatures),
        )


def merge_timelines(calls: Sequence[CallRecord], *, match: MatchLevel) -> tuple[list[Sample], list[Drift]]:
    """Fold each call into the earliest timeline it extends; the rest start timelines of their own.

    Pure. Every sampled token of `calls` is trainable in exactly one returned sample, and each
    sample's context at every position is exactly the prompt its call was sampled from.
    """
    ordered = sorted(calls, key=lambda c: (c.call_index, c.choice_index))
    timelines: list[_Timeline] = []
    drifts: list[Drift] = []
    for call in ordered:
        target = _find_target(call, timelines, match)
        if target is not None:
            target.fold(call, start=call.last_assistant_end if match == "text" else None)
            continue
        drift = _explain(call, timelines, match)
        if drift is not None:
            drifts.append(drift)
        timelines.append(_Timeline(agent=call.agent, tools=call.tools))
        timelines[-1].fold(call)
    episode_id = ordered[0].episode_id if ordered else ""
    return [t.sample(episode_id) for t in timelines], drifts


def _find_target(call: CallRecord, timelines: list[_Timeline], match: MatchLevel) -> _Timeline | None:
    if match == "token":
        return next((t for t in timelines if t.extends(call)), None)
    if match == "text":
        return next((t for t in timelines if t.extends_text(call)), None)
    return None


def _message_key(message: dict[str, Any]) -> tuple[str, str, tuple[tuple[str, str], ...]]:
    """What a message says, ignoring representation: role, text, and tool calls (name, args)."""
    content = message.get("content")
    if isinstance(content, list):
        content = "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    calls = tuple(_call_key(c) for c in message.get("tool_calls") or ())
    return str(message.get("role")), (content or "").strip(), calls


def _call_key(call: dict[str, Any]) -> tuple[str, str]:
    function = call.get("function") or {}
    arguments = function.get("arguments", "{}")
    try:
        parsed = json.loads(arguments) if isinstance(arguments, str) else arguments
    except json.JSONDecodeError:
        parsed = arguments
    return str(function.get("name", "")), json.dumps(parsed, sort_keys=True)


def _replies_to(call: CallRecord, earlier: CallRecord) -> bool:
    """True if `call`'s messages are `earlier`'s messages, then `earlier`'s reply, then no other reply."""
    count = len(earlier.messages)
    history = call.messages
    if len(history) <= count or any(m.get("role") == "assistant" for m in history[count + 1 :]):
        return False
    if [_message_key(m) for m in history[:count]] != [_message_key(m) for m in earlier.messages]:
        return False
    content = earlier.forced_text + earlier.completion_text
    if earlier.tool_calls:
        content = _strip_tool_blocks(content)
    reply = {"role": "assistant", "content": content, "tool_calls": earlier.tool_calls}
    return _message_key(history[count]) == _message_key(reply)


def _strip_tool_blocks(text: str) -> str:
    content, _ = parse_tool_calls(text)  # the same parser that built the reply
    return content or ""


def common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    """How many leading tokens `a` and `b` share."""
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def _explain(call: CallRecord, timelines: list[_Timeline], match: MatchLevel) -> Drift | None:
    """Compare a call that joined nothing with the timeline it shares the longest prefix with."""
    siblings = [t for t in timelines if t.calls and t.calls[0][0] == call.call_index]
    candidates = [t for t in timelines if t not in siblings]  # n>1 choices of one call never merge
    if not candidates:
        return None
    best = max(candidates, key=lambda t: common_prefix(t.tokens, call.prompt_ids))
    shared = common_prefix(best.tokens, call.prompt_ids)
    if shared == 0 and best.agent == call.agent:
        return None  # a fresh conversation, not drift
    return Drift((call.call_index, call.choice_index), best.calls[0], _reason(call, best, shared, match), shared)


def _reason(call: CallRecord, timeline: _Timeline, shared: int, match: MatchLevel) -> DriftReason:
    if match == "off":
        return DriftReason.MERGE_OFF
    if call.agent != timeline.agent:
        return DriftReason.OTHER_AGENT
    if call.tools != timeline.tools:
        return DriftReason.TOOLS_CHANGED
    if _replies_to(call, timeline.records[-1]):  # the text extends the timeline
        return DriftReason.TOKENS_DIFFER if match == "token" else DriftReason.NO_TURN_BOUNDARY
    if any(length <= len(call.prompt_ids) and shared >= length for length in timeline.lengths[:-1]):
        return DriftReason.FORKED
    if shared == len(call.prompt_ids):
        return DriftReason.HISTORY_TRUNCATED
    position = shared  # first differing token: inside a prompt region or a sampled region?
    starts = [0, *timeline.lengths[:-1]]
    for start, prompt_end, end in zip(starts, timeline.prompt_ends, timeline.lengths, strict=True):
        if start <= position < end:
            return DriftReason.HISTORY_EDITED if position < prompt_end else DriftReason.COMPLETION_EDITED
    return DriftReason.HISTORY_EDITED
