"""The red team's yardstick: a policy that plays the task properly, from the prompt alone.

Three kinds, best first:
- **dataset**: the item the prompt is about is found among the workspace's items (by the
  question text and numbers it shows) and its reference answer is given in the asked format:
  `data["reference"]` verbatim when the item has one (a whole reference reply), else the first
  of `answer`, `solution`, `expected`, `label`, `total`, `target`.
- **werewolves**: a heuristic player that reads its seat, role, pack and known roles from the
  prompt (wolves kill and vote one agreed villager and propose it in the pack chat, the seer
  checks unknown players and names the wolves it found, the witch heals, others vote).
- **floor**: when neither applies, the random legal policy, a documented floor: a degenerate
  policy must not beat even a random legal guess by the margin.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentjet.vibe.check.degenerate import Policy, random_legal, read_prompt

__all__ = ["ANSWER_FIELDS", "Reference", "dataset_reference", "load_items", "reference_for", "werewolves_reference"]

ANSWER_FIELDS = ("answer", "solution", "expected", "label", "total", "target")
_WORDS = re.compile(r"[A-Za-z0-9]+")
_SEAT = re.compile(r"You are player (\d+), the (\w+)\.")
_PACK = re.compile(r"The werewolves are players ([\d, ]+)\.")
_KNOWN = re.compile(r"Roles you know: ([^.\n]*)\.")
_ALIVE = re.compile(r"Alive: ([\d, ]+)\.")
_OPTION = re.compile(r"ACTION:\s*(\w+)(?:\s+(\d+))?")


@dataclass(frozen=True)
class Reference:
    """A reference policy and how it was obtained (`kind`: dataset, werewolves or floor)."""

    kind: str
    description: str
    policy: Policy


def load_items(path: Path) -> list[dict[str, Any]]:
    """The `data` of each JSONL item (lines that are not items are skipped: validation reports them)."""
    items: list[dict[str, Any]] = []
    if not path.is_file():
        return items
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        data = record.get("data") if isinstance(record, dict) else None
        if isinstance(data, dict):
            items.append(data)
    return items


def _reference_answer(data: Mapping[str, Any]) -> tuple[str, str, bool] | None:
    """(field, answer, is a whole reply) of an item, or None when it carries no reference answer."""
    if isinstance(data.get("reference"), str) and data["reference"].strip():
        return "reference", data["reference"], True
    for name in ANSWER_FIELDS:
        value = data.get(name)
        if isinstance(value, str | int | float) and not isinstance(value, bool) and str(value).strip():
            return name, str(value), False
    return None


def _needles(data: Mapping[str, Any], answer_field: str) -> list[str]:
    """The item's values as text, its answer left out: what its prompt should show."""
    found: list[str] = []

    def walk(value: Any) -> None:
        if isinstance(value, Mapping):
            for key, inner in value.items():
                found.append(str(key))
                walk(inner)
        elif isinstance(value, list | tuple):
            for inner in value:
                walk(inner)
        elif value is not None and not isinstance(value, bool):
            found.append(str(value))

    for key, value in data.items():
        if key not in (answer_field, "reference"):
            walk(value)
    return [n for n in found if n.strip()]


def _match_score(needles: Sequence[str], text: str, words: Sequence[str]) -> int:
    """How well an item fits a prompt: long values found verbatim count their length; short ones count
    as the longest run of them the prompt shows in the item's order (an example in the prompt can show
    a wrong item's numbers, rarely in its order)."""
    score = sum(len(n) for n in needles if len(n) >= 8 and n in text)
    short = [n for n in needles if len(n) < 8]
    if not short:
        return score
    previous = [0] * (len(words) + 1)  # longest common subsequence of `short` and `words`
    for needle in short:
        current = [0]
        for j, word in enumerate(words):
            current.append(previous[j] + 1 if needle == word else max(previous[j + 1], current[j]))
        previous = current
    return score + previous[-1]


