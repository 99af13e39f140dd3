"""The tool environment of `ToolUse`: a calculator, a price lookup table and a notes pad.

Pure Python and deterministic: no I/O, no clock, no randomness; the state is the notes written
and the items looked up. `call` never raises on model input: an unknown tool, bad JSON or
wrong arguments come back as an `error: ...` text the model can read and correct.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from agentjet.tasks.expressions import ExpressionError, evaluate, format_number

__all__ = ["ANSWER_TOOL", "MAX_NOTES", "TOOLS", "ToolEnv"]

MAX_NOTES = 20
_MAX_NOTE_CHARS = 300


def _tool(name: str, description: str, properties: dict[str, Any]) -> dict[str, Any]:
    parameters = {"type": "object", "properties": properties, "required": list(properties)}
    return {"type": "function", "function": {"name": name, "description": description, "parameters": parameters}}


TOOLS: list[dict[str, Any]] = [
    _tool(
        "lookup",
        "Price in dollars of one unit of an item.",
        {"item": {"type": "string", "description": "the item, e.g. apple"}},
    ),
    _tool(
        "calculator",
        "Evaluate arithmetic with integers, + - * / and parentheses.",
        {"expression": {"type": "string", "description": "e.g. 2 * 3 + 4 * 5"}},
    ),
    _tool("write_note", "Write a line to the notes pad.", {"text": {"type": "string"}}),
    _tool("read_notes", "Read the notes pad.", {}),
]
# Offered besides TOOLS when every turn must call a tool (`ToolUse(tool_choice="required")`): the call that ends
# the episode with the final answer. The agent loop reads it; the environment never runs it.
ANSWER_TOOL = _tool("answer", "Give the final total and finish.", {"total": {"type": "integer"}})


@dataclass
class ToolEnv:
    """One episode's environment over a price table (item -> dollars)."""

    prices: Mapping[str, int]
    notes: list[str] = field(default_factory=list)
    looked_up: list[str] = field(default_factory=list)  # items found, in call order
    calls: int = 0

    def call(self, name: str, arguments: str) -> str:
        """Run one tool call (`arguments` as the model sent them, a JSON object) -> its result text."""
        self.calls += 1
        try:
            args = json.loads(arguments or "{}")
        except json.JSONDecodeError:
            return "error: arguments must be a JSON object"
        if not isinstance(args, dict):
            return "error: arguments must be a JSON object"
        if name == "lookup":
            return self._lookup(args.get("item"))
        if name == "calculator":
            return self._calculate(args.get("expression"))
        if name == "write_note":
            return self._write_note(args.get("text"))
        if name == "read_notes":
            return "\n".join(self.notes) if self.notes else "(no notes)"
        return f"error: unknown tool {name[:50]!r}; tools are lookup, calculator, write_note, read_notes"

    def _lookup(self, item: object) -> str:
        if not isinstance(item, str):
            return 'error: lookup needs {"item": "<name>"}'
        key = item.strip().lower()
        if key not in self.prices and key.endswith("s"):
            key = key[:-1]  # "apples" -> "apple"
        if key not in self.prices:
            return f"error: no price for {item[:50]!r}; known items: {', '.join(sorted(self.prices))}"
        self.looked_up.append(key)
        return f"{key}: {self.prices[key]} dollars each"

    @staticmethod
    def _calculate(expression: object) -> str:
        if not isinstance(expression, str):
            return 'error: calculator needs {"expression": "<arithmetic>"}'
        try:
            return format_number(evaluate(expression, allow_unary_minus=True).value)
        except ExpressionError as exc:
            return f"error: {exc}"

    def _write_note(self, text: object) -> str:
        if not isinstance(text, str) and not isinstance(text, int | float):
            return 'error: write_note needs {"text": "<note>"}'
        if len(self.notes) >= MAX_NOTES:
            return f"error: the notes pad is full ({MAX_NOTES} notes)"
        self.notes.append(str(text)[:_MAX_NOTE_CHARS])
        return f"saved note {len(self.notes)}"
