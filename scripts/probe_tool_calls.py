"""Does the embedded model call a tool in tool_use, with or without a worked example?

Samples first-turn replies from SmolLM2-135M (transformers, T 1) to tool_use questions rendered
exactly as the server renders them (`render_prompt`, the fallback tool format) and counts the
replies holding a parseable tool call. Run: `python scripts/probe_tool_calls.py` (about 4 min on
2 cores; `agentjet models prepare smollm2-135m` first). Figures: docs/vibe.md (tool_use).
"""

from __future__ import annotations

import json
from typing import Any

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

from agentjet.core.chat_format import parse_tool_calls, render_prompt
from agentjet.core.models import resolve_model
from agentjet.tasks.tool_env import TOOLS
from agentjet.tasks.tool_use import SYSTEM, ToolUse


def _call(n: int, name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {"id": f"c{n}", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}


def _calls(content: str | None, *calls: dict[str, Any]) -> dict[str, Any]:
    return {"role": "assistant", "content": content, "tool_calls": list(calls)}


def _tool(n: int, text: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": f"c{n}", "content": text}


QUESTION = {"role": "user", "content": "What is the total cost of 1 candle and 1 ruler?"}
VARIANTS: dict[str, list[dict[str, Any]]] = {
    "no example": [],
    "whole example, two lookups in one turn": [
        QUESTION,
        _calls(None, _call(1, "lookup", {"item": "candle"}), _call(2, "lookup", {"item": "ruler"})),
        _tool(1, "candle: 4 dollars each"),
        _tool(2, "ruler: 3 dollars each"),
        _calls(None, _call(3, "calculator", {"expression": "1 * 4 + 1 * 3"})),
        _tool(3, "7"),
        _calls(None, _call(4, "write_note", {"text": "total: 7"})),
        _tool(4, "saved note 1"),
        {"role": "assistant", "content": "Answer: 7"},
    ],
    "whole example, one call per turn": [
        QUESTION,
        _calls("I look up the candle.", _call(1, "lookup", {"item": "candle"})),
        _tool(1, "candle: 4 dollars each"),
        _calls("I look up the ruler.", _call(2, "lookup", {"item": "ruler"})),
        _tool(2, "ruler: 3 dollars each"),
        _calls("I add them up.", _call(3, "calculator", {"expression": "1 * 4 + 1 * 3"})),
        _tool(3, "7"),
        _calls("I save the total.", _call(4, "write_note", {"text": "total: 7"})),
        _tool(4, "saved note 1"),
        {"role": "assistant", "content": "Answer: 7"},
    ],
}


def main(samples_per_list: int = 6, lists: int = 4) -> None:
    path = resolve_model("smollm2-135m")
    tokenizer = AutoTokenizer.from_pretrained(path)
    model = AutoModelForCausalLM.from_pretrained(path).eval()
    torch.manual_seed(0)
    items = ToolUse().items("train", count=lists, seed=0)
    for name, example in VARIANTS.items():
        with_call = total = 0
        for item in items:
            question = {"role": "user", "content": item.data["question"]}
            messages = [{"role": "system", "content": SYSTEM}, *example, question]
            ids = torch.tensor([list(render_prompt(tokenizer, messages, TOOLS).ids)])
            with torch.no_grad():
                out = model.generate(
                    ids,
                    do_sample=True,
                    temperature=1.0,
                    max_new_tokens=96,
                    num_return_sequences=samples_per_list,
                    pad_token_id=tokenizer.eos_token_id,
                )
            for row in out:
                _, calls = parse_tool_calls(tokenizer.decode(row[ids.shape[1] :], skip_special_tokens=True))
                with_call += bool(calls)
                total += 1
        print(json.dumps({"variant": name, "replies": total, "with_tool_call": with_call}), flush=True)


if __name__ == "__main__":
    main()
