"""`FirstWord`: the one-word task of the learn-check benchmark (`bench learn-check`) as a task family.

"Reply with just the word 'banana' and nothing else." Reward 1 when the reply's first word is the
given word, else 0. Single turn, trivially verifiable, and a base SmolLM2 gets it right now and
then, so GRPO groups carry signal: the smallest family that shows learning, and the default smoke
test of `agentjet client run`. Train and eval draw from disjoint word lists.
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping, Sequence

from agentjet.tasks.base import POLICY, Endpoint, Outcome, Split, TaskItem

__all__ = ["EVAL_WORDS", "MAX_TOKENS", "PROMPT", "WORDS", "FirstWord", "first_word_reward"]

WORDS = ("banana", "river", "purple", "castle", "window", "tiger", "orange", "silver")  # train split
EVAL_WORDS = (  # 16 distinct words, so a held-out round of 16 greedy episodes is 16 independent items
    "apple",
    "garden",
    "yellow",
    "bridge",
    "pencil",
    "rabbit",
    "winter",
    "copper",
    "forest",
    "candle",
    "basket",
    "violet",
    "marble",
    "falcon",
    "harbor",
    "meadow",
)
PROMPT = "Reply with just the word '{word}' and nothing else."
MAX_TOKENS = 6  # the reward reads the first word only


def first_word_reward(reply: str, word: str) -> float:
    """1.0 when the reply's first word (letters only, any case) is `word`, else 0.0."""
    words = re.findall(r"[a-z]+", reply.lower())
    return 1.0 if words and words[0] == word else 0.0


class FirstWord:
    """Say the given word first. Params: `max_tokens`, `temperature` of the one chat call."""

    name: str = "word"
    servers: Sequence[str] = (POLICY,)

    def __init__(self, max_tokens: int = MAX_TOKENS, temperature: float = 1.0, timeout_s: float = 600.0) -> None:
        if max_tokens < 1:
            raise ValueError(f"max_tokens must be >= 1, got {max_tokens}")
        self.max_tokens = max_tokens
        self.temperature = temperature
        self.timeout_s = timeout_s

    def items(self, split: Split, *, count: int, seed: int) -> list[TaskItem]:
        """Words of the split in a seeded order (cycling when `count` exceeds the list)."""
        words = list(WORDS if split == "train" else EVAL_WORDS)
        rng = random.Random(f"word:{split}:{seed}")
        rng.shuffle(words)
        items = []
        for i in range(count):
            word = words[i % len(words)]
            items.append(TaskItem(task_id=f"word-{split}-{i}-{word}", seed=rng.randrange(2**31), data={"word": word}))
        return items

    def run(self, item: TaskItem, llms: Mapping[str, Endpoint]) -> Outcome:
        from openai import OpenAI

        endpoint = llms[POLICY]
        word = str(item.data["word"])
        llm = OpenAI(base_url=endpoint.base_url, api_key=endpoint.api_key, max_retries=0, timeout=self.timeout_s)
        reply = llm.chat.completions.create(
            model=endpoint.model,
            messages=[{"role": "user", "content": PROMPT.format(word=word)}],
            max_tokens=self.max_tokens,
            temperature=self.temperature,
            seed=item.seed,
        )
        text = reply.choices[0].message.content or ""
        return Outcome.single(first_word_reward(text, word), reply=text, word=word)
