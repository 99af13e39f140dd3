"""What the planner knows about each built-in task family: a summary, levels, the spec's prose, and the words
for werewolves' roles (`ROLE_ALIASES`, and `ALIAS_NOTES` for the words of other variants: "doctor" is the witch).

Kept beside the planner, not in the families themselves: it is how vibe *describes* a family
to a user and to an LLM (docs/tasks.md is the source; tests check the levels still agree).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "ALIAS_NOTES", "CATALOG", "DEALS", "DEALT", "GAME_NAMES", "LINEUP", "OPPOSING_WORDS", "OTHER_ROLES", "PLAYERS",
    "ROLE_ALIASES", "ROLE_WORD", "ROLE_WORDS",
    "VILLAGE_ROLES", "WEREWOLF_ROLES", "FamilyInfo", "Prose", "family_list",
]  # fmt: skip

WEREWOLF_ROLES: tuple[str, ...] = ("werewolf", "villager", "seer", "witch", "hunter")  # the deal's order
VILLAGE_ROLES: tuple[str, ...] = ("villager", "seer", "witch", "hunter")
_SIDE = VILLAGE_ROLES
_WOLVES = ("werewolf",)
# Role words -> the roles they mean (a plural of the village, or the village itself, means the whole side).
ROLE_ALIASES: dict[str, tuple[str, ...]] = {
    "seer": ("seer",), "seers": ("seer",), "detective": ("seer",), "detectives": ("seer",), "cop": ("seer",),
    "prophet": ("seer",), "oracle": ("seer",), "fortune teller": ("seer",), "sheriff": ("seer",),
    "investigator": ("seer",), "investigators": ("seer",), "cops": ("seer",), "prophets": ("seer",),
    "witch": ("witch",), "witches": ("witch",), "doctor": ("witch",), "healer": ("witch",), "medic": ("witch",),
    "bodyguard": ("witch",), "guardian angel": ("witch",), "protector": ("witch",), "doctors": ("witch",),
    "healers": ("witch",), "medics": ("witch",), "doc": ("witch",), "docs": ("witch",),
    "hunter": ("hunter",), "hunters": ("hunter",),
    "villager": ("villager",), "plain villager": ("villager",), "ordinary villager": ("villager",),
    "plain villagers": ("villager",), "ordinary villagers": ("villager",), "simple villagers": ("villager",),
    "special roles": ("seer", "witch", "hunter"), "power roles": ("seer", "witch", "hunter"),
    "good roles": _SIDE, "village roles": _SIDE, "villager roles": _SIDE,
    "villagers": _SIDE, "village": _SIDE, "town": _SIDE, "townsfolk": _SIDE, "townspeople": _SIDE,
    "townsperson": _SIDE, "townsman": _SIDE,
    "townies": _SIDE, "citizens": _SIDE, "innocents": _SIDE, "good guys": _SIDE, "good guy": _SIDE, "good side": _SIDE,
    "good team": _SIDE, "non-wolves": _SIDE, "non-werewolves": _SIDE, "non-wolf": _SIDE, "non-werewolf": _SIDE,
    "non wolf": _SIDE, "non werewolf": _SIDE, "non-wolf roles": _SIDE, "non-werewolf roles": _SIDE,
    "wolves' opponents": _SIDE,
    "werewolves' opponents": _SIDE, "village's opponents": _WOLVES, "villagers' opponents": _WOLVES,
    "werewolf": _WOLVES, "werewolves": _WOLVES, "were-wolves": _WOLVES, "were-wolf": _WOLVES, "wolf": _WOLVES,
    "wolves": _WOLVES, "wolfs": _WOLVES, "wolf pack": _WOLVES, "pack": _WOLVES, "mafia": _WOLVES,
    "mafiosi": _WOLVES, "mafioso": _WOLVES, "mafiosos": _WOLVES, "godfather": _WOLVES,
    "bad guys": _WOLVES, "bad guy": _WOLVES, "evil side": _WOLVES, "evil team": _WOLVES, "killers": _WOLVES,
}  # fmt: skip
# Role words of other variants, said in an assumption as the role or side they are read as
_SEER = "the seer (the role that learns a player's side each night)"
_WITCH = "the witch (the role that can save the night's victim)"
_READ_AS = {  # a role word of another variant -> the role or side it is read as
    **dict.fromkeys(("detective", "detectives", "cop", "cops", "prophet", "prophets", "oracle", "fortune teller",
                     "sheriff", "investigator", "investigators"), _SEER),
    **dict.fromkeys(("doctor", "doctors", "doc", "docs", "healer", "healers", "medic", "medics", "bodyguard",
                     "guardian angel", "protector"), _WITCH),
    **dict.fromkeys(("town", "townsfolk", "townspeople", "non-wolves", "non-werewolves", "non-wolf", "non-werewolf",
                     "non wolf", "non werewolf", "non-wolf roles", "non-werewolf roles", "wolves' opponents",
                     "werewolves' opponents"), "the village side"),
    **dict.fromkeys(("village's opponents", "villagers' opponents"), "the werewolves"),
    "mafia": "the werewolves",
    **dict.fromkeys(("godfather", "mafioso", "mafiosi", "mafiosos"), "the werewolves (the mafia's side)"),
}  # fmt: skip
# Any role word, longest first ("plain villagers" before "villagers"): a regex source, for whoever reads roles
ROLE_WORDS = "|".join(sorted(map(re.escape, ROLE_ALIASES), key=len, reverse=True))
ROLE_WORD = r"\b(?:" + ROLE_WORDS + r")\b"
ALIAS_NOTES = {word: f"'{word}' read as {what}" for word, what in _READ_AS.items()}
# Roles of other werewolves/mafia variants that the built-in game does not deal: named in the plan, never trained
OTHER_ROLES = re.compile(
    r"\b(?:cupid|little girl|village idiot|idiot|elder|jester|masons?|wild child|bear tamer|tanner|minion|"
    r"doppelganger|troublemaker|insomniac|lovers|alpha wolf|white wolf|piper|pied piper|scapegoat|knight|"
    r"serial killer|vigilante|mayor)\b"
)
# The game's own names: a role word only where a role is meant ("the werewolves"), not "play werewolves"
GAME_NAMES = frozenset({"werewolf", "werewolves", "were-wolves", "were-wolf", "mafia"})
# Words of opposition: a role they govern is the opponent ("beat the wolves", "find the seer"), not trained
OPPOSING_WORDS = frozenset(
    "against beat beats beating defeat defeats defeating outplay outsmart outwit outvote fool fooling trick "
    "tricking deceive deceiving mislead misleading find finding found catch catching spot spotting detect "
    "detecting identify identifying unmask unmasking expose exposing kill killing eliminate eliminating lynch "
    "hang vote out off vs versus protect protecting save saving heal healing guard guarding defend defending shield "
    "survive surviving "
    "by from over hunt hunting suspect accuse accusing sniff root lie lying lies bluff bluffing "
    "persuade persuading persuades convince convincing convinces who whom which reveal revealing reveals uncover "
    "uncovering discover discovering guess guessing locate locating track tracking shoot shooting shoots poison "
    "fools tricks deceives misleads finds catches spots detects identifies unmasks exposes kills eliminates lynches "
    "hunts protects saves heals guards defends shields outplays outsmarts outwits outvotes defeated beaten tracks "
    "uncovers discovers guesses locates accuses suspects check checks checking checked inspect inspects "
    "inspecting investigate investigates investigating poisoning poisons potion potions shot shots hit hits "
    "decieve decieves decieving stop stops stopping prevent prevents preventing take takes taking recognise "
    "recognising recognize recognizing recognises recognizes "  # a misspelling too
    "than".split()  # "the wolves play worse than the village": what they are compared with
)
# The werewolves deal: a lineup a sentence asks for ("with 2 wolves") is said to be ignored
PLAYERS = 9
DEALS = {"werewolf": 3, "villager": 3, "seer": 1, "witch": 1, "hunter": 1}
LINEUP = re.compile(  # "2 wolves", "6 villagers": a count of one role, named by the group it matches
    r"\b(\d+)\s+(?:(?P<werewolf>(?:were)?wol(?:f|fs|ves))|(?P<villager>villagers?)|(?P<seer>seers?)|"
    r"(?P<witch>witch(?:es)?)|(?P<hunter>hunters?))\b"
    r"(?!\s+(?:games?|matches|rounds?|deals?|episodes?|runs?|players|adapters?|models?|polic(?:y|ies)|loras?)\b)"
)
DEALT = "the built-in game deals 3 werewolves, 3 villagers, a seer, a witch and a hunter"


@dataclass(frozen=True)
class Prose:
    """The spec's plain-words fields for one family with given params."""

    environment: str
    actors: list[str]
    reward: str
    metric: str
    dataset: str


