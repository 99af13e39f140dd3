"""A scripted policy that answers any task's prompt in the format it asks for: the dry runs' fake model.

A dry run plays a workspace's client against this policy before a real model is involved, to see
the client, the reward and the data work together: every episode must finish with a finite reward
in range. So the replies need to be plausible (the format asked, not necessarily right): the
first option of a werewolves question, a countdown expression over the given numbers, the
shopping tool calls then the total, an `Answer:` line where one is asked for. A pure function of
the rendered prompt (the chat template applied), as a `ScriptedBackend` calls it.
"""

from __future__ import annotations

import json
import re

from agentjet.vibe.check.degenerate import OPENED_CALL

__all__ = ["plausible_reply"]

_USER_TURN = re.compile(r"<\|im_start\|>user\n(.*?)<\|im_end\|>", re.DOTALL)
_OPTIONS = re.compile(r"Options:\s*(?P<options>[^\n]+)")
_COUNTDOWN = re.compile(r"Use the numbers (?P<numbers>[\d, ]+) to make (?P<target>\d+)")
_SHOPPING = re.compile(r"What is the total cost of (?P<order>[^?]+)\?")
_ORDER_PART = re.compile(r"(?P<qty>\d+) (?P<name>[a-z]+)")
_PRICE = re.compile(r"(?P<name>[a-z]+): (?P<price>\d+) dollars each")
_SAY_WORD = re.compile(r"Reply with just the word '(?P<word>[^']+)'")


def _last_user_turn(prompt: str) -> str:
    turns = _USER_TURN.findall(prompt)
    return str(turns[-1]) if turns else prompt[-2000:]


def _tool_call(name: str, arguments: dict[str, object]) -> str:
    return f"<tool_call>{json.dumps({'name': name, 'arguments': arguments})}</tool_call>"


def _singular(name: str, known: set[str]) -> str:
    return name[:-1] if name not in known and name.endswith("s") else name


def _shopping(turns: str, order_text: str, *, forced: bool) -> str:
    """Look every item up, note the total, then answer it (the reference way to play tool_use).

    `turns` is the episode after its question (a worked example before it is not this episode's);
    `forced`: every turn must be a tool call, so the answer is the `answer` tool's."""
    prices = {m.group("name"): int(m.group("price")) for m in _PRICE.finditer(turns)}
    order = {_singular(m.group("name"), set(prices)): int(m.group("qty")) for m in _ORDER_PART.finditer(order_text)}
    missing = [name for name in order if name not in prices]
    if missing:
        return "\n".join(_tool_call("lookup", {"item": name}) for name in missing)
    total = sum(prices[name] * qty for name, qty in order.items())
    if "saved note" not in turns:
        return _tool_call("write_note", {"text": f"total: {total}"})
    return _tool_call("answer", {"total": total}) if forced else f"Answer: {total}"


def plausible_reply(prompt: str) -> str:
    """An in-format reply to the last question of `prompt`."""
    question = _last_user_turn(prompt)
    if "Reply: SAY:" in question:
        return "SAY: I think player 3 is a werewolf."
    options = _OPTIONS.search(question)
    if options:
        return options.group("options").split(" | ")[0].strip()
    word = _SAY_WORD.search(question)
    if word:
        return word.group("word")
    countdown = _COUNTDOWN.search(question)
    if countdown:
        numbers = [n.strip() for n in countdown.group("numbers").split(",") if n.strip()]
        return f"Answer: {' + '.join(numbers[:2])}"
    shopping = [*_SHOPPING.finditer(prompt)]
    if shopping and "<tool_call>" in prompt:
        last = shopping[-1]
        forced = prompt.endswith(OPENED_CALL)  # tool_choice "required": the reply continues the opened call
        reply = _shopping(prompt[last.end() :], last.group("order"), forced=forced)
        return reply[len(OPENED_CALL) :] if forced and reply.startswith(OPENED_CALL) else reply
    if "json" in question.lower():
        return '{"answer": 1}'
    return "Answer: 1"  # short: a client's max_tokens must not cut the answer off
