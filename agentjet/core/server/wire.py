"""Checks every wire body needs before its fields are read.

JSON may carry lone UTF-16 surrogates (`"\\udcff"`): valid JSON, but not encodable as UTF-8,
so the tokenizer, the journal or the reply would fail later with a 500. They are refused at
the boundary instead, as a 422 naming the field.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, model_validator

__all__ = ["Utf8Body", "find_lone_surrogate"]


class Utf8Body(BaseModel):
    """Base of top-level request bodies: a lone surrogate anywhere is a 422 naming its field."""

    @model_validator(mode="before")
    @classmethod
    def _utf8_only(cls, data: Any) -> Any:
        where = find_lone_surrogate(data)
        if where:
            raise ValueError(f"{where} contains a lone UTF-16 surrogate (not valid Unicode text)")
        return data


def find_lone_surrogate(value: Any, path: str = "") -> str | None:
    """The dotted path of the first string (key or value) holding a lone surrogate, else None."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return path or "body"
        return None
    if isinstance(value, dict):
        for key, item in value.items():
            where = f"{path}.{key}" if path else str(key)
            found = find_lone_surrogate(key, where) or find_lone_surrogate(item, where)
            if found:
                return found
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found = find_lone_surrogate(item, f"{path}[{index}]")
            if found:
                return found
    return None
