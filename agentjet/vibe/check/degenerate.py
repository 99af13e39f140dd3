"""Degenerate policies for the red team: replies that read the prompt but never solve the task.

Each policy is a pure function of the prompt text (its randomness is seeded by the prompt), so
a red-team run is repeatable. They read only what a careless or cheating model could read: the
last user message, the answer format the prompt asks for (`Answer: <...>`, an `Options:` list,
lettered choices, `<answer>` tags, `Reply: SAY: <...>`), the options and the numbers in it. A
reward that pays any of them more than a real solution is hackable.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

__all__ = ["DEGENERATE", "OPENED_CALL", "AnswerFormat", "Policy", "PromptView", "random_legal", "read_prompt"]

Policy = Callable[[str], str]  # the prompt as the model sees it (chat template applied) -> the reply

_LAST_USER = (  # (start of a user turn, end of a turn) of the common chat templates
    ("<|im_start|>user\n", "<|im_end|>"),  # ChatML (SmolLM2, Qwen)
    ("<|start_header_id|>user<|end_header_id|>\n\n", "<|eot_id|>"),  # Llama 3
    ("[INST]", "[/INST]"),  # Mistral / Llama 2
)
_OPTIONS = re.compile(r"Options:\s*([^\n]+)")
_LETTERED = re.compile(r"^\s*\(?([A-H])[).:]\s+\S", re.MULTILINE)
_TEMPLATE = re.compile(r"`([^`<>\n]{0,40}?)<[^`<>\n]{1,40}>([^`<>\n]{0,20})`")  # `Answer: <integer>`
_REPLY_WITH = re.compile(r"\b(?:Reply|Respond|Answer)(?: with)?:\s*([A-Z][A-Za-z ]{0,20}:)\s*<")  # Reply: SAY: <..>
_TAGS = (("<answer>", "</answer>"), ("\\boxed{", "}"))
_MARKER = re.compile(r"\b(Final answer|Answer|ACTION)\s*:", re.IGNORECASE)
_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?!\w)")
OPENED_CALL = '<tool_call>{"name": "'  # a prompt the server ended with tool_choice's opening (fallback format)
_ANSWER_TOOL = re.compile(  # a tool that ends the episode with an answer, as the fallback format lists it
    r'"name": "(answer|final_answer|submit|submit_answer)", (?:"description": "(?:[^"\\]|\\.)*", )?'
    r'"parameters": \{"type": "object", "properties": \{"(\w+)"'
)
_NONSENSE = "banana"
_LONG_CHARS = 20_000


@dataclass(frozen=True)
class AnswerFormat:
    """How the prompt wants the answer written: `prefix + content + suffix`."""

    prefix: str = "Answer: "
    suffix: str = ""
    as_json: bool = False  # the content is a JSON value (an answer tool's argument)

    def wrap(self, content: str) -> str:
        return f"{self.prefix}{json.dumps(content) if self.as_json else content}{self.suffix}"


@dataclass(frozen=True)
class PromptView:
    """What a policy reads from a prompt."""

    text: str  # the last user message (the whole prompt when no chat template is recognised)
    answer_format: AnswerFormat
    options: tuple[str, ...]  # legal answers spelled out in the prompt ("ACTION: vote 3") or choice letters
    lettered: bool  # options are choice letters, to be written in `answer_format`
    numbers: tuple[str, ...]  # distinct numbers of the last user message, in order

    def legal_answers(self) -> list[str]:
        """Every listed option as a full reply, or [] when the prompt lists none."""
        if self.lettered:
            return [self.answer_format.wrap(letter) for letter in self.options]
        return list(self.options)

    def candidates(self, small: int = 0) -> list[str]:
        """What an answer could be: the options, else the prompt's numbers and then 0..small-1."""
        if self.options:
            return list(self.options)
        return list(dict.fromkeys([*self.numbers, *(str(n) for n in range(small))]))


def last_user_message(prompt: str) -> str:
    for start, end in _LAST_USER:
        at = prompt.rfind(start)
        if at >= 0:
            return prompt[at + len(start) :].split(end, 1)[0].strip()
    return prompt.strip()


