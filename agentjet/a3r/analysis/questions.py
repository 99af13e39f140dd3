"""The plan's research questions, and what the campaign's data says about each, in plain words.

Questions are read from the plan's body: list items under a heading that mentions questions,
and any sentence ending in `?`. An answer is assembled from the analysis without an LLM: for each
searched param the question names (by name, alias or spelled out: `learning rate`, `LoRA rank`),
the best trial's value, the param's importance and its level means with intervals (and whether
they can be told apart); for two named params, the best of one at each level of the other; for a
question about re-runs, seeds or the baseline, the confirmation verdict. A question that names
nothing the campaign measured is said to be out of its reach rather than guessed at.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from agentjet.a3r.analysis.findings import CampaignAnalysis, LevelEffect, TrialRow
from agentjet.a3r.plan.params import PARAMS, TASK_PREFIX
from agentjet.a3r.trial.records import describe_params

__all__ = ["answer", "extract_questions", "mentioned_params"]

_ITEM = re.compile(r"^\s*(?:\d+[.)]|[-*+])\s+(.*)$")
_HEADING = re.compile(r"^\s*#+\s*(.*)$")
_SENTENCE_Q = re.compile(r"[^.!?]*\?")
_CONFIRM_WORDS = re.compile(
    r"\b(re-?runs?|seeds?|confirm\w*|real|baseline|base polic\w*|significan\w*|noise|reproduc\w*|finding)\b", re.I
)


def extract_questions(body: str) -> list[str]:
    """The questions a plan's body asks, in order, whitespace folded."""
    questions: list[str] = []
    in_questions = False
    for block, is_item, heading in _blocks(body):
        if heading is not None:
            in_questions = "question" in heading.lower()
            if heading.strip().endswith("?"):
                questions.append(heading.strip())
            continue
        if is_item and (in_questions or "?" in block):
            questions.append(block)
        elif "?" in block:
            questions += [s.strip() for s in _SENTENCE_Q.findall(block) if len(s.strip()) > 3]
    return list(dict.fromkeys(questions))


def _blocks(body: str) -> list[tuple[str, bool, str | None]]:
    """(text, is_list_item, heading) per paragraph, list item (with its continuation lines) or heading."""
    out: list[tuple[str, bool, str | None]] = []
    current: list[str] = []
    item = False

    def flush() -> None:
        if current:
            out.append((" ".join(" ".join(current).split()), item, None))
            current.clear()

    for line in body.splitlines():
        heading, bullet = _HEADING.match(line), _ITEM.match(line)
        if heading or bullet or not line.strip():
            flush()
        if heading:
            out.append(("", False, heading.group(1)))
        elif bullet:
            current.append(bullet.group(1))
            item = True
        elif line.strip():
            item = item and bool(current)
            current.append(line.strip())
    flush()
    return out


def mentioned_params(question: str, params: Sequence[str]) -> list[str]:
    """Searched params the question names: the name, an alias, or either spelled with spaces."""
    found = []
    for name in params:
        canonical = PARAMS[name].name if name in PARAMS else name
        spellings = {name, canonical, *(a for a, d in PARAMS.items() if d.name == canonical)}
        if name.startswith(TASK_PREFIX):
            spellings.add(name.removeprefix(TASK_PREFIX))
        words = {s.replace("_", " ") for s in spellings} | spellings
        if any(re.search(rf"(?<![\w-]){re.escape(w)}(?![\w-])", question, re.I) for w in words):
            found.append(name)
    return found


def answer(question: str, analysis: CampaignAnalysis) -> str:
    """What the data says about one question: plain sentences, caveats included."""
    names = mentioned_params(question, list(analysis.plan.search_space))
    parts = [_about_param(analysis, name) for name in names]
    if len(names) >= 2:
        parts.append(_interaction(analysis, names[0], names[1]))
    if _CONFIRM_WORDS.search(question) or not names:
        if analysis.best is not None and (_CONFIRM_WORDS.search(question) or _asks_best(question)):
            parts.append(_verdict(analysis))
    if not parts:
        return (
            "The campaign did not measure this directly: the question names none of the searched params "
            f"({', '.join(analysis.plan.search_space) or 'none'}). See the best configuration and the verdict above."
        )
    return " ".join(p for p in parts if p)


