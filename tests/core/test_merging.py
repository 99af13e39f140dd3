"""Token-level timeline merging: every sampled token trained exactly once, contexts unchanged."""

from __future__ import annotations

from collections import Counter
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from agentjet.core.episodes.merging import DriftReason, merge_timelines
from agentjet.core.types import CallRecord
from tests.core.factories import call_record, rendered_call, stop_string_turns


def test_a_growing_conversation_is_one_sample() -> None:
    a = call_record(0, [1, 2, 3], [10, 11])
    b = call_record(1, [1, 2, 3, 10, 11, 4, 5], [12], version=1)
    samples, drifts = merge_timelines([b, a], match="token")  # order of arrival does not matter
    assert drifts == [] and len(samples) == 1
    sample = samples[0]
    assert sample.token_ids == (1, 2, 3, 10, 11, 4, 5, 12)
    assert sample.loss_mask == (False, False, False, True, True, False, False, True)
    assert sample.policy_versions == (-1, -1, -1, 0, 0, -1, -1, 1)
    assert sample.calls == ((0, 0), (1, 0))
    assert sample.trainable_pairs() == [
        (10, a.completion_logprobs[0]),
        (11, a.completion_logprobs[1]),
        (12, b.completion_logprobs[0]),
    ]


def test_merge_off_keeps_every_call_apart() -> None:
    calls = [call_record(0, [1, 2], [3]), call_record(1, [1, 2, 3, 4], [5])]
    samples, drifts = merge_timelines(calls, match="off")
    assert [s.token_ids for s in samples] == [(1, 2, 3), (1, 2, 3, 4, 5)]
    assert [d.reason for d in drifts] == [DriftReason.MERGE_OFF]


def test_drift_reasons() -> None:
    base = call_record(0, [1, 2, 3], [10, 11])
    cases = {
        DriftReason.HISTORY_EDITED: call_record(1, [1, 9, 3, 10, 11, 4], [12]),
        DriftReason.COMPLETION_EDITED: call_record(1, [1, 2, 3, 10, 99, 4], [12]),
        DriftReason.HISTORY_TRUNCATED: call_record(1, [1, 2], [12]),
        DriftReason.OTHER_AGENT: call_record(1, [1, 2, 3, 10, 11, 4], [12], agent="seer"),
        DriftReason.TOOLS_CHANGED: call_record(1, [1, 2, 3, 10, 11, 4], [12], tools=[{"type": "function"}]),
    }
    for reason, later in cases.items():
        if reason is DriftReason.TOOLS_CHANGED:
            later = call_record(1, [1, 2, 3, 10, 9], [12], tools=[{"type": "function"}])
        samples, drifts = merge_timelines([base, later], match="token")
        assert len(samples) == 2, reason
        assert [(d.reason, d.timeline) for d in drifts] == [(reason, (0, 0))], reason


def test_fork_and_n_choices() -> None:
    first = call_record(0, [1, 2], [3])
    extend = call_record(1, [1, 2, 3, 4], [5])
    fork = call_record(2, [1, 2, 3, 6], [7])  # extends the state before call 1 extended it
    samples, drifts = merge_timelines([first, extend, fork], match="token")
    assert [s.calls for s in samples] == [((0, 0), (1, 0)), ((2, 0),)]
    assert [d.reason for d in drifts] == [DriftReason.FORKED]
    choices = [call_record(0, [1, 2], [3], choice=0), call_record(0, [1, 2], [4], choice=1)]
    samples, drifts = merge_timelines(choices, match="token")
    assert len(samples) == 2 and drifts == []  # sibling choices are separate timelines, not drift


@st.composite
def episodes(draw: st.DrawFn) -> list[CallRecord]:
    """Calls that extend, fork from or rewrite earlier timelines, or start afresh."""
    tokens = st.lists(st.integers(1, 30), min_size=0, max_size=4)
    calls: list[CallRecord] = []
    for index in range(draw(st.integers(1, 7))):
        move = draw(st.sampled_from(["fresh", "extend", "rewrite"])) if calls else "fresh"
        if move == "fresh":
            prompt = draw(tokens.filter(bool))
        else:
            earlier = draw(st.sampled_from(calls))
            history = [*earlier.prompt_ids, *earlier.completion_ids]
            if move == "rewrite" and history:
                at = draw(st.integers(0, len(history) - 1))
                history[at] = history[at] + 100
            prompt = history + draw(tokens)
        calls.append(
            call_record(
                index,
                prompt,
                draw(st.lists(st.integers(1, 30), min_size=1, max_size=3)),
                agent=draw(st.sampled_from([None, None, "b"])),
            )
        )
    return calls