@dataclass(frozen=True)
class FamilyInfo:
    name: str
    summary: str  # one line, for refusals and the LLM prompt
    params: str  # constructor parameters with defaults, for the LLM prompt
    levels: int  # difficulty levels 1..levels, 0 when the family has none
    train_items: int
    eval_items: int
    prose: Callable[[Mapping[str, Any], Sequence[str]], Prose]
    success_reward: float = 1.0  # a held-out episode with at least this reward is a success (the outcome's rate)
    rate: str = "accuracy"  # what that share is called in the report
    train: Mapping[str, Any] = field(default_factory=dict)  # TrainConfig overrides measured to learn (docs/vibe.md)
    steps: int | None = None  # the default budget when the sentence names none (None: the planner's default)
    recipe: str = ""  # where `train` comes from, stated as an assumption of the plan
    on_embedded: str = ""  # what the family's default run measured on the embedded model, when it did not learn
    learned_to_level: int = 0  # with on_embedded: the highest level that did learn there (its note is for those above)


def _werewolves(params: Mapping[str, Any], roles: Sequence[str]) -> Prose:
    servers = params.get("servers") or {}
    if len(set(servers.values())) > 1:  # non-shared: each side's reward and wins count for its own policy
        who = "each trained side (its own policy)"
    else:
        who = f"the trained {'village' if roles and roles[0] != 'werewolf' else 'werewolves'} side"
    talk = "with one line of talk per player at night (wolves) and by day" if params.get("discussion", True) else ""
    tolerance = float(params.get("invalid_tolerance", 0.0))
    if params.get("penalty") == "per_action":
        weight = float(params.get("penalty_weight", 0.1))
        scaled = f", all divided by {weight:g} so it lies in [-1, 1]" if weight > 1 else ""
        penalty = (
            f"; minus {weight:g} x the share of its action answers that were invalid (graded, so a model still "
            f"learning the format gets a signal){scaled}"
        )
    elif tolerance >= 1.0:
        penalty = " (an invalid answer costs nothing itself: the game plays the default move and counts it invalid)"
    else:
        share = "any" if tolerance == 0 else f"more than {tolerance:.0%}"
        penalty = f", or -0.1 when {share} of its action answers were invalid"
    return Prose(
        environment=(
            "The 9-player werewolves game (3 werewolves, 3 villagers, a seer, a witch, a hunter)"
            f"{' ' + talk if talk else ''}: night kills, seer checks, witch potions, hunter shots, day votes. "
            "Each model decision is one "
            "chat call showing the rules, its seat and role, recent events and every legal answer."
        ).replace("  ", " "),
        actors=[f"{r} (policy)" if r in roles else f"{r} (scripted heuristic player)" for r in WEREWOLF_ROLES],
        reward=f"Per game, for {who}: 1 when it wins, 0 when it loses or the round cap ends it{penalty}.",
        metric=f"the share of held-out deals {who} wins",
        dataset="each item is a deal (a seating of the nine roles); train and eval deals never meet",
    )


