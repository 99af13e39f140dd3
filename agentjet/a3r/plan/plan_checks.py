"""Plan checks that ask the rest of AgentJet: is the model there, does the task family take these params.

A trial would find these out only when it starts (and every trial would fail the same way), so the
plan checker asks first and names the line. Pure apart from importing the family's class.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from agentjet.a3r.plan.params import TASK_PREFIX, Choice, ParamSpec
from agentjet.core import ConfigError, ModelError, check_model
from agentjet.tasks.registry import load_family

__all__ = ["Problem", "check_models", "check_task_params"]

Problem = tuple[tuple[str | int, ...], str]  # (where in the front matter, what is wrong)


def check_models(model: str, choices: Sequence[Choice] | None) -> list[Problem]:
    """Every model a local trial would serve (the plan's, or each `model` choice) is registered or a folder."""
    named: list[Problem] = [(("model",), model)] if choices is None else []
    named += [(("search_space", "model", "choices", i), str(c)) for i, c in enumerate(choices or ())]
    problems: list[Problem] = []
    for loc, name in named:
        try:
            check_model(name)
        except ModelError as exc:
            problems.append((loc, str(exc)))
    return problems


def check_task_params(family: str, params: Mapping[str, Any], search_space: Mapping[str, ParamSpec]) -> list[Problem]:
    """The family is built with `params`, and with each value the search space may give a `task.*` param
    (its choices, or a range's ends), so `difficulty: 9` fails here rather than in every trial."""
    try:
        load_family(family, params)
    except ConfigError as exc:
        return [(("task", "params"), str(exc))]
    problems: list[Problem] = []
    for name, spec in search_space.items():
        if not name.startswith(TASK_PREFIX):
            continue
        values = spec.choices if spec.choices is not None else (spec.low, spec.high)
        for value in dict.fromkeys(values):
            try:
                load_family(family, {**params, name.removeprefix(TASK_PREFIX): value})
            except ConfigError as exc:
                problems.append((("search_space", name), f"{value!r}: {exc}"))
                break
    return problems