def _asks_best(question: str) -> bool:
    return bool(re.search(r"\b(best|optimal|largest|highest|lowest|gain|improv\w*)\b", question, re.I))


def _about_param(analysis: CampaignAnalysis, name: str) -> str:
    best = analysis.best
    if best is None:
        return f"No search trial completed, so nothing can be said about {name} yet."
    text = f"The best trial ({best.number}) used {name}={_fmt(best.params.get(name))}."
    if analysis.importance:
        ranked = list(analysis.importance)
        share = analysis.importance.get(name, 0.0)
        text += f" {name} ranks {ranked.index(name) + 1} of {len(ranked)} by importance ({share:.0%})."
    levels = analysis.effects.get(name, [])
    if len(levels) >= 2:
        text += " " + _levels(analysis, levels)
    return text


def _levels(analysis: CampaignAnalysis, levels: Sequence[LevelEffect]) -> str:
    """The best level, and whether its interval clears every other level's mean."""
    pick = max if analysis.maximize else min
    top = pick(levels, key=lambda lv: lv.interval.mean)
    means = "; ".join(f"{lv.level}: {lv.interval.describe()}" for lv in levels)
    others = [lv.interval.mean for lv in levels if lv is not top]
    clear = all(top.interval.above(m) if analysis.maximize else top.interval.below(m) for m in others)
    if not top.interval.known:
        tell = f"the best level ({top.level}) rests on one trial, so the data cannot tell the levels apart"
    elif top.interval.sd == 0:  # a zero-width interval from a few equal scores is no evidence of precision
        tell = (
            f"{top.level} has the best mean, but its {top.interval.n} trials scored exactly alike, which gives "
            "no spread to judge by: the levels are not told apart"
        )
    elif clear:
        tell = f"{top.level} is best and its 95% interval clears every other level's mean"
    else:
        tell = f"{top.level} has the best mean, but its 95% interval overlaps the others: the levels are not told apart"
    return f"Mean {analysis.plan.objective.metric} by level ({means}): {tell}."


def _interaction(analysis: CampaignAnalysis, first: str, second: str) -> str:
    """The best value of one param at each value of the other (the categorical one, if any)."""
    space = analysis.plan.search_space
    by, of = (second, first) if space[second].choices is not None or space[first].choices is None else (first, second)
    rows = [r for r in analysis.of_kind("search") if by in r.params and of in r.params]
    if len({repr(r.params[by]) for r in rows}) < 2:
        return f"Too few trials to see whether the best {of} depends on {by}."
    cells = []
    for level in sorted({r.params[by] for r in rows}, key=lambda v: (str(type(v)), v)):
        cell = [r for r in rows if r.params[by] == level]
        best = _best_of(cell, analysis.maximize)
        cells.append(f"{by}={_fmt(level)}: best {of}={_fmt(best.params[of])} ({_fmt(best.value)}, {len(cell)} trials)")
    thin = min(len([r for r in rows if r.params[by] == lv]) for lv in {r.params[by] for r in rows})
    caveat = " With so few trials per level this is a hint, not a result." if thin < 3 else ""
    return f"Best {of} at each {by}: " + "; ".join(cells) + "." + caveat


def _best_of(rows: Sequence[TrialRow], maximize: bool) -> TrialRow:
    pick = max if maximize else min
    return pick(rows, key=lambda r: float(r.value or 0.0))


def _verdict(analysis: CampaignAnalysis) -> str:
    c = analysis.confirmation
    best = analysis.best
    config = describe_params(best.params) if best else ""
    if c.verdict == "finding":
        return f"Yes: the best configuration ({config}) is a finding: {c.reason}."
    return f"Not shown: the best configuration ({config}) is {c.verdict}: {c.reason}."


def _fmt(value: object) -> str:
    if isinstance(value, float):
        return f"{value:.3g}" if value == 0 or 1e-3 <= abs(value) < 1e4 else f"{value:.2e}"
    return str(value)