def _countdown(params: Mapping[str, Any], roles: Sequence[str]) -> Prose:
    return Prose(
        environment="One chat turn: given numbers and a target, write an expression with + - * / and parentheses "
        "that reaches the target, ending with `Answer: <expression>`.",
        actors=["solver (policy)"],
        reward="1 when the answer uses only the given numbers and equals the target; 0.1 + 0.2 x its closeness "
        "to the target for a well-formed expression of the given numbers with another value; 0.1 x the share of "
        "given numbers for one that also uses other numbers; 0 otherwise (parsed safely, never eval).",
        metric="share of held-out puzzles solved exactly (reward 1)",
        dataset=f"seeded solvable puzzles at difficulty {params.get('difficulty', 1)}; train/eval disjoint",
    )


def _arithmetic(params: Mapping[str, Any], roles: Sequence[str]) -> Prose:
    return Prose(
        environment="One chat turn: a generated grade-school word problem (shopping, sharing, baking, ...) with a "
        "positive integer answer; the model reasons and ends with `Answer: <integer>`.",
        actors=["solver (policy)"],
        reward="1 for the exact integer answer, 0.1 for a well-formed wrong integer, 0 for no or a hedged answer.",
        metric="share of held-out problems answered with the exact integer (reward 1)",
        dataset=f"seeded generated word problems at difficulty {params.get('difficulty', 1)}; train/eval disjoint",
    )


