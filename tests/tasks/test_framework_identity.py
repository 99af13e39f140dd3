"""Framework independence: the arithmetic agent written with the openai SDK, LangChain, LangGraph, raw
httpx, AgentScope and AutoGen makes, for the same items and seeds, token-identical calls on a live
server running the real `tiny` model, and so earns identical rewards (the tool-using agent's turns:
test_tool_frameworks.py)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from agentjet.core.testing import RunningServer
from agentjet.tasks.arithmetic import Arithmetic
from agentjet.tasks.frameworks import FRAMEWORKS
from tests.tasks.episodes import play


def _tokens(record: dict[str, Any]) -> list[tuple[list[int], list[int]]]:
    return [(c["prompt_ids"], c["completion_ids"]) for c in record["calls"]]


def test_every_framework_captures_identical_tokens(live_server: Callable[..., RunningServer]) -> None:
    server = live_server()  # the real transformers backend on `tiny`
    items = Arithmetic(difficulty=2).items("eval", count=3, seed=0)
    runs: dict[str, list[tuple[float, list[tuple[list[int], list[int]]]]]] = {}
    for framework in FRAMEWORKS:
        family = Arithmetic(difficulty=2, framework=framework, max_tokens=24, shots=2)  # assistant turns too
        runs[framework] = []
        for item in items:
            outcome, record = play(server.url, family, item)
            assert [c["sampling"]["seed"] for c in record["calls"]] == [item.seed]  # seed= reached the server
            assert [c["sampling"]["temperature"] for c in record["calls"]] == [1.0]
            assert [c["sampling"]["max_tokens"] for c in record["calls"]] == [24]
            runs[framework].append((outcome.rewards["policy"], _tokens(record)))

    reference = runs["openai"]
    assert all(len(completion) == 24 for _, [(_, completion)] in reference)  # tiny rambles to the limit
    for framework in FRAMEWORKS[1:]:
        assert runs[framework] == reference, f"{framework} differs from the openai SDK"

    # the identity is not an accident of greedy decoding: another seed samples other tokens
    reseeded = dataclasses.replace(items[0], seed=items[0].seed + 1)
    _, record = play(server.url, Arithmetic(difficulty=2, framework="httpx", max_tokens=24, shots=2), reseeded)
    assert _tokens(record)[0][0] == reference[0][1][0][0]  # same prompt
    assert _tokens(record)[0][1] != reference[0][1][0][1]  # other completion
