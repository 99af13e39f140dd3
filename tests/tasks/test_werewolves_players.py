"""Werewolves players: scripted games end cleanly, the reply parser survives garbage, prompts stay private."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentjet.tasks.werewolves.agent import Reply
from agentjet.tasks.werewolves.claims import read_talk
from agentjet.tasks.werewolves.game import play
from agentjet.tasks.werewolves.parsing import parse_action, parse_speech, read_reply
from agentjet.tasks.werewolves.prompts import render_messages
from agentjet.tasks.werewolves.rules import apply, is_legal, new_game, pending, resolve
from agentjet.tasks.werewolves.scripted import ScriptedPlayer
from agentjet.tasks.werewolves.state import Action, ActionKind, Decision, Event, Phase, Role, RuleConfig, Side
from agentjet.tasks.werewolves.view import view_of

VOTE = Decision(4, Phase.DAY_VOTE, frozenset({ActionKind.VOTE, ActionKind.PASS}), (1, 2, 3, 5))
KILL = Decision(1, Phase.WOLF_VOTE, frozenset({ActionKind.KILL}), (3, 5, 6))
WITCH = Decision(7, Phase.WITCH, frozenset({ActionKind.HEAL, ActionKind.POISON, ActionKind.PASS}), (1, 2, 3))
SPEAK = Decision(2, Phase.DAY_TALK, frozenset({ActionKind.SAY}))
DECISIONS = (VOTE, KILL, WITCH, SPEAK)
VERBS = ("vote", "kill", "check", "shoot", "heal", "save", "poison", "pass", "abstain", "skip")


# ---- scripted games -------------------------------------------------------------------------
def _scripted(seed: int, config: RuleConfig | None = None) -> tuple[Side | None, int, int]:
    record = play(seed, {p: ScriptedPlayer(f"{seed}/{p}") for p in range(1, 10)}, config)
    assert record.final.is_over and record.events[-1].kind == "over"
    return record.winner, sum(record.invalid_by_player().values()), record.final.round


def test_scripted_games_finish_without_invalid_actions_and_both_sides_win() -> None:
    results = [_scripted(seed) for seed in range(120)]
    winners = Counter(w for w, _, _ in results)
    assert sum(invalid for _, invalid, _ in results) == 0
    assert winners[Side.WOLVES] >= 20 and winners[Side.VILLAGE] >= 20, winners
    assert all(1 <= rounds <= 10 for _, _, rounds in results)


def test_scripted_games_without_discussion_or_with_a_short_cap_finish_too() -> None:
    for seed in range(30):
        assert _scripted(seed, RuleConfig(discussion=False))[1] == 0
        winner, invalid, rounds = _scripted(seed, RuleConfig(max_rounds=1))
        assert invalid == 0 and rounds == 1


class _Silent:
    """A seat that never answers readably: the game plays its default every time."""

    def act(self, view: object, decision: Decision) -> Reply:
        return Reply("", None)


def test_invalid_answers_are_replaced_and_counted_never_raised() -> None:
    seed = 3
    wolves = [p for p in range(1, 10) if new_game(seed).role_of(p) is Role.WEREWOLF]
    agents = {p: _Silent() if p in wolves else ScriptedPlayer(f"{seed}/{p}") for p in range(1, 10)}
    record = play(seed, agents)  # type: ignore[arg-type]
    invalid, actions = record.invalid_by_player(), record.actions_by_player()
    assert set(invalid) == set(wolves) and all(invalid[p] == actions[p] > 0 for p in wolves)
    assert all(t.action.kind is ActionKind.KILL for t in record.turns if t.phase is Phase.WOLF_VOTE)
    assert record.winner is Side.VILLAGE  # silent wolves stand out to the scripted village


# ---- the reply parser -----------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("ACTION: vote 3", Action(ActionKind.VOTE, 3)),
        ("I think so.\n**Action:** Vote player #3\nthanks", Action(ActionKind.VOTE, 3)),
        ("action=vote(5)", Action(ActionKind.VOTE, 5)),
        ('{"action": "vote", "target": "player 2"}', Action(ActionKind.VOTE, 2)),
        ('Sure: {"action": "kill", "target": 6}', Action(ActionKind.KILL, 6)),
        ("vote 1", Action(ActionKind.VOTE, 1)),
        ("I vote for 3", Action(ActionKind.VOTE, 3)),
        ("Wanted: kill player 2\nkill 3", Action(ActionKind.KILL, 2)),
        ("ACTION: pass", Action(ActionKind.PASS)),
        ("ACTION: abstain", Action(ActionKind.PASS)),
        ("ACTION: heal", Action(ActionKind.HEAL)),
        ("ACTION: vote", Action(ActionKind.VOTE)),
    ],
)
def test_parser_reads_the_action_in_many_forms(text: str, expected: Action) -> None:
    assert parse_action(text) == expected


@pytest.mark.parametrize(
    "text", ["", "blah blah", "ACTION: dance 3", "I will not say", "{not json", '{"action": 3}', "3", "ACTION:"]
)
def test_parser_finds_nothing_in_garbage(text: str) -> None:
    assert parse_action(text) is None
    for decision in (VOTE, KILL, WITCH):
        resolved = resolve(decision, read_reply(text, decision))
        assert resolved.is_invalid and is_legal(decision, resolved.action)


@pytest.mark.parametrize(
    ("text", "decision"),
    [("ACTION: vote 4", VOTE), ("ACTION: vote 9", VOTE), ("ACTION: kill 1", KILL), ("ACTION: vote", VOTE),
     ("ACTION: heal", KILL), ("ACTION: poison 7", WITCH), ("ACTION: kill 3", VOTE)],
)  # fmt: skip
def test_readable_but_illegal_actions_are_invalid(text: str, decision: Decision) -> None:
    assert parse_action(text) is not None
    assert resolve(decision, read_reply(text, decision)).is_invalid


def test_defaults_are_the_documented_ones() -> None:
    assert resolve(VOTE, None).action == Action(ActionKind.PASS)
    assert resolve(WITCH, None).action == Action(ActionKind.PASS)
    assert resolve(KILL, None).action == Action(ActionKind.KILL, 3)
    assert resolve(SPEAK, None).action == Action(ActionKind.SAY, text="")


@settings(max_examples=300, deadline=None)
@given(text=st.text(max_size=300), index=st.integers(0, len(DECISIONS) - 1))
def test_any_reply_resolves_to_a_legal_action_never_an_error(text: str, index: int) -> None:
    decision = DECISIONS[index]
    resolved = resolve(decision, read_reply(text, decision))
    assert is_legal(decision, resolved.action)
    if decision is SPEAK:
        assert not resolved.is_invalid
    elif not any(
        verb in text.lower() for verb in ("vote", "kill", "heal", "save", "poison", "pass", "abstain", "skip")
    ):
        assert resolved.is_invalid  # no verb, no action


@settings(max_examples=200, deadline=None)
@given(
    noise=st.text(alphabet=st.characters(exclude_categories=["Nd"], exclude_characters="{}"), max_size=40).filter(
        lambda text: not any(verb in text.lower() for verb in VERBS)
    ),
    target=st.sampled_from(VOTE.targets),
)
def test_a_valid_action_line_survives_noise_around_it(noise: str, target: int) -> None:
    text = f"{noise}\nACTION: vote {target}\n{noise}"
    resolved = resolve(VOTE, read_reply(text, VOTE))
    assert not resolved.is_invalid and resolved.action == Action(ActionKind.VOTE, target)


def test_speech_is_one_line_without_its_say_prefix() -> None:
    assert parse_speech("SAY: I suspect player 4.\nACTION: vote 4") == "I suspect player 4."
    assert parse_speech("\n\n  hello there") == "hello there"
    assert parse_speech("") == ""


# ---- what scripted players read -------------------------------------------------------------
def test_talk_reading_finds_claims_accusations_clears_and_silence() -> None:
    lines = [
        (2, "I am the seer. Player 4 is a werewolf. Player 6 is good."),
        (3, "I suspect player 2."),
        (5, "   "),
        (6, "Nice weather."),
        (4, "I'm the seer! #2 is a wolf"),
    ]
    events = [Event(1, "speech", actor=a, text=t) for a, t in lines]
    events.append(Event(1, "votes", ballots=((1, 4), (7, None))))
    talk = read_talk(events)
    assert talk.seer_claims == (2, 4)
    assert talk.accusations == ((2, 4), (4, 2)) and talk.clears == ((2, 6),)
    assert talk.suspicions == ((3, 2),) and talk.silences == (5,) and talk.vague == (6,)
    assert talk.abstentions == (7,)


# ---- prompts --------------------------------------------------------------------------------
def test_prompts_show_a_player_only_its_own_secrets_and_the_legal_options() -> None:
    state = new_game(11)
    while (decision := pending(state)) is not None and decision.phase is not Phase.WOLF_VOTE:
        state = apply(state, Action(ActionKind.SAY, text="Let's kill player 9."))
    assert decision is not None
    wolf_view = view_of(state, decision.player)
    messages = render_messages(wolf_view, decision)
    system, user = messages[0]["content"], messages[-1]["content"]
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "user"]
    assert messages[2]["content"] == "ACTION: kill 5"  # the worked example answers in the format asked
    pack = ", ".join(str(p) for p in wolf_view.pack)
    assert f"The werewolves are players {pack}." in system and f"player {decision.player}, the werewolf" in system
    options = " | ".join(f"ACTION: kill {t}" for t in decision.targets)
    assert user.endswith(f"Choose tonight's victim. Options: {options}\nReply with exactly one option.")
    assert "told the pack: Let's kill player 9." in user
    villager = next(p for p in range(1, 10) if state.role_of(p) is Role.VILLAGER)
    v_messages = render_messages(view_of(state, villager), decision)
    v_system, v_user = v_messages[0]["content"], v_messages[-1]["content"]
    assert "The werewolves are players" not in v_system and "told the pack" not in v_user
    short = render_messages(wolf_view, decision, memory_events=1)[-1]["content"]
    assert short.count("\n") == 3  # one event, the alive line, the question and its reply line
