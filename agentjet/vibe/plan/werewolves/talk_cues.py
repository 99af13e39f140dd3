"""The words that turn the werewolves game's day talk on or off: "no discussion", "the players are mute", "with
talking", and what players only do in talk ("bluff", "persuade").

Pure regexes over the lowercased sentence, read by `sentence.read_sentence`: `NO_TALK` (talk off, read first),
`TALK` (talk on) and `TALK_BEHAVIOUR` (a skill of the day's talk: the planner turns talk on and names the word).
"""

from __future__ import annotations

import re

__all__ = ["NO_TALK", "TALK", "TALK_BEHAVIOUR"]

_TALK_WORD = r"(?:discussions?|talk(?:ing)?|chat(?:ting)?|speech|debate|conversation)"
NO_TALK = re.compile(
    rf"\b(?:without|no|not? any|zero)\s+(?:any\s+|the\s+)?(?:day(?:[- ]?time)?\s+|table\s+)?{_TALK_WORD}\b|"
    r"(?<!not )(?<!not in )\bsilent(?:ly)?\b|\bno[- ]talk\b|\bwithout talking\b|\bmute\b|"
    rf"\b{_TALK_WORD}\s*[:=]?\s+(?:(?:is|are|turned|switched|set|kept|left|disabled)\s+)*(?:off|disabled|no)\b|"
    rf"\b(?:turn(?:ed|ing)?|switch(?:ed|ing)?|shut|leave|leaving|kept|keep)\s+(?:the\s+)?{_TALK_WORD}\s+(?:off|out)\b|"
    rf"\b(?:turn(?:ed|ing)?|switch(?:ed|ing)?|shut)\s+off\s+(?:the\s+)?{_TALK_WORD}\b|"
    rf"\b(?:disabl(?:e|ed|ing)|skip(?:ped|ping)?|drop(?:ped|ping)?|remov(?:e|ed|ing))\s+(?:the\s+)?{_TALK_WORD}\b|"
    rf"\b(?:don'?t|do not|never|no need to)\s+(?:use|add|have|enable|want|need)\s+(?:any\s+|the\s+)?{_TALK_WORD}\b|"
    r"\b(?:don'?t|do not|never|nobody|no one|can'?t|cannot|mustn'?t|shouldn'?t)\s+"
    r"(?:let\s+(?:them|it|him|her|anyone|anybody|the\s+\w+|players?)\s+|allow\s+\w+\s+to\s+)?"
    r"(?:talk|discuss|chat|speak|debate)\b|"
    r"\b(?:it|he|she|they)\s+(?:should|must|will|may|can)\s*(?:not|n't)\s+(?:talk|discuss|chat|speak|debate)\b"
)
TALK = re.compile(
    r"\blet\s+(?:them|everyone|everybody|the\s+\w+|players)\s+(?:talk|discuss|chat|speak|debate)\b|"  # "let them talk"
    r"\b(?:with|allow|allowing|enable|enabling|plus|and|including|using|use|uses|add|adding|turn on)\s+"
    r"(?:\w+\s+){0,2}(?:discussion|talk(?:ing)?|chat(?:ting)?|debate|speech)\b|"
    r"\b(?:players|they|everyone|wolves|werewolves|villagers|the village|roles)\s+(?:can\s+|may\s+|get to\s+)?"
    r"(?:talk|discuss|chat|debate|speak)\b|"
    r"\b(?:discussion|talk|chat)\s*[:=]?\s*(?:(?:is|turned|switched|kept|left)\s+)*(?:on|enabled)\b|\btalking\b|"
    r"\bnot (?:in )?silent\b|"
    r"\b(?:during|in|at|through|throughout)\s+(?:the\s+)?(?:day(?:time)?\s+|table\s+)?(?:discussions?|debates?|talk)\b"
)
# What players only do in the day's talk ("bluff", "persuade the village"): asking for it asks for discussion
TALK_BEHAVIOUR = re.compile(
    r"\b(?:bluff(?:s|ed|ing|ers?)?|lie|lies|lying|liars?|persuad(?:e|es|ed|ing)|persuasive|convinc(?:e|es|ed|ing)|"
    r"dec(?:ei|ie)v(?:e|es|ed|ing)|decepti(?:on|ve)|argu(?:e|es|ed|ing|ments?)|accus(?:e|es|ed|ing|ations?)|speeches|"
    r"mislead(?:s|ing)?|manipulat(?:e|es|ed|ing|ion))\b"
)
