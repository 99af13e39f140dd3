"""The words around a role mention that say it does not train: left out, the one side marked "only", wanted to lose,
or scripted.

Pure regexes over the lowercased sentence, read by `roles.read_roles` on the text before a mention (`*_BEFORE`,
which end at it) and after it (`*_AFTER`, which start there): "but not the wolves", "the seer is not trained",
"nobody except the wolves", "the wolves should lose", "the seer is scripted", "leave the seer out".
"""

from __future__ import annotations

import re

__all__ = [
    "ALL_BUT_BEFORE", "CREW_AFTER", "LEAVE_BEFORE", "LEFT_OUT_AFTER", "LEFT_OUT_BEFORE", "LOSES_AFTER", "NO_BEFORE",
    "ONLY_BEFORE", "ONLY_MARK_AFTER", "ONLY_MARK_BEFORE", "OUT_AFTER", "REST_SCRIPTED_AFTER", "SCRIPTED_AFTER",
    "SCRIPTED_BEFORE", "SO_IS_BEFORE", "TRAINING_AFTER",
]  # fmt: skip

# "only the town learns", "just the mafia trains": the one side that trains, the others named are opponents
ONLY_MARK_BEFORE = re.compile(r"\b(?:only|just|solely)\s+(?:the\s+)?$")

ONLY_MARK_AFTER = re.compile(
    r"^\s*(?=$|[.;!?])|"  # "..., just the special roles"
    r"^\s+(?:only\b|(?:should\s+|will\s+|must\s+|gets?\s+to\s+)?(?:learns?|trains?|improves?|gets?\s+trained|"
    r"is\s+trained|are\s+trained|updates?)\b)"
)

SCRIPTED_AFTER = re.compile(
    r"^\s+(?:is|are)\s+(?:a\s+|the\s+)?(?:\w+\s+){0,2}?(?:that|which|who)\s+(?:should|must|will|can)\s+"
    r"(?:stay|be|remain)\s+(?:scripted|heuristic|bots?|frozen|fixed)\b|"  # "the seer is a game role that should stay"
    r"^\s*:?\s+(?:(?:are|is|stay|stays|remain|remains|being|get|gets|play|plays|act|acts|"
    r"(?:should|must|will|can|shall)\s+(?:be|stay|remain))\s+)?"
    r"(?:(?:left|kept|played by|run by|driven by|controlled by)\s+)?(?:as\s+)?(?:the\s+(?:only\s+)?|a\s+)?"
    r"(?:(?:simple|dumb|basic|plain)\s+)?(?:scripted|heuristic|rule-based|bots?|fixed|frozen|scripts?|rules)\b"
)

LEAVE_BEFORE = re.compile(r"\b(?:leave|leaves|leaving|left)\s+(?:the\s+)?$")  # "leave the seer out (of it)"

NO_BEFORE = re.compile(r"\bno\s+$")

TRAINING_AFTER = re.compile(r"^\s+(?:training|learning|updates?)\b")

OUT_AFTER = re.compile(r"^\s+(?:out|alone|be|untouched)\b")  # "leave the seer out", "leave the wolves alone"

# "but not the wolves", "everyone except the seer", "don't train the witch": a role left out (the text up to the
# word that governs the mention); "the seer is not trained", "the hunter stays untrained": the same, said after it
LEFT_OUT_BEFORE = re.compile(
    r"(?:(?<!why )\b(?:not|nor|neither|except(?:\s+for)?|excluding|exclude|other than|apart from|rather than|"
    r"instead of|minus|without|leave out|leaving out|skip|skipping|bar|barring|save for|with the exception(?: of)?|"
    r"aside from|besides|"
    r"(?:everyone|everybody|anyone|anybody|all|every role|all roles|every player|all players)\s+but)|"
    r"(?:\b(?:don't|dont|do not|never|shouldn't|should not|won't|no need to|without)|(?<!why )\bnot)\s+"
    r"(?:bother\s+(?:to\s+)?)?(?:train(?:ing)?|improv(?:e|ing)|teach(?:ing)?|touch(?:ing)?|updat(?:e|ing)|"
    r"chang(?:e|ing)))$|"
    r"\b(?:don't|dont|do not|never)\s+(?:care\s+(?:about|for)|want)$|"  # "I don't want the wolves trained"
    r"\bno\s+(?:training|learning|updates?)\s+for$|"  # "no training for the wolves"
    r"\b(?:who|that|which)\s+(?:aren't|are not|isn't|is not)$"  # "the players who aren't wolves"
)

# "nobody except the wolves", "no one but the seer": the one role that trains, not one left out
ONLY_BEFORE = re.compile(
    r"(?:\b(?:nobody|no one|noone|none|no other role|no roles?)|(?:n't|\bnot|\bnever)\s+(?:\w+\s+){0,2}?"
    r"(?:anyone|anybody)|\b(?:everything|everyone|everybody|all)\s+(?:is\s+|are\s+)?(?:scripted|frozen|fixed))\s+"
    r"(?:else\s+)?"
    r"(?:except(?:\s+for)?|but|other than|apart from|besides|save)$"
)