def dataset_reference(items: Sequence[Mapping[str, Any]]) -> Policy | None:
    """Answers each prompt with the reference answer of the item it shows; None if no item has one."""
    answered = [(_needles(data, found[0]), found[1:]) for data in items if (found := _reference_answer(data))]
    if not answered:
        return None

    def reply(prompt: str) -> str:
        view = read_prompt(prompt)
        words = _WORDS.findall(view.text)
        scores = [_match_score(needles, view.text, words) for needles, _ in answered]
        best = max(range(len(scores)), key=lambda i: scores[i])
        if scores[best] == 0:
            return random_legal(prompt)
        answer, whole = answered[best][1]
        return answer if whole else view.answer_format.wrap(answer)

    return reply


def _numbers(text: str | None) -> list[int]:
    return [int(n) for n in re.findall(r"\d+", text or "")]


def werewolves_reference(prompt: str) -> str:
    """A heuristic werewolves player reading only its prompt (see the module docstring)."""
    view = read_prompt(prompt)
    seat = _SEAT.search(prompt)
    me, role = (int(seat.group(1)), seat.group(2)) if seat else (0, "villager")
    pack = set(_numbers(m.group(1))) if (m := _PACK.search(prompt)) else set()
    known = _KNOWN.search(view.text)
    wolves = [int(p) for p, r in re.findall(r"(\d+) (\w+)", known.group(1) if known else "") if r == "werewolf"]
    checked = set(_numbers(known.group(1) if known else ""))
    listed = _ALIVE.search(view.text)
    alive = [p for p in _numbers(listed.group(1) if listed else None) if p != me]
    rng = random.Random(hashlib.sha256(prompt.encode()).hexdigest())
    prey = sorted(p for p in alive if p not in pack) or alive or [1]
    if not view.options:  # a speech question
        if role == "werewolf":
            return f"SAY: Let's kill player {prey[0]}." if "pack" in view.text else f"SAY: I suspect player {prey[-1]}."
        suspects = [w for w in wolves if w in alive]
        if role == "seer" and suspects:
            return "SAY: I am the seer. " + " ".join(f"Player {w} is a werewolf." for w in suspects)
        return f"SAY: I suspect player {(suspects or [rng.choice(prey)])[0]}."
    options = [(m.group(1).lower(), int(m.group(2)) if m.group(2) else None, o) for o in view.options
               if (m := _OPTION.search(o))]  # fmt: skip
    return _choose(options, role=role, pack=pack, wolves=wolves, checked=checked, rng=rng) or view.options[0]


def _choose(
    options: Sequence[tuple[str, int | None, str]],
    *,
    role: str,
    pack: set[int],
    wolves: Sequence[int],
    checked: set[int],
    rng: random.Random,
) -> str | None:
    """The option a sensible player of `role` takes (None: leave it to the caller's default)."""

    def pick(verb: str, wanted: Iterable[int | None]) -> str | None:
        for target in wanted:
            for kind, t, text in options:
                if kind == verb and t == target:
                    return text
        return None

    def targets(verb: str) -> list[int]:
        return [t for kind, t, _ in options if kind == verb and t is not None]

    choices: list[str | None] = []
    if role == "werewolf":  # every wolf agrees on the lowest-numbered villager
        choices += [pick(verb, sorted(t for t in targets(verb) if t not in pack)) for verb in ("kill", "vote")]
    else:
        if role == "witch":
            choices.append(pick("heal", [None]))
        if role == "seer":
            choices.append(pick("check", [t for t in targets("check") if t not in checked]))
        choices += [pick(verb, wolves) for verb in ("vote", "shoot", "poison")]
        votes = targets("vote")
        choices.append(pick("vote", [rng.choice(votes)]) if votes else None)
    choices.append(pick("pass", [None]))
    return next((choice for choice in choices if choice), None)


def reference_for(family: str, workspace: Path) -> Reference:
    """The best reference policy for a workspace: its dataset's answers, the werewolves heuristic, or the floor."""
    if family == "werewolves":
        what = "a heuristic player reading its seat, pack and known roles"
        return Reference("werewolves", what, werewolves_reference)
    items = load_items(workspace / "data" / "eval.jsonl") + load_items(workspace / "data" / "train.jsonl")
    policy = dataset_reference(items)
    if policy is not None:
        return Reference("dataset", "the dataset's reference answers in the asked format", policy)
    return Reference("floor", "no reference answers: the random legal policy as the floor", random_legal)
