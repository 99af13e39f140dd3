"""A player driven by a chat model behind an OpenAI-compatible endpoint (the `openai` SDK).

One short, stand-alone chat call per decision (`prompts.render_messages`), a small `max_tokens`
(actions need a line, speech a sentence), and a sampling seed per call derived from the game's
seed, the seat and the call count, so a replay with the same replies is the same game. The reply
is read by `parsing.read_reply`; an unreadable or illegal one is the game's to penalise. Errors
of the endpoint itself (connection, HTTP) propagate: the episode is broken, not lost.
"""

from __future__ import annotations

import logging
import random
from dataclasses import dataclass
from typing import Any

from agentjet.tasks.werewolves.agent import Reply
from agentjet.tasks.werewolves.parsing import read_reply
from agentjet.tasks.werewolves.prompts import render_messages
from agentjet.tasks.werewolves.state import Decision
from agentjet.tasks.werewolves.view import PlayerView

__all__ = ["LlmPlayer", "Sampling"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Sampling:
    """How an LLM player samples: token budgets per kind of answer, temperature, prompt memory."""

    action_max_tokens: int = 32
    speech_max_tokens: int = 32
    temperature: float = 1.0
    memory_events: int = 12  # how many of the latest events a prompt shows

    def __post_init__(self) -> None:
        if self.action_max_tokens < 1 or self.speech_max_tokens < 1:
            raise ValueError("action_max_tokens and speech_max_tokens must be >= 1")
        if self.memory_events < 0:
            raise ValueError(f"memory_events must be >= 0, got {self.memory_events}")


class LlmPlayer:
    """One seat played by `model` through `client` (an `openai.OpenAI`)."""

    remote = True  # each answer is a round trip to the model: a vote's LLM seats are asked at once

    def __init__(self, client: Any, model: str, *, seed: int | str, sampling: Sampling | None = None) -> None:
        self.client = client
        self.model = model
        self.seed = seed
        self.sampling = sampling or Sampling()
        self.calls = 0

    def act(self, view: PlayerView, decision: Decision) -> Reply:
        s = self.sampling
        completion = self.client.chat.completions.create(
            model=self.model,
            messages=render_messages(view, decision, memory_events=s.memory_events),
            max_tokens=s.speech_max_tokens if decision.is_speech else s.action_max_tokens,
            temperature=s.temperature,
            seed=random.Random(f"werewolves/llm/{self.seed}/{self.calls}").randrange(2**31),
        )
        self.calls += 1
        text = (completion.choices[0].message.content or "") if completion.choices else ""
        log.debug("llm player=%d phase=%s reply=%r", view.player, decision.phase, text)
        return Reply(text, read_reply(text, decision))
