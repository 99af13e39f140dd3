"""What a family only approximates of a sentence, said as assumptions: "adding fractions" is posed as whole-number
word problems, "say the word banana" asks for a different word each prompt, "say thank you" for one word, a
countdown target cannot be fixed.

Pure. `family_notes(family, text)` gives every note that applies (several may: "adding fractions" gets two);
`named_word` is the one word a word-family sentence names.
"""

from __future__ import annotations

import re

from agentjet.vibe.plan.numbers import LISTED_NUMBERS
from agentjet.vibe.plan.sentence import GAME_OF_24, REPLIES_TO_EVERY, REPLY_VERB, SAYS_A_PHRASE, SAYS_A_WORD

__all__ = ["family_notes", "named_word"]

_BARE_OPERATIONS = re.compile(
    r"\b(?:adds?|adding|addition|sums? (?:of|with)|multipl(?:y|ies|ying|ication)|subtract(?:s|ing|ion)?|"
    r"divid(?:e|es|ing)|"
    r"division|times tables?)\b"
)
# The four operations, each as a sentence may name it: naming some but not all asks for what is not posed alone
_OPERATION_KINDS = (
    re.compile(r"\b(?:adds?|adding|addition|plus|sums?(?= (?:of|with|and)\b))\b"),
    re.compile(r"\b(?:subtract(?:s|ing|ion)?|minus|differences?)\b"),
    re.compile(r"\b(?:multipl(?:y|ies|ying|ication)|times tables?)\b"),
    re.compile(r"\b(?:divid(?:e|es|ing)|division)\b"),
)
_WORDED = re.compile(r"\b(?:word|story|math|maths|grade|gsm|arithmetic)")
_GAME_OF_24 = re.compile(GAME_OF_24)
_NAMED_WORD = re.compile(  # the first: "the word is blue"
    r"\b(?:(?:the|a|that|this)\s+)?word\s+(?:is|should be|will be|would be|being|to say is)\s*[:,-]?\s*"
    r"[\"'\u2018\u201c]?(?P<is_word>[a-z]+)|"
    r"\b(?:the|a) word\s+[\"'\u2018\u201c]?(?P<word>[a-z]+)|"
    r"\bgreet(?:s|ing)?\s+(?:\w+\s+){0,2}?with\s+[\"'\u2018\u201c]?(?P<greeted>[a-z]+)|"
    r"\brepeat after me\s*[:,-]?\s*[\"'\u2018\u201c]?(?P<echoed>[a-z]+)[\"'\u2019\u201d]?\s*(?:[.!,;:]|$)|"
    rf"\b{REPLY_VERB}\s+with\s+(?P<replied>[a-z]+)\s*(?:[.!,;:]|$)|" + REPLIES_TO_EVERY + "|"
    r"\bword(?::\s*[\"'\u2018\u201c]?|\s+[\"'\u2018\u201c])(?P<word2>[a-z]+)|"
    r"\bsay(?:s|ing)?\s+(?:my|your|his|her|their|our)\s+name\s*[,:-]?\s*(?:(?:which\s+)?is\s+)?(?P<name>[a-z]+)|"
    + SAYS_A_WORD
    + "|"
    rf"\b(?:(?:say|says|saying|repeat|output|print)(?: only| just| always)?|{REPLY_VERB})(?: with)?\s+"
    r"(?:just |only |exactly |always )?"
    r"(?:[\"'\u2018\u201c](?P<quoted>[a-z0-9][a-z0-9-]*)[\"'\u2019\u201d]|(?P<bare>[a-z]+),? and nothing else)"
)
_NOT_A_NAMED_WORD = frozenset(
    {"i", "it", "they", "we", "you", "given", "asked", "requested", "problems", "and", "only", "thing", "things"}
    | {"game", "games", "task", "tasks", "family", "echo", "repetition", "challenge", "puzzle", "puzzles", "test"}
    | {"exercise", "problem", "is", "that", "which", "in", "for", "of", "to", "from", "it", "list", "level"}
    | {"back", "again", "out", "aloud", "loud", "correctly", "properly", "right", "exactly", "clearly", "once"}
    | {"twice", "more", "better", "well", "on", "at", "with", "by", "as", "when", "if", "then", "now", "each"}
    | {"after", "before", "me", "you", "said", "typed", "shown", "written"}  # "repeat the word after me"
    | {"not", "the", "a", "an", "any", "whatever", "chosen", "random", "up"}  # "the word is up to you"
)
_SAYS_A_PHRASE = re.compile(SAYS_A_PHRASE)
_NOT_INTEGERS = re.compile(r"\b(?:fractions?|decimals?|percent(?:ages?)?|negative numbers|negatives|real numbers)\b")
_NOT_IN_THE_SHOP = re.compile(
    r"\b(?:decimal|fractional)\s+(?:prices?|quantities)\b|\bcents?\b|\bdiscounts?\b|\bcoupons?\b|\btax(?:es)?\b|"
    r"\bvat\b"
)
_NOT_COUNTDOWN_OPS = re.compile(  # countdown allows + - x / only
    r"\b(?:exponents?|exponentiation|powers? of|square roots?|roots?|factorials?|logarithms?|logs?|modulo)\b"
)
_ALL_NUMBERS = re.compile(  # "it must use all the numbers": not countdown's rule
    r"\b(?:use|using|uses)\s+(?:all|every one of|each of|every)\s+(?:the\s+|\d+\s+)?numbers?\b|"
    r"\ball\s+(?:the\s+|\d+\s+)?numbers\s+(?:must|should|have to)\s+be\s+used\b"
)
_REMAINDERS = re.compile(r"\bremainders?\b")
_LANGUAGE = re.compile(  # "word problems in German": the prompts are English
    r"\b(?:in|written in|into)\s+(?:french|german|spanish|italian|portuguese|dutch|russian|chinese|japanese|korean|"
    r"arabic|hindi|polish|turkish|swedish|another language|other languages)\b"
)
_NOT_THE_SHOP = re.compile(  # prices that are no shopping list
    r"\b(?:stock|stocks|share|flight|flights|hotel|hotels|crypto|bitcoin|gas|fuel|house|housing|rent|market)\s+prices?\b"
)
_FIXED_TARGET = re.compile(
    r"\btargets?(?:\s+(?:number|value))?\s+(?:is\s+|are\s+)?(?:always|fixed at|fixed to|set to|=)\s+(\d+)|"
    r"\balways\s+(?:reach|reaches|hit|hits|make|makes|get|gets)\s+(\d+)\b|"
    r"\b(?:reach|make|hit|get to)\s+(?!24\b)(\d+)\s+(?:from|with|using|out of)\b|"  # "make 500 from six numbers"
    r"\b(?:reach|make|hit|get to)\s+exactly\s+(\d+)\b|"
    r"\bnumbers\s+\d+(?:\s*,\s*\d+)+(?:\s*,?\s*and\s+\d+)?\s+to\s+(?:make|reach|get|hit)\s+(?!24\b)(\d+)\b|"
    r"\btarget(?:\s+(?:number|value))?\s*(?:of|is|=|:)?\s*(?:exactly\s+|always\s+)?(\d+)\b"
    r"(?!\s*(?:[-\u2013]|to\b|and\b))"  # "a target of 999", "target exactly 100"
)
_SHOPPING = re.compile(
    r"\b(?:shop(?:s|ping|per)?|grocer(?:y|ies)|prices?|priced|cart|basket|receipts?|bills?|invoices?|lists?|totals?|"
    r"totall?(?:ing|ed)|store|buy(?:ing)?|purchases?|costs?)\b"
)
_OTHER_TOOL = re.compile(
    r"\b(?:weather|search(?:es|ing)?|web|browser|brows(?:e|ing)|internet|google|database|sql|python|code|email|"
    r"e-mail|calendar|wikipedia|maps?|files?|shell|terminal|retrieval|flights?|hotels?|reservations?|bookings?|"
    r"tickets?|apis?|payments?|sms)\b"
)
_UNKNOWNS = re.compile(
    r"\b(?:algebra(?:ic)?|equations?|solve for x|unknowns?|variables?|square roots?|exponents?|powers)\b"
)
_TOOL_DROPPED = re.compile(
    r"\b(?:no|without|not|never|don't|do not|doesn't)\s+(?:\w+\s+){0,4}?(?:calculator|note|notes|notepad|lookup|"
    r"look-up)(?:\s+tool)?\b"
)
_HUMAN_PLAYER = re.compile(  # "i want to play werewolf myself", "so i can play against it"
    r"\b(?:i|we)\s+(?:\w+\s+){0,3}?(?:play|playing)\b[^.;!?]*?\b(?:myself|ourselves|with me|with us|against "
    r"(?:it|them|the (?:model|ai|bot|agent)|me|us))\b|\bplay(?:ing)?\s+against\s+(?:me|us)\b"
)
_PART_OF_A_TURN = re.compile(  # "only their night actions", "just the votes": a part of what a role does
    r"\b(?:only|just|solely)\s+(?:on\s+|in\s+|at\s+|during\s+|for\s+)?(?:the\s+|their\s+|its\s+|her\s+|his\s+)?"
    r"(?:(?:night|day)(?:time)?[- ](?:actions?|phases?|moves?|decisions?|choices?|turns?|calls?)|votes?|voting|"
    r"night(?:time)?s?)\b|"
    r"\b(?:(?:night|day)(?:time)?[- ](?:actions?|phases?|moves?|decisions?|turns?)|votes?|voting|kills?)\s+only\b"
)
_VARIANT = re.compile(r"\b(?:one|1)[- ]night\b|\bultimate werewol(?:f|ves)\b")