def _tool_use(params: Mapping[str, Any], roles: Sequence[str]) -> Prose:
    required = params.get("tool_choice") == "required"
    answer = "answer `Answer: <total>`"
    if required:
        answer = "call the answer tool with the total (every turn is a tool call)"
    example = " One worked episode comes first." if params.get("shots") else ""
    return Prose(
        environment="A multi-turn shopping task with OpenAI tools: look up each price (lookup), total it with "
        f"the calculator, save it with write_note, then {answer}.{example}",
        actors=["shopper agent (policy)", "tool environment (pure Python: lookup, calculator, notes)"],
        reward="0.4 when the last note holds the total, 0.4 when the final answer is the total, 0.2 x the share "
        "of asked-for items that were looked up; 0 for an episode that gives no final answer.",
        metric="share of held-out shopping lists whose total is both noted and answered (reward at least 0.8)",
        dataset=f"seeded shopping lists at difficulty {params.get('difficulty', 1)}; train/eval disjoint",
    )


def _word(params: Mapping[str, Any], roles: Sequence[str]) -> Prose:
    return Prose(
        environment="One chat turn: 'Reply with just the word X and nothing else.'",
        actors=["responder (policy)"],
        reward="1 when the reply's first word is the asked word, else 0.",
        metric="share of held-out words said first (reward 1)",
        dataset="8 train words and 16 other eval words in a seeded order",
    )


ALL_PROJECTIONS = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]
# `bench learn werewolves` (docs/tasks.md): 1/8 -> 6/8 held-out wins in 3 steps of 2 deals x 8 games, lr 2e-4,
# with the per-action penalty of weight 3 (werewolves/plan.py, RECIPE_PARAMS); the adapter on the top half of the
# layers at twice the rate learned in 4 of 4 runs in fp32 and 2 of 2 in bf16, and its update (the larger part of
# the first step) is a third shorter than on every layer. One deal of 8 games a step, 8 steps (the same 64 games
# as 4 steps of 2 deals): the first update comes after half the games and takes half as long, so the first step
# lands within 2 minutes on 2 cores, and the run learned as well (docs/vibe.md, *The default run of each family*)
WEREWOLVES_TRAIN: dict[str, Any] = {
    "grpo": {"group_size": 8},
    "collect": {"tasks": 1},
    "optim": {"lr": 4e-4},
    "lora": {"rank": 16, "alpha": 32, "target_modules": ALL_PROJECTIONS, "layers": 0.5},
}

# `bench learn-check` (README): the word task from 0.02 to 1.00 train reward in 20 steps of 2 words x 8
WORD_TRAIN: dict[str, Any] = {
    "grpo": {"group_size": 8},
    "collect": {"tasks": 2},
    "optim": {"lr": 5e-4},
    "lora": {"rank": 16, "alpha": 32, "target_modules": ALL_PROJECTIONS},
}

# tool_use on the embedded model: on its own SmolLM2-135M never calls a tool (0 of 168 episodes); with every turn
# opened as a tool call (`tool_choice="required"`, the `answer` tool ending the episode) and one worked episode
# first it writes calls, copying the example's. At temperature 1 half its turns break the call's JSON (30 of 57 in a
# probe of 32 lists); at 0.3 few do and the rewards of a group still differ (level 1: 0, 0.2, 0.6 and 1.0)
TOOL_USE_PARAMS: dict[str, Any] = {"tool_choice": "required", "shots": 1, "temperature": 0.3}
TOOL_USE_TRAIN: dict[str, Any] = {
    "grpo": {"group_size": 8},
    "collect": {"tasks": 2},
    "optim": {"lr": 2e-4},
    "lora": {"rank": 16, "alpha": 32, "target_modules": ALL_PROJECTIONS},
}

# `bench learn arithmetic` (docs/tasks.md): 37.5% -> 59.4% held-out at step 40, 90.6% at step 91, lr 2e-4;
# vibe runs at lr 5e-4 went worse (docs/vibe.md), so the default is the bench's own recipe
ARITHMETIC_TRAIN: dict[str, Any] = {
    "grpo": {"group_size": 8},
    "collect": {"tasks": 2},
    "optim": {"lr": 2e-4},
    "lora": {"rank": 16, "alpha": 32, "target_modules": ALL_PROJECTIONS},
}

