"""Builders of CallRecords for merging and trainer tests."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from agentjet.core.chat_format import render_prompt
from agentjet.core.config import TrainConfig
from agentjet.core.training.health import TrainingHealth
from agentjet.core.types import CallRecord, EpisodeRecord

__all__ = ["Clock", "call_record", "rendered_call"]


def call_record(
    index: int,
    prompt: list[int],
    completion: list[int],
    *,
    choice: int = 0,
    agent: str | None = None,
    tools: Any = None,
    version: int = 0,
) -> CallRecord:
    return CallRecord(
        episode_id="ep",
        call_index=index,
        choice_index=choice,
        agent=agent,
        messages=[],
        tools=tools,
        sampling={},
        prompt_text="",
        prompt_ids=tuple(prompt),
        completion_ids=tuple(completion),
        completion_logprobs=tuple(-(t % 7 + 1) / 10 for t in completion),
        completion_text="",
        tool_calls=None,
        finish_reason="stop",
        policy_version=version,
        tool_format="none",
        started_at=0.0,
        first_token_s=None,
        finished_at=0.0,
    )


def rendered_call(
    tokenizer: Any,
    index: int,
    messages: list[dict[str, Any]],
    completion: str,
    *,
    extra_ids: list[int] | None = None,
    tools: Any = None,
) -> CallRecord:
    """A call as the server records it: the prompt rendered by the real template."""
    prompt = render_prompt(tokenizer, messages, tools)
    ids = tokenizer(completion, add_special_tokens=False)["input_ids"] + (extra_ids or [])
    call = call_record(index, list(prompt.ids), ids, tools=tools)
    return replace(
        call,
        messages=messages,
        prompt_text=prompt.text,
        completion_text=completion,
        last_assistant_end=prompt.last_assistant_end,
    )


def stop_string_turns(
    tokenizer: Any, reply: str, *, reply_extra_ids: list[int] | None = None
) -> tuple[CallRecord, CallRecord]:
    """Two turns where text merging applies but token merging cannot.

    The model sampled "Hello there END" and the stop string " END" cut the visible reply, so the
    second prompt re-renders "Hello there" without the sampled " END" tokens.
    """
    stop_ids = tokenizer(" END", add_special_tokens=False)["input_ids"]
    first_messages = [{"role": "user", "content": "hi"}]
    first = rendered_call(tokenizer, 0, first_messages, "Hello there", extra_ids=stop_ids)
    second_messages = [
        *first_messages,
        {"role": "assistant", "content": "Hello there"},
        {"role": "user", "content": "more"},
    ]
    return first, rendered_call(tokenizer, 1, second_messages, reply, extra_ids=reply_extra_ids)


class Clock:
    """A settable clock for engines and loops: tests move `now` instead of sleeping."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class RecordingTraining:
    """A `TrainingSeam` for engine tests: records what the engine tells it, publishes what a test sets."""

    def __init__(self) -> None:
        self.step = 0
        self.latest_metrics: dict[str, Any] | None = None
        self.health = TrainingHealth()
        self.ended: list[tuple[EpisodeRecord, int]] = []
        self.client_changes = 0
        self.config_changes = 0
        self.configs: list[TrainConfig] = []

    def episode_ended(self, record: EpisodeRecord, seq: int) -> None:
        self.ended.append((record, seq))

    def clients_changed(self) -> None:
        self.client_changes += 1

    def check_config(self, config: TrainConfig) -> None:
        self.configs.append(config)

    def config_changed(self) -> None:
        self.config_changes += 1

    def pool_stats(self) -> dict[str, Any]:
        return {"pooled_episodes": len(self.ended)}

    def memory_reports(self) -> dict[str, Callable[[], dict[str, Any]]]:
        return {}


def randomise_lora_b(model: Any) -> None:
    """Give every LoRA B matrix small seeded values: B starts at 0, which zeroes every lora_A gradient."""
    import torch

    generator = torch.Generator().manual_seed(1)
    with torch.no_grad():
        for name, param in model.named_parameters():
            if "lora_B" in name:
                param.copy_(torch.randn(param.shape, generator=generator) * 0.05)