def family_notes(family: str, text: str, written: str = "") -> list[str]:
    """Where the sentence names a task a family only approximates, the assumptions that say how (each that applies).
    `written` is `text` with number words as written (the word to say is read there: 'say "seven"')."""
    notes: list[str] = []
    school = re.search(r"\b(?:grade|primary|elementary)[- ]school\b|\bgsm[\w-]*", text)
    if family == "arithmetic" and school:
        notes.append(f"'{school.group(0)}' math means the generated word problems (GSM8K itself is not downloaded)")
    operation = _BARE_OPERATIONS.search(text)
    if family == "arithmetic" and operation and not _WORDED.search(text):
        notes.append(
            f"the '{operation.group(0)}' asked for is posed as the arithmetic family's generated word problems (each a "
            "chain of +, -, x and / on integers; there is no family of bare expressions)"
        )
    operations = [found.group(0) for kind in _OPERATION_KINDS if (found := kind.search(text))]
    if family == "arithmetic" and 0 < len(operations) < len(_OPERATION_KINDS):
        notes.append(
            f"{' and '.join(repr(word) for word in operations)} alone cannot be asked for: the arithmetic family draws "
            "each step's operation from +, -, x and / at every level"
        )
    if family == "countdown" and 0 < len(operations) < len(_OPERATION_KINDS):
        notes.append(
            f"{' and '.join(repr(word) for word in operations)} alone cannot be asked for: every countdown puzzle "
            "allows +, -, x and /"
        )
    if family == "countdown" and (op := _NOT_COUNTDOWN_OPS.search(text)):
        notes.append(f"'{op.group(0)}' cannot be asked for: every countdown puzzle allows +, -, x and / only")
    if family == "countdown" and (every := _ALL_NUMBERS.search(text)):
        notes.append(
            f"'{every.group(0)}' is not the rule here: each number may be used at most once, and not all need be"
        )
    if family == "arithmetic" and (rest := _REMAINDERS.search(text)):
        notes.append(f"'{rest.group(0)}' cannot be asked for: every division in a problem comes out exact")
    if family != "werewolves" and (language := _LANGUAGE.search(text)):
        notes.append(f"'{language.group(0)}' cannot be asked for: the family's prompts are in English")
    if family == "countdown" and re.search(r"\bletters?\b", text):
        notes.append("countdown here is the numbers round only: there is no letters round")
    if family == "arithmetic" and (kind := _UNKNOWNS.search(text)):
        notes.append(
            f"'{kind.group(0)}' cannot be asked for: the arithmetic family poses word problems whose answer is a "
            "whole number found by + - x /, with no unknown to solve for"
        )
    if family == "tool_use" and (dropped := _TOOL_DROPPED.search(text)):
        notes.append(
            f"'{dropped.group(0)}' cannot be asked for: every tool_use episode offers lookup, calculator and note "
            "tools, and the reward asks for the total to be noted"
        )
    if family == "word" and (named := named_word(written or text)):
        notes.append(
            f"the word family asks for a different word in each prompt (8 train words, 16 other held-out words): the "
            f"model learns to say the word it is asked for, '{named}' among others, not '{named}' alone"
        )
    elif family == "word" and (said := _SAYS_A_PHRASE.search(text)):
        phrase = said.group("quoted_phrase") or said.group("phrase")
        notes.append(
            f"'{phrase}' is {len(phrase.split())} words: the word family asks for one word in each prompt (8 train "
            f"words, 16 other held-out words), so the model learns to say the single word it is asked for, not "
            f"'{phrase}'"
        )
    if family == "tool_use" and (kind := _NOT_IN_THE_SHOP.search(text)):
        notes.append(
            f"'{kind.group(0)}' cannot be asked for: the shop's prices and quantities are whole numbers and its lists "
            "have no discounts; the level sets how many items, how many of each and how high the prices go"
        )
    if family in ("arithmetic", "countdown") and (kind := _NOT_INTEGERS.search(text)):
        notes.append(
            f"'{kind.group(0)}' cannot be asked for: the numbers and the answer of every {family} problem are "
            "positive whole numbers; the generated problems are posed as they are"
        )
    if family == "werewolves" and (human := _HUMAN_PLAYER.search(text)):
        notes.append(
            f"'{human.group(0)}' is not part of a vibe run: the trained policy plays against the scripted players; "
            "talk to it afterwards with `agentjet chat`"
        )
    if family == "werewolves" and (part := _PART_OF_A_TURN.search(text)):
        notes.append(
            f"'{part.group(0)}' cannot be asked for: a trained role learns from every call it makes (its night "
            "actions, its votes and, with discussion, its talk), since the game's reward is one win or loss for all"
        )
    if family == "werewolves" and _VARIANT.search(text):
        notes.append(
            "One Night Ultimate Werewolf is played as the built-in game: 9 players, as many nights and days as it "
            "takes (there is no one-night variant)"
        )
    if family == "countdown" and any(len(re.findall(r"\d+", m.group(0))) >= 3 for m in LISTED_NUMBERS.finditer(text)):
        notes.append(
            "the puzzle the sentence spells out is not trained itself: countdown generates its own puzzles, at the "
            "level its numbers and target come closest to"
        )
    if family == "countdown" and (fixed := _FIXED_TARGET.search(text)):
        notes.append(
            f"a target fixed at {next(g for g in fixed.groups() if g)} cannot be asked for: each puzzle's target is "
            "drawn "
            "from the level's range"
        )
    if family == "countdown" and _GAME_OF_24.search(text):
        notes.append(
            "the game of 24 is played as countdown: each puzzle's target is drawn from the level's range, "
            "not fixed at 24"
        )
    elsewhere, other = _NOT_THE_SHOP.search(text), _OTHER_TOOL.search(text)
    if family == "tool_use" and (elsewhere or other or not _SHOPPING.search(text)):  # "check the weather and total"
        notes.append(
            "tool use is trained on the tool_use family's one task: total a shopping list with its tools (lookup a "
            "price, calculator, write a note, read the notes)"
            + (f"; its lookup knows the shop's prices, not '{elsewhere.group(0)}'" if elsewhere else "")
            + (f"; '{other.group(0)}' is not among them" if other else "")
        )
    return notes


_WORD_GROUPS = (
    "word", "word2", "is_word", "name", "said", "quoted", "bare", "greeted", "echoed", "replied", "to_every"
)  # fmt: skip


def named_word(text: str) -> str | None:
    """The one word a word-family sentence names ("say the word banana", 'always say "ok"'), if any."""
    for match in _NAMED_WORD.finditer(text):
        word = next(w for w in match.group(*_WORD_GROUPS) if w)
        quoted = re.search(rf"[\"'\u2018\u201c]{re.escape(word)}\b", match.group(0))  # "the word 'game'": a word
        if word not in _NOT_A_NAMED_WORD or quoted:
            return str(word)
    return None