# countdown is arithmetic's shape (one call, one checked answer of up to 128 tokens): its recipe, 30 steps. With a
# sum as the task's first worked example it learned in 3 of 3 bf16 runs (1/64 -> 11/64, 0/64 -> 10/64, 1/64 -> 12/64)
COUNTDOWN_TRAIN: dict[str, Any] = dict(ARITHMETIC_TRAIN)

CATALOG: dict[str, FamilyInfo] = {
    info.name: info
    for info in (
        FamilyInfo(
            "werewolves",
            "the 9-player social deduction game (werewolf/mafia); train the wolves or any village role",
            "trained_roles=['werewolf'] (any of werewolf, villager, seer, witch, hunter; one side), "
            "discussion=true, max_rounds=10, penalty='episode'|'per_action', penalty_weight=0.1, "
            "invalid_tolerance=0.0",
            0,
            32,
            16,
            _werewolves,
            success_reward=0.5,  # the game's `won` flag decides; this bar only for a client that gives none
            rate="win rate",
            train=WEREWOLVES_TRAIN,
            steps=8,
        ),
        FamilyInfo(
            "countdown",
            "reach a target number from given numbers with + - * / (the numbers game)",
            "difficulty=1 (1-4), shots=1 (0-2), max_tokens=128, temperature=1.0",
            4,
            128,
            64,
            _countdown,
            train=COUNTDOWN_TRAIN,
            steps=30,
            recipe="the recipe measured to learn arithmetic on the embedded model (countdown has its shape: one "
            "call, one checked answer): GRPO groups of 8 on 2 puzzles an update, LoRA on every projection at lr "
            "2e-4; one worked example, a sum, whose shape the small model copies; 64 held-out puzzles unless the "
            "sentence says how many",
        ),
        FamilyInfo(
            "arithmetic",
            "grade-school math word problems with an integer answer",
            "difficulty=1 (1-5), shots=1 (0-2), max_tokens=128, temperature=1.0",
            5,
            128,
            64,
            _arithmetic,
            train=ARITHMETIC_TRAIN,
            steps=40,
            recipe="the recipe `bench learn arithmetic` measured to learn on the embedded model: GRPO groups of 8 "
            "on 2 problems an update, LoRA on every projection at lr 2e-4 (37.5% -> 59.4% after 40 updates there); "
            "64 held-out problems unless the sentence says how many",
        ),
        FamilyInfo(
            "tool_use",
            "a multi-turn agent using lookup, calculator and note tools to total a shopping list",
            "difficulty=1 (1-4), max_turns=null, max_tokens=128, temperature=0.3, tool_choice='required' "
            "('auto'|'required'), shots=1 (0-1)",
            4,
            128,
            64,
            _tool_use,
            success_reward=0.8,  # the total both in the last note and in the final answer
            rate="success rate",
            train=TOOL_USE_TRAIN,
            steps=20,
            recipe="the recipe measured to learn on the embedded model: every turn a tool call (the answer tool "
            "ends the episode), one worked episode of the list's shape first, sampled at temperature 0.3 (at 1 half "
            "the calls break their JSON), GRPO groups of 8 on 2 lists an update, LoRA on every projection at lr "
            "2e-4; level 1, one item in a quantity, went 5/64 -> 63/64 held-out (docs/vibe.md); lists of several "
            "items need the prices summed, which the small model has not learned; 64 held-out lists unless the "
            "sentence says how many",
            on_embedded="on the embedded smollm2-135m, lists of several items (level 2 and up) have not reached a "
            "success: there the looked-up prices must be summed, and its runs on lists of two (docs/vibe.md) learned "
            "to look them up and answer, not the sum (held-out 1/64 -> 0/64 with this recipe); level 1 (one item) is "
            "what it learns; give --model a larger instruct model that calls tools",
            learned_to_level=1,
        ),
        FamilyInfo(
            "word",
            "reply with one given word (the quickest check that training works)",
            "max_tokens=6, temperature=1.0",
            0,
            64,
            16,
            _word,
            train=WORD_TRAIN,
            steps=20,
            recipe="the recipe `bench learn-check` measured to learn on the embedded model: GRPO groups of 8 on 2 "
            "words an update, LoRA on every projection at lr 5e-4",
        ),
    )
}


def family_list() -> str:
    """`name (summary); ...` for messages."""
    return "; ".join(f"{info.name} ({info.summary})" for info in CATALOG.values())