@settings(max_examples=300, deadline=None)
@given(calls=episodes())
def test_every_sampled_token_is_trained_exactly_once(calls: list[CallRecord]) -> None:
    for match in ("token", "off"):
        samples, _ = merge_timelines(calls, match=match)  # type: ignore[arg-type]
        trained = Counter(p for s in samples for p in s.trainable_pairs())
        assert trained == Counter(p for c in calls for p in zip(c.completion_ids, c.completion_logprobs, strict=True))
        assert sum(len(s.calls) for s in samples) == len(calls)


@settings(max_examples=300, deadline=None)
@given(calls=episodes())
def test_each_sampled_token_keeps_the_context_it_was_sampled_in(calls: list[CallRecord]) -> None:
    samples, _ = merge_timelines(calls, match="token")
    by_key = {(c.call_index, c.choice_index): c for c in calls}
    for sample in samples:
        position = 0
        for key in sample.calls:
            call = by_key[key]
            start = len(call.prompt_ids)
            assert sample.token_ids[:start] == call.prompt_ids  # same context, so the same logits
            assert sample.token_ids[start : start + len(call.completion_ids)] == call.completion_ids
            assert all(sample.loss_mask[start : start + len(call.completion_ids)])
            assert not any(sample.loss_mask[position:start])
            position = start + len(call.completion_ids)
        assert position == len(sample.token_ids)


def test_text_merge_splices_the_sampled_tokens_where_tokens_differ(tiny_tokenizer: Any) -> None:
    end_id = tiny_tokenizer.convert_tokens_to_ids("<|im_end|>")
    first, second = stop_string_turns(tiny_tokenizer, "Sure", reply_extra_ids=[end_id])

    token_samples, token_drifts = merge_timelines([first, second], match="token")
    assert len(token_samples) == 2
    assert [d.reason for d in token_drifts] == [DriftReason.TOKENS_DIFFER]

    text_samples, text_drifts = merge_timelines([first, second], match="text")
    assert text_drifts == [] and len(text_samples) == 1
    sample = text_samples[0]
    cut = second.last_assistant_end
    assert cut is not None
    assert sample.token_ids == (
        *first.prompt_ids,
        *first.completion_ids,
        *second.prompt_ids[cut:],
        *second.completion_ids,
    )
    assert sample.trainable_pairs() == [
        *zip(first.completion_ids, first.completion_logprobs, strict=True),
        *zip(second.completion_ids, second.completion_logprobs, strict=True),
    ]


def test_text_merge_refuses_edited_replies_and_history(tiny_tokenizer: Any) -> None:
    first = rendered_call(tiny_tokenizer, 0, [{"role": "user", "content": "hi"}], "Hello there")
    edited_reply = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "Hello THERE"},
        {"role": "user", "content": "more"},
    ]
    edited_history = [
        {"role": "user", "content": "HI"},
        {"role": "assistant", "content": "Hello there"},
        {"role": "user", "content": "more"},
    ]
    for messages in (edited_reply, edited_history):
        samples, drifts = merge_timelines([first, rendered_call(tiny_tokenizer, 1, messages, "ok")], match="text")
        assert len(samples) == 2 and len(drifts) == 1
        assert drifts[0].reason in (DriftReason.COMPLETION_EDITED, DriftReason.HISTORY_EDITED)


@settings(max_examples=200, deadline=None)
@given(calls=episodes())
def test_text_level_also_trains_every_sampled_token_once(calls: list[CallRecord]) -> None:
    samples, _ = merge_timelines(calls, match="text")
    trained = Counter(p for s in samples for p in s.trainable_pairs())
    assert trained == Counter(p for c in calls for p in zip(c.completion_ids, c.completion_logprobs, strict=True))
