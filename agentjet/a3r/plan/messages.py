"""Pydantic validation errors -> one plain sentence each, in the words of a plan's author.

An unknown key lists the keys allowed at that place (with a close match when there is one),
so a typo in a nested section (`train.grpo.groupsize`) says what was meant.
"""

from __future__ import annotations

import difflib
import types
from collections.abc import Collection, Sequence
from typing import Any, Union, get_args, get_origin

from pydantic import BaseModel

__all__ = ["describe_error"]


def describe_error(error: Any, root: type[BaseModel], *, hidden: Collection[str] = ()) -> str:
    """A pydantic error -> a sentence; unknown keys list the keys allowed there (and a close match)."""
    loc = tuple(error["loc"])
    if error["type"] == "extra_forbidden":
        known = [k for k in _known_keys(root, loc[:-1]) if k not in hidden]
        close = difflib.get_close_matches(str(loc[-1]), known, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        return f"unknown key {loc[-1]!r}{hint}; known keys here: {', '.join(known)}"
    if error["type"] == "missing":
        return "required key missing" + (": give task: {family: NAME} or {workspace: DIR}" if loc == ("task",) else "")
    got = f" (got {error['input']!r})" if loc and error["type"] != "value_error" else ""  # ours name the value
    return f"{str(error['msg']).removeprefix('Value error, ')}{got}"


def _known_keys(root: type[BaseModel], loc: Sequence[str | int]) -> list[str]:
    """The field names of the model found at `loc` inside `root` (dict keys and list indexes skipped)."""
    annotation: Any = root
    for part in loc:
        model = _model_in(annotation)
        if model is not None and part in model.model_fields:
            annotation = model.model_fields[str(part)].annotation
        elif get_origin(annotation) in (dict, tuple, list):
            annotation = get_args(annotation)[-1] if get_args(annotation) else Any
    model = _model_in(annotation)
    return list(model.model_fields) if model is not None else []


def _model_in(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    if get_origin(annotation) in (Union, types.UnionType):
        return next((m for a in get_args(annotation) if (m := _model_in(a)) is not None), None)
    return None