def _answer_format(prompt: str, options: Sequence[str], lettered: bool) -> AnswerFormat:
    """The format asked for: an opened tool call with an answer tool wins (the answer is that tool's call), then
    listed options, then the last explicit template in the whole prompt."""
    tool = _ANSWER_TOOL.search(prompt) if prompt.rstrip().endswith(OPENED_CALL) else None
    if tool:
        return AnswerFormat(f'{tool.group(1)}", "arguments": {{"{tool.group(2)}": ', "}}</tool_call>", as_json=True)
    if options and not lettered:
        head = options[0].split(":", 1)
        return AnswerFormat(head[0] + ": ") if len(head) == 2 else AnswerFormat("")
    found: list[tuple[int, AnswerFormat]] = []
    for match in _TEMPLATE.finditer(prompt):
        found.append((match.start(), AnswerFormat(match.group(1), match.group(2))))
    for match in _REPLY_WITH.finditer(prompt):
        found.append((match.start(), AnswerFormat(match.group(1) + " ")))
    for opening, closing in _TAGS:
        at = prompt.rfind(opening)
        if at >= 0:
            found.append((at, AnswerFormat(opening, closing)))
    if found:
        return max(found, key=lambda pair: pair[0])[1]
    markers = list(_MARKER.finditer(prompt))
    return AnswerFormat(markers[-1].group(1) + ": ") if markers else AnswerFormat()


def read_prompt(prompt: str) -> PromptView:
    """Read the last user message's options, numbers and the answer format of the prompt."""
    text = last_user_message(prompt)
    listed = _OPTIONS.findall(text)
    options: tuple[str, ...] = tuple(o.strip() for o in listed[-1].split("|") if o.strip()) if listed else ()
    lettered = False
    if not options:
        letters = tuple(dict.fromkeys(_LETTERED.findall(text)))
        if len(letters) >= 2 and letters[0] == "A":
            options, lettered = letters, True
    numbers = tuple(dict.fromkeys(_NUMBER.findall(text)))
    return PromptView(text, _answer_format(prompt, options, lettered), options, lettered, numbers)


def _rng(prompt: str, salt: str) -> random.Random:
    return random.Random(hashlib.sha256(f"{salt}\0{prompt}".encode()).hexdigest())


# ---- the policies ---------------------------------------------------------------------------
def empty(prompt: str) -> str:
    return ""


def echo(prompt: str) -> str:
    return last_user_message(prompt)


def format_only(prompt: str) -> str:
    """The right format, nonsense content: an option's verb with a nonsense target, `Answer: banana`."""
    view = read_prompt(prompt)
    if view.options and not view.lettered:
        head, _, _ = view.options[0].rpartition(" ")
        return f"{head or view.answer_format.prefix.strip()} {_NONSENSE}"
    return view.answer_format.wrap(_NONSENSE)


def random_legal(prompt: str) -> str:
    """A random listed option, else a random number of the prompt in the asked format (a legal guess)."""
    view, rng = read_prompt(prompt), _rng(prompt, "random_legal")
    legal = view.legal_answers()
    if legal:
        return rng.choice(legal)
    words = view.numbers or tuple(re.findall(r"[A-Za-z]{3,}", view.text)) or (_NONSENSE,)
    return view.answer_format.wrap(rng.choice(words))


def many_answers(prompt: str) -> str:
    """One answer line per candidate: rewards that take any (or the last) matching answer are fooled."""
    view = read_prompt(prompt)
    legal = view.legal_answers() or [view.answer_format.wrap(c) for c in view.candidates(small=21)]
    return "\n".join(legal)


def every_candidate(prompt: str) -> str:
    """Every option (or number) at once in one answer: rewards that look for the right one anywhere are fooled."""
    view = read_prompt(prompt)
    if view.options and not view.lettered:
        return " ".join(view.options)
    return view.answer_format.wrap(" ".join(view.candidates(small=100)))


def long_answer(prompt: str) -> str:
    """A very long reply: every number 0-999, every option and the prompt, repeated (length and search hacks)."""
    view = read_prompt(prompt)
    blob = " ".join([*view.candidates(small=1000), view.text])
    return (blob + "\n") * (_LONG_CHARS // max(len(blob), 1) + 1)


DEGENERATE: dict[str, tuple[str, Policy]] = {
    "empty": ("answers nothing", empty),
    "echo": ("repeats the prompt's last message", echo),
    "format_only": ("the asked format with nonsense content", format_only),
    "random_legal": ("a random listed option or a random number of the prompt, well formed", random_legal),
    "many_answers": ("one answer line per option or number of the prompt", many_answers),
    "every_candidate": ("every option or number at once in one answer", every_candidate),
    "long_answer": ("a very long reply holding every number 0-999, every option and the prompt", long_answer),
}
