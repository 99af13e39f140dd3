"""Read an action out of a model's reply: a small JSON object, `ACTION: vote 3`, or a bare `vote 3`.

Lenient about form (case, markdown, `player 3`, `#3`, text around it: the first verb found is
the answer), strict about content: a known verb, and a target for targeted verbs. Never raises; `None` means no
action could be read. Whether the action is *legal* is the rules' question (`rules.resolve`
plays the legal default instead, and flags the reply invalid). Speech (`SAY: ...` or any text)
is never invalid: it is cleaned and truncated by the rules.
"""

from __future__ import annotations

import json
import re

from agentjet.tasks.werewolves.state import Action, ActionKind, Decision

__all__ = ["parse_action", "parse_speech", "read_reply"]

_VERBS: dict[str, ActionKind] = {
    "kill": ActionKind.KILL,
    "vote": ActionKind.VOTE,
    "check": ActionKind.CHECK,
    "poison": ActionKind.POISON,
    "shoot": ActionKind.SHOOT,
    "heal": ActionKind.HEAL,
    "save": ActionKind.HEAL,
    "pass": ActionKind.PASS,
    "abstain": ActionKind.PASS,
    "skip": ActionKind.PASS,
}
_VERB = "|".join(_VERBS)
_TARGET = r"(?:[\s:=*_`'\"(#\[-]|player|for|p)*(\d{1,3})"
_ACTION_LINE = re.compile(rf"\baction\b[\s:=*_`'\"-]*({_VERB})\b(?:{_TARGET})?", re.IGNORECASE)
_BARE = re.compile(rf"\b({_VERB})\b(?:{_TARGET})?", re.IGNORECASE)
_JSON_OBJECT = re.compile(r"\{[^{}]{0,200}\}")
_SAY = re.compile(r"^\W*say\s*[:=-]\s*", re.IGNORECASE)


def parse_action(text: str) -> Action | None:
    """The action named in `text`: a JSON object, else an ACTION line, else the first verb anywhere."""
    for blob in _JSON_OBJECT.findall(text):
        action = _json_action(blob)
        if action is not None:
            return action
    for pattern in (_ACTION_LINE, _BARE):
        match = pattern.search(text)
        if match:
            return _action(match.group(1), match.group(2))
    return None


def parse_speech(text: str) -> str:
    """The line a player says: the reply without a `SAY:` prefix (rules clean and cut it)."""
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return _SAY.sub("", lines[0]) if lines else ""


def read_reply(text: str, decision: Decision) -> Action | None:
    """The action a reply to `decision` names: a line for a speech question, else `parse_action`."""
    if decision.is_speech:
        return Action(ActionKind.SAY, text=parse_speech(text))
    return parse_action(text)


def _action(verb: str, target: str | None) -> Action:
    kind = _VERBS[verb.lower()]
    return Action(kind, target=int(target) if target is not None else None)


def _json_action(blob: str) -> Action | None:
    try:
        obj = json.loads(blob)
    except ValueError:
        return None
    if not isinstance(obj, dict):
        return None
    verb = obj.get("action", obj.get("kind"))
    if not isinstance(verb, str) or verb.strip().lower() not in _VERBS:
        return None
    target = obj.get("target", obj.get("player"))
    if isinstance(target, bool):
        target = None
    if isinstance(target, str):
        digits = re.search(r"\d{1,3}", target)
        target = int(digits.group()) if digits else None
    return Action(_VERBS[verb.strip().lower()], target=target if isinstance(target, int) else None)
