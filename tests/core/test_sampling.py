"""sample_tokens: the right distribution, the right nucleus, the right logprobs."""

from __future__ import annotations

import math

import torch

from agentjet.core.backends.sampling import sample_tokens

_PROBS = [0.5, 0.3, 0.15, 0.05, 0.0]


def _logits(rows: int) -> torch.Tensor:
    return torch.tensor([[math.log(p) if p else -math.inf for p in _PROBS]] * rows)  # (rows, 5)


def _frequencies(tokens: list[int]) -> list[float]:
    return [tokens.count(t) / len(tokens) for t in range(len(_PROBS))]


def test_samples_follow_the_softmax_distribution() -> None:
    n = 20_000
    generator = torch.Generator().manual_seed(0)
    tokens, _ = sample_tokens(_logits(n), [1.0] * n, [1.0] * n, [generator] * n)
    for observed, expected in zip(_frequencies(tokens), _PROBS, strict=True):
        assert abs(observed - expected) < 0.015
    assert 4 not in tokens  # probability zero is never drawn


def test_top_p_keeps_only_the_nucleus_renormalised() -> None:
    n = 20_000
    generator = torch.Generator().manual_seed(1)
    tokens, logprobs = sample_tokens(_logits(n), [1.0] * n, [0.7] * n, [generator] * n)
    frequencies = _frequencies(tokens)
    assert abs(frequencies[0] - 0.5 / 0.8) < 0.015 and abs(frequencies[1] - 0.3 / 0.8) < 0.015
    assert frequencies[2] == frequencies[3] == 0.0
    assert {round(lp, 5) for lp in logprobs} == {round(math.log(0.5), 5), round(math.log(0.3), 5)}  # untruncated


def test_greedy_and_temperature_logprobs() -> None:
    logits = torch.tensor([[1.0, 3.0, 2.0], [1.0, 3.0, 2.0]])
    generators = [torch.Generator().manual_seed(2), torch.Generator().manual_seed(3)]
    tokens, logprobs = sample_tokens(logits, [0.0, 2.0], [1.0, 1.0], generators)
    assert tokens[0] == 1
    assert math.isclose(logprobs[0], torch.log_softmax(logits[0], dim=-1)[1].item(), rel_tol=1e-6)
    assert math.isclose(logprobs[1], torch.log_softmax(logits[1] / 2.0, dim=-1)[tokens[1]].item(), rel_tol=1e-6)


def test_each_row_uses_only_its_own_generator() -> None:
    logits = torch.randn(3, 1000, generator=torch.Generator().manual_seed(4))
    seeded = lambda: torch.Generator().manual_seed(99)  # noqa: E731
    alone, _ = sample_tokens(logits[1:2], [1.0], [0.9], [seeded()])
    batched, _ = sample_tokens(
        logits, [0.0, 1.0, 0.5], [1.0, 0.9, 1.0], [torch.Generator().manual_seed(5), seeded(), torch.Generator()]
    )
    assert batched[1] == alone[0]
