"""What scripted players read out of the public record: claims, accusations, clears, silences, abstentions.

Plain regular expressions over the public lines (day talk and last words), so a model's speech
moves the scripted players as much as a scripted line does: "I am the seer. Player 4 is a
werewolf." is a seer claim plus an accusation; "I suspect player 2" a suspicion; "Player 6 is
good" a clear. Empty lines, lines that name nobody and abstentions in day votes are
noted too. Pure.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from agentjet.tasks.werewolves.state import Event

__all__ = ["Talk", "read_talk"]

_SEER_CLAIM = re.compile(r"\bI(?:'m|\s+am)\s+(?:the\s+)?seer\b", re.IGNORECASE)
_ACCUSE = re.compile(r"(?:player\s*)?#?(\d)\s+is\s+(?:a\s+|the\s+)?(?:were)?wol(?:f|ves)", re.IGNORECASE)
_CLEAR = re.compile(r"(?:player\s*)?#?(\d)\s+is\s+(?:a\s+)?(?:good|innocent|villager|not\s+a\s+(?:were)?wolf)", re.I)
_SUSPECT = re.compile(r"\b(?:suspect|vote(?:\s+for)?|accuse)\s+(?:player\s*)?#?(\d)\b", re.IGNORECASE)
_NAMES_A_PLAYER = re.compile(r"\b[1-9]\b")
_PUBLIC_TALK = ("speech", "last_words")


@dataclass(frozen=True)
class Talk:
    """Who said what about whom, in order; each pair is (speaker, subject)."""

    seer_claims: tuple[int, ...] = ()  # speakers who claimed seer, first claim first, once each
    accusations: tuple[tuple[int, int], ...] = ()  # "N is a werewolf"
    clears: tuple[tuple[int, int], ...] = ()  # "N is good"
    suspicions: tuple[tuple[int, int], ...] = ()  # "I suspect N", "vote N"
    silences: tuple[int, ...] = ()  # speakers of an empty line (once per line): hiding something?
    vague: tuple[int, ...] = ()  # speakers of a line that names nobody (once per line)
    abstentions: tuple[int, ...] = ()  # voters who abstained in a day vote (once per vote)


def read_talk(events: Iterable[Event]) -> Talk:
    claims: list[int] = []
    accusations: list[tuple[int, int]] = []
    clears: list[tuple[int, int]] = []
    suspicions: list[tuple[int, int]] = []
    silences: list[int] = []
    vague: list[int] = []
    abstentions: list[int] = []
    for event in events:
        if event.kind == "votes":
            abstentions += [voter for voter, target in event.ballots if target is None]
        if event.kind not in _PUBLIC_TALK or event.actor is None:
            continue
        speaker, text = event.actor, event.text
        if not text.strip(" .!?"):
            silences.append(speaker)
        elif not _NAMES_A_PLAYER.search(text):
            vague.append(speaker)
        if _SEER_CLAIM.search(text) and speaker not in claims:
            claims.append(speaker)
        accusations += [(speaker, int(n)) for n in _ACCUSE.findall(text) if int(n) != speaker]
        clears += [(speaker, int(n)) for n in _CLEAR.findall(text) if int(n) != speaker]
        suspicions += [(speaker, int(n)) for n in _SUSPECT.findall(text) if int(n) != speaker]
    return Talk(
        tuple(claims),
        tuple(accusations),
        tuple(clears),
        tuple(suspicions),
        tuple(silences),
        tuple(vague),
        tuple(abstentions),
    )