# "everyone but the seer is scripted": the rest are scripted, so the role named is the one that trains
ALL_BUT_BEFORE = re.compile(
    r"\b(?:everyone|everybody|all|every role|all roles|every player|all players)(?:\s+else)?\s+"
    r"(?:but|except(?:\s+for)?|other than|apart from|besides|save for)$"
)
REST_SCRIPTED_AFTER = re.compile(
    r"^\s+(?:is|are|stays?|remains?|should be|will be|gets?)\s+(?:\w+\s+)?(?:scripted|frozen|fixed|bots?|heuristic|"
    r"rule-based|untrained|random)\b"
)

LEFT_OUT_AFTER = re.compile(
    r"^\s+(?:(?:(?:is|are|should|must|will|do|does|did)\s+not|isn't|aren't|shouldn't|mustn't|won't|don't|doesn't|"
    r"never)\s+(?:be\s+|get\s+)?(?:trained|train|learn|learning|updated|change)|"
    r"(?:(?:is|are|stays?|remains?|left|kept)\s+)?(?:untrained|untouched|excluded|exempt(?:ed)?)|"
    r"(?:is|are)\s+(?:a\s+)?(?:\w+\s+)?roles?\s+(?:i|we)\s+(?:don't|do not)\s+care\s+(?:about|for)|"
    r"as\s+(?:it is|they are|is)\b|"  # "keep the hunter and the witch as they are"
    r"(?:(?:does|do)\s*(?:n't|not)|don't|doesn't)\s+need\s+(?:any\s+|more\s+)?(?:training|to be trained|to learn|"
    r"to improve)|(?:is|are)\s+fine(?:\s+as\s+(?:it is|they are|is))?|(?:(?:can|should|will)\s+)?stays?\s+as\s+"
    r"(?:it is|they are|is))\b|"
    r"^\s+(?:(?:does|do|is|are|should|will)\s+not|doesn't|don't|isn't|aren't|shouldn't|won't)(?=\s*(?:$|[,.;!?]))|"
    r"^\s+(?:not(?=\s*(?:$|[,.;!?]))|no(?=\s*(?:$|[.;!?])))|"  # "..., but the seer no", "hunter not, villagers not"
    r"^\s+not\s+(?:trained|training|learning|updated)\b"  # "witch not trained"
)

# "the wolves do not win", "make the wolves lose", "make the werewolves worse": the side the sentence wants beaten
LOSES_AFTER = re.compile(
    r"^\s+(?:(?:(?:should|must|will|to)\s+)?(?:(?:be|get|gets|play|plays)\s+)?(?:worse|weaker)(?!\s+than)|(?:(?:do|does|should|must|will|can)\s+not|don't|doesn't|shouldn't|mustn't|won't|can't|never)\s+win|"
    r"(?:(?:should|must|will|to|always|more|often)\s+)*(?:lose|loses|losing)(?!\s+(?:less|fewer|rarely|less often))|"
    r"(?:(?:should|must|will|to)\s+)?(?:win|wins|winning)\s+(?:less|fewer|rarely|less often|seldom)|"
    r"(?:(?:are|is|keep|keeps)\s+)?(?:win|wins|winning)\s+(?:(?:way|far|much|a bit|a lot)\s+)?too\s+"
    r"(?:often|much|easily|many)|"  # "the wolves win too often, make the villagers better": the ones to beat
    r"(?:are|is|play|plays)\s+(?:(?:way|far|much|a bit)\s+)?too\s+(?:strong|good|well|powerful|smart)|"
    r"(?:(?:should|must|will|can|to|always|more often|often|keep|keeps|are|is)\s+)*(?:be|get|gets|getting|being)\s+"
    r"(?:beaten|defeated|caught|outplayed|outsmarted|outwitted|found|exposed|unmasked|voted out|lynched|eliminated)"
    r"(?!\s+(?:less|fewer|rarely|less often|seldom))"
    r")\b"  # "the werewolves should be beaten by a trained seer"
)
# "and his crew", "and their gang": the rest of a role's side, said with it ("the godfather and his crew are scripted")
CREW_AFTER = re.compile(
    r"^\s+(?:and|&|\+)\s+(?:his|her|their|its)\s+(?:crew|gang|pack|team|henchmen|minions|goons|friends|buddies|men|"
    r"family|followers|allies)\b"
)

SO_IS_BEFORE = re.compile(r"\b(?:scripted|heuristic|bots?|frozen|fixed)\b[^;.]*\bso\s+(?:is|are)\s+(?:the\s+)?$")

SCRIPTED_BEFORE = re.compile(
    r"\b(?:scripted|heuristic|rule-based|fixed|frozen|bot|freeze|freezing|built-in|builtin|random|default|stock|"
    r"opponent|opposing|enemy)\s+(?:\w+\s+)?$"
)
