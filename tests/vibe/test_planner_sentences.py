"""The deterministic planner on ordinary sentences: a broad table across the five families (roles in any phrasing,
separate models, numeric difficulty cues, budgets, model sizes), assumptions true to the sentence, and the refusal
of separate policies at launch."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import pytest

from agentjet.tasks.registry import load_family
from agentjet.tasks.tool_use import LEVELS
from agentjet.vibe.errors import PlanRefused
from agentjet.vibe.plan.families import CATALOG, VILLAGE_ROLES
from agentjet.vibe.plan.planner import DEFAULT_STEPS, QUICK_STEPS, plan
from agentjet.vibe.plan.spec import TaskSpec, spec_text
from agentjet.vibe.plan.spelling import spelled as _spelled

VILLAGE = list(VILLAGE_ROLES)
WOLVES = ["werewolf"]
BOTH = WOLVES + VILLAGE


@dataclass(frozen=True)
class Row:
    """One sentence and what its spec must hold (None: not checked)."""

    sentence: str
    family: str
    params: dict[str, Any] = field(default_factory=dict)
    roles: list[str] | None = None  # trained roles
    policies: list[list[str]] | None = None  # each policy's roles; None: one shared policy of `roles`
    steps: int | None = None  # None: the family's default budget
    minutes: float | None = None
    model: str | None = None  # requested_model


ROWS = [
    # --- werewolves: roles in plain verb phrases, subjects and objects, synonyms, several roles
    Row("make the seer better at werewolves", "werewolves", roles=["seer"]),
    Row("teach the villagers to find the wolves", "werewolves", roles=VILLAGE),
    Row("improve the wolf", "werewolves", roles=WOLVES),
    Row("help the witch save more people in werewolf", "werewolves", roles=["witch"]),
    Row("train the seer and the doctor to play werewolves", "werewolves", roles=["seer", "witch"]),
    Row("I want the hunter to get better at werewolf", "werewolves", roles=["hunter"]),
    Row("Can the werewolves learn to lie better?", "werewolves", roles=WOLVES),
    Row("werewolf: the village should win more often, 20 steps", "werewolves", roles=VILLAGE, steps=20),
    Row("get a 7B good at werewolves as a plain villager", "werewolves", roles=["villager"], model="7B"),
    Row("coach the detective in mafia for thirty steps", "werewolves", roles=["seer"], steps=30),
    Row("train my model to play the witch in a game of werewolves", "werewolves", roles=["witch"]),
    Row("make a small model a better seer", "werewolves", roles=["seer"], model="a small model"),
    Row("teach the wolf pack to fool the villagers", "werewolves", roles=WOLVES),
    Row("train a 7B to play werewolves against the wolves", "werewolves", roles=VILLAGE, model="7B"),
    Row("play werewolves against scripted villagers", "werewolves", roles=WOLVES),
    Row("help the villagers vote out the werewolves, quick run", "werewolves", roles=VILLAGE, steps=QUICK_STEPS),
    Row("Train the Seer, Witch and Hunter in WEREWOLF", "werewolves", roles=["seer", "witch", "hunter"]),
    Row("train werwolves as the villigers", "werewolves", roles=VILLAGE),
    Row("the townsfolk need to catch the mafia faster", "werewolves", roles=VILLAGE),
    Row("werewolves, with discussion, as the seer", "werewolves", {"discussion": True}, roles=["seer"]),
    Row("make the wolves better at werewolf, no talking", "werewolves", {"discussion": False}, roles=WOLVES),
    Row("train the wolves in werewolves with games of at most 6 rounds", "werewolves", {"max_rounds": 6}, WOLVES),
    # --- werewolves: sides and separate (non-shared) models
    Row(
        "train the wolves and the villagers with separate models",
        "werewolves",
        roles=BOTH,
        policies=[WOLVES, VILLAGE],
    ),
    Row("give each side its own model in werewolves", "werewolves", roles=BOTH, policies=[WOLVES, VILLAGE]),
    Row(
        "werewolves with two models: one for the wolves and one for the village",
        "werewolves",
        roles=BOTH,
        policies=[WOLVES, VILLAGE],
    ),
    Row("train both sides of werewolves for 8 steps", "werewolves", roles=BOTH, policies=[WOLVES, VILLAGE], steps=8),
    Row(
        "can the seer and the witch each get their own model in werewolf?",
        "werewolves",
        roles=["seer", "witch"],
        policies=[["seer"], ["witch"]],
    ),
    Row(
        "teach the villagers to find the wolves, with separate policies for each side",
        "werewolves",
        roles=BOTH,
        policies=[WOLVES, VILLAGE],
    ),
    Row("train the seer with its own model in werewolves", "werewolves", roles=["seer"]),
    Row(
        "train two 7B models, one per side, on werewolves",
        "werewolves",
        roles=BOTH,
        policies=[WOLVES, VILLAGE],
        model="7B",
    ),  # fmt: skip  # found by probing after the held-out table; fixed
    Row("train the village side and the wolves with one shared model in werewolves", "werewolves", roles=VILLAGE),
    # --- countdown: counts of numbers (as digits or words), targets, levels, words
    Row("countdown with 6 numbers", "countdown", {"difficulty": 4}),
    Row("teach a 0.5B countdown using five numbers", "countdown", {"difficulty": 3}, model="0.5B"),
    Row("get better at the numbers game with targets up to 200", "countdown", {"difficulty": 2}),
    Row("countdown puzzles with 3-digit targets for 15 steps", "countdown", {"difficulty": 4}, steps=15),
    Row("RL on countdown, level two, in 45 minutes", "countdown", {"difficulty": 2}, minutes=45),
    Row("make qwen 1.5b solve hard countdown puzzles", "countdown", {"difficulty": 3}, model="qwen 1.5B"),
    Row("Countdown, the easiest setting, a quick smoke test", "countdown", {"difficulty": 1}, steps=QUICK_STEPS),
    Row("teach a model to reach the target number from four numbers", "countdown", {"difficulty": 2}),
    Row("train cuontdown for a hundred steps", "countdown", {"difficulty": 1}, steps=100),
    Row("could you train a tiny model on countdown for half an hour?", "countdown", minutes=30, model="a small model"),
    Row("countdown at the hardest difficulty with a 135M model", "countdown", {"difficulty": 4}, model="135M"),
    Row("countdown 5x5, harder", "countdown", {"difficulty": 3}),
    # --- arithmetic: operations, digits, magnitudes, words
    Row("train a model on arithmetic with 3-digit numbers", "arithmetic", {"difficulty": 5}),
    Row("math word problems with numbers up to 100", "arithmetic", {"difficulty": 4}),
    Row("two-step word problems for 20 steps", "arithmetic", {"difficulty": 2}, steps=20),
    Row(
        "Make llama 8B better at grade school math, 3 operations per problem",
        "arithmetic",
        {"difficulty": 3},
        model="llama 8B",
    ),  # fmt: skip
    Row("arithmatic for an hour", "arithmetic", {"difficulty": 1}, minutes=60),
    Row("improve a model at single-digit addition", "arithmetic", {"difficulty": 1}),
    Row("train on maths problems, medium difficulty, 12 updates", "arithmetic", {"difficulty": 2}, steps=12),
    Row("teach a seven billion parameter model to do word problems", "arithmetic", model="7B"),
    Row("please train a model on easy sums in 10 minutes", "arithmetic", {"difficulty": 1}, minutes=10),
    Row("multiplication with two-digit numbers, fifty steps", "arithmetic", {"difficulty": 4}, steps=50),
    Row("story problems at level 4, 1.5 hours", "arithmetic", {"difficulty": 4}, minutes=90),
    # --- tool use: items, prices, levels
    Row("train an agent to use tools for a shopping list with 4 items", "tool_use", {"difficulty": 4}),
    Row("teach a model tool calling: lookup, calculator, notes, two items", "tool_use", {"difficulty": 2}),
    Row("tool use with prices under 20, for 25 iterations", "tool_use", {"difficulty": 3}, steps=25),
    Row("can my 135M learn to use a calculater?", "tool_use", {"difficulty": 1}, model="135M"),
    Row("grocery totals with function calls, hard, 2 hours", "tool_use", {"difficulty": 3}, minutes=120),
    Row("tool use with 3 items for a quick run", "tool_use", {"difficulty": 3}, steps=QUICK_STEPS),
    # --- word
    Row("make the model say the word banana", "word"),
    Row("teach a tiny model to reply with a single word", "word", model="a small model"),
    Row("one-word answers for 5 steps", "word", steps=5),
    Row("train smollm to repeat the word I give it, quickly", "word", steps=QUICK_STEPS, model="smollm"),
    Row("a 0.5B that answers with just one word, 20 minutes", "word", minutes=20, model="0.5B"),
    Row("say the word hello: separate models please", "word"),
]

# Written after the planner was done and run once without any code change for them (20 of 20 passed then).
HELD_OUT = [
    Row("get the witch to use her potions better in werewolves", "werewolves", roles=["witch"]),
    Row("I'd like the wolves to stop getting caught, train them for 15 steps", "werewolves", roles=WOLVES, steps=15),
    Row("teach the hunter and the seer to work together in werewolf", "werewolves", roles=["seer", "hunter"]),
    Row("train the good guys in mafia against the bad guys", "werewolves", roles=VILLAGE),
    Row(
        "werewolves: wolves and village each with a different model",
        "werewolves",
        roles=BOTH,
        policies=[WOLVES, VILLAGE],
    ),
    Row(
        "Could you make the villagers smarter at spotting werewolves in 20 minutes?",
        "werewolves",
        roles=VILLAGE,
        minutes=20,
    ),
    Row("train a 3B as the werewolf side, eight steps", "werewolves", roles=WOLVES, steps=8, model="3B"),
    Row(
        "self-play werewolves, separate weights for the wolves and the town",
        "werewolves",
        roles=BOTH,
        policies=[WOLVES, VILLAGE],
    ),
    Row("countdown with four numbers and targets below 100", "countdown", {"difficulty": 2}),
    Row("solve countdown puzzles using 6 numbers in forty-five minutes", "countdown", {"difficulty": 4}, minutes=45),
    Row("make a tiny model good at the game of 24", "countdown", model="a small model"),
    Row("countdown, but easy, for 7 steps", "countdown", {"difficulty": 1}, steps=7),
    Row("arithmetic word problems with 4 operations, 30 steps", "arithmetic", {"difficulty": 4}, steps=30),
    Row("train qwen2.5-0.5b-instruct on simple math", "arithmetic", {"difficulty": 1}, model="qwen2.5 0.5B"),
    Row("GSM8K style problems, the hardest ones, quick", "arithmetic", {"difficulty": 5}, steps=QUICK_STEPS),
    Row("teach a model to add up numbers below 20", "arithmetic", {"difficulty": 2}),
    Row("shopping with tools, three items per list, 40 steps", "tool_use", {"difficulty": 3}, steps=40),
    Row("train an agent to call a lookup tool and a calculator, level 3", "tool_use", {"difficulty": 3}),
    Row("get a model to answer with the word yes", "word"),
    Row("train the model to output the first word only, 2 minutes", "word", minutes=2),
]

# A second set written by a later session as a new user would (2026-12-04), run once before any change for them:
# 19 of the 23 that name a built-in family planned as intended; "a mafia-style game" trained the wolves, "with
# discussion turned off" and "don't let them talk" kept talk on (or did not say so), "the villager team" trained
# the plain villager alone, and "add and subtract ..." / "multiply two ... numbers" were refused. Fixed since.
SECOND_HELD_OUT = [
    Row("teach the seer to find wolves faster", "werewolves", {"discussion": True}, roles=["seer"]),
    Row("I want the witch and the hunter to get smarter at werewolf", "werewolves", roles=["witch", "hunter"]),
    Row("get the villagers to vote out werewolves more often, 10 minutes", "werewolves", roles=VILLAGE, minutes=10),
    Row(
        "werewolf game where wolves and villagers are separate networks",
        "werewolves",
        roles=BOTH,
        policies=[WOLVES, VILLAGE],
    ),
    Row("RL on a mafia-style social deduction game, the good guys only", "werewolves", roles=VILLAGE),
    Row(
        "a 1.5B model that plays werewolf as the wolf pack, 5 steps", "werewolves", roles=WOLVES, steps=5, model="1.5B"
    ),
    Row(
        "train werewolves with discussion turned off, 2 steps, the villager team",
        "werewolves",
        {"discussion": False},
        roles=VILLAGE,
        steps=2,
    ),
    Row(
        "make both wolves and village learn, each their own weights",
        "werewolves",
        roles=BOTH,
        policies=[WOLVES, VILLAGE],
    ),
    Row("let the hunter and seer share one model, villagers scripted", "werewolves", roles=["seer", "hunter"]),
    Row(
        "we need a werewolf bot for the villagers side with its own model for the wolves too",
        "werewolves",
        roles=BOTH,
        policies=[WOLVES, VILLAGE],
    ),
    Row("train the werewolves, don't let them talk", "werewolves", {"discussion": False}, roles=WOLVES),
    Row("train something to add and subtract three-digit numbers", "arithmetic", {"difficulty": 5}),
    Row("get a 0.5B qwen to multiply two 2-digit numbers", "arithmetic", {"difficulty": 4}, model="qwen 0.5B"),
    Row("improve math word problems accuracy, harder ones please, 30 min", "arithmetic", {"difficulty": 3}, minutes=30),
    Row("grade school math, level 3, 20 steps", "arithmetic", {"difficulty": 3}, steps=20),
    Row(
        "arithmetic with numbers up to 1000, quick run of 5 minutes",
        "arithmetic",
        {"difficulty": 5},
        steps=QUICK_STEPS,
        minutes=5,
    ),
    Row("make my model better at 24-game style puzzles with 4 numbers", "countdown", {"difficulty": 2}),
    Row("solve countdown with six numbers and a three digit target", "countdown", {"difficulty": 4}),
    Row("countdown but easy, 3 numbers", "countdown", {"difficulty": 1}),
    Row("fine-tune the policy to use tools to compute a grocery bill with 4 items", "tool_use", {"difficulty": 4}),
    Row("an agent that calls a calculator tool and a price lookup, easy lists", "tool_use", {"difficulty": 1}),
    Row("shopping total with two items, up to 5 of each", "tool_use", {"difficulty": 2}),
    Row("say the word pineapple", "word"),
]

# A third set (2026-12-04, a later session, as a new user would), run once before any change for them: 19 of the 27
# planned fully as intended. Refused: a sentence naming a role but no game ("the hunter should shoot ...") and
# 'always say "banana" and nothing else'. Assumptions untrue or missing: "the wolves left scripted" was called a
# side one policy cannot also train, "single digits" was quoted as '1 digits', "harder to detect" was read as a
# difficulty werewolves lacks, the word family's sentences did not say that the named word is one of many, "five
# items" did not say that 4 is the most there is, and One Night Ultimate Werewolf went unremarked. Fixed since.
THIRD_HELD_OUT = [
    Row("teach the wolves to coordinate their night kills", "werewolves", {"discussion": False}, roles=WOLVES),
    Row("I'd like my werewolf agent to be a better witch, please", "werewolves", roles=["witch"]),
    Row("get the seer good at werewolves in under 10 min", "werewolves", roles=["seer"], minutes=10),
    Row("werewolves with the town trained and the wolves left scripted", "werewolves", roles=VILLAGE),
    Row("play werewolf as both teams sharing one model", "werewolves", roles=WOLVES),
    Row(
        "train the wolves and the seer, each with its own model",
        "werewolves",
        roles=["werewolf", "seer"],
        policies=[WOLVES, ["seer"]],
    ),
    Row("can you make the bad guys win more in mafia, 12 steps", "werewolves", roles=WOLVES, steps=12),
    Row("werewolf where the village talks during the day, train the villagers", "werewolves", roles=VILLAGE),
    Row("make a 14B great at one night ultimate werewolf", "werewolves", roles=WOLVES, model="14B"),
    Row("the hunter should shoot the right person more often", "werewolves", {"discussion": True}, roles=["hunter"]),
    Row("teach it to play werewolves as the good side using a 360M model", "werewolves", roles=VILLAGE, model="360M"),
    Row("improve llama 3 8b at werewolves as a villager", "werewolves", roles=["villager"], model="llama 3 8B"),
    Row("make the werewolves harder to detect, with separate models for each wolf", "werewolves", roles=WOLVES),
    Row(
        "werewolves seer vs wolves, separate models",
        "werewolves",
        roles=["werewolf", "seer"],
        policies=[WOLVES, ["seer"]],
    ),
    Row("RL fine-tune for countdown with 5 numbers", "countdown", {"difficulty": 3}),
    Row("countdown numbers game, target up to 999, 25 steps", "countdown", {"difficulty": 4}, steps=25),
    Row(
        "train the policy to reach a target number from a set of numbers using + - * /", "countdown", {"difficulty": 1}
    ),
    Row("make a model good at mental math with two-digit multiplication", "arithmetic", {"difficulty": 4}),
    Row("train on grade school math for an hour", "arithmetic", {"difficulty": 1}, minutes=60),
    Row("arithmetic, easy level, 8 steps, 0.5B", "arithmetic", {"difficulty": 1}, steps=8, model="0.5B"),
    Row("teach a model basic addition of single digits", "arithmetic", {"difficulty": 1}),
    Row("agent that uses a calculator tool to add up prices, five items per list", "tool_use", {"difficulty": 4}),
    Row("tool calling: look up prices and sum them, hard lists", "tool_use", {"difficulty": 3}),
    Row("train a function-calling agent on shopping lists, 15 minutes", "tool_use", {"difficulty": 1}, minutes=15),
    Row("make the model reply with only the word ok", "word"),
    Row('train it to always say "banana" and nothing else', "word"),
    Row("train a 7B to play werewolves, 3 steps, quick", "werewolves", roles=WOLVES, steps=3, model="7B"),
]
# A fourth, short set (same day, after the third's fixes), run once before any change: 8 of 10. "a werewolf-playing
# LLM that wins as the village" trained the wolves (a hyphenated game word is no role now), and "wolves vs village,
# train both, same weights" dropped the village without a word ("train both" now asks for both sides).
FOURTH_HELD_OUT = [
    Row("I want a werewolf-playing LLM that wins as the village", "werewolves", roles=VILLAGE),
    Row("finetune with RL so the witch uses her poison well, 6 steps", "werewolves", roles=["witch"], steps=6),
    Row("werewolves: wolves vs village, train both, same weights", "werewolves", roles=WOLVES),
    Row(
        "train the model on countdown puzzles, medium difficulty, half an hour",
        "countdown",
        {"difficulty": 2},
        minutes=30,
    ),
    Row("get better at arithmetic with three operations per problem", "arithmetic", {"difficulty": 3}),
    Row("teach tool use for shopping carts with up to 3 items", "tool_use", {"difficulty": 3}),
    Row("make it answer with one word", "word"),
    Row(
        "train a 70B on werewolves as the werewolves team using separate models per role",
        "werewolves",
        roles=WOLVES,
        model="70B",
    ),
    Row("please train the seer", "werewolves", roles=["seer"]),
    Row("werewolf with 2 rounds max, train the wolves", "werewolves", {"max_rounds": 2}, roles=WOLVES),
]
# A fifth set of 25 (2026-12-04, a new session), run once before any change: 21 of 25. Amounts past every level
# ("four-digit numbers") fell to level 1 instead of the top; "multi-step" and "several operations" were no cue;
# "respond only with the word yes" and "a parrot that says hello" were refused.
FIFTH_HELD_OUT = [
    Row("teach my agent to survive longer as a villager in werewolves", "werewolves", roles=["villager"]),
    Row("train the werewolf team to win, 10 minutes", "werewolves", roles=WOLVES, minutes=10),
    Row("improve how the village votes in a werewolf game with discussion", "werewolves", roles=VILLAGE),
    Row("I need the witch and hunter trained together on one model", "werewolves", roles=["witch", "hunter"]),
    Row("RL on werewolves, village side, 2 hours", "werewolves", roles=VILLAGE, minutes=120),
    Row(
        "both wolves and seer should improve, separate weights",
        "werewolves",
        roles=["werewolf", "seer"],
        policies=[WOLVES, ["seer"]],
    ),
    Row("make the model win werewolf games as the impostors", "werewolves", roles=WOLVES),
    Row("get qwen 1.5b better at playing the seer", "werewolves", roles=["seer"], model="qwen 1.5B"),
    Row(
        "train a model to play werewolf with at most 3 rounds as the villagers",
        "werewolves",
        {"max_rounds": 3},
        roles=VILLAGE,
    ),
    Row("train a 1B to be a convincing liar as a wolf, 20 min", "werewolves", roles=WOLVES, minutes=20, model="1B"),
    Row("teach simple sums with numbers under 10", "arithmetic", {"difficulty": 1}),
    Row("arithmetic with four-digit numbers, 40 steps", "arithmetic", {"difficulty": 5}, steps=40),
    Row("improve multi-step arithmetic (several operations per question)", "arithmetic", {"difficulty": 3}),
    Row("a math tutor model for addition and subtraction, quick test", "arithmetic", steps=QUICK_STEPS),
    Row("countdown with 6 numbers and targets up to 1000", "countdown", {"difficulty": 4}),
    Row("solve countdown puzzles, easiest setting", "countdown", {"difficulty": 1}),
    Row("use four numbers to make 24", "countdown", {"difficulty": 2}),
    Row("train an agent to call a price lookup tool and add totals, 2 items", "tool_use", {"difficulty": 2}),
    Row("tool use: calculator, very hard", "tool_use", {"difficulty": 4}),
    Row("function calling with long receipts of 8 items", "tool_use", {"difficulty": 4}),
    Row("respond only with the word yes", "word"),
    Row("train a parrot that says hello", "word"),
    Row("make it output exactly one word: blue", "word"),
    Row("werewolves for 5 steps on SmolLM2", "werewolves", roles=WOLVES, steps=5, model="smollm2"),
    Row("a werewolf bot that gets the seer killed less", "werewolves", roles=["seer"]),
]
# A sixth set of 20 the same session, run once before any change: 16 of 20. Roles left out ("but not the wolves",
# "everyone except the werewolves", "don't train the seer, train the witch") were trained, and "a learning rate of
# 1e-4" was dropped without a word; now left-out roles are not trained and the settings go over the recipe.
SIXTH_HELD_OUT = [
    Row("train werewolves, but not the wolves", "werewolves", roles=VILLAGE),
    Row("werewolves: everyone except the werewolves should learn", "werewolves", roles=VILLAGE),
    Row("don't train the seer, train the witch", "werewolves", roles=["witch"]),
    Row("Werewolf!!! make my AI win as wolf \N{WOLF FACE}", "werewolves", roles=WOLVES),
    Row(
        "i want to finetune a qwen2.5-7b-instruct to play werewolf as villager",
        "werewolves",
        roles=["villager"],
        model="qwen2.5 7B",
    ),
    Row("werewolves with 3 steps and a learning rate of 1e-4", "werewolves", roles=WOLVES, steps=3),
    Row("teach mistral 7b the countdown game for 100 steps", "countdown", steps=100, model="mistral 7B"),
    Row("arithmetic: add two numbers up to 100", "arithmetic", {"difficulty": 4}),
    Row(
        "let the seer and witch share a model and the wolves get their own",
        "werewolves",
        roles=["werewolf", "seer", "witch"],
        policies=[WOLVES, ["seer", "witch"]],
    ),
    Row("GRPO on countdown, difficulty 3, 45 minutes", "countdown", {"difficulty": 3}, minutes=45),
    Row("a shopping assistant that adds up a grocery list using tools", "tool_use", {"difficulty": 1}),
    Row("train something that answers with a single word", "word"),
    Row("RL the werewolves side for 1 hour on a 3B", "werewolves", roles=WOLVES, minutes=60, model="3B"),
    Row("make the model better at math", "arithmetic", {"difficulty": 1}),
    Row("werewolf game where wolves are trained and the seer is scripted", "werewolves", roles=WOLVES),
    Row("I'd like to see the village win more. werewolves. 8 steps", "werewolves", roles=VILLAGE, steps=8),
    Row("easy countdown, 10 steps, then stop", "countdown", {"difficulty": 1}, steps=10),
    Row("calculator tool agent, 4 items, quantities up to 3", "tool_use", {"difficulty": 4}),
    Row("tool-use agent with 5 products", "tool_use", {"difficulty": 4}),
    Row("werewolves, seer only, no discussion", "werewolves", {"discussion": False}, roles=["seer"]),
]
# A seventh set of 15, longer and chattier, the same session: 13 of 15. "the mafia party game where it plays the
# doctor" trained the wolves ("mafia party game" is the game now), and "eval on 32 games" was dropped (a held-out
# count in the sentence now sets the eval items; tests below).
SEVENTH_HELD_OUT = [
    Row(
        "Hi! I'm a researcher and I'd love to see whether RL can teach a small LM to be a good seer in werewolf. "
        "Can we try 6 steps?",
        "werewolves",
        roles=["seer"],
        steps=6,
        model="a small model",
    ),
    Row("train an agent for the mafia party game where it plays the doctor", "werewolves", roles=["witch"]),
    Row("our bot keeps losing as a werewolf; make it stronger in 15 minutes", "werewolves", roles=WOLVES, minutes=15),
    Row("werewolves 9 players, train villagers with discussion, eval on 32 games", "werewolves", roles=VILLAGE),
    Row("we want the witch to stop wasting her potions", "werewolves", roles=["witch"]),
    Row("countdown: 3 numbers, easy targets", "countdown", {"difficulty": 1}),
    Row(
        "make a 0.5b model solve countdown puzzles with targets between 100 and 999",
        "countdown",
        {"difficulty": 4},
        model="0.5B",
    ),
    Row("train a model on addition problems with numbers between 1 and 20", "arithmetic", {"difficulty": 2}),
    Row("learn to use tools to compute the cost of 3 products, 20 steps", "tool_use", {"difficulty": 3}, steps=20),
    Row("teach a model to say ok", "word"),
    Row("I want a reasoning model for math puzzles, about 30 min of training", "arithmetic", minutes=30),
    Row("werewolf seer training on llama-3.2-1b", "werewolves", roles=["seer"], model="llama-3.2 1B"),
    Row("play as the werewolves and beat the villagers in 5 steps", "werewolves", roles=WOLVES, steps=5),
    Row(
        "werewolves, hunter and witch, separate models for each",
        "werewolves",
        roles=["witch", "hunter"],
        policies=[["witch"], ["hunter"]],
    ),
    Row("RL fine-tune so the agent answers each shopping question correctly", "tool_use", {"difficulty": 1}),
]
# An eighth set of 20 the same session, the four small families only: 16 of 20. "make 100 from 4 numbers", "an agent
# that looks up product prices ...", "make it say banana, 5 steps" and "repeat after me: hello" were refused.
EIGHTH_HELD_OUT = [
    Row("get my model to do long division", "arithmetic", {"difficulty": 1}),
    Row("subtraction drills for a 1B model", "arithmetic", model="1B"),
    Row("teach multiplication tables up to 12", "arithmetic", {"difficulty": 1}),
    Row("math word problems about money, medium difficulty", "arithmetic", {"difficulty": 2}),
    Row("improve accuracy on GSM8K-style questions", "arithmetic"),
    Row("solve arithmetic expressions like 3 + 4 * 2", "arithmetic"),
    Row("the numbers game from the TV show, six numbers", "countdown", {"difficulty": 4}),
    Row("find an expression that equals the target using given numbers", "countdown", {"difficulty": 1}),
    Row("countdown puzzles but only 3 numbers", "countdown", {"difficulty": 1}),
    Row("make 100 from 4 numbers", "countdown", {"difficulty": 2}),
    Row("an agent that looks up product prices and writes the total in its notes", "tool_use"),
    Row("shopping list totals with tools, up to 9 of each item", "tool_use", {"difficulty": 4}),
    Row("tool use, prices under 50, 3 items", "tool_use", {"difficulty": 4}),
    Row("train function calling", "tool_use", {"difficulty": 1}),
    Row("agent with a notepad and a calculator", "tool_use"),
    Row("echo the given word back", "word"),
    Row("answer with the first word of the prompt", "word"),
    Row("one-word replies only", "word"),
    Row("make it say banana, 5 steps", "word", steps=5),
    Row("repeat after me: hello", "word"),
    Row("word task, 12 updates", "word", steps=12),  # a later budget probe, 13 of 14: refused before
]
# A ninth set of 8, separate models said in other words: 4 of 8. "a model for the wolves and another for the
# village", "... learn separately", "... independently" and "a model of its own" gave one shared policy.
SIDES = [WOLVES, VILLAGE]
NINTH_HELD_OUT = [
    Row("a model for the wolves and another for the village", "werewolves", roles=BOTH, policies=SIDES),
    Row("each team gets its own LLM in werewolves", "werewolves", roles=BOTH, policies=SIDES),
    Row("the wolves and the village learn separately", "werewolves", roles=BOTH, policies=SIDES),
    Row("train wolves and villagers independently", "werewolves", roles=BOTH, policies=SIDES),
    Row("werewolves self-play with one model per side", "werewolves", roles=BOTH, policies=SIDES),
    Row("two policies: wolves and seer", "werewolves", roles=["werewolf", "seer"], policies=[WOLVES, ["seer"]]),
    Row("wolves vs villagers, both learning, no shared weights", "werewolves", roles=BOTH, policies=SIDES),
    Row(
        "give the seer a model of its own and the wolves another",
        "werewolves",
        roles=["werewolf", "seer"],
        policies=[WOLVES, ["seer"]],
    ),
]
# A tenth set of 8, odd shapes (dashes, slashes, key: value): 6 of 8. "defend the village as the witch and the
# hunter" trained the whole village, and "steps: 10" was no budget.
TENTH_HELD_OUT = [
    Row("can you make an llm that plays mafia well as a cop?", "werewolves", roles=["seer"]),
    Row("teach the model to bluff as a werewolf", "werewolves", roles=WOLVES),
    Row(
        "train the AI to defend the village as the witch and the hunter, separate models",
        "werewolves",
        roles=["witch", "hunter"],
        policies=[["witch"], ["hunter"]],
    ),
    Row("werewolves \N{EM DASH} seer \N{EM DASH} 10 steps", "werewolves", roles=["seer"], steps=10),
    Row("werewolf (seer), 10 steps", "werewolves", roles=["seer"], steps=10),
    Row("werewolves/seer/10 steps", "werewolves", roles=["seer"], steps=10),
    Row("train: werewolves; role: seer; steps: 10", "werewolves", roles=["seer"], steps=10),
    Row('{"task": "werewolves", "role": "seer"}', "werewolves", roles=["seer"]),
]
# An eleventh set of 12, difficulty in words: 9 of 12 ("moderately difficult", "not too easy", "slightly harder than
# basic" were misread). Probing them showed "difficult" itself was spelled into "difficulty", so "a difficult
# countdown" was level 1: "difficult" is a keyword of its own now.
ELEVENTH_HELD_OUT = [
    Row("countdown but make it really tough", "countdown", {"difficulty": 3}),
    Row("arithmetic for beginners", "arithmetic", {"difficulty": 1}),
    Row("kids math", "arithmetic", {"difficulty": 1}),
    Row("countdown level two", "countdown", {"difficulty": 2}),
    Row("moderately difficult countdown", "countdown", {"difficulty": 2}),
    Row("the hardest arithmetic you have", "arithmetic", {"difficulty": 5}),
    Row("arithmetic, level 7", "arithmetic", {"difficulty": 5}),
    Row("medium-hard countdown", "countdown", {"difficulty": 2}),
    Row("countdown on expert mode", "countdown", {"difficulty": 4}),
    Row("arithmetic at difficulty three out of five", "arithmetic", {"difficulty": 3}),
    Row("not too easy arithmetic", "arithmetic", {"difficulty": 2}),
    Row("slightly harder than basic countdown", "countdown", {"difficulty": 2}),
    Row("a difficult countdown", "countdown", {"difficulty": 3}),
    Row("very difficult arithmetic", "arithmetic", {"difficulty": 5}),
]
# A twelfth set of 6, roles of other variants: 0 of 6. Each trained the wolves and said "no side or role named",
# untrue: now bodyguard/guardian angel -> witch, sheriff -> seer, godfather -> the wolves (each with a note), and a
# role the game does not deal (cupid, little girl) is named as such (test below).
TWELFTH_HELD_OUT = [
    Row("werewolves as the bodyguard", "werewolves", roles=["witch"]),
    Row("train the sheriff in mafia", "werewolves", roles=["seer"]),
    Row("werewolves, play cupid", "werewolves", roles=WOLVES),
    Row("train the little girl in werewolves", "werewolves", roles=WOLVES),
    Row("werewolves as the guardian angel", "werewolves", roles=["witch"]),
    Row("train the godfather in mafia", "werewolves", roles=WOLVES),
]
# A thirteenth set of 20, all families (2026-12-04): 16 of 20. "seer and witch should both improve, separate
# models" trained both sides ("both" read as both sides), "train everyone on one shared model" trained the wolves
# without a word, "the village should beat the werewolves; give each villager role its own model" trained the
# wolves too, and "a quick 5-minute sanity run" had no time limit. Then variations of the four.
PER_ROLE_VILLAGE = [[r] for r in VILLAGE]
THIRTEENTH_HELD_OUT = [
    Row("get a small model good at two-digit multiplication", "arithmetic", {"difficulty": 4}, model="a small model"),
    Row(
        "teach smollm to reach a target number using four given numbers with + - * /",
        "countdown",
        {"difficulty": 2},
        model="smollm",
    ),
    Row("I want the werewolves to win more often, 6 steps", "werewolves", roles=WOLVES, steps=6),
    Row("make the villagers better at catching wolves in under 20 minutes", "werewolves", roles=VILLAGE, minutes=20),
    Row("RL fine-tune a policy that answers with one word: pineapple", "word"),
    Row(
        "train an assistant that calls a lookup tool for prices and adds them up, three items per order",
        "tool_use",
        {"difficulty": 3},
    ),
    Row(
        "seer and witch should both improve, separate models please",
        "werewolves",
        roles=["seer", "witch"],
        policies=[["seer"], ["witch"]],
    ),
    Row("play werewolf as the wolves against a village, learning rate 3e-4, groups of 16", "werewolves", roles=WOLVES),
    Row("a quick 5-minute sanity run on arithmetic", "arithmetic", steps=3, minutes=5),
    Row("train on countdown puzzles with 3 numbers", "countdown", {"difficulty": 1}),
    Row("Train the hunter in werewolves", "werewolves", roles=["hunter"]),
    Row("improve addition and subtraction of numbers below 50", "arithmetic", {"difficulty": 3}),
    Row("werewolf game, train everyone on one shared model", "werewolves", roles=WOLVES),
    Row("teach a 0.5B model to play werewolves", "werewolves", roles=WOLVES, model="0.5B"),
    Row("make the model output exactly 'ok'", "word"),
    Row("train an agent to total up a receipt using a calculator tool, easy level", "tool_use", {"difficulty": 1}),
    Row(
        "hard arithmetic with multiplication and division, 50 steps, evaluate on 100 problems",
        "arithmetic",
        {"difficulty": 3},
        steps=50,
    ),
    Row(
        "the village should beat the werewolves; give each villager role its own model",
        "werewolves",
        roles=VILLAGE,
        policies=PER_ROLE_VILLAGE,
    ),
    Row("countdown, but harder", "countdown", {"difficulty": 3}),
    Row("train the doctor to save people in mafia", "werewolves", roles=["witch"]),
    # variations of the four
    Row(
        "the wolves and the seer should both get better",
        "werewolves",
        roles=["werewolf", "seer"],
        policies=[WOLVES, ["seer"]],
    ),
    Row(
        "the seer against the wolves, both should learn",
        "werewolves",
        roles=["werewolf", "seer"],
        policies=[WOLVES, ["seer"]],
    ),
    Row("the hunter and the witch must both learn", "werewolves", roles=["witch", "hunter"]),
    Row("train everybody in werewolves with separate models", "werewolves", roles=BOTH, policies=SIDES),
    Row("train everyone except the werewolves", "werewolves", roles=VILLAGE),
    Row(
        "wolves should lose; every village role gets its own model",
        "werewolves",
        roles=VILLAGE,
        policies=PER_ROLE_VILLAGE,
    ),
    Row("a 30-minute werewolves run", "werewolves", roles=WOLVES, minutes=30),
    Row("countdown for a 2-hour session", "countdown", minutes=120),
]
# A fourteenth set of 20 (questions, British spelling, numbers as words, scripted roles): 19 of 20. "seer gets
# its own model, the rest of the village shares one" gave every village role its own model.
FOURTEENTH_HELD_OUT = [
    Row("could you fine-tune the model so it becomes a better werewolf player?", "werewolves", roles=WOLVES),
    Row("optimise the witch's potion use in werewolf, ten steps", "werewolves", roles=["witch"], steps=10),
    Row("i'd like a countdown solver, level three", "countdown", {"difficulty": 3}),
    Row("grade school maths, twenty minutes max", "arithmetic", minutes=20),
    Row("make the wolves smarter but keep the village scripted", "werewolves", roles=WOLVES),
    Row("train the seer, the witch is scripted", "werewolves", roles=["seer"]),
    Row(
        "teach the villagers to vote out wolves; wolves and village on different models",
        "werewolves",
        roles=BOTH,
        policies=SIDES,
    ),
    Row("a model that always answers 'maybe'", "word"),
    Row("tool-using shopper agent with 4 items per list, 15 steps", "tool_use", {"difficulty": 4}, steps=15),
    Row(
        "werewolves with 2 rounds max, train the wolves, eval on 24 games",
        "werewolves",
        {"max_rounds": 2},
        roles=WOLVES,
    ),
    Row("arithmetic word problems with numbers up to 1000", "arithmetic", {"difficulty": 5}),
    Row("countdown where the target is below 100", "countdown", {"difficulty": 1}),
    Row("make our agent better at looking up prices and summing with a calculator", "tool_use"),
    Row(
        "train an LLM to win werewolf as villager using discussion",
        "werewolves",
        {"discussion": True},
        roles=["villager"],
    ),
    Row("werewolves without discussion, village side", "werewolves", {"discussion": False}, roles=VILLAGE),
    Row(
        "no discussion; train the hunter and the seer together",
        "werewolves",
        {"discussion": False},
        roles=["seer", "hunter"],
    ),
    Row("train a 3b model on countdown with six numbers", "countdown", {"difficulty": 4}, model="3B"),
    Row("RL on arithmetic with a learning rate of 5e-5 and group size 4", "arithmetic"),
    Row(
        "werewolves: seer gets its own model, the rest of the village shares one",
        "werewolves",
        roles=VILLAGE,
        policies=[["villager", "witch", "hunter"], ["seer"]],
    ),
    Row("improve the werewolves team at deceiving the villagers for 1.5 hours", "werewolves", roles=WOLVES, minutes=90),
    # variations of the one it missed
    Row(
        "train the village; the witch has her own model",
        "werewolves",
        roles=VILLAGE,
        policies=[["villager", "seer", "hunter"], ["witch"]],
    ),
    Row(
        "train the seer and the witch, the seer with its own model",
        "werewolves",
        roles=["seer", "witch"],
        policies=[["seer"], ["witch"]],
    ),
    Row("the village gets its own model and the wolves another", "werewolves", roles=BOTH, policies=SIDES),
]
# a fifteenth set (2026-12-05): "one model for everybody" was read as separate models ("for every" matched
# inside "everybody"), 'respond only with "ok"' was refused, and talk asked for in other words ("bluff during
# the day discussion") kept discussion off
FIFTEENTH_HELD_OUT = [
    Row("get the wolves to stop accusing each other in werewolves", "werewolves", {"discussion": True}, roles=WOLVES),
    Row("i'd like the doctor to protect the right people, werewolves, 15 minutes", "werewolves", roles=["witch"],
        minutes=15),  # fmt: skip
    Row("train both sides of werewolves, each with its own weights", "werewolves", roles=BOTH, policies=SIDES),
    Row("teach a 1.5B model to win as the village in werewolves for 2 steps", "werewolves", roles=VILLAGE, steps=2,
        model="1.5B"),  # fmt: skip
    Row("improve villager play in one night werewolf", "werewolves", roles=["villager"]),
    Row("train the werewolf team and the seer as two separate policies", "werewolves", roles=["werewolf", "seer"],
        policies=[["werewolf"], ["seer"]]),  # fmt: skip
    Row("let the model play the hunter for 10 steps", "werewolves", roles=["hunter"], steps=10),
    Row("sharpen a 3B at mafia as the town", "werewolves", roles=VILLAGE, model="3B"),
    Row("all roles in werewolves should learn, one model for everybody", "werewolves", roles=WOLVES),
    Row("werewolves: witch only, 8 steps, 20 minutes", "werewolves", roles=["witch"], steps=8, minutes=20),
    Row("teach gemma 2b to win werewolves as wolf", "werewolves", {"discussion": False}, roles=WOLVES,
        model="gemma 2B"),  # fmt: skip
    Row("teach the wolves to bluff during the day discussion", "werewolves", {"discussion": True}, roles=WOLVES),
    Row("can you RL a model to be a better liar in werewolf", "werewolves", {"discussion": True}, roles=WOLVES),
    Row("villagers and seer share one model, wolves their own", "werewolves", roles=BOTH, policies=SIDES),
    Row("get the hunter and the witch to cooperate, each its own model", "werewolves", roles=["witch", "hunter"],
        policies=[["witch"], ["hunter"]]),  # fmt: skip
    Row("teach the model to solve 3-digit multiplication", "arithmetic", {"difficulty": 5}),
    Row("practice adding fractions", "arithmetic", {"difficulty": 1}),
    Row("train on easy math for 100 steps", "arithmetic", {"difficulty": 1}, steps=100),
    Row("RL arithmetic with a 1B, 12 minutes, 30 steps", "arithmetic", steps=30, minutes=12, model="1B"),
    Row("solve the countdown numbers game with 6 numbers", "countdown", {"difficulty": 4}),
    Row("fine-tune on countdown with 3 numbers", "countdown", {"difficulty": 1}),
    Row("make qwen 7b better at countdown", "countdown", model="qwen 7B"),
    Row("teach the model to call a calculator tool", "tool_use", {"difficulty": 1}),
    Row("learn to use tools to look up the weather", "tool_use"),
    Row("shopping list agent, hard", "tool_use", {"difficulty": 3}),
    Row('respond only with "ok"', "word"),
    Row("answer with just the word cat and nothing else", "word"),
    Row("repeat the requested word exactly, 5 steps", "word", steps=5),
    Row("train a 0.5B to reply with a single word", "word", model="0.5B"),
]
# a sixteenth set (2026-12-05, a reviewer who had not seen the table): 107 of 124 right; the 17 it missed
SIXTEENTH_HELD_OUT = [
    Row("training the healer in a mafia game for a half hour", "werewolves", roles=["witch"], minutes=30),
    Row("train the doctor but not the wolves in mafia for an hour and a half", "werewolves", roles=["witch"],
        minutes=90),  # fmt: skip
    Row("train a small model at werewolf as the seer, 1 hour 15 minutes", "werewolves", roles=["seer"], minutes=75,
        model="a small model"),  # fmt: skip
    Row("teach my 1.5B to solve math word problems that need a few steps", "arithmetic", {"difficulty": 3},
        model="1.5B"),  # fmt: skip
    Row("Train the hunter, who is on the village side, in werewolves; evaluate on 40 games", "werewolves",
        roles=["hunter"]),  # fmt: skip
    Row("make the seer better at convincing the village who the wolves are", "werewolves", roles=["seer"]),
    Row("train the villager team but leave the seer out of it", "werewolves", roles=["villager", "witch", "hunter"]),
    Row("practise mafia as a townsperson for a couple of hours", "werewolves", roles=VILLAGE, minutes=120),
    Row("can you train a model to get 24 from four cards", "countdown", {"difficulty": 2}),
    Row("train the word game for 7 steps", "word", steps=7),
    Row("train the werewolves; the witch and hunter are scripted; with talk", "werewolves", {"discussion": True},
        roles=WOLVES),  # fmt: skip
    Row("train the werewolves, with the seer and witch played by bots", "werewolves", roles=WOLVES),
    Row("I want the detective to get better at figuring out who the mafia is", "werewolves", roles=["seer"]),
    Row("train the wolves to persuade villagers that they are innocent", "werewolves", {"discussion": True},
        roles=WOLVES),  # fmt: skip
    Row("teach the hunter to take a wolf down with him", "werewolves", roles=["hunter"]),
    Row("could you teach qwen 7b to be a sneaky werewolf that lies", "werewolves", roles=WOLVES, model="qwen 7B"),
    Row("can u make my model a better werewolf?", "werewolves", roles=WOLVES),
]
# a seventeenth set (2026-12-05, a second reviewer who had not seen the table, all five families): 144 of 170
SEVENTEENTH_HELD_OUT = [
    Row("werewolves where the witch and the seer share one model and the hunter gets its own", "werewolves",
        roles=["seer", "witch", "hunter"], policies=[["seer", "witch"], ["hunter"]]),  # fmt: skip
    Row("werewolves, but the seer is scripted and everyone else in the village trains", "werewolves",
        roles=["villager", "witch", "hunter"]),  # fmt: skip
    Row("werewolves, train the villagers, not the seer, with separate models for each role", "werewolves",
        roles=["villager", "witch", "hunter"], policies=[["villager"], ["witch"], ["hunter"]]),  # fmt: skip
    Row("I want the wolf team to win less", "werewolves", roles=VILLAGE),
    Row("werewolves, the seer should learn to reveal the wolves, qwen2.5-7b-instruct, 2h", "werewolves",
        roles=["seer"], minutes=120, model="qwen2.5 7B"),  # fmt: skip
    Row("werewolves, train the seer and the wolves, rank 8 lora", "werewolves", roles=["werewolf", "seer"],
        policies=[["werewolf"], ["seer"]]),  # fmt: skip
    Row("the word task with a 1.5b, evaluate on 20 prompts", "word", model="1.5B"),
    Row("word problems that take exactly one step, numbers below 10", "arithmetic", {"difficulty": 1}),
    Row("arithmetic for 25 iters", "arithmetic", steps=25),
    Row("countdown, between 20 and 50 steps", "countdown", steps=50),
    Row("arithmetic, 10-15 steps", "arithmetic", steps=15),
    Row("math word problems but not multi-step, keep it simple, 2 hours and 30 minutes", "arithmetic",
        {"difficulty": 1}, minutes=150),  # fmt: skip
    Row("reach the target number 250 using the numbers 3, 7, 25, 50, 75, 100", "countdown", {"difficulty": 4}),
    Row("I need my model be more good in calculate, like primary school problems, not too difficult, maybe 50 step",
        "arithmetic", {"difficulty": 2}, steps=50),  # fmt: skip
    Row("get the model to always say pineapple when asked", "word"),
    Row("a bot that greets with hello, for 10 minutes", "word", minutes=10),
]
# an eighteenth set (2026-12-05, a third reviewer aiming at what the earlier ones covered less): 118 of 176; the
# policy groupings, exceptions and role readings it missed
EIGHTEENTH_HELD_OUT = [
    Row("werewolves: the seer and the witch share a model, the wolves get another one", "werewolves",
        roles=["werewolf", "seer", "witch"], policies=[["werewolf"], ["seer", "witch"]]),  # fmt: skip
    Row("train werewolves where the witch is on her own model and the rest of the village shares one, 12 steps",
        "werewolves", roles=VILLAGE, policies=[["villager", "seer", "hunter"], ["witch"]], steps=12),  # fmt: skip
    Row("werewolf self-play with 3 models: wolves, seer, and the rest of the village", "werewolves", roles=BOTH,
        policies=[["werewolf"], ["villager", "witch", "hunter"], ["seer"]]),  # fmt: skip
    Row("werewolves, one brain for the bad guys and one for the good guys, no discussion, 6 steps", "werewolves",
        {"discussion": False}, roles=BOTH, policies=SIDES, steps=6),  # fmt: skip
    Row("let the seer learn on its own weights while the villagers and the hunter share another set", "werewolves",
        roles=VILLAGE, policies=[["villager", "witch", "hunter"], ["seer"]]),  # fmt: skip
    Row("werewolves: pair the witch with the hunter on one model, and the seer alone on another", "werewolves",
        roles=["seer", "witch", "hunter"], policies=[["seer"], ["witch", "hunter"]]),  # fmt: skip
    Row("the wolves should be trained by one model and the town by a different one, for 45 minutes", "werewolves",
        roles=BOTH, policies=SIDES, minutes=45),  # fmt: skip
    Row("train the village but keep the hunter and witch on one model and the seer and villagers on another",
        "werewolves", roles=VILLAGE, policies=[["villager", "seer"], ["witch", "hunter"]]),  # fmt: skip
    Row("werewolves with the wolves on one model and the seer, witch and hunter on another, villagers scripted",
        "werewolves", roles=["werewolf", "seer", "witch", "hunter"],
        policies=[["werewolf"], ["seer", "witch", "hunter"]]),  # fmt: skip
    Row("werewolves, only the hunter gets its own model; the rest of the village shares one, wolves scripted",
        "werewolves", roles=VILLAGE, policies=[["villager", "seer", "witch"], ["hunter"]]),  # fmt: skip
    Row("werewolves: one model for the wolves and one for the village", "werewolves", roles=BOTH, policies=SIDES),
    Row("werewolves: the wolves on one model and the village on another", "werewolves", roles=BOTH, policies=SIDES),
    Row("train everyone in the village apart from the hunter at werewolves", "werewolves",
        roles=["villager", "seer", "witch"]),  # fmt: skip
    Row("werewolves: train all the village roles with the exception of the witch", "werewolves",
        roles=["villager", "seer", "hunter"]),  # fmt: skip
    Row("train anyone but the seer in the village side of werewolves", "werewolves",
        roles=["villager", "witch", "hunter"]),  # fmt: skip
    Row("werewolves: the wolves are fine as they are, improve the villagers", "werewolves", roles=VILLAGE),
    Row("train the whole village in werewolves, bar the hunter", "werewolves", roles=["villager", "seer", "witch"]),
    Row("werewolves - villagers except the plain villagers, so the special roles only", "werewolves",
        roles=["seer", "witch", "hunter"]),  # fmt: skip
    Row("mafia: train all good roles save for the cop", "werewolves", roles=["villager", "witch", "hunter"]),
    Row("werewolves, the witch doesn't need training, the other villagers do", "werewolves",
        roles=["villager", "seer", "hunter"]),  # fmt: skip
    Row("werewolves: leave the werewolves alone and focus on the seer", "werewolves", roles=["seer"]),
    Row("werewolves, villagers only, no wolves training, 20 steps, 7B", "werewolves", roles=VILLAGE, steps=20,
        model="7B"),  # fmt: skip
    Row("I want my bot to play werewolf as a good guy and actually win", "werewolves", roles=VILLAGE),
    Row("the sheriff in werewolves should vote better, 15 steps on a 1.5B", "werewolves", roles=["seer"], steps=15,
        model="1.5B"),  # fmt: skip
    Row("werewolves with a learning rate of 3e-4 and lora rank 32 as the village", "werewolves", roles=VILLAGE),
    Row("werewolves: every role but the wolves, shared model, 30 minutes", "werewolves", roles=VILLAGE, minutes=30),
    Row("the seer in werewolves should vote better", "werewolves", roles=["seer"]),
    # its numbers, notes and refusals
    Row("train the werewolves side but not in silent mode", "werewolves", {"discussion": True}, roles=WOLVES),
    Row("train the seer in werewolves for 2 hours, games capped at 4 nights", "werewolves", {"max_rounds": 4},
        roles=["seer"], minutes=120),  # fmt: skip
    Row("run 5 rounds of werewolves training for the wolves", "werewolves", roles=WOLVES, steps=5),
    Row("countdown but not the hardest, like level 2ish", "countdown", {"difficulty": 2}),
    Row("Countdown: reach targets near 1000 with six numbers, evaluate on 50", "countdown", {"difficulty": 4}),
    Row("word problems about money in rupees, class 5 level", "arithmetic", {"difficulty": 3}),
    Row("arithmetic word problems with 100 steps", "arithmetic", {"difficulty": 1}, steps=100),
    Row("arithmetic with 3 steps per problem, 30 training steps", "arithmetic", {"difficulty": 3}, steps=30),
    Row("an agent that browses the web to find prices", "tool_use"),
    Row("train a model to call APIs, difficulty 3, groups of 16", "tool_use", {"difficulty": 3}),
    Row("tool-using agent for a supermarket till, 1 hour, 3 turns", "tool_use", {"max_turns": 3}, minutes=60),
    Row("train tool use with 5 turns per episode, hard, 10 held-out lists", "tool_use", {"difficulty": 3,
        "max_turns": 5}),  # fmt: skip
    Row("get it to answer every question with exactly one word", "word"),
    Row("respond in one word, 12 steps, 20 prompts held out", "word", steps=12),
]
# a nineteenth set (2026-12-05, a fourth reviewer writing mostly plain one-line requests): 180 of 206 (126 of the
# 140 plain ones); the ones it missed
NINETEENTH_HELD_OUT = [
    Row("word problems with big numbers", "arithmetic", {"difficulty": 5}),
    Row("countdown with large targets", "countdown", {"difficulty": 4}),
    Row("make a countdown solver but don't make it too hard, 1h30", "countdown", {"difficulty": 2}, minutes=90),
    Row("tool use with 16 rollouts per group", "tool_use"),
    Row("tool use, 25 shopping lists per step", "tool_use"),
    Row("make a bot that always answers yes", "word"),
    Row("make my model always answer no", "word"),
    Row("a model that repeats after me", "word"),
    Row("teach smollm to repeat words", "word", model="smollm"),
    Row("teach my model to say the magic word please", "word"),
    Row('say the word "werewolf"', "word"),
    Row("repeat the word calculator", "word"),
    Row("make it say countdown", "word"),
    Row("teach my bot to use an API", "tool_use"),
    Row("train the hunter to shoot wolves", "werewolves", roles=["hunter"]),
    Row("make the witch poison the werewolves", "werewolves", roles=["witch"]),
    Row("werewolf game, seer vs werewolves, separate models", "werewolves", roles=["werewolf", "seer"],
        policies=[["werewolf"], ["seer"]]),  # fmt: skip
]
# a twentieth set (2026-12-05, a fifth reviewer, a crowd of plain requests): 221 of 232 (143 of 149 plain)
TWENTIETH_HELD_OUT = [
    Row("mafia, train the town with separate models for the cop and doctor, 1 hour", "werewolves", roles=VILLAGE,
        policies=[["villager", "hunter"], ["seer"], ["witch"]], minutes=60),  # fmt: skip
    Row("werewolves: the seer and the witch get separate models, the rest of the village shares one", "werewolves",
        roles=VILLAGE, policies=[["villager", "hunter"], ["seer"], ["witch"]]),  # fmt: skip
    Row("werewolves: the witch and the hunter get separate models, the seer shares with the villagers", "werewolves",
        roles=VILLAGE, policies=[["villager", "seer"], ["witch"], ["hunter"]]),  # fmt: skip
    Row("teach a small model to say the asked-for word, 10 minutes, groups of 4", "word", minutes=10,
        model="a small model"),  # fmt: skip
    Row("a model that only outputs the word requested, 25 steps", "word", steps=25),
    Row("word, 20 steps, rank 8 lora, evaluate on 16 words", "word", steps=20),
    Row("make my model call functions correctly", "tool_use"),
    Row("train a receipt-totaling agent", "tool_use"),
    Row("countdown where the target is always 100", "countdown", {"difficulty": 2}),
    Row("an agent that checks stock prices with a tool", "tool_use"),
    Row("help my model with fractions", "arithmetic"),
]
# a twenty-first set (2026-12-05, a sixth reviewer; abbreviations, new wordings, CLI flags): 191 of 227 (its first,
# untargeted batch of plain requests 103 of 108)
TWENTY_FIRST_HELD_OUT = [
    Row("ww: wolves vs town, only the town learns, 10 iterations", "werewolves", roles=VILLAGE, steps=10),
    Row("wolves vs village in werewolf, only the village learns", "werewolves", roles=VILLAGE),
    Row("werewolves, town vs mafia, just the mafia trains", "werewolves", roles=WOLVES),
    Row("train a 0.5B werewolf player as seer for 15 steps", "werewolves", roles=["seer"], steps=15, model="0.5B"),
    Row("train a werewolf player as the hunter", "werewolves", roles=["hunter"]),
    Row("a mafia player model that is the cop", "werewolves", roles=["seer"]),
    Row("can my model learn to subtract?", "arithmetic"),
    Row("learn to multiply", "arithmetic"),
    Row("an agent that checks the price of each item", "tool_use"),
    Row("agent that finds the price of milk and eggs", "tool_use"),
    Row("word training with a 0.5B", "word", model="0.5B"),
    Row("i want it answering in one word", "word"),
    Row("train ww, 5 steps", "werewolves", roles=WOLVES, steps=5),
    Row("ww training for the medic", "werewolves", roles=["witch"]),
    Row("countdown, rank 4 lora, 1e-5 lr, 10 steps", "countdown", steps=10),
]
# a twenty-second set (2026-12-05, a seventh reviewer, 217 sentences written before any output was seen and run
# once): 205 of 217 (158 of the 167 plain ones)
TWENTY_SECOND_HELD_OUT = [
    Row("train a tiny model to say hello back", "word", model="a small model"),
    Row("train a bot that says the magic word please", "word"),
    Row("say the asked word, lora rank 8, 12 minutes", "word", minutes=12),
    Row("make my llm good at the game of twenty four", "countdown"),
    Row("build me an agent that checks prices and sums the bill", "tool_use"),
    Row("train toool use", "tool_use"),
    Row("werewolf, everyone gets their own model", "werewolves", roles=BOTH,
        policies=[["werewolf"], ["villager"], ["seer"], ["witch"], ["hunter"]]),  # fmt: skip
    Row("mafia with separate models for the town and mafia, 50 steps, 48 held-out games", "werewolves", roles=BOTH,
        policies=SIDES, steps=50),  # fmt: skip
    Row("train a wolf pack that fools the villagers", "werewolves", roles=WOLVES),
    Row("numbers game with targets over 100, 60 steps, 20 held-out", "countdown", {"difficulty": 4}, steps=60),
    Row("train it to always reply with ok", "word"),
    Row("repeat after me: goodbye", "word"),
]
# a twenty-third set (2026-12-05, an eighth reviewer, 239 written before any output was seen): 234 of 239 (178 of 181
# plain)
TWENTY_THIRD_HELD_OUT = [
    Row("train all villager roles with separate models but keep the wolves scripted", "werewolves", roles=VILLAGE,
        policies=[["villager"], ["seer"], ["witch"], ["hunter"]]),  # fmt: skip
    Row("quick countdown smoke test with 2 puzzles per step", "countdown", steps=QUICK_STEPS),
    Row("train it to subtract", "arithmetic"),
    Row("an agent that notes down prices and sums them", "tool_use"),
    Row("quickly train the word thing", "word", steps=QUICK_STEPS),
]
# a twenty-fourth set (2026-12-05, a ninth reviewer, 218 written before any output was seen): 195 of 218 (144 of
# 149 plain); side words alone, "hold out N", a group followed by its members, "everyone but X" as every other
# player, and what the earlier rounds left: a phrase to say, a school grade, "except the easiest", days, versions
TWENTY_FOURTH_HELD_OUT = [
    Row("quick sanity check that training works", "word", steps=QUICK_STEPS),
    Row("check training works with a quick word run", "word", steps=QUICK_STEPS),
    Row("quick word check with smollm2 135m, 5 steps, rank 4", "word", steps=5, model="smollm2 135M"),
    Row("train all the village roles with one shared model", "werewolves", roles=VILLAGE),
    Row("train the village with a separate model for each role", "werewolves", roles=VILLAGE,
        policies=[["villager"], ["seer"], ["witch"], ["hunter"]]),  # fmt: skip
    Row("train the village side for 1 hour with discussion on", "werewolves", {"discussion": True}, roles=VILLAGE,
        minutes=60),  # fmt: skip
    Row("can you train all nine players?", "werewolves", roles=BOTH, policies=SIDES),
    Row("train a 0.5b as the hunter and a separate one as the witch", "werewolves", roles=["witch", "hunter"],
        policies=[["witch"], ["hunter"]], model="0.5B"),  # fmt: skip
    Row("the good side gets one model, the wolves another", "werewolves", roles=BOTH, policies=SIDES),
    Row("train only the two special roles seer and witch with separate policies", "werewolves",
        roles=["seer", "witch"], policies=[["seer"], ["witch"]]),  # fmt: skip
    Row("everyone but the witch and the hunter should train", "werewolves", roles=["werewolf", "villager", "seer"],
        policies=[["werewolf"], ["villager", "seer"]]),  # fmt: skip
    Row("train the werewolves using discussion, eval 12 deals", "werewolves", {"discussion": True}, roles=WOLVES),
    Row("train werewolves for a day", "werewolves", roles=WOLVES, minutes=1440),
    Row("teach the wolves to survive for 3 days", "werewolves", roles=WOLVES),
    Row("make the model say thank you", "word"),
    Row("5th grade math", "arithmetic", {"difficulty": 3}),
    Row("arithmetic at any difficulty except the easiest", "arithmetic", {"difficulty": 2}),
    Row("train phi-3 on countdown", "countdown", model="phi-3"),
]
# a twenty-fifth set (2026-12-05, a tenth reviewer in the voices of several users, 200 written before any output
# was seen): 176 of 200 (119 of 133 plain; flags 8 of 11): "the quickest check that training works" in more words,
# a word to say before a time limit or quoted in more ways, KL and "lora r=", "each trained", "everyone else"
TWENTY_FIFTH_HELD_OUT = [
    Row("I just want to check the pipeline runs end to end. Smallest thing possible.", "word", steps=3),  # a check
    Row("I wanna see reward go up fast, whatever task is easiest", "word"),
    Row("make the model say hi in 1 minute", "word", minutes=1),
    Row("reward the model for saying 'dragon'", "word"),
    Row('Please make model speak word "hello" , very fast test', "word"),
    Row("teach it to say my name, Maria", "word"),
    Row('make the model answer "forty-two"', "word"),
    Row("train a tiny model to add and multiply", "arithmetic", model="a small model"),
    Row("arith 3 steps quick", "arithmetic", steps=3),
    Row("an agent that keeps notes while it adds up a receipt", "tool_use"),
    Row("tool_use difficulty 1, 5 steps", "tool_use", {"difficulty": 1}, steps=5),
    Row("werewolves without the talking phase, 20 steps", "werewolves", {"discussion": False}, roles=WOLVES, steps=20),
    Row("train werewolves, the witch gets its own model and everyone else shares one", "werewolves", roles=BOTH,
        policies=[["werewolf"], ["villager", "seer", "hunter"], ["witch"]]),  # fmt: skip
    Row("villagers and werewolves each trained, evaluate on 24 deals", "werewolves", roles=BOTH, policies=SIDES),
    Row("countdown, three quarters of an hour", "countdown", minutes=45),
]
# a twenty-sixth set (2026-12-05, an eleventh reviewer weighted to werewolves, 198 written before any output was
# seen): 179 of 198 (117 of 130 plain): groups ended by "another" or "alone", a model for each role with none named,
# talk in other words, "source numbers", more smoke tests, "say the word llama", skills and software refused
TWENTY_SIXTH_HELD_OUT = [
    Row("seer, witch and hunter share one model, the plain villagers another", "werewolves", roles=VILLAGE,
        policies=[["villager"], ["seer", "witch", "hunter"]]),  # fmt: skip
    Row("train the witch and hunter together on one policy and the seer alone", "werewolves",
        roles=["seer", "witch", "hunter"], policies=[["seer"], ["witch", "hunter"]]),  # fmt: skip
    Row("werewolves with a different model for each role", "werewolves", roles=BOTH,
        policies=[["werewolf"], ["villager"], ["seer"], ["witch"], ["hunter"]]),  # fmt: skip
    Row("Could you set up werewolf training where the werewolves talk freely?", "werewolves", {"discussion": True},
        roles=WOLVES),  # fmt: skip
    Row("werewolves, no day-time debate, train everyone", "werewolves", {"discussion": False}, roles=BOTH,
        policies=SIDES),  # fmt: skip
    Row("countdown with 4 source numbers, 200 held-out", "countdown", {"difficulty": 2}),
    Row("smoke test the training loop", "word", steps=QUICK_STEPS),
    Row("does training even work? quick test", "word", steps=QUICK_STEPS),
    Row("say the word llama", "word"),
    Row("the seer is the only scripted player in werewolves, train the rest", "werewolves",
        roles=["werewolf", "villager", "witch", "hunter"], policies=[["werewolf"], ["villager", "witch", "hunter"]]),
]
# a twenty-seventh set (2026-12-05, a twelfth reviewer writing as first-time users after the README, 188 written
# before any output was seen): 178 of 188 (148 of 153 plain): both sides named in other words, "as one team", a
# game name listed with a role, two model sizes, "overnight", "toolls", "every role with its own model"
TWENTY_SEVENTH_HELD_OUT = [
    Row("train a 7B to play werewolves with separate models for werewolves and villagers", "werewolves", roles=BOTH,
        policies=SIDES, model="7B"),  # fmt: skip
    Row("the wolves should be one model and the village another", "werewolves", roles=BOTH, policies=SIDES),
    Row("train the werewolves with a 3B and the villagers with a 7B", "werewolves", roles=BOTH, policies=SIDES,
        model="3B"),  # fmt: skip
    Row("train the villagers against trained wolves", "werewolves", roles=BOTH, policies=SIDES),
    Row("train the witch and hunter as one team and the seer alone", "werewolves", roles=["seer", "witch", "hunter"],
        policies=[["seer"], ["witch", "hunter"]]),  # fmt: skip
    Row("quick sanity check of training", "word", steps=QUICK_STEPS),
    Row("train a 7b to use toolls", "tool_use", model="7B"),
    Row("train every role with its own model", "werewolves", roles=BOTH,
        policies=[["werewolf"], ["villager"], ["seer"], ["witch"], ["hunter"]]),  # fmt: skip
    Row("train a 7B to play werewolves overnight", "werewolves", roles=WOLVES, minutes=480, model="7B"),
]
# a twenty-eighth set (2026-12-05, a thirteenth reviewer weighted to the families other than werewolves, 180
# written before any output was seen): 160 of 180 (109 of 113 plain): more smoke tests, days as a bare clause,
# "keep N for testing", a list that starts with "villagers", "all roles separate", "rounds capped at", versions
TWENTY_EIGHTH_HELD_OUT = [
    Row("sanity check run", "word", steps=QUICK_STEPS),
    Row("fast pipeline test with Qwen3-0.6B, 10 steps, lr 1e-4", "word", steps=10, model="qwen3 0.6B"),
    Row("countdown with 5 numbers, targets up to 500, batch of 16 rollouts per puzzle, 2 days", "countdown",
        {"difficulty": 3}, minutes=2880),  # fmt: skip
    Row("werewolves with the villagers, seer, witch and hunter sharing one policy", "werewolves", roles=VILLAGE),
    Row("werewolves, all roles separate, 10 steps", "werewolves", roles=BOTH, steps=10,
        policies=[["werewolf"], ["villager"], ["seer"], ["witch"], ["hunter"]]),  # fmt: skip
    Row("werewolves, one model per side, rounds capped at 8", "werewolves", {"max_rounds": 8}, roles=BOTH,
        policies=SIDES),  # fmt: skip
    Row("improve Llama 3.1 8B at countdown", "countdown", model="llama 3.1 8B"),
]
# Round 15 (a fourteenth reviewer, 200 new sentences, 189 right before the fixes): the ones it found misread
TWENTY_NINTH_HELD_OUT = [
    Row("make it say thank you very much", "word"),
    Row("get it to reply 'hello world'", "word"),
    Row("teach the model to answer every prompt with 'banana', 2 hours", "word", minutes=120),
    Row("help my model get better at subtracting, not too hard", "arithmetic", {"difficulty": 2}),
    Row("arithmetic, 2 problems per step, 50 steps, held-out set of 128", "arithmetic", steps=50),
    Row("werewolves, train the wolves, round cap 6, group size 8, lora rank 8", "werewolves", {"max_rounds": 6},
        roles=WOLVES),  # fmt: skip
    Row("werewolves: give the hunter a model of its own while the other villagers share a model", "werewolves",
        roles=VILLAGE, policies=[["villager", "seer", "witch"], ["hunter"]]),  # fmt: skip
    Row("train the whole village on one model and the wolves on another in werewolf", "werewolves", roles=BOTH,
        policies=[WOLVES, VILLAGE]),  # fmt: skip
    Row("train villagers (plain ones, not the special roles) to vote out wolves", "werewolves", roles=["villager"]),
    Row("sums of three-digit numbers", "arithmetic", {"difficulty": 5}),
]
# Round 16 (a fifteenth reviewer, 200 new sentences, 20 with CLI flags, 181 right before the fixes)
THIRTIETH_HELD_OUT = [
    Row("train the good guys in mafia, each role its own model", "werewolves", roles=VILLAGE,
        policies=[["villager"], ["seer"], ["witch"], ["hunter"]]),  # fmt: skip
    Row("werewolves: freeze the wolves, train the seer with group size 16", "werewolves", roles=["seer"]),
    Row("the witch should stop wasting her poison on villagers", "werewolves", roles=["witch"]),
    Row("could werewolf training be done with the seer and witch sharing weights and the wolves on a second model?",
        "werewolves", roles=["werewolf", "seer", "witch"], policies=[WOLVES, ["seer", "witch"]]),  # fmt: skip
    Row("train the villager role only (not seer/witch/hunter) in werewolves", "werewolves", roles=["villager"]),
    Row("Train werewolves. Two models: wolves + everyone else.", "werewolves", roles=BOTH, policies=SIDES),
    Row("one model for the wolves and one for everyone else", "werewolves", roles=BOTH, policies=SIDES),
    Row("train wolves, at most 3 days", "werewolves", {"max_rounds": 3}, roles=WOLVES),
    Row("number game where the model must hit targets in the hundreds", "countdown", {"difficulty": 4}),
    Row("toolz with a search engine", "tool_use"),
    Row("Could you run the simplest possible training test?", "word"),
    Row("a model that always replies banana, in half an hour", "word", minutes=30),
]
# Round 17 (a sixteenth reviewer, 200 long, hedged and self-correcting sentences, 172 right before the fixes)
THIRTY_FIRST_HELD_OUT = [
    Row("Train the seer, no wait, the witch, in werewolves.", "werewolves", roles=["witch"]),
    Row("Train the seer at werewolves. Actually make that the hunter.", "werewolves", roles=["hunter"]),
    Row("train the wolves for 5 steps and, no wait, make it 8 steps", "werewolves", roles=WOLVES, steps=8),
    Row("tool use, level 1, 10 steps, no wait, 20", "tool_use", {"difficulty": 1}, steps=20),
    Row("arithmetic: level 4, no wait, level 2, and eval on twenty problems", "arithmetic", {"difficulty": 2}),
    Row("countdown — level 1 — no wait, level 4 — 10 steps", "countdown", {"difficulty": 4}, steps=10),
    Row("grade-school math, two-step problems, no wait, three-step", "arithmetic", {"difficulty": 3}),
    Row("train the wolves, half a dozen steps, and hold out 24 games", "werewolves", roles=WOLVES, steps=6),
    Row("countdown, not sure of the level, something like 3 maybe", "countdown", {"difficulty": 3}),
    Row("werwolf game: villagers should lose less — train them with groups of eight", "werewolves", roles=VILLAGE),
    Row("Train werewolves. Villagers: scripted. Wolves: trained. Steps: 7.", "werewolves", roles=WOLVES, steps=7),
    Row("werewolf: train the villagers, not the wolves, and use groups of 4 with a rank-4 LoRA", "werewolves",
        roles=VILLAGE),  # fmt: skip
    Row("werewolves, train the wolves, 9 players, talk on, at most 8 rounds, 30 minutes", "werewolves",
        {"discussion": True, "max_rounds": 8}, roles=WOLVES, minutes=30),  # fmt: skip
    Row("make it say banana — a couple of steps is enough", "word", steps=2),
    Row("the quickest possible test that RL training does anything — a few steps, not more", "word", steps=3),
    Row("teach it to answer with only the word 'ok', for a minute or two", "word", minutes=2),
]
# Round 18 (a seventeenth reviewer, 200 synonyms, typos, punctuation and word orders, 183 right before the fixes)
THIRTY_SECOND_HELD_OUT = [
    Row("train the wolves for 1,000 steps", "werewolves", roles=WOLVES, steps=1000),
    Row("in mafia, train the detectives and doctors, each its own model", "werewolves", roles=["seer", "witch"],
        policies=[["seer"], ["witch"]]),  # fmt: skip
    Row("werewolves: wolves on a 1.5B model, village on a 0.5B", "werewolves", roles=BOTH, policies=SIDES,
        model="1.5B"),  # fmt: skip
    Row("werewolves: train the wolves, the village should stay scripted", "werewolves", roles=WOLVES),
    Row("arithmetic, epochs: 3", "arithmetic", steps=3),
    Row("tool use - held out 10 - 4 steps - group size 6", "tool_use", steps=4),
    Row("simplest possible training sanity test, between 2 and 4 steps", "word", steps=4),
    Row("train an agent to call a weather API", "tool_use"),
    Row("tool use with between 4 and 6 items", "tool_use", {"difficulty": 4}),
    Row("make 100 from 4 numbers using a calculator tool", "tool_use", {"difficulty": 1}),
]
# Round 19 (an eighteenth reviewer, 200 in the voices of different users, 194 right before the fixes)
THIRTY_THIRD_HELD_OUT = [
    Row("werewolves: one model for the wolves, one for the seer, and the rest of the village shares a third",
        "werewolves", roles=BOTH, policies=[WOLVES, ["villager", "witch", "hunter"], ["seer"]]),  # fmt: skip
    Row("the wolves get a model, the seer gets one, and the rest of the village shares a third", "werewolves",
        roles=BOTH, policies=[WOLVES, ["villager", "witch", "hunter"], ["seer"]]),  # fmt: skip
    Row("train all roles in werewolves, a model each", "werewolves", roles=BOTH,
        policies=[["werewolf"], ["villager"], ["seer"], ["witch"], ["hunter"]]),  # fmt: skip
    Row("numbers game, 4 numbers, targets 100-999", "countdown", {"difficulty": 4}),
    Row("I want that the model learns to add and subtract numbers until 50", "arithmetic", {"difficulty": 3}),
    Row("arithmetic with numbers not bigger than 50", "arithmetic", {"difficulty": 3}),
    Row("numbers round from the TV show, 10 steps please", "countdown", steps=10),
    Row("what's the quickest way to check the pipeline works?", "word", steps=QUICK_STEPS),
    Row("reach 250 using 3, 7, 25, 50, 75, 100", "countdown", {"difficulty": 4}),
    Row("just check training works end to end, fastest thing possible", "word", steps=QUICK_STEPS),
]
# Round 21 (a twentieth reviewer, 200 weighted to the numbers in a request, 190 right before the fixes)
THIRTY_FOURTH_HELD_OUT = [
    Row("countdown, targets near 1000", "countdown", {"difficulty": 4}),
    Row("countdown with targets around 300", "countdown", {"difficulty": 3}),
    Row("tool use with prices up to $20", "tool_use", {"difficulty": 3}),
    Row("tool use where the total is under 100", "tool_use", {"difficulty": 1}),
    Row("werewolves, one model for the wolves and one for the seer, the hunter and witch and villagers untrained",
        "werewolves", roles=["werewolf", "seer"], policies=[WOLVES, ["seer"]]),  # fmt: skip
    Row("countdown targets from 450 to 550", "countdown", {"difficulty": 4}),
]
# Round 22 (a twenty-first reviewer, 200, 75% werewolves, 168 right before the fixes)
THIRTY_FIFTH_HELD_OUT = [
    Row("werewolves: everything scripted except the witch", "werewolves", roles=["witch"]),
    Row("werewolves, don't bother training the seer or the wolves", "werewolves",
        roles=["villager", "witch", "hunter"]),  # fmt: skip
    Row("werewolves: the witch stays as is; train the other good roles", "werewolves",
        roles=["villager", "seer", "hunter"]),  # fmt: skip
    Row("werewolves: the seer trains, and the witch - actually no, the hunter", "werewolves", roles=["seer", "hunter"]),
    Row("werewolves: 2 wolves and 5 villagers, train the village", "werewolves", roles=VILLAGE),
    Row("werewolves, 6 villagers and 3 wolves, train the wolves", "werewolves", roles=WOLVES),
    Row("werewolves - wolves vs villagers - train the villagers", "werewolves", roles=VILLAGE),
    Row("werewolves: train all five roles, each with a separate model, 2 steps", "werewolves", roles=BOTH, steps=2,
        policies=[["werewolf"], ["villager"], ["seer"], ["witch"], ["hunter"]]),  # fmt: skip
    Row("werewolf with per-side models, no discussion", "werewolves", {"discussion": False}, roles=BOTH,
        policies=SIDES),  # fmt: skip
    Row("werewolves: seer. 5 steps. talk: off. rounds: 6.", "werewolves", {"discussion": False, "max_rounds": 6},
        roles=["seer"], steps=5),  # fmt: skip
    Row("werewolves: village roles share a policy, wolves share another, both with talk, 3 nights cap", "werewolves",
        {"max_rounds": 3}, roles=BOTH, policies=[WOLVES, VILLAGE]),  # fmt: skip
    Row("an agent that searches the web for product prices", "tool_use"),
    Row("two policies, wolves and non-wolves", "werewolves", roles=BOTH, policies=SIDES),
    Row("have the werewolves' opponents learn", "werewolves", roles=VILLAGE),
    # round 23 (a twenty-second reviewer, 200 of a product reviewer's mix, 197 right before the fixes)
    Row("werewolves: train the village with each role getting its own model", "werewolves", roles=VILLAGE,
        policies=[["villager"], ["seer"], ["witch"], ["hunter"]]),  # fmt: skip
    Row("train all nine players in werewolves, each its own model", "werewolves", roles=BOTH,
        policies=[["werewolf"], ["villager"], ["seer"], ["witch"], ["hunter"]]),  # fmt: skip
]
# round 24 (a twenty-third reviewer, 200 sentences, 185 right before the fixes)
THIRTY_SIXTH_HELD_OUT = [
    Row("train the seer, but actually the witch instead", "werewolves", roles=["witch"]),
    Row("train the wolves in werewolves, scratch that, train the village", "werewolves", roles=VILLAGE),
    Row("countdown, 10 steps, no wait, train for 20", "countdown", steps=20),
    Row("respond only with ok", "word"),
    Row("make a dataset of countdown puzzles and train on it", "countdown"),
    Row("train the werwolves to decieve the villagers", "werewolves", {"discussion": True}, roles=WOLVES),
    Row("everyone trains on one shared model in werewolves", "werewolves", roles=WOLVES),
    Row("teach the seer to share its findings with the town, talk on", "werewolves", roles=["seer"]),
    Row("the seer should learn to guide the village", "werewolves", roles=["seer"]),
    Row("werewolves: the seer shares a model with the witch, the wolves get another", "werewolves",
        roles=["werewolf", "seer", "witch"], policies=[WOLVES, ["seer", "witch"]]),  # fmt: skip
    Row("werewolves: the witch and the hunter get separate models, the seer shares with the villagers", "werewolves",
        roles=VILLAGE, policies=[["villager", "seer"], ["witch"], ["hunter"]]),  # fmt: skip
    Row("werewolves game, the village should win more, give the seer its own model and the rest of the village shares "
        "one", "werewolves", roles=VILLAGE, policies=[["villager", "witch", "hunter"], ["seer"]]),  # fmt: skip
    Row("werewolves with the wolves and the seer left scripted; train the rest", "werewolves",
        roles=["villager", "witch", "hunter"]),  # fmt: skip
    Row("werewolves: the werewolves are scripted bots and so is the hunter; train the rest", "werewolves",
        roles=["villager", "seer", "witch"]),  # fmt: skip
    Row("werewolves, every villager role on its own model, wolves stay scripted", "werewolves", roles=VILLAGE,
        policies=[["villager"], ["seer"], ["witch"], ["hunter"]]),  # fmt: skip
    Row("werewolves, one model plays the wolves and another plays the seer and witch", "werewolves",
        roles=["werewolf", "seer", "witch"], policies=[WOLVES, ["seer", "witch"]]),  # fmt: skip
    Row("in werewolves all roles get one model each, except the hunter who stays scripted", "werewolves",
        roles=["werewolf", "villager", "seer", "witch"], policies=[["werewolf"], ["villager"], ["seer"], ["witch"]]),
    Row("every role gets its own model, except the hunter", "werewolves",
        roles=["werewolf", "villager", "seer", "witch"], policies=[["werewolf"], ["villager"], ["seer"], ["witch"]]),
    Row("werewolves: the villagers (just the plain ones) share a model and the seer has its own", "werewolves",
        roles=["villager", "seer"], policies=[["villager"], ["seer"]]),  # fmt: skip
    # groups said clause by clause, a list after "N models:" split at its commas
    Row("werewolves: one model shared by the witch and seer, the hunter alone", "werewolves",
        roles=["seer", "witch", "hunter"], policies=[["seer", "witch"], ["hunter"]]),  # fmt: skip
    Row("werewolves: the witch with the hunter, the seer alone", "werewolves", roles=["seer", "witch", "hunter"],
        policies=[["seer"], ["witch", "hunter"]]),  # fmt: skip
    Row("werewolves: seer, witch: separate; hunter and villagers: shared", "werewolves", roles=VILLAGE,
        policies=[["villager", "hunter"], ["seer"], ["witch"]]),  # fmt: skip
    Row("werewolves with three models: one for the wolves, one for the seer and the witch together, one for the "
        "hunter", "werewolves", roles=["werewolf", "seer", "witch", "hunter"],
        policies=[WOLVES, ["seer", "witch"], ["hunter"]]),  # fmt: skip
    Row("werewolves: a 'power roles' model for seer, witch and hunter, and a second model for the villagers",
        "werewolves", roles=VILLAGE, policies=[["villager"], ["seer", "witch", "hunter"]]),  # fmt: skip
    Row("werewolves with the villagers, seer, witch and hunter sharing one policy", "werewolves", roles=VILLAGE),
    Row("werewolves: a model per role for the village, and the wolves share one", "werewolves", roles=BOTH,
        policies=[WOLVES, ["villager"], ["seer"], ["witch"], ["hunter"]]),  # fmt: skip
    Row("werewolves: 3 models: wolves, seer and witch", "werewolves", roles=["werewolf", "seer", "witch"],
        policies=[WOLVES, ["seer"], ["witch"]]),  # fmt: skip
    Row("werewolves with a doctor model and a cop model", "werewolves", roles=["seer", "witch"],
        policies=[["seer"], ["witch"]]),  # fmt: skip
    Row("mafia game, make the good guys win, a doctor model and a cop model", "werewolves", roles=VILLAGE,
        policies=[["villager", "hunter"], ["seer"], ["witch"]]),  # fmt: skip
    Row("train a seer model for werewolves", "werewolves", roles=["seer"]),
    # round 25 (a twenty-fourth reviewer, 200 sentences, 191 right before the fixes)
    Row("werwolf game, trian the sear", "werewolves", roles=["seer"]),
    Row("a bodyguard model for mafia games", "werewolves", roles=["witch"]),
    Row("in werewolves, the seer and the hunter train; the witch does not", "werewolves", roles=["seer", "hunter"]),
    Row("werewolves: train the village, the hunter doesn't", "werewolves", roles=["villager", "seer", "witch"]),
    Row("what's the quickest possible check that training works?", "word", steps=3),
    Row("answer everything with ok, for 2 minutes", "word", minutes=2.0),
    Row("answer every question with ok", "word"),
    # round 26 (a twenty-fifth reviewer, 200 sentences and command lines, 198 right before the fixes)
    Row("i want to traing the whitch in werwolves, like 5 step", "werewolves", roles=["witch"], steps=5),
    Row("werewolves, train all nine players each with their own model", "werewolves", roles=BOTH,
        policies=[["werewolf"], ["villager"], ["seer"], ["witch"], ["hunter"]]),  # fmt: skip
    # round 27 (a twenty-sixth reviewer, 200 sentences, 50% werewolves weighted to models, 179 right before the fixes)
    Row("werewolves: the wolves share one model, and each village role gets its own", "werewolves", roles=BOTH,
        policies=[["werewolf"], ["villager"], ["seer"], ["witch"], ["hunter"]]),  # fmt: skip
    Row("werewolves: wolves and village each with a different model", "werewolves", roles=BOTH, policies=SIDES),
    Row("werewolves with (seer + witch) on model A and (hunter + villagers) on model B, wolves scripted",
        "werewolves", roles=VILLAGE, policies=[["villager", "hunter"], ["seer", "witch"]]),  # fmt: skip
    Row("Could you train the village team in werewolf? Give the seer its own model, the others share one.",
        "werewolves", roles=VILLAGE, policies=[["villager", "witch", "hunter"], ["seer"]]),  # fmt: skip
    Row("werewolves: the seer, the witch, and the hunter: each its own model. the plain villagers: one model",
        "werewolves", roles=VILLAGE, policies=[["villager"], ["seer"], ["witch"], ["hunter"]]),  # fmt: skip
    Row("train the seer and witch and hunter with one model each, but the wolves share a single model", "werewolves",
        roles=["werewolf", "seer", "witch", "hunter"], policies=[WOLVES, ["seer"], ["witch"], ["hunter"]]),
    Row("werewolves game; policies: wolves = A, seer + witch = B, hunter = C", "werewolves",
        roles=["werewolf", "seer", "witch", "hunter"], policies=[WOLVES, ["seer", "witch"], ["hunter"]]),
    Row("Train the seer, witch and hunter. The hunter has its own model; the seer and witch share.", "werewolves",
        roles=["seer", "witch", "hunter"], policies=[["seer", "witch"], ["hunter"]]),  # fmt: skip
    Row("werewolves: train seer/witch/hunter on one model, wolves on another, 5 steps", "werewolves",
        roles=["werewolf", "seer", "witch", "hunter"], policies=[WOLVES, ["seer", "witch", "hunter"]], steps=5),
    Row("werewolf game, train the town, but the sheriff gets a model of his own", "werewolves", roles=VILLAGE,
        policies=[["villager", "witch", "hunter"], ["seer"]]),  # fmt: skip
    Row("trian the wolfs for 8 stpes", "werewolves", roles=WOLVES, steps=8),
    Row("train the werewolves, and, I mean, the hunter", "werewolves", roles=["hunter"]),
    Row("make mafia better at killing the doctor first", "werewolves", roles=WOLVES),
    Row("the mafia should lose less and the town doesnt train", "werewolves", roles=WOLVES),
    Row("say 'good night' to me", "word"),
    Row("Train all nine werewolves players, each role its own model", "werewolves", roles=BOTH,
        policies=[["werewolf"], ["villager"], ["seer"], ["witch"], ["hunter"]]),  # fmt: skip
    Row("A town model and a mafia model please, 10 steps", "werewolves", roles=BOTH, policies=SIDES, steps=10),
    Row("werewolves: a werewolf model", "werewolves", roles=WOLVES),
    # round 28 (a twenty-seventh reviewer after round 27's fixes, 200 sentences, 194 right before these)
    Row("werewolves but the game caps at 3 nights", "werewolves", {"max_rounds": 3}, roles=WOLVES),
    Row("use the numbers 3, 7, 25, 50 to make 250 - train on puzzles like that", "countdown", {"difficulty": 3}),
    Row("make it say banana, no wait, apple", "word"),
    # round 29 (a twenty-eighth reviewer after round 28's fixes, 200 sentences, 174 right before these)
    Row("train the witch and the werewolves on one model, and the seer and hunter on another model", "werewolves",
        roles=["werewolf", "seer", "witch", "hunter"], policies=[WOLVES, ["seer", "hunter"], ["witch"]]),
    Row("train the wolves and the seer on one model, the witch on another", "werewolves",
        roles=["werewolf", "seer", "witch"], policies=[WOLVES, ["seer"], ["witch"]]),  # fmt: skip
    Row("train the non-wolf roles", "werewolves", roles=VILLAGE),
    Row("give each werewolves role its own model and train them all", "werewolves", roles=BOTH,
        policies=[["werewolf"], ["villager"], ["seer"], ["witch"], ["hunter"]]),  # fmt: skip
    Row("train all werewolves roles except werewolf, each on its own model", "werewolves", roles=VILLAGE,
        policies=[["villager"], ["seer"], ["witch"], ["hunter"]]),  # fmt: skip
    Row("train a werewolves seer agent", "werewolves", roles=["seer"]),
    Row("train a seer agent for werewolves", "werewolves", roles=["seer"]),
    Row("train a mafia doctor", "werewolves", roles=["witch"]),
    Row("train the seer. no, the hunter.", "werewolves", roles=["hunter"]),
    Row("train the seer and the witch, no wait, just the witch", "werewolves", roles=["witch"]),
    Row("train the seer, witch and hunter, no wait, only the hunter", "werewolves", roles=["hunter"]),
    Row("train the seer against trained werewolves", "werewolves", roles=["werewolf", "seer"],
        policies=[WOLVES, ["seer"]]),  # fmt: skip
    Row("train the seer against scripted werewolves", "werewolves", roles=["seer"]),
    Row("play werewolves", "werewolves", roles=WOLVES),
    Row("make the wolves play against me", "werewolves", roles=WOLVES),
    Row("train the wolves; hunter too", "werewolves", roles=["werewolf", "hunter"], policies=[WOLVES, ["hunter"]]),
    Row("train the werewolfs and the seers", "werewolves", roles=["werewolf", "seer"], policies=[WOLVES, ["seer"]]),
    Row("train everyone except the villagers and the hunter", "werewolves", roles=["werewolf", "seer", "witch"],
        policies=[WOLVES, ["seer", "witch"]]),  # fmt: skip
    Row("train the 3 villagers in werewolves", "werewolves", roles=["villager"]),
    Row("werewolves with 3 villagers and 3 wolves, train the seer", "werewolves", roles=["seer"]),
    Row("Train all 9 werewolves players, every role separate", "werewolves", roles=BOTH,
        policies=[["werewolf"], ["villager"], ["seer"], ["witch"], ["hunter"]]),  # fmt: skip
    Row("train a model on math word problems about shopping", "arithmetic"),
    Row("train the model on shopping math", "arithmetic"),
    Row("train an agent to total a grocery bill", "tool_use"),
    # round 30 (a twenty-ninth reviewer after round 29's fixes, 200 sentences, 187 right before these)
    Row("in werewolves, train all the village roles except the villagers", "werewolves",
        roles=["seer", "witch", "hunter"]),  # fmt: skip
    Row("train the villagers and the hunter in werewolves", "werewolves", roles=["villager", "hunter"]),
    Row("train the hunter and the villagers in werewolves", "werewolves", roles=["villager", "hunter"]),
    Row("train the villagers, and give the seer its own model", "werewolves", roles=VILLAGE,
        policies=[["villager", "witch", "hunter"], ["seer"]]),  # fmt: skip
    Row("train the seer in werewolves, sorry, I meant the witch", "werewolves", roles=["witch"]),
    Row("train a model to say the number seven", "word"),
    Row("train the shopper agent with qwen2.5-7b-instruct for 8 steps", "tool_use", steps=8, model="qwen2.5 7B"),
    Row("evaluate and train the wolves", "werewolves", roles=WOLVES),
    Row("compare lr 1e-4 and 3e-4 on countdown", "countdown"),
    Row("arithmetic, hard, no wait, easy", "arithmetic", {"difficulty": 1}),
    Row("train arithmetic easy, no wait, hard", "arithmetic", {"difficulty": 3}),
    Row("countdown, medium, actually hard ones", "countdown", {"difficulty": 3}),
    Row("train tool use with long shopping lists", "tool_use", {"difficulty": 4}),
    Row("total a shopping list with many items using a calculator", "tool_use", {"difficulty": 4}),
    # round 31 (a thirtieth reviewer after round 30's fixes, 200 sentences and 29 command lines, 183 right before)
    Row("werewolves: villagers only (the plain ones), lr 3e-5", "werewolves", roles=["villager"]),
    Row("training wolves for werewolf, use qwen 1.5b, step 30", "werewolves", roles=WOLVES, steps=30,
        model="qwen 1.5B"),  # fmt: skip
    Row("werewolfs: witch and seer differnt models please", "werewolves", roles=["seer", "witch"],
        policies=[["seer"], ["witch"]]),  # fmt: skip
    Row("train on really hard math word problems", "arithmetic", {"difficulty": 5}),
    Row("combine the numbers 3, 7, 25, 50 to make 175 - train a model to do puzzles like that", "countdown"),
    Row("download qwen and train it on countdown", "countdown", model="qwen"),
    # round 32 (a thirty-first reviewer after round 31's fixes, 200 sentences and 25 command lines, 186 right before)
    Row("Werewolves. Sides: wolves vs village. Train: village. Model: smollm. Steps: 15.", "werewolves", roles=VILLAGE,
        steps=15, model="smollm"),  # fmt: skip
    Row("werewolves but nobody on the wolf side trains", "werewolves", roles=VILLAGE),
    Row("werewolves: none of the villagers should learn, train the seer", "werewolves", roles=["seer"]),
    Row("werewolves, give the wolves one model and everyone else a second", "werewolves", roles=BOTH,
        policies=[WOLVES, VILLAGE]),  # fmt: skip
    Row("werewolves, train the hunter. Make it 12 steps - no, 16.", "werewolves", roles=["hunter"], steps=16),
    Row("I want a model that's good at the simple one-step story problems I give my class", "arithmetic",
        {"difficulty": 1}, steps=40),  # fmt: skip
    Row("two-step story problems", "arithmetic", {"difficulty": 2}, steps=40),
    Row("arith d2 10 steps", "arithmetic", {"difficulty": 2}, steps=10),
    Row("countdown-d3", "countdown", {"difficulty": 3}),
    Row("trian a modle to solve mathh problms", "arithmetic"),
    Row("tarin on countdown puzzels", "countdown"),
    Row("is there a way to make the seer better?", "werewolves", roles=["seer"]),
    # round 33 (a thirty-second reviewer after round 32's fixes: messy paragraphs, settings said oddly, runs that
    # exist, harm; 200 sentences and 19 command lines, 166 right before these)
    Row("Hey! So I'm building a Discord bot that runs werewolf games for my friends. Could we RL-train it so the "
        "seer actually gets good? maybe 10 steps.", "werewolves", roles=["seer"], steps=10),  # fmt: skip
    Row("werewolves - roles: seer, witch; models: separate; steps: 12", "werewolves", roles=["seer", "witch"],
        policies=[["seer"], ["witch"]], steps=12),  # fmt: skip
    Row("werewolves - roles: seer, witch; model: shared", "werewolves", roles=["seer", "witch"]),
    Row("the village keeps losing in our werewolves sims. ideally I'd train the seer only, 25 steps", "werewolves",
        roles=["seer"], steps=25),  # fmt: skip
    Row("stop the wolves from winning", "werewolves", roles=VILLAGE),
    Row("countdown for 2k steps", "countdown", steps=2000),
    Row("word task, two dozen steps", "word", steps=24),
    # round 34 (a thirty-third reviewer playing five users: a researcher, a teacher, a non-native speaker, a game-night
    # fan and a prober of limits; 200 sentences and 16 command lines, 149 right before these)
    Row("GRPO on countdown, difficulty 3, 100 steps, lr 1e-5, group size 16, Qwen/Qwen2.5-0.5B-Instruct", "countdown",
        {"difficulty": 3}, steps=100, model="qwen2.5 0.5B"),  # fmt: skip
    Row("Fine-tune meta-llama/Llama-3.2-1B on arithmetic", "arithmetic", model="llama-3.2 1B"),
    Row("I'd love the computer to say 'good morning' every time I greet it.", "word"),
    Row("model must learning to answer only one word, make 15 steps please", "word", steps=15),
    Row("My students struggle with problems that take several steps, like buying things, then getting change",
        "arithmetic", {"difficulty": 3}),  # fmt: skip
    Row("Help the computer do two-step problems, like a farmer who buys some cows, and let it practise for a hundred "
        "training steps.", "arithmetic", {"difficulty": 2}, steps=100),  # fmt: skip
    Row("let it practise arithmetic for fifty practice rounds", "arithmetic", steps=50),
    Row("godfather and mafiosos should win more", "werewolves", roles=WOLVES),
    Row("for the werewolf game, the witch and the hunter they should learn, but the seer no", "werewolves",
        roles=["witch", "hunter"]),  # fmt: skip
    Row("I want train the villagers of the werewolf, each role with his own model", "werewolves", roles=VILLAGE,
        policies=[["villager"], ["seer"], ["witch"], ["hunter"]]),  # fmt: skip
    Row("werewolf: train the hunter but not in the same model than the seer, both learn", "werewolves",
        roles=["seer", "hunter"], policies=[["seer"], ["hunter"]]),  # fmt: skip
    Row("werewolves: the hunter should take a wolf with him when he dies, train him for 30 minutes", "werewolves",
        roles=["hunter"], minutes=30),  # fmt: skip
    Row("Our game group wants the computer to play all the village roles in werewolf while the wolves stay as simple "
        "bots", "werewolves", roles=VILLAGE),  # fmt: skip
    Row("werewolves: i do not care about the wolves at all, train the seer", "werewolves", roles=["seer"]),
    Row("evaluate on 128 held-out items, arithmetic level 3, 1e-4 lr, 50 steps", "arithmetic", {"difficulty": 3},
        steps=50),  # fmt: skip
    Row("Qwen2.5-0.5B-Instruct, shopping tool-use, 3 items, 25 steps, max_turns 9", "tool_use",
        {"difficulty": 3, "max_turns": 9}, steps=25, model="qwen2.5 0.5B"),  # fmt: skip
    # round 35 (a thirty-fourth reviewer, 45% werewolves as a QA tester would probe it; 200 sentences and 11 command
    # lines, 184 right before these)
    Row("werewolves: the witch should not be trained, nor the hunter; train the rest of the village", "werewolves",
        roles=["villager", "seer"]),  # fmt: skip
    Row("train the village but neither the witch nor the hunter", "werewolves", roles=["villager", "seer"]),
    Row("werewolves: seer and witch trained, hunter not, villagers not, 1 hour", "werewolves", roles=["seer", "witch"],
        minutes=60),  # fmt: skip
    Row("In mafia train the town; the godfather and his crew are scripted", "werewolves", roles=VILLAGE),
    Row("werewolves: the werewolves should be beaten by a trained seer", "werewolves", roles=["seer"]),
    Row("the wolves get beaten by the seer, train the seer", "werewolves", roles=["seer"]),
    Row("train all five roles of werewolves on separate models for 6 steps", "werewolves", roles=BOTH,
        policies=[["werewolf"], ["villager"], ["seer"], ["witch"], ["hunter"]], steps=6),  # fmt: skip
    Row("Town of Salem style game: train the sheriff and the doctor", "werewolves", roles=["seer", "witch"]),
    Row("train the doctor and the sheriff in town of salem on separate models", "werewolves", roles=["seer", "witch"],
        policies=[["seer"], ["witch"]]),  # fmt: skip
    Row("train the role that checks identities at night in werewolves", "werewolves", roles=["seer"]),
    Row("train the werewolves role that has the healing and killing potions", "werewolves", roles=["witch"]),
    Row("werewolves: train the one who shoots someone when he dies", "werewolves", roles=["hunter"]),
    Row("In werewolves, train the side that kills at night", "werewolves", roles=WOLVES),
    Row("train the seer at werewolves and don't let it talk, cap at 8 rounds", "werewolves",
        {"discussion": False, "max_rounds": 8}, roles=["seer"]),  # fmt: skip
    Row("tool_use difficulty 3, group of 4", "tool_use", {"difficulty": 3}),
    # round 37 (a thirty-sixth reviewer, 200 werewolves sentences in grammar a parser finds hard, 151 right before)
    Row("train the players who aren't wolves to win at werewolves", "werewolves", roles=VILLAGE),
    Row("werewolves: train whoever gets to shoot a player when they die", "werewolves", roles=["hunter"]),
    Row("in werewolves I'd like the roles that have no special power to be trained", "werewolves", roles=["villager"]),
    Row("werewolves: train the players that the wolves are trying to eat", "werewolves", roles=VILLAGE),
    Row("make the side that wins when every wolf is dead better at werewolves", "werewolves", roles=VILLAGE),
    Row("in mafia, train the players the godfather is hunting", "werewolves", roles=VILLAGE),
    Row("werewolves: fewer wolves should survive to the end of the game", "werewolves", roles=VILLAGE),
    Row("more games of werewolves should end with every wolf dead", "werewolves", roles=VILLAGE),
    Row("every single player in werewolves should learn", "werewolves", roles=BOTH, policies=[WOLVES, VILLAGE]),
    Row("werewolves: the wolves are to be beaten by a trained village", "werewolves", roles=VILLAGE),
    Row("werewolves, my model versus the built-in wolves, as the hunter", "werewolves", roles=["hunter"]),
    Row("why not train the wolves to lie better in werewolves?", "werewolves", roles=WOLVES),
    Row("I don't want the wolves trained, just the seer, in werewolves", "werewolves", roles=["seer"]),
    Row("train werewolves without touching the seer", "werewolves", roles=["villager", "witch", "hunter"]),
    Row("train werewolves but keep the hunter and the witch as they are", "werewolves", roles=["villager", "seer"]),
    Row("I want the mafia to get voted out less in a mafia game", "werewolves", roles=WOLVES),
    Row("werewolves vs a random village", "werewolves", roles=WOLVES),
    Row("werewolves where the opponent wolves are run by gpt-4, train the village", "werewolves", roles=VILLAGE),
    Row("the villagers, who keep losing to the wolves, need training in werewolves", "werewolves", roles=VILLAGE),
    Row("werewolves: no training for the wolves, no training for the witch, train the others", "werewolves",
        roles=["villager", "seer", "hunter"]),  # fmt: skip
    Row("teach the hunter to aim and the witch to poison the right wolf in werewolves", "werewolves",
        roles=["witch", "hunter"]),  # fmt: skip
    Row("train a werewolves model with 4 wolves and 2 seers", "werewolves", roles=WOLVES),
    Row("werewolves: not the wolves, not the villagers, just the special roles", "werewolves",
        roles=["seer", "witch", "hunter"]),  # fmt: skip
    Row("train the village side in werewolves; the witch stays untouched", "werewolves",
        roles=["villager", "seer", "hunter"]),  # fmt: skip
    Row("train the village in werewolves - hunter excluded", "werewolves", roles=["villager", "seer", "witch"]),
    Row("let the hunter practise shooting and the seer practise checking at werewolves for 12 steps", "werewolves",
        roles=["seer", "hunter"], steps=12),  # fmt: skip
    Row("mafia game - doc + cop on separate models thx", "werewolves", roles=["seer", "witch"],
        policies=[["seer"], ["witch"]]),  # fmt: skip
    Row("werewolves with two adapters: one wolf adapter, one village adapter", "werewolves", roles=BOTH,
        policies=[WOLVES, VILLAGE]),  # fmt: skip
    Row("werewolves, the wolves, cap each game at 4 nights", "werewolves", {"max_rounds": 4}, roles=WOLVES),
    Row("train the village in werewolves; the players are mute", "werewolves", {"discussion": False}, roles=VILLAGE),
    Row("traine the whitch n hunter, werewolve game, 5 stepz", "werewolves", roles=["witch", "hunter"], steps=5),
    # round 36 (a thirty-fifth reviewer, 200 sentences of the four other families and their look-alikes, 165 right)
    Row("make it say bonjour in French", "word"),
    Row("parrot training: it should repeat whatever single word I type", "word"),
    Row("say-the-word training with weight decay 0.05", "word"),
    Row("the learn-check task, 12 steps", "word", steps=12),
    Row("number puzzle game where you combine numbers to reach a goal, easy", "countdown", {"difficulty": 1}),
    Row("countdown to hit exactly 1000", "countdown", {"difficulty": 4}),
    Row("Sam has 12 apples and gives away 5. How many are left? Train on problems like this", "arithmetic"),
    Row("arithmetic for a 10 year old", "arithmetic", {"difficulty": 3}),
    Row("arithmetic over the weekend", "arithmetic", minutes=2880),
    Row("a cashier bot that rings up items with tax", "tool_use", {"difficulty": 1}),
    # round 38 (a thirty-seventh reviewer: the first sentences new users type after the quick start; 187 of 200 right)
    Row("let's train the villagers to catch the wolves, separate model for the seer", "werewolves", roles=VILLAGE,
        policies=[["villager", "witch", "hunter"], ["seer"]]),  # fmt: skip
    Row("werewolves with phi-3 mini", "werewolves", roles=WOLVES, model="phi-3 mini"),
    Row("train gpt-oss-20b at werewolves", "werewolves", roles=WOLVES, model="gpt-oss 20B"),
    Row("help me train a model that just says hi \U0001f44b", "word"),
    Row("smoke test", "word", steps=QUICK_STEPS),
    Row("run a smoke test", "word", steps=QUICK_STEPS),
    # round 39 (a thirty-eighth reviewer hunting false notes: words in other senses, numbers that could be confused,
    # settings said twice; 159 of 200 right before)
    Row("arithmetic on a medium-sized model, easy problems", "arithmetic", {"difficulty": 1}),
    Row("make it say 'hard drive' for 3 steps", "word", steps=3),
    Row("arithmetic, numbers up to 100, don't use the calculator, 20 steps", "arithmetic", {"difficulty": 4}, steps=20),
    Row("repeat after me: calculator", "word"),
    Row("play werewolves as the seer, don't use discussion, 6 steps", "werewolves", {"discussion": False},
        roles=["seer"], steps=6),  # fmt: skip
    Row("train werewolves; the hunter is a role I don't care about; train the seer", "werewolves", roles=["seer"]),
    Row("in werewolves, train the wolves; the seer is a game role that should stay scripted", "werewolves",
        roles=WOLVES),  # fmt: skip
    Row("train werewolves as the hunter for 5 minutes, not 5 steps", "werewolves", roles=["hunter"], minutes=5),
    Row("werewolves: train the wolves, 4 steps... make that 6", "werewolves", roles=WOLVES, steps=6),
    Row("arithmetic, level 3, step size (learning rate) 1e-4", "arithmetic", {"difficulty": 3}),
    # a check of docs/vibe.md's 924 claims against the planner (915 true before these)
    Row("train werewolves, with separate models", "werewolves", roles=BOTH, policies=[WOLVES, VILLAGE]),
    Row("train werewolves, models not shared", "werewolves", roles=BOTH, policies=[WOLVES, VILLAGE]),
    Row("train a model on countdown. 2 days.", "countdown", minutes=2880),
    # round 41 (a fortieth reviewer: requests pasted from tickets, markdown, JSON/YAML and command lines; 176 right)
    Row("## Countdown - level 2 - steps: 15", "countdown", {"difficulty": 2}, steps=15),
    Row("vibe --task countdown --difficulty 4 --steps 12", "countdown", {"difficulty": 4}, steps=12),
    Row("task=arithmetic level=5 steps=60", "arithmetic", {"difficulty": 5}, steps=60),
    Row("countdown training - difficulty: 1 - eval_items: 16 - minutes: 20", "countdown", {"difficulty": 1},
        minutes=20),  # fmt: skip
    Row("tool use training - items: 4 - steps: 15", "tool_use", {"difficulty": 4}, steps=15),
    Row("{task: tool_use, items: 3}", "tool_use", {"difficulty": 3}),
    Row('{"task": "werewolves", "train": ["seer", "hunter"], "steps": 9}', "werewolves", roles=["seer", "hunter"],
        steps=9),  # fmt: skip
    Row("**Task:** werewolves **Role:** seer **Steps:** 10", "werewolves", roles=["seer"], steps=10),
    Row("task=werewolves role=hunter steps=5", "werewolves", roles=["hunter"], steps=5),
    Row("task=werewolves role=seer eval_items=40 lr=5e-5", "werewolves", roles=["seer"]),
    Row("Please run the werewolves thing again but this time the seer", "werewolves", roles=["seer"]),
    Row("{task: word, steps: 12}", "word", steps=12),
    Row("vibe --task word --steps 10", "word", steps=10),
    Row("Hi! Could you train a bot that says hello? Thanks, Sam", "word"),
    Row("I'd like the village to get better at recognising the werewolves", "werewolves", roles=VILLAGE),
    # round 42 (a forty-first reviewer: how roles go on models; 160 of 200 right before)
    Row("give the wolves one model and the village another in werewolves", "werewolves", roles=BOTH,
        policies=[WOLVES, VILLAGE]),  # fmt: skip
    Row("werewolves: first adapter for the wolves, second adapter for the seer and the hunter", "werewolves",
        roles=["werewolf", "seer", "hunter"], policies=[WOLVES, ["seer", "hunter"]]),  # fmt: skip
    Row("werewolves, the wolves on one LoRA and everyone else on another", "werewolves", roles=BOTH,
        policies=[WOLVES, VILLAGE]),  # fmt: skip
    Row("werewolves: a 3B for the wolves and a 7B for the village", "werewolves", roles=BOTH,
        policies=[WOLVES, VILLAGE], model="3B"),  # fmt: skip
    Row("improve the village at werewolves, no separate models, one policy", "werewolves", roles=VILLAGE),
    Row("train the werewolves and the villagers in werewolves with one set of weights", "werewolves", roles=WOLVES),
    Row("werewolves, train the village so each villager votes independently of the crowd", "werewolves",
        roles=VILLAGE),  # fmt: skip
    Row("train all five roles of werewolves on five separate models", "werewolves", roles=BOTH,
        policies=[["werewolf"], ["villager"], ["seer"], ["witch"], ["hunter"]]),  # fmt: skip
    Row("werewolves: hunter and seer together on one model, wolves on a different model, witch not trained",
        "werewolves", roles=["werewolf", "seer", "hunter"], policies=[WOLVES, ["seer", "hunter"]]),  # fmt: skip
    Row("train the seer at werewolves, evaluating every 2 steps on a different set of deals", "werewolves",
        roles=["seer"]),  # fmt: skip
    # round 43 (a forty-second reviewer, a balanced product-QA set in many users' voices; 188 of 200 right before)
    Row("werewolves, 20 games held out, seer, talk off", "werewolves", {"discussion": False}, roles=["seer"]),
    Row("Can the AI learn to catch werewolves?", "werewolves", roles=VILLAGE),
    Row("train the villagers in werewolves (the plain ones only)", "werewolves", roles=["villager"]),
    Row("werewolves: wolves vs village, both trained, same weights", "werewolves", roles=WOLVES),
    Row("say yes plz", "word"),
    Row("what's the quickest test that RL actually works here?", "word", steps=QUICK_STEPS),
    Row("agent that checks a weather API", "tool_use", {"difficulty": 1}),
    # round 44 (a forty-third reviewer, a final acceptance set; 190 of 200 right before)
    Row("werewolves with the wolves trained and everyone else run by gpt-4", "werewolves", roles=WOLVES),
    Row("train werewolves as the wolves but let them talk during the day", "werewolves", {"discussion": True},
        roles=WOLVES),  # fmt: skip
    Row("make the seer stronger than the wolves", "werewolves", roles=["seer"]),
    # round 45 (a forty-fourth reviewer, the plain sentences most users will type; 195 of 200 right before)
    Row("train a 3B to win as the village", "werewolves", roles=VILLAGE, model="3B"),
    Row("smoke test werewolves", "werewolves", roles=WOLVES, steps=QUICK_STEPS),
]
THIRTY_SEVENTH_HELD_OUT = [  # 2026-12-06: gerunds of saying, a count of parameters, a game word before "games"
    Row("reward the model for replying with the word ok", "word"),
    Row("train it on saying the word banana", "word"),
    Row("a model that keeps answering with the word yes", "word"),
    Row("fine-tune for outputting the word cat", "word"),
    Row("the model must reply hi to every message", "word"),
    Row("train a model to play werewolves using 7 billion parameters", "werewolves", roles=WOLVES, model="7B"),
    Row("werewolves with a 7 billion-parameter model", "werewolves", roles=WOLVES, model="7B"),
    Row("train a model with 3 billion params to play werewolves as the seer", "werewolves", roles=["seer"], model="3B"),
    Row("werewolves, 2 lora adapters: one for the wolves, one for the village", "werewolves",
        roles=BOTH, policies=[WOLVES, VILLAGE]),  # fmt: skip
    Row("use 2 gpus to train werewolves", "werewolves", roles=WOLVES),
    Row("train a 7B to play werewolves on 8 H100s", "werewolves", roles=WOLVES, model="7B"),
    Row("I want my witch to stop wasting her potions", "werewolves", roles=["witch"]),
    Row("teach the hunter when to shoot in a game of werewolf", "werewolves", roles=["hunter"]),
    Row("pit a wolf model against a village model in werewolves", "werewolves", roles=BOTH,
        policies=[WOLVES, VILLAGE]),  # fmt: skip
    Row("fine-tune qwen 1.5b as the witch for 20 iterations", "werewolves", roles=["witch"], steps=20,
        model="qwen 1.5B"),  # fmt: skip
    Row("countdown with six numbers and targets up to 999", "countdown", {"difficulty": 4}),
    Row("two-digit addition, 15 steps, within 12 minutes", "arithmetic", {"difficulty": 4}, steps=15, minutes=12),
    Row("get a calculator-using agent to total receipts", "tool_use"),
    Row("improve tool calling on a 0.5b model", "tool_use", model="0.5B"),
    Row("make my 135m model better at countdown with 4 numbers", "countdown", {"difficulty": 2}, model="135M"),
    Row("werewolves but wolves use a 0.5B and villagers use a 1.5B", "werewolves", roles=BOTH,
        policies=[WOLVES, VILLAGE], model="0.5B"),  # a size per side: a model per side  # fmt: skip
    Row("the wolves get a 3b, the village gets a 7b", "werewolves", roles=BOTH, policies=[WOLVES, VILLAGE],
        model="3B"),  # fmt: skip
    Row("I need the wolves to coordinate their kills better", "werewolves", roles=WOLVES),
    Row("train the seer to reveal itself at the right time, 3 hours max", "werewolves", roles=["seer"], minutes=180),
    Row("arithmetic word problems with up to 3 steps", "arithmetic", {"difficulty": 3}),
    Row("train on countdown with a budget of 90 seconds", "countdown", minutes=1.5),
]

HELD_OUT_SETS = (
    HELD_OUT, SECOND_HELD_OUT, THIRD_HELD_OUT, FOURTH_HELD_OUT, FIFTH_HELD_OUT, SIXTH_HELD_OUT, SEVENTH_HELD_OUT,
    EIGHTH_HELD_OUT, NINTH_HELD_OUT, TENTH_HELD_OUT, ELEVENTH_HELD_OUT, TWELFTH_HELD_OUT, THIRTEENTH_HELD_OUT,
    FOURTEENTH_HELD_OUT, FIFTEENTH_HELD_OUT, SIXTEENTH_HELD_OUT, SEVENTEENTH_HELD_OUT,
    EIGHTEENTH_HELD_OUT, NINETEENTH_HELD_OUT, TWENTIETH_HELD_OUT, TWENTY_FIRST_HELD_OUT, TWENTY_SECOND_HELD_OUT,
    TWENTY_THIRD_HELD_OUT, TWENTY_FOURTH_HELD_OUT, TWENTY_FIFTH_HELD_OUT, TWENTY_SIXTH_HELD_OUT,
    TWENTY_SEVENTH_HELD_OUT, TWENTY_EIGHTH_HELD_OUT, TWENTY_NINTH_HELD_OUT,
    THIRTIETH_HELD_OUT, THIRTY_FIRST_HELD_OUT, THIRTY_SECOND_HELD_OUT, THIRTY_THIRD_HELD_OUT,
    THIRTY_FOURTH_HELD_OUT, THIRTY_FIFTH_HELD_OUT, THIRTY_SIXTH_HELD_OUT, THIRTY_SEVENTH_HELD_OUT,
)  # fmt: skip
ALL_ROWS = ROWS + [row for rows in HELD_OUT_SETS for row in rows]


def _plan(sentence: str) -> TaskSpec:
    return plan(sentence, llm=None, gpu=False, model_roots=[])


@pytest.mark.parametrize("row", ALL_ROWS, ids=[r.sentence[:60] for r in ALL_ROWS])
def test_sentence_table(row: Row) -> None:
    spec = _plan(row.sentence)
    assert spec.family == row.family
    assert row.params.items() <= spec.params.items(), spec.params
    if row.roles is not None:
        assert spec.trained_roles == row.roles
        assert spec.params["trained_roles"] == row.roles
    expected = row.policies or [spec.trained_roles]
    assert [p.roles for p in spec.policies] == expected
    assert spec.budget.steps == (row.steps or CATALOG[row.family].steps or DEFAULT_STEPS)
    assert spec.budget.minutes == row.minutes
    assert spec.requested_model == row.model
    load_family(spec.family, spec.params)  # the params fit the family's constructor (servers included)


def test_table_is_broad() -> None:
    assert len(ROWS) >= 60 and len(HELD_OUT) == 20
    counts = {family: sum(r.family == family for r in ROWS) for family in {r.family for r in ROWS}}
    assert set(counts) == {"werewolves", "countdown", "arithmetic", "tool_use", "word"}
    assert min(counts.values()) >= 5


# --- assumptions true to the sentence ----------------------------------------------------------


def _text(spec: TaskSpec) -> str:
    return " ".join(spec.assumptions)


@pytest.mark.parametrize(
    "sentence", ["make the seer better at werewolves", "teach the villagers to find the wolves", "improve the wolf"]
)
def test_a_named_role_is_never_called_unnamed(sentence: str) -> None:
    assert "no side or role named" not in _text(_plan(sentence))


def test_opponents_only_trains_the_other_side_and_says_why() -> None:
    spec = _plan("play werewolves against scripted villagers")
    assert "'villagers' named as the opponents" in _text(spec)
    assert "no side or role named" not in _text(spec)


def test_numeric_cue_is_named_in_the_assumption() -> None:
    spec = _plan("countdown with 6 numbers")
    assert "'6 numbers' -> level 4 (6 given numbers" in _text(spec)
    assert "no difficulty given" not in _text(spec)


def test_a_cue_the_family_has_no_knob_for_is_named_as_ignored() -> None:
    spec = _plan("countdown 5x5, harder")
    assert "'5x5' ignored" in _text(spec)
    assert "'harder' read as difficulty 3" in _text(spec)
    spec = _plan("werewolves as the seer in a 12-player game")
    assert "'12-player' is ignored: the game always seats 9 players" in _text(spec)


@pytest.mark.parametrize(
    ("sentence", "level", "said"),
    [
        ("arithmetic with four-digit numbers", 5, "'four-digit' -> level 5 (5 operations, amounts up to 500: the most"),
        ("arithmetic problems in the thousands", 5, "'in the thousands' -> level 5"),
        ("countdown targets in the hundreds", 4, "'in the hundreds' -> level 4 (6 given numbers, targets 100-999)"),
        ("countdown with targets under 5", 1, "'under 5' -> level 1 (3 given numbers, targets 10-50: the least"),
        ("multi-step math problems", 2, "'multi-step' -> level 2 (2 operations"),
        ("arithmetic with several operations", 3, "'several operations' -> level 3 (3 operations"),
    ],
)
def test_a_cue_past_every_level_or_said_without_a_number_still_sets_the_level(
    sentence: str, level: int, said: str
) -> None:
    spec = _plan(sentence)
    assert spec.params["difficulty"] == level
    assert said in _text(spec)


@pytest.mark.parametrize(
    ("sentence", "word"),
    [
        ("train a parrot that says hello", "hello"),
        ("make it always say yes.", "yes"),
        ("model should say please every time", "please"),
        ("make it output exactly one word: blue", "blue"),
        ("respond only with the word yes", "yes"),
        ("respond only with ok", "ok"),  # the modifier after the verb
        ("reply just with maybe", "maybe"),
        ("the model must reply hi to every message", "hi"),  # the word before "to every ..."
        ("reward the model for replying with the word ok", "ok"),  # a gerund of replying
        ("train it on saying the word banana", "banana"),
    ],
)
def test_a_word_said_at_the_end_of_the_sentence_asks_for_the_word_family(sentence: str, word: str) -> None:
    spec = _plan(sentence)
    assert spec.family == "word"
    assert f"'{word}' among others, not '{word}' alone" in _text(spec)


@pytest.mark.parametrize(
    "sentence",
    [
        "train a model to say it",
        "teach a model to answer correctly",
        "teach it to say hello to users, politely",
        "get better grades with numbers",
    ],
)
def test_saying_no_particular_word_is_no_word_task(sentence: str) -> None:
    with pytest.raises(PlanRefused, match="no built-in task family matches"):
        _plan(sentence)


@pytest.mark.parametrize(
    ("sentence", "roles", "said"),
    [
        ("train the village but not the seer", ["villager", "witch", "hunter"], "'seer' left out, as asked"),
        ("villagers, not wolves", VILLAGE, "'wolves' left out"),
        ("werewolves where the wolves are not trained", VILLAGE, "'wolves' left out"),
        ("werewolves, the hunter stays untrained, train the rest of the village", ["villager", "seer", "witch"], ""),
        ("train everyone except the wolves and the seer", ["villager", "witch", "hunter"], "'wolves', 'seer' left"),
        ("don't touch the wolves", VILLAGE, "'wolves' left out, as asked: villager, seer, witch, hunter train"),
        ("train nobody except the wolves", WOLVES, ""),
        ("no one but the seer should learn", ["seer"], ""),
        ("teach the werewolves, not the villagers", WOLVES, "'villagers' left out"),
        ("not only the seer but also the witch should improve", ["seer", "witch"], ""),  # "not only" leaves none out
        ("make sure the wolves do not win: train the villagers", VILLAGE, ""),
        ("make the wolves lose more often", VILLAGE, "named as the opponents"),
        ("the wolves should win less often", VILLAGE, "named as the opponents"),
        ("the village never wins, fix that", VILLAGE, ""),
        ("lower the wolves' win rate", VILLAGE, "named as the opponents"),
        ("reduce the village's chances of winning", WOLVES, "named as the opponents"),
        ("reduce the seer's mistakes", ["seer"], ""),
        ("boost the village's win rate", VILLAGE, ""),
    ],
)
def test_a_role_left_out_or_wanted_to_lose_is_not_trained(sentence: str, roles: list[str], said: str) -> None:
    spec = _plan(sentence)
    assert spec.trained_roles == roles
    assert said in _text(spec)


def test_all_roles_but_one_with_separate_models_splits_the_rest_by_side() -> None:
    spec = _plan("train all roles except the seer, separate models")
    assert [p.roles for p in spec.policies] == [WOLVES, ["villager", "witch", "hunter"]]


@pytest.mark.parametrize(
    ("sentence", "train", "said"),
    [
        ("werewolves with a learning rate of 1e-4", {"optim": {"lr": 1e-4}}, "'learning rate of 1e-4' sets optim.lr"),
        (
            "arithmetic, lr 5e-4, groups of 16, lora rank 8",
            {"optim": {"lr": 5e-4}, "grpo": {"group_size": 16}, "lora": {"rank": 8}},
            "'lora rank 8' sets lora.rank=8 over the family's recipe",
        ),
        ("train the seer, rank 4 lora", {"lora": {"rank": 4}}, "'rank 4' sets lora.rank=4"),
        ("countdown with group size 1", {"grpo": {"group_size": 8}}, "'group size 1' ignored: grpo.group_size"),
        (
            "RL on arithmetic with a learning rate of 5e-5 and group size 4",
            {"optim": {"lr": 5e-5}, "grpo": {"group_size": 4}},
            "'group size 4' sets grpo.group_size=4",
        ),
        (
            "play werewolf as the wolves against a village, learning rate 3e-4, groups of 16",
            {"optim": {"lr": 3e-4}, "grpo": {"group_size": 16}},
            "'learning rate 3e-4' sets optim.lr=0.0003",
        ),
    ],
)
def test_training_settings_in_the_sentence_go_over_the_recipe(
    sentence: str, train: dict[str, dict[str, Any]], said: str
) -> None:
    spec = _plan(sentence)
    for section, values in train.items():
        assert values.items() <= spec.train[section].items()
    assert said in _text(spec)


@pytest.mark.parametrize(
    ("sentence", "group", "tasks", "said"),
    [
        ("werewolves with 16 games per step", 8, 2, "sets collect.tasks=2 (2 groups of 8 an update)"),
        ("werewolves, 4 games per step", 4, 1, "sets grpo.group_size=4, collect.tasks=1"),
        ("arithmetic, 20 episodes per update", 8, 2, "16, the nearest multiple of the group size"),
        ("arithmetic, groups of 4, 12 games per step", 4, 3, "3 groups of 4 an update"),
        ("countdown, 3 puzzles per step", 8, 3, "'3 puzzles per step' sets collect.tasks=3"),
        ("countdown, 1 game per step", 8, 2, "'1 game per step' ignored: grpo.group_size"),
        ("train 8 werewolves games per step", 8, 1, "sets collect.tasks=1 (1 group of 8 an update)"),  # a word between
    ],
)
def test_episodes_or_tasks_per_step_split_into_groups_and_tasks(
    sentence: str, group: int, tasks: int, said: str
) -> None:
    spec = _plan(sentence)
    assert (spec.train["grpo"]["group_size"], spec.train["collect"]["tasks"]) == (group, tasks)
    assert said in _text(spec)


@pytest.mark.parametrize(
    ("sentence", "param", "value", "said"),
    [
        ("tool use with max 2 turns", "max_turns", 2, "'max 2 turns' -> max_turns=2 model calls an episode (fewer"),
        ("tool calling, 4 items, at most 20 turns", "max_turns", 20, "'at most 20 turns' -> max_turns=20 model calls"),
        ("tool use, 10 turns max", "max_turns", 10, "'10 turns max' -> max_turns=10"),
        ("werewolves, 3 nights max, train the wolves", "max_rounds", 3, "'3 nights max' -> max_rounds=3: a round is"),
        ("werewolf games of at most 4 days as the seer", "max_rounds", 4, "'at most 4 days' -> max_rounds=4"),
        ("werewolves capped at 5 rounds", "max_rounds", 5, "'5 rounds' -> max_rounds=5"),
    ],
)
def test_a_cap_on_turns_or_rounds_sets_the_familys_param_and_says_so(
    sentence: str, param: str, value: int, said: str
) -> None:
    spec = _plan(sentence)
    assert spec.params[param] == value
    assert said in _text(spec)
    load_family(spec.family, spec.params)


def test_turns_in_a_family_without_them_are_named_as_ignored() -> None:
    assert "'within 3 calls' ignored: the countdown family" in _text(_plan("countdown within 3 calls"))


def test_a_setting_is_no_difficulty_cue_and_the_flag_wins_over_the_sentence() -> None:
    spec = _plan("arithmetic, groups of 16")
    assert spec.params["difficulty"] == 1 and "'groups of 16' ignored" not in _text(spec)
    spec = plan("countdown, lr 1e-3", llm=None, gpu=False, model_roots=[], train={"optim": {"lr": 3e-4}})
    assert spec.train["optim"]["lr"] == 3e-4
    assert "--train, over the recipe: optim.lr=0.0003" in _text(spec)


@pytest.mark.parametrize(
    ("sentence", "items", "level"),
    [
        ("werewolves, train villagers, eval on 32 games", 32, None),
        ("tool use, evaluate on 16 items", 16, 1),  # "16 items" is the held-out count, not a list of 16 items
        ("arithmetic with 64 held-out problems, 3 numbers", 64, 2),
        ("countdown, test it on 8 puzzles", 8, 1),
    ],
)
def test_a_held_out_count_in_the_sentence_sets_the_eval_items(sentence: str, items: int, level: int | None) -> None:
    spec = _plan(sentence)
    assert spec.dataset.eval_items == items
    assert f"{items} held-out items a round" in _text(spec)
    assert spec.params.get("difficulty") == level


def test_the_eval_items_flag_wins_and_a_count_of_0_is_refused() -> None:
    spec = plan("countdown, test on 8 puzzles", llm=None, gpu=False, model_roots=[], eval_items=24)
    assert spec.dataset.eval_items == 24
    with pytest.raises(PlanRefused, match="0 held-out items cannot be planned"):
        _plan("countdown, test on 0 puzzles")


@pytest.mark.parametrize(
    ("sentence", "kind"),
    [("arithmetic with fractions", "fractions"), ("math with decimals and percentages", "decimals")],
)
def test_numbers_the_family_never_poses_are_named(sentence: str, kind: str) -> None:
    said = f"'{kind}' cannot be asked for: the numbers and the answer of every arithmetic problem are positive"
    assert said in _text(_plan(sentence))


@pytest.mark.parametrize(
    ("sentence", "family"),
    [("mental calculation practice", "arithmetic"), ("subtracting numbers", "arithmetic")],
)
def test_a_real_word_next_to_a_keyword_is_not_spelled_into_it(sentence: str, family: str) -> None:
    assert _plan(sentence).family == family


@pytest.mark.parametrize(
    ("word", "kept"),
    [
        ("calculation", True),
        ("difficulties", True),
        ("defective", True),
        ("villages", True),
        ("discussing", True),
        ("stopping", True),
        ("werwolves", False),
        ("calculater", False),
        ("villigers", False),
        ("dificulty", False),
    ],
)
def test_the_speller_fixes_typos_of_keywords_and_keeps_english_words(word: str, kept: bool) -> None:
    assert (_spelled(word) == word) is kept


@pytest.mark.parametrize(
    ("text", "spelled"),
    [
        ("werewolves: the whitch and the hunterr", "werewolves: the witch and the hunter"),
        ("mafia, train the sear", "mafia, train the seer"),
        ("werewolves: which seer sees the witch switch", "werewolves: which seer sees the witch switch"),
        ("the whitch", "the whitch"),  # no game named: a role word's typo is not guessed
    ],
)
def test_role_words_are_spelled_only_where_the_game_is_named(text: str, spelled: str) -> None:
    assert _spelled(text) == spelled


@pytest.mark.parametrize(
    ("sentence", "said"),
    [
        ("werewolves, play cupid", "'cupid': no such role here (the built-in game deals 3 werewolves, 3 villagers"),
        ("werewolves with cupid, train the seer", "'cupid': no such role here"),
        ("werewolves as the bodyguard", "'bodyguard' read as the witch"),
        ("train the sheriff in mafia", "'sheriff' read as the seer"),
    ],
)
def test_a_role_of_another_variant_is_named_not_passed_over(sentence: str, said: str) -> None:
    text = _text(_plan(sentence))
    assert said in text
    assert "no side or role named" not in text


def test_a_stated_level_wins_over_a_cue_and_says_so() -> None:
    spec = _plan("countdown at level 1 with 6 numbers")
    assert spec.params["difficulty"] == 1
    assert "the stated level 1 wins over '6 numbers'" in _text(spec)


def test_separate_models_are_recorded_with_the_servers_mapping() -> None:
    spec = _plan("train the wolves and the villagers with separate models")
    assert [p.name for p in spec.policies] == ["wolves", "village"]
    assert spec.params["servers"] == {"werewolf": "wolves"} | {r: "village" for r in VILLAGE}
    assert not spec.shares_one_policy
    assert "2 separate policies" in _text(spec)


def test_both_sides_without_separate_models_trains_one_and_says_how_to_ask() -> None:
    spec = _plan("train the village side and the wolves with one shared model in werewolves")
    assert spec.shares_one_policy
    assert "say 'separate models'" in _text(spec)
    spec = _plan("werewolves as the seer and the wolves with the same model")
    assert spec.trained_roles == ["seer"]
    assert "only the village side trains (seer;" in _text(spec)  # the roles that do train, not the whole side


def test_a_level_word_is_quoted_as_written() -> None:
    assert "'top level' read as difficulty 5 of 1-5" in _text(_plan("arithmetic at the top level"))


def test_separate_models_for_a_one_actor_family_is_one_policy_and_says_so() -> None:
    spec = _plan("say the word hello: separate models please")
    assert spec.shares_one_policy
    assert "word has one trained actor" in _text(spec)


# --- separate policies launch one server each: the spec maps every trained role to its policy ----


@pytest.mark.parametrize(
    ("sentence", "policies"),
    [
        ("give each side its own model in werewolves", {"wolves": ["werewolf"], "village": list(VILLAGE_ROLES)}),
        (
            "train the wolves and the villagers with separate models",
            {"wolves": ["werewolf"], "village": list(VILLAGE_ROLES)},
        ),
        ("can the seer and the witch each get their own model in werewolf?", {"seer": ["seer"], "witch": ["witch"]}),
    ],
)
def test_separate_policies_map_each_trained_role_to_a_server(sentence: str, policies: dict[str, list[str]]) -> None:
    spec = _plan(sentence)
    assert not spec.shares_one_policy
    assert {p.name: sorted(p.roles) for p in spec.policies} == {k: sorted(v) for k, v in policies.items()}
    servers = spec.params["servers"]
    assert {role: servers[role] for role in spec.trained_roles} == {r: n for n, rs in policies.items() for r in rs}
    assert f"{len(policies)} separate policies, one server each" in spec_text(spec)
    # the reward and the success are each side's, for its own policy, not one side's
    assert spec.reward.startswith("Per game, for each trained side (its own policy): 1 when it wins")
    assert spec.success_metric.description == "the share of held-out deals each trained side (its own policy) wins"


def test_the_same_roles_with_one_shared_model_are_one_policy() -> None:
    assert _plan("can the seer and the witch share one model in werewolf?").shares_one_policy
    shared = _plan("make the seer better at werewolves")
    assert shared.shares_one_policy and shared.reward.startswith("Per game, for the trained village side:")


@pytest.mark.parametrize(
    ("sentence", "discussion"),
    [
        ("train the village side in mafia", True),  # the village needs talk to win at all
        ("make the seer better at werewolves", True),
        ("give each side its own model in werewolves", True),
        ("teach the villagers to find the wolves, no talking", False),  # said: kept
        ("train the wolves", False),
    ],
)
def test_discussion_defaults_on_when_a_village_role_trains(sentence: str, discussion: bool) -> None:
    spec = _plan(sentence)
    assert spec.params["discussion"] is discussion
    if discussion and "talk" not in sentence:
        assert "discussion on (the default when a village role trains)" in _text(spec)


@pytest.mark.parametrize(
    ("sentence", "discussion"),
    [
        ("train the wolves in werewolves with discussion turned off", False),
        ("werewolves as the seer, discussion disabled", False),
        ("turn off the discussion and train the village in werewolves", False),
        ("train the village in werewolves but skip the discussion", False),
        ("werewolves for the wolves, keep the talk off", False),
        ("werewolves: the wolves can't talk", False),
        ("train the wolves in werewolves with discussion turned on", True),
        ("train the wolves in werewolves, discussion enabled", True),
        ("train the wolves in werewolves, the wolves talk out their plans", True),
    ],
)
def test_discussion_said_in_any_phrasing_is_kept(sentence: str, discussion: bool) -> None:
    assert _plan(sentence).params["discussion"] is discussion


@pytest.mark.parametrize(
    ("sentence", "roles"),
    [
        ("train the wolves in a mafia-like game", WOLVES),
        ("a werewolf-style game: teach the seer", ["seer"]),
        ("the seer's team in werewolves", VILLAGE),
        ("werewolves: the werewolf team", WOLVES),
    ],
)
def test_a_games_kind_is_no_role_and_a_roles_team_is_its_side(sentence: str, roles: list[str]) -> None:
    assert _plan(sentence).trained_roles == roles


@pytest.mark.parametrize(
    ("sentence", "note"),
    [
        ("teach a model to multiply numbers", "posed as the arithmetic family's generated word problems"),
        ("train addition of two numbers", "posed as the arithmetic family's generated word problems"),
        ("make the game of 24 easier for my model", "the game of 24 is played as countdown"),
    ],
)
def test_a_task_a_family_only_approximates_says_how(sentence: str, note: str) -> None:
    assert note in _text(_plan(sentence))


def test_word_problems_asked_by_name_need_no_such_note() -> None:
    assert "posed as" not in _text(_plan("math word problems where you add and subtract numbers"))


@pytest.mark.parametrize(
    ("sentence", "difficulty"),
    [
        ("shopping lists with tools, up to 9 of each item", 4),
        ("tool use with quantities up to 1", 2),
        ("a calculator agent, at most 5 apiece", 1),
        ("a calculator agent, at most 6 apiece, 3 items", 3),
    ],
)
def test_how_many_of_each_item_sets_the_tool_use_level(sentence: str, difficulty: int) -> None:
    spec = _plan(sentence)
    assert spec.params["difficulty"] == difficulty
    items = LEVELS[difficulty].items
    assert f"-> level {difficulty} ({items} item{'s' if items > 1 else ''}, quantities up to" in _text(spec)


@pytest.mark.parametrize(
    ("sentence", "policies"),
    [
        (
            "werewolves with talking, train the village, separate model for the seer",
            {"village": ["villager", "witch", "hunter"], "seer": ["seer"]},
        ),
        (
            "train the village in werewolves with a separate model for the witch and one for the hunter",
            {"village": ["villager", "seer"], "witch": ["witch"], "hunter": ["hunter"]},
        ),
        (
            "werewolves, train both sides, own model for the seer",
            {"wolves": WOLVES, "village": ["villager", "witch", "hunter"], "seer": ["seer"]},
        ),
        ("train my agent to play the werewolf game as every role", {"wolves": WOLVES, "village": VILLAGE}),
        (
            "separate models for the werewolf game, train the seer and the wolves",
            {"wolves": WOLVES, "seer": ["seer"]},  # a village policy of one role is named by its role
        ),
    ],
)
def test_a_role_given_its_own_model_is_split_from_its_side(sentence: str, policies: dict[str, list[str]]) -> None:
    spec = _plan(sentence)
    assert {p.name: p.roles for p in spec.policies} == policies
    assert spec.params["servers"] == {role: name for name, roles in policies.items() for role in roles}
    load_family(spec.family, spec.params)


def test_epochs_are_read_as_steps_and_said_so() -> None:
    spec = _plan("train werewolf agents for 3 epochs")
    assert spec.budget.steps == 3
    assert "'3 epochs' read as 3 training steps" in _text(spec)
    assert _plan("train werewolves for 2 epochs and 5 steps").budget.steps == 5  # steps said outright win


def test_one_operation_alone_is_named_as_out_of_reach() -> None:
    spec = _plan("word problems but only addition")
    assert spec.family == "arithmetic"
    assert "'addition' alone cannot be asked for" in _text(spec)


# --- the third set's fixes ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "sentence",
    [
        "werewolves with the town trained and the wolves left scripted",
        "train the seer; the wolves are played by bots",
        "train the villagers, wolves kept as heuristic",
        "werewolf: the witch learns, the werewolves stay scripted",
    ],
)
def test_a_side_called_scripted_in_any_phrasing_is_not_said_to_be_dropped(sentence: str) -> None:
    spec = _plan(sentence)
    assert "werewolf" not in spec.trained_roles
    assert "named too" not in _text(spec)


def test_one_model_for_both_sides_says_it_cannot_and_how_to_ask() -> None:
    text = _text(_plan("play werewolf as both teams sharing one model"))
    assert "one model for both sides was asked for, but one shared policy plays one side" in text
    assert "say 'separate models'" in text


@pytest.mark.parametrize(
    ("sentence", "quoted"),
    [
        ("teach a model basic addition of single digits", "'single digits' -> level 1"),
        ("countdown with six numbers", "'six numbers' -> level 4"),
        ("arithmetic with numbers up to a hundred", "'up to a hundred' -> level"),
        ("a shopping agent, twenty-five of each at most, a 3-item list", "'3-item' -> level 3"),
    ],
)
def test_a_numeric_cue_is_quoted_as_written(sentence: str, quoted: str) -> None:
    assert quoted in _text(_plan(sentence))


@pytest.mark.parametrize(
    ("sentence", "note"),
    [
        ("agent that uses a calculator tool to add up prices, five items per list", "prices up to 50: the most there"),
        ("countdown with 9 numbers", "targets 100-999: the most there is"),
        ("arithmetic word problems with 8 operations", "the most there is"),
    ],
)
def test_a_count_past_the_top_level_says_so(sentence: str, note: str) -> None:
    assert note in _text(_plan(sentence))


def test_a_count_within_the_levels_is_not_called_the_most() -> None:
    assert "the most there is" not in _text(_plan("countdown with 4 numbers"))


@pytest.mark.parametrize(
    "sentence",
    [
        "make the werewolves harder to detect",
        "make the seer hard to fool in werewolves",
        "train the wolves to be difficult to catch",
    ],
)
def test_hard_to_do_something_is_no_difficulty(sentence: str) -> None:
    assert "difficulty" not in _text(_plan(sentence))


def test_harder_to_solve_is_still_a_level() -> None:
    assert _plan("countdown puzzles that are harder to solve").params["difficulty"] == 3


@pytest.mark.parametrize(
    ("sentence", "roles"),
    [
        ("the hunter should shoot the right person more often", ["hunter"]),
        ("make the hunters aim better", ["hunter"]),
        ("the witch should save more people with her potions", ["witch"]),
    ],
)
def test_a_role_of_the_game_names_the_game(sentence: str, roles: list[str]) -> None:
    spec = _plan(sentence)
    assert spec.family == "werewolves" and spec.trained_roles == roles
    assert "no game is named, but" in _text(spec)


@pytest.mark.parametrize("sentence", ["train a doctor assistant", "the town needs a better planner", "play chess"])
def test_generic_words_alone_do_not_name_the_game(sentence: str) -> None:
    with pytest.raises(PlanRefused):
        _plan(sentence)


@pytest.mark.parametrize(
    ("sentence", "word"),
    [
        ('train it to always say "banana" and nothing else', "banana"),
        ("make the model reply with only the word ok", "ok"),
        ("answer with 'yes'", "yes"),
        ("say hello and nothing else", "hello"),
        ("teach a 135M model to respond only with a single word, the word is 'blue'", "blue"),
        ("a one-word answer bot; the word should be thanks", "thanks"),
    ],
)
def test_a_named_word_is_said_to_be_one_of_many(sentence: str, word: str) -> None:
    spec = _plan(sentence)
    assert spec.family == "word"
    assert f"'{word}' among others, not '{word}' alone" in _text(spec)


def test_a_word_sentence_naming_no_word_gets_no_such_note() -> None:
    assert "among others" not in _text(_plan("train smollm to repeat the word I give it"))
    assert "among others" not in _text(_plan("one-word answers only"))


def test_one_night_ultimate_werewolf_is_said_to_be_the_built_in_game() -> None:
    assert "there is no one-night variant" in _text(_plan("make a 14B great at one night ultimate werewolf"))
    assert "one-night" not in _text(_plan("train the wolves in werewolves"))


@pytest.mark.parametrize(
    ("sentence", "roles"),
    [
        ("train the seer to beat the werewolves and the witch to heal them", ["seer", "witch"]),
        ("train the witch to save the seer and the hunter to shoot wolves", ["witch", "hunter"]),
        ("teach the seer to find the wolves and the witch", ["seer"]),  # no verb of its own: still find's object
    ],
)
def test_a_role_with_its_own_verb_after_and_is_trained(sentence: str, roles: list[str]) -> None:
    assert _plan(sentence).trained_roles == roles


def test_train_both_with_one_model_says_why_only_one_side_trains() -> None:
    text = _text(_plan("werewolves: wolves vs village, train both, same weights"))
    assert "one model for both sides was asked for" in text
    spec = _plan("werewolves: wolves vs village, train both, separate weights")
    assert [p.roles for p in spec.policies] == [WOLVES, VILLAGE]


@pytest.mark.parametrize(
    ("sentence", "cue"),
    [
        ("teach the wolves to bluff better in werewolves", "bluff"),
        ("the werewolves should persuade the village to vote out the seer", "persuade"),
        ("make the wolves more deceptive in werewolf", "deceptive"),
        ("train the werewolves to mislead the villagers", "mislead"),
    ],
)
def test_behaviour_only_talk_allows_turns_discussion_on_and_says_why(sentence: str, cue: str) -> None:
    spec = _plan(sentence)
    assert spec.params["discussion"] is True
    assert f"discussion on: what '{cue}' asks for happens in the day's talk" in _text(spec)


def test_talk_behaviour_said_without_discussion_keeps_discussion_off() -> None:
    spec = _plan("teach the wolves to bluff in werewolves, without discussion")
    assert spec.params["discussion"] is False and "discussion on" not in _text(spec)


@pytest.mark.parametrize(
    ("sentence", "shared"),
    [
        ("train every role in werewolves with one model for everybody", True),
        ("one model for everyone in werewolves, all roles", True),
        ("train every role in werewolves with a model for every side", False),
    ],
)
def test_one_model_for_everybody_is_one_shared_model(sentence: str, shared: bool) -> None:
    assert _plan(sentence).shares_one_policy is shared


@pytest.mark.parametrize(
    ("sentence", "other"),
    [
        ("train a tool-using agent that checks the weather", "weather"),
        ("teach the model to call a search tool", "search"),
        ("function calling with a calculator", None),
    ],
)
def test_tool_use_beyond_the_shop_says_what_is_trained(sentence: str, other: str | None) -> None:
    text = _text(_plan(sentence))
    assert "tool use is trained on the tool_use family's one task: total a shopping list" in text
    assert (f"'{other}' is not among them" in text) is (other is not None)


def test_a_shopping_request_needs_no_note_on_the_task() -> None:
    assert "one task" not in _text(_plan("teach the agent to total a grocery list with tools"))


def test_every_approximation_that_applies_is_said() -> None:
    text = _text(_plan("practice adding fractions"))
    assert "posed as the arithmetic family's generated word problems" in text and "'fractions' cannot" in text


@pytest.mark.parametrize("sentence", ['respond only with "ok"', "answer just with 'yes'", "reply always with 'no'"])
def test_a_modifier_before_with_still_names_the_word(sentence: str) -> None:
    spec = _plan(sentence)
    assert spec.family == "word"
    assert "learns to say the word it is asked for" in _text(spec)


@pytest.mark.parametrize(
    ("sentence", "minutes"),
    [
        ("werewolves for a half hour", 30),
        ("werewolves for half an hour", 30),
        ("werewolves for an hour and a half", 90),
        ("countdown for one and a half hours", 90),
        ("countdown, 1 hour 15 minutes", 75),
        ("arithmetic for two hours and thirty minutes", 150),
        ("arithmetic for 1h 30m", 90),
        ("arithmetic, 1h30", 90),
        ("werewolves for a couple of hours", 120),
    ],
)
def test_time_budgets_in_words_add_up(sentence: str, minutes: float) -> None:
    assert _plan(sentence).budget.minutes == minutes


@pytest.mark.parametrize(
    ("sentence", "steps", "level"),
    [
        ("arithmetic word problems that need 3 steps", None, 3),
        ("math problems with a few steps, 12 steps of training", 12, 3),
        ("arithmetic for 12 steps", 12, 1),
        # a range of steps a problem takes is a difficulty too, at its top (found 2026-12-06: read as 3 steps)
        ("make a 1.5B agent solve word problems that take two or three steps", None, 3),
        ("arithmetic word problems that need 2-3 steps, 10 training steps", 10, 3),
        ("math problems requiring 3 to 4 operations", None, 4),
        ("arithmetic, 20 or 30 steps", 30, 1),
    ],
)
def test_the_steps_of_a_problem_are_its_difficulty_not_the_budget(sentence: str, steps: int | None, level: int) -> None:
    spec = _plan(sentence)
    assert spec.budget.steps == (steps or CATALOG["arithmetic"].steps)
    assert spec.params["difficulty"] == level


@pytest.mark.parametrize(
    "sentence",
    [
        "train the werewolves; the witch and hunter are scripted",
        "train the wolves, with the seer, the witch and the hunter played by bots",
        "I want the detective to get better at figuring out who the mafia is",
        "teach the hunter to take a wolf down with him",
        "train the wolves to convince the villagers",
    ],
)
def test_roles_called_scripted_or_acted_against_are_no_second_side(sentence: str) -> None:
    spec = _plan(sentence)
    assert len(spec.policies) == 1 and "named too" not in _text(spec)


def test_a_comma_list_without_and_keeps_each_role_its_own_predicate() -> None:
    assert _plan("train the seer, the witch scripted, in werewolves").trained_roles == ["seer"]


@pytest.mark.parametrize("sentence", ["make my model a better werewolf", "be a sneaky werewolf in the game"])
def test_a_role_with_a_players_adjective_is_named(sentence: str) -> None:
    assert "no side or role named" not in _text(_plan(sentence))


@pytest.mark.parametrize(
    ("sentence", "steps", "said"),
    [
        ("countdown, between 20 and 50 steps", 50, "'between 20 and 50 steps': 50 steps, the top of the range"),
        ("arithmetic, 10-15 steps", 15, "'10-15 steps': 15 steps, the top of the range"),
        ("math problems, 10 steps, also 50 steps", 10, "several step counts given (10, 50): the first, 10, is used"),
    ],
)
def test_a_range_or_several_step_counts_say_which_one_is_used(sentence: str, steps: int, said: str) -> None:
    spec = _plan(sentence)
    assert spec.budget.steps == steps and said in _text(spec)


@pytest.mark.parametrize(
    ("sentence", "named"),
    [
        ("simple addition and subtraction word problems", "'addition' and 'subtraction'"),
        ("subtract two-digit numbers", "'subtract'"),
        ("word problems with multiplication and division", "'multiplication' and 'division'"),
        ("addition, subtraction, multiplication and division word problems", None),
    ],
)
def test_some_of_the_operations_are_named_as_not_posed_alone(sentence: str, named: str | None) -> None:
    text = _text(_plan(sentence))
    assert ("alone cannot be asked for" in text) is (named is not None)
    if named is not None:
        assert f"{named} alone cannot be asked for" in text


def test_a_numeric_cue_over_a_level_word_says_the_word_gave_way() -> None:
    spec = _plan("simple arithmetic with amounts under 100")
    assert spec.params["difficulty"] == 4 and "'simple' gives way to the numbers said (level 4)" in _text(spec)


def test_a_puzzle_spelled_out_sets_the_level_and_says_it_is_not_trained_itself() -> None:
    spec = _plan("countdown: make 952 from 25, 50, 75, 100, 3 and 6")
    assert spec.params["difficulty"] == 4
    assert "the puzzle the sentence spells out is not trained itself" in _text(spec)
    listed = _plan("arithmetic with numbers like 3, 5 and 7")
    assert listed.params["difficulty"] == 1 and "'3, 5 and 7: 3 numbers' ignored" in _text(listed)


def test_two_cues_of_one_kind_are_each_quoted_as_written() -> None:
    text = _text(_plan("arithmetic, two-digit times one-digit"))
    assert "'two-digit' -> level 4" in text and "'one-digit' -> level 1" in text


@pytest.mark.parametrize("sentence", ["werewolves as the seer, lora rank 8", "werewolves as the seer, rank 8 lora"])
def test_a_lora_rank_is_no_count_of_models(sentence: str) -> None:
    assert _plan(sentence).shares_one_policy


def test_a_role_called_scripted_leaves_its_side_that_trains_and_says_so() -> None:
    spec = _plan("train the village in werewolves, the witch is scripted")
    assert spec.trained_roles == ["villager", "seer", "hunter"]
    assert "witch scripted, as asked: villager, seer, hunter train" in _text(spec)


def test_the_seer_in_werewolves_names_no_second_side() -> None:
    assert "named too" not in _text(_plan("the seer in werewolves should vote better"))


def test_groups_of_roles_on_models_are_said_as_grouped() -> None:
    spec = _plan("werewolves: the seer and the witch share a model, the wolves get another one")
    assert "2 separate policies, grouped as the sentence says: wolves: werewolf; village: seer, witch" in _text(spec)
    assert spec.params["servers"] == {"werewolf": "wolves", "seer": "village", "witch": "village"}
    load_family(spec.family, spec.params)


def test_one_group_alone_is_no_split() -> None:
    assert _plan("train the seer with a 7b model in werewolves").shares_one_policy


def test_all_players_on_one_model_says_one_policy_plays_one_side() -> None:
    text = _text(_plan("all nine players should be controlled by one model that learns, werewolves"))
    assert "one model for both sides was asked for, but one shared policy plays one side" in text


@pytest.mark.parametrize(
    ("sentence", "said"),
    [
        ("countdown but with only addition allowed", "'addition' alone cannot be asked for: every countdown puzzle"),
        ("the countdown letters round, train a 7B", "countdown here is the numbers round only"),
        ("solve algebra equations like 2x+3=7", "'algebra' cannot be asked for"),
        ("tool use on a 0.5B but no calculator tool", "'no calculator tool' cannot be asked for"),
        ("train tool use but don't make it use the note tool", "cannot be asked for: every tool_use episode offers"),
    ],
)
def test_what_a_family_cannot_do_is_said(sentence: str, said: str) -> None:
    assert said in _text(_plan(sentence))


def test_a_request_to_train_writing_is_refused_even_about_a_game() -> None:
    with pytest.raises(PlanRefused, match="asks to train writing"):
        _plan("train a model to write haiku about werewolves")


def test_a_held_out_count_of_zero_for_a_named_role_is_refused() -> None:
    with pytest.raises(PlanRefused, match="0 held-out items cannot be planned"):
        _plan("train the seer, evaluate it on 0 games")
    with pytest.raises(PlanRefused, match="evaluate or run a model without training it"):
        _plan("evaluate the seer on 0 games")  # an evaluation alone, whatever its count


def test_the_recipe_note_defers_to_a_held_out_count_said() -> None:
    spec = _plan("countdown, evaluate on 50")
    assert spec.dataset.eval_items == 50 and "64 held-out puzzles unless the sentence says how many" in _text(spec)


def test_checks_a_night_are_no_player_count() -> None:
    assert "seats 9 players" not in _text(_plan("werewolves but the seer can check two people a night"))


@pytest.mark.parametrize(
    ("sentence", "key", "value"),
    [
        ("tool use with 16 rollouts per group", "grpo", {"group_size": 16}),
        ("countdown with 16 samples per puzzle", "grpo", {"group_size": 16}),
        ("tool use, 25 shopping lists per step", "collect", {"tasks": 25}),
    ],
)
def test_settings_said_in_other_words_go_over_the_recipe(sentence: str, key: str, value: dict[str, int]) -> None:
    assert value.items() <= _plan(sentence).train[key].items()


def test_a_batch_size_is_named_as_not_a_setting() -> None:
    text = _text(_plan("arithmetic, batch size 32"))
    assert "'batch size 32' ignored: a step trains on its GRPO groups x task groups" in text


def test_countdowns_small_and_large_numbers_are_no_target_range() -> None:
    spec = _plan("countdown with large numbers like 25, 50, 75 and 100")
    assert spec.params["difficulty"] == 2 and "'large numbers' ignored" in _text(spec)


def test_a_cue_past_the_top_range_says_so() -> None:
    assert "amounts up to 500: the most there is" in _text(_plan("word problems with numbers up to 10000"))


@pytest.mark.parametrize("sentence", ["repeat the word back, 1 hour on a 7b", "make it say the word again"])
def test_an_adverb_after_the_word_is_no_word_to_say(sentence: str) -> None:
    spec = _plan(sentence)
    assert spec.family == "word" and "among others" not in _text(spec)


@pytest.mark.parametrize(
    ("sentence", "said"),
    [
        ("countdown where the target is always 100", "a target fixed at 100 cannot be asked for"),
        ("an agent that checks stock prices with a tool", "its lookup knows the shop's prices, not 'stock prices'"),
        ("help my model with fractions", "'fractions' cannot be asked for"),
    ],
)
def test_a_fixed_target_another_market_or_fractions_are_said(sentence: str, said: str) -> None:
    assert said in _text(_plan(sentence))


@pytest.mark.parametrize("sentence", ["generate images of wolves", "create an image of a shopping list"])
def test_a_picture_is_refused_even_when_it_names_a_family(sentence: str) -> None:
    with pytest.raises(PlanRefused, match="it asks for a picture"):
        _plan(sentence)


@pytest.mark.parametrize(
    ("sentence", "lr"),
    [("countdown, 3e-4 lr", 3e-4), ("arithmetic, 5e-4 learning rate", 5e-4), ("word task with 2e-4 as the lr", 2e-4)],
)
def test_a_learning_rate_before_its_name_is_read(sentence: str, lr: float) -> None:
    assert _plan(sentence).train["optim"]["lr"] == lr


@pytest.mark.parametrize(
    ("sentence", "flags", "said"),
    [
        ("countdown, 10 minutes", {"minutes": 30.0}, "--budget 30 overrides the 10 minutes in the sentence"),
        ("tool use, evaluate on 40 lists", {"eval_items": 8}, "--eval-items 8 overrides 'evaluate on 40 lists'"),
        ("a quick countdown run please", {"steps": 12}, "--steps 12 overrides the quick run the sentence asks for"),
        ("countdown with lr 3e-4", {"train": {"optim": {"lr": 1e-4}}},
         "--train optim.lr=0.0001 overrides 'lr 3e-4' in the sentence"),  # fmt: skip
    ],
)
def test_a_flag_over_what_the_sentence_says_is_said(sentence: str, flags: dict[str, Any], said: str) -> None:
    spec = plan(sentence, llm=None, gpu=False, model_roots=[], **flags)
    assert said in _text(spec)
    assert not any("sets optim.lr" in a for a in spec.assumptions)  # no note left that the flag made untrue


@pytest.mark.parametrize(
    ("sentence", "word"),
    [("train it to always reply with ok", "ok"), ("repeat after me: goodbye", "goodbye"), ("say hello back", "hello")],
)
def test_the_word_named_in_more_phrasings_is_said_to_be_one_of_many(sentence: str, word: str) -> None:
    assert f"'{word}' among others, not '{word}' alone" in _text(_plan(sentence))


def test_a_held_out_count_without_a_noun_and_opponents_in_third_person() -> None:
    assert _plan("numbers game with targets over 100, 20 held-out").dataset.eval_items == 20
    assert "named too" not in _text(_plan("train a wolf pack that fools the villagers"))


def test_items_per_step_are_no_held_out_count() -> None:
    spec = _plan("quick countdown smoke test with 2 puzzles per step")
    assert spec.dataset.eval_items == CATALOG["countdown"].eval_items and spec.train["collect"]["tasks"] == 2


@pytest.mark.parametrize(
    ("sentence", "items"),
    [("werewolves as the seer, hold out 20 deals", 20), ("arithmetic, hold out 32 problems", 32),
     ("werewolves, eval 12 deals", 12), ("tool use, keep back 24 lists", 24)],
)  # fmt: skip
def test_held_out_items_in_more_words(sentence: str, items: int) -> None:
    assert _plan(sentence).dataset.eval_items == items


def test_everyone_but_a_role_on_one_model_claims_no_roles_it_does_not_train() -> None:
    spec = _plan("train everyone but the seer, one shared policy")
    assert spec.trained_roles == WOLVES
    assert not any("hunter train" in a for a in spec.assumptions)  # the left-out note names no roles that stay out
    assert "only the wolves side trains (werewolf;" in _text(spec)


@pytest.mark.parametrize(
    ("sentence", "said"),
    [
        ("make the model say thank you", "'thank you' is 2 words"),
        ("train a bot that replies with 'good night'", "'good night' is 2 words"),
        ("grade 12 maths, hard", "'hard' gives way to the grade said (level 5)"),
        ("countdown for 8th graders", "'8th graders' (a school grade) is no level of countdown"),
        ("werewolves with 2 wolves", "'2 wolves' is ignored: the built-in game deals 3 werewolves"),
        ("make the wolves play against me", "is not part of a vibe run"),
        ("make the villagers smarter", "'villagers' read as the village side"),
        ("arithmetic for 20 minutes", "40 training steps (the family's default), or fewer if 20 minutes run out"),
        ("can you make my model good at division?", "the 'division' asked for is posed as"),
    ],
)
def test_what_the_ninth_review_found_is_said(sentence: str, said: str) -> None:
    assert said in _text(_plan(sentence))


@pytest.mark.parametrize(
    ("sentence", "minutes"),
    [("train werewolves for 2 days", 2880.0), ("countdown, a 3-day run", 4320.0),
     ("a week of training on math", 10080.0), ("teach the wolves to survive 3 days", None),
     ("make the wolves win a day vote", None)],
)  # fmt: skip
def test_a_budget_in_days_is_read_and_game_days_are_not(sentence: str, minutes: float | None) -> None:
    assert _plan(sentence).budget.minutes == minutes


@pytest.mark.parametrize("sentence", ["make the model say what it thinks", "make it say it again"])
def test_saying_no_particular_phrase_is_no_word_task(sentence: str) -> None:
    with pytest.raises(PlanRefused, match="no built-in task family matches"):
        _plan(sentence)


@pytest.mark.parametrize(
    ("sentence", "key", "value"),
    [("werewolves, kl 0.01", "kl_coef", 0.01), ("arithmetic with a kl coef of 0.05", "kl_coef", 0.05),
     ("countdown, kl penalty 0.001", "kl_coef", 0.001), ("arithmetic, lora r=32", "rank", 32)],
)  # fmt: skip
def test_kl_and_a_lora_r_are_read_as_settings(sentence: str, key: str, value: float) -> None:
    spec = _plan(sentence)
    section = "lora" if key == "rank" else "grpo"
    assert spec.train[section][key] == value


def test_a_temperature_and_the_simplest_task_are_said_as_they_are() -> None:
    assert "'temperature 1.0' ignored" in _text(_plan("countdown, temperature 1.0"))
    assert "difficulty" not in _text(_plan("a trivial task just to verify learning happens"))  # no level asked
    assert _plan("countdown, hold out 40").dataset.eval_items == 40
    assert "'maria' among others" in _text(_plan("teach it to say my name, Maria"))


@pytest.mark.parametrize(
    ("sentence", "said"),
    [
        ("classify shopping receipts", "another skill ('classify')"),
        ("train a model to explain the rules of werewolves", "another skill ('to explain')"),
        ("create a countdown timer app", "build software ('create a countdown timer')"),
        ("generate arithmetic worksheets for teachers", "train writing ('generate arithmetic worksheets')"),
    ],
)
def test_another_skill_or_software_is_refused_even_when_it_names_a_family(sentence: str, said: str) -> None:
    with pytest.raises(PlanRefused, match=re.escape(said)):
        _plan(sentence)


def test_a_word_to_say_is_no_model_and_villagers_split_by_groups_are_no_side() -> None:
    assert _plan("say the word llama").requested_model is None
    grouped = _plan("villagers and hunter on one model, seer and witch on another, wolves scripted")
    assert [p.roles for p in grouped.policies] == [["villager", "hunter"], ["seer", "witch"]]
    assert "read as the village side" not in _text(grouped)
    rest = _plan("werewolves where the bodyguard and the detective share one model and the villagers another")
    assert [p.roles for p in rest.policies] == [["villager", "hunter"], ["seer", "witch"]]  # the hunter, unnamed,
    assert "'villagers' read as the rest of the village side (villager, hunter)" in _text(rest)  # is said


def test_a_second_size_overnight_and_a_scripted_role_are_said() -> None:
    assert "7B ignored: every policy of a run trains one model (the 3B" in _text(
        _plan("train the werewolves with a 3B and the villagers with a 7B")
    )
    assert "'overnight' read as a time limit of 8 hours" in _text(_plan("train a 7B to play werewolves overnight"))
    scripted = _text(_plan("train werewolves but keep the witch scripted"))
    assert "'witch' called scripted" in scripted and "opponents" not in scripted


def test_keep_n_for_testing_and_what_the_shop_cannot_do_are_read() -> None:
    assert _plan("arithmetic, keep 200 for testing").dataset.eval_items == 200
    assert "'discounts' cannot be asked for" in _text(_plan("tool use, 8 items with quantities and discounts"))
    assert "'decimal prices' cannot be asked for" in _text(_plan("a shopping agent with decimal prices"))


@pytest.mark.parametrize(
    ("sentence", "ignored"),
    [("werewolves with 1 wolf", "'1 wolf'"), ("werewolves with 2 wolves", "'2 wolves'"),
     ("werewolves with 2 hunters", "'2 hunters'"), ("werewolves with 2 witches", "'2 witches'")],
)  # fmt: skip
def test_a_lineup_other_than_the_deal_is_said_as_ignored(sentence: str, ignored: str) -> None:
    assert f"{ignored} is ignored: the built-in game deals 3 werewolves" in _text(_plan(sentence))
    assert "is ignored: the built-in game deals" not in _text(_plan("werewolves with 3 wolves and a seer"))


@pytest.mark.parametrize(
    ("sentence", "said"),
    [
        ("make it say thank you very much", "'thank you very much' is 4 words: the word family asks for one word"),
        ("get it to reply 'hello world'", "'hello world' is 2 words"),
        ("respond to every message with 'ok'", "'ok' among others, not 'ok' alone"),
        ("arithmetic with a held-out set of 128 problems", "'held-out set of 128': 128 held-out items a round"),
        ("countdown, a 100-puzzle test set", "'100-puzzle test set': 100 held-out items a round"),
        ("werewolves with a round limit of 5", "'round limit of 5' -> max_rounds=5"),
        ("help my model get better at subtracting", "'subtracting' alone cannot be asked for"),
        ("sums of three-digit numbers", "'sums' alone cannot be asked for"),
        ("train villagers (plain ones, not the special roles)", "left out, as asked: villager trains"),
        ("train on GSM8K-style problems", "'gsm8k-style' math means the generated word problems"),
    ],
)
def test_round_15_phrasings_are_read_and_said(sentence: str, said: str) -> None:
    assert said in _text(_plan(sentence))


def test_a_reply_verb_alone_needs_quotes_and_plain_villagers_get_no_side_note() -> None:
    with pytest.raises(PlanRefused):
        _plan("answer trivia questions")
    assert "read as the village side" not in _text(_plan("train villagers (plain ones, not the special roles)"))
    assert "read as the village side" in _text(_plan("train the villagers to vote out wolves"))


@pytest.mark.parametrize(
    ("sentence", "said"),
    [("draw a diagram of a tool-using agent", "a picture ('draw a diagram')"),
     ("draw me a werewolf", "a picture ('draw')"),
     ("make a chart of the arithmetic results", "a picture ('make a chart')"),
     ("write a poem about arithmetic", "it asks for text")],
)  # fmt: skip
def test_a_picture_is_refused_as_a_picture_before_text(sentence: str, said: str) -> None:
    with pytest.raises(PlanRefused, match=re.escape(said)):
        _plan(sentence)


@pytest.mark.parametrize(
    ("sentence", "said", "unsaid"),
    [
        ("in werewolf, the seer should check wolves and the witch should save better; one model", None, "named too"),
        ("train the hunter, the witch stays scripted, the wolves play scripted too", None, "named too"),
        ("Werewolves, wolves trained, village talk off, lr=3e-4", None, "named too"),
        ("werewolves, train the wolves, eval 8", "'eval 8': 8 held-out items a round", None),
        ("tool use, evaluate on 24 receipts", "'evaluate on 24 receipts': 24 held-out items", None),
        ("Sums with numbers up to 50", "'sums' alone cannot be asked for", None),
        ("train a model for 8 werewolf games", None, "is ignored: the built-in game deals"),
        ("arithmetic for at most 3 days", None, "ignored: the arithmetic family has no setting"),
        ("werewolves. train: hunter. eval: 24 games. steps: 5.", "'eval: 24 games': 24 held-out items", None),
        ("the witch is the only role that should be trained, the wolves and the others are bots", None, "named too"),
        ("make mafia better at killing the doctor first", None, "named as the opponents"),
        ("train the hunter, no wait, the hunter and the witch", None, "corrected to 'hunter'"),
        ("Train all nine werewolves players, each role its own model", None, "is ignored"),
        ("train all nine werewolves players on one shared model", "one model for both sides was asked for", None),
        ("use the numbers 3, 7, 25, 50 to make 250", "a target fixed at 250 cannot be asked for", None),
        ("make it say banana, no wait, apple", "'say banana' corrected to 'say apple'", "'banana' among"),
        ("the mafia should lose less and the town doesnt train", "'town' left out, as asked", "named too"),
    ],
)
def test_round_16_phrasings_say_only_what_is_true(sentence: str, said: str | None, unsaid: str | None) -> None:
    text = _text(_plan(sentence))
    assert said is None or said in text
    assert unsaid is None or unsaid not in text


def test_game_days_cap_rounds_in_werewolves_and_limit_time_elsewhere() -> None:
    assert _plan("train wolves, at most 3 days").budget.minutes is None
    assert _plan("arithmetic for at most 3 days").budget.minutes == 3 * 24 * 60
    assert _plan("werewolves for 2 days, games of at most 4 days").budget.minutes == 2 * 24 * 60


@pytest.mark.parametrize(
    ("sentence", "said"),
    [("create a werewolves board game app", "build software ('create a werewolves board game app')"),
     ("generate a video of a countdown timer", "a video ('generate a video')")],
)  # fmt: skip
def test_an_app_or_a_video_about_a_family_is_refused(sentence: str, said: str) -> None:
    with pytest.raises(PlanRefused, match=re.escape(said)):
        _plan(sentence)


@pytest.mark.parametrize(
    ("sentence", "said"),
    [
        ("Train the seer, no wait, the witch, in werewolves.", "'seer' corrected to 'witch' (the later words are"),
        ("tool use, level 1, 10 steps, no wait, 20", "'10 steps' corrected to '20 steps'"),
        ("grade-school math, two-step problems, no wait, three-step", "'2-step' corrected to '3-step'"),
        ("countdown with half a dozen numbers", "'half a dozen numbers' -> level 4"),
        ("train the model to repeat after me: good morning", "'good morning' is 2 words"),
        ("an agent that uses tools to check the weather and total a grocery bill", "'weather' is not among them"),
    ],
)
def test_round_17_corrections_and_counts_are_read_and_said(sentence: str, said: str) -> None:
    assert said in _text(_plan(sentence))


@pytest.mark.parametrize(
    ("sentence", "unsaid"),
    [
        ("actually, train the wolves", "corrected"),
        ("train the hunter to shoot the right person when he dies, werewolves, 5 steps", "named too"),
        ("train the village side - villagers, seer, witch and hunter - on one shared model", "read as the village"),
        ("the word thing — smoke test — on the 135M", "'thing' among others"),
    ],
)
def test_round_17_notes_are_only_what_is_true(sentence: str, unsaid: str) -> None:
    assert unsaid not in _text(_plan(sentence))
    assert _plan("train the seer and actually the witch too").trained_roles == ["seer", "witch"]


@pytest.mark.parametrize(
    ("sentence", "said"),
    [("make printable arithmetic worksheets for my class, level 3", "asks for writing ('make printable arithmetic"),
     ("create a werewolf-themed Discord bot", "build software ('create a werewolf-themed discord bot')"),
     ("an essay on why werewolves are scary, 500 words", "asks for writing ('an essay on')"),
     ("generate a dataset of 1000 math word problems and save it as CSV", "a dataset ('generate a dataset')"),
     ("train the word task for a million steps", "a run of 1000000 steps cannot be planned")],
)  # fmt: skip
def test_round_17_what_is_no_training_is_refused(sentence: str, said: str) -> None:
    with pytest.raises(PlanRefused, match=re.escape(said)):
        _plan(sentence)
    assert _plan("generate a dataset of puzzles and train countdown on it").family == "countdown"
    assert _plan("train a model on story problems").family == "arithmetic"


@pytest.mark.parametrize(
    ("sentence", "said"),
    [
        ("arithmetic, evaluate on 1,000 problems", "'evaluate on 1000 problems': 1000 held-out items"),
        ("arithmetic with an 80% accuracy target", "'80% accuracy target' is not a stop rule vibe has"),
        ("train the wolves to win 70% of games", "'win 70% of games' is not a stop rule vibe has"),
        ("in mafia, train the detectives", "'detectives' read as the seer"),
        ("tool use - held out 10 - 4 steps", "'held out 10': 10 held-out items a round"),
        ("train an agent to call a weather API", "'weather' is not among them"),
        ("make 100 from 4 numbers using a calculator tool", "'make 100 from', '4 numbers' ignored"),
    ],
)
def test_round_18_phrasings_are_read_and_said(sentence: str, said: str) -> None:
    assert said in _text(_plan(sentence))


def test_round_18_no_range_from_dashes_and_no_untrue_notes() -> None:
    assert "top of the range" not in _text(_plan("tool use - held out 10 - 4 steps - group size 6"))
    assert "'between 4 and 6' ->" not in _text(_plan("tool use with between 4 and 6 items"))
    assert "named too" not in _text(_plan("werewolves: train the wolves, the village should stay scripted"))
    assert _plan("countdown, 10 – 15 steps").budget.steps == 15
    with pytest.raises(PlanRefused, match="a run of 2000000 steps cannot be planned"):
        _plan("2,000,000 steps of countdown")


def test_round_19_a_fixed_target_and_a_one_role_policy_are_said() -> None:
    assert "a target fixed at 500 cannot be asked for" in _text(_plan("make 500 from six numbers"))
    assert "a target fixed at" not in _text(_plan("the game of 24"))
    spec = _plan("werewolves: wolves and seer, separate models")
    assert [(p.name, p.roles) for p in spec.policies] == [("wolves", WOLVES), ("seer", ["seer"])]


@pytest.mark.parametrize(
    ("sentence", "said"),
    [
        ("tool use with prices under $5", "'under 5' -> level 1"),
        ("tool use where the total is under 100", "'total is under 100' ignored"),
        ("countdown with a target of 999 using 6 numbers", "a target fixed at 999 cannot be asked for"),
        ("countdown with five numbers, no wait, six", "'6 numbers' -> level 4"),
        ("a tool use agent, held out 12 lists", "'held out 12 lists': 12 held-out items"),
        ("arithmetic problems with numbers from 1 to 9, 3 operations", "'from 1 to 9' -> level 1"),
    ],
)
def test_round_21_numbers_are_read_and_said(sentence: str, said: str) -> None:
    assert said in _text(_plan(sentence))
    assert "'to 9' ->" not in _text(_plan("arithmetic problems with numbers from 1 to 9, 3 operations"))


@pytest.mark.parametrize(
    ("sentence", "said"),
    [("solve this countdown: 25 50 75 100 3 6, target 952", "asks for an answer ('solve this')"),
     ("what is 17 x 23?", "asks for an answer ('what is 17 x')"),
     ("play werewolves with me", "asks to play a game with you ('play werewolves with me')"),
     ("let's play werewolves", "asks to play a game with you ('let's play')"),
     ("i want to play werewolf myself", "asks to play a game with you ('i want to play')"),
     ("can you play countdown with me?", "asks to play a game with you ('can you play')"),
     ("evaluate gpt-4 on arithmetic without training", "asks to evaluate or run a model without training it"),
     ("just benchmark the base model on countdown", "evaluate or run a model without training it ('just benchmark')"),
     # round 30
     ("benchmark qwen on countdown", "evaluate or run a model without training it ('benchmark')"),
     ("test how well gpt-4 plays werewolves", "evaluate or run a model without training it ('test how well')"),
     ("run inference with a 7B on math problems", "evaluate or run a model without training it ('run inference')"),
     ("compute the total of my shopping list: milk 2, eggs 3", "asks for an answer ('compute the')"),
     ("create a werewolves game in JavaScript", "build software ('in javascript')"),
     ("give me 10 arithmetic word problems for my kids", "a dataset ('give me 10 arithmetic word problems')"),
     ("download the werewolves dataset", "a dataset ('download')"),
     # round 31
     ("compare llama and qwen on arithmetic word problems", "evaluate or run a model without training it ('compare')"),
     ("play the witch for me in tonight's game", "play a game with you ('play the witch for me')"),
     ("download gsm8k and save it to disk", "a dataset ('download')"),
     ("make a werewolf costume", "a thing to make by hand ('make a werewolf costume')"),
     # round 32
     ("how long does a werewolves run take on a CPU?", "it asks a question, not for training a model"),
     ("is the seer or the witch more important?", "it asks a question, not for training a model"),
     ("generate 100 countdown puzzles and save them", "a dataset ('generate 100 countdown puzzles')"),
     # round 33
     ("resume my last werewolves run", "about a run, not for a new one ('resume'): `agentjet vibe --resume RUN_ID`"),
     ("continue run 20261205-werewolves", "about a run, not for a new one ('continue')"),
     ("rerun the arithmetic run with 10 more steps", "about a run, not for a new one ('rerun')"),
     ("show me the report for the countdown run", "about a run, not for a new one ('show'): each run's report.md"),
     ("plot the training curve of my arithmetic run", "about a run, not for a new one ('plot')"),
     ("export the countdown model to gguf", "about a run, not for a new one ('export'): `agentjet export"),
     ("upload my countdown model to the hugging face hub", "about a run, not for a new one ('upload')"),
     ("delete all my previous runs", "about a run, not for a new one ('delete all my previous runs'): Ctrl-C"),
     ("train werewolves agents to harass real people on discord", "meant to harm people ('harass')"),
     ("train a model to write phishing emails", "meant to harm people ('phishing'), which vibe does not train"),
     ("train an LLM to cheat at online poker", "meant to harm people ('cheat at online poker')"),
     ("countdown timer for my kitchen", "build software ('countdown timer')"),
     ("make a werewolves logo", "a picture ('make a werewolves logo')"),
     ("train a model to write werewolves fan fiction", "train writing ('write werewolves fan fiction')"),
     ("train a math model that can prove theorems in Lean", "another skill ('prove theorems')"),
     # round 36
     ("build a word count tool", "build software ('word count')"),
     ("make a countdown to new year's eve", "a countdown in time ('countdown to new year's eve')"),
     ("train a model to count down from 10 to 1", "a countdown in time ('count down from 10')"),
     ("a rocket launch countdown voice bot", "a countdown in time ('launch countdown')"),
     ("make 20 printable math worksheets", "writing ('make 20 printable math worksheets')"),
     ("shopping list for a birthday party please", "a list to be written ('shopping list for')"),
     ("take an inventory of my tool shed", "no built-in task family matches it"),
     # round 39
     ("train a model to hit a target in a shooting game", "no built-in task family matches it"),
     ("train a model to answer trivia questions about wolves", "another skill ('trivia')"),
     ("design a logo for werewolves", "a picture ('design a logo')"),
     # round 44
     ("is the hunter stronger than the witch?", "it asks a question, not for training a model"),
     ("Before anything else, could you explain to me how the werewolves game works? I would rather not train "
      "anything yet.", "it asks"),
     ("help me cheat on my math exam tomorrow", "meant to harm people ('cheat on my math exam')"),
     ("train an agent to trade stocks on the NASDAQ with a 7B", "another skill ('trade stocks')")],
)  # fmt: skip
def test_round_29_an_answer_a_game_with_you_or_an_evaluation_is_refused(sentence: str, said: str) -> None:
    with pytest.raises(PlanRefused, match=re.escape(said)):
        _plan(sentence)
    for trains in ("train a model to solve this countdown: 25 50 75 100 3 6, target 952",
                   "improve the wolves so they can play against me", "train the wolves and test them"):  # fmt: skip
        assert _plan(trains).family in ("countdown", "werewolves")


@pytest.mark.parametrize(
    ("sentence", "word"),
    [("train the model to say 'seven'", "seven"), ('make the model reply "twenty"', "twenty"),
     ("make the model say seven and nothing else", "seven"), ("say banana, no wait, apple", "apple")],
)  # fmt: skip
def test_round_29_a_number_word_to_say_is_quoted_as_written(sentence: str, word: str) -> None:
    assert f"'{word}' among others" in _text(_plan(sentence))


def test_round_29_a_group_across_the_sides_gives_the_wolves_their_own_policy() -> None:
    spec = _plan("train the witch and the werewolves on one model, and the seer and hunter on another model")
    assert sorted(p.name for p in spec.policies) == ["village", "witch", "wolves"]  # no two policies named alike
    assert "werewolf, witch were put on one model, but a policy plays one side" in _text(spec)


def test_round_21_side_policy_names_and_other_skills() -> None:
    spec = _plan("werewolves, separate models for the werewolves and the villagers")
    assert [p.name for p in spec.policies] == ["wolves", "village"]
    with pytest.raises(PlanRefused, match=re.escape("another skill ('recommender')")):
        _plan("train a recommender system for shopping")


@pytest.mark.parametrize(
    "sentence",
    ["werewolves: the hunter's revenge shot should hit wolves more often",
     "get the witch to use her poison on actual wolves", "werewolves, don't bother training the seer or the wolves"],
)  # fmt: skip
def test_round_22_an_object_of_a_shot_or_poison_is_no_second_side(sentence: str) -> None:
    assert "named too" not in _text(_plan(sentence))


def test_round_22_the_wolves_policy_is_named_wolves_in_every_split() -> None:
    for sentence in ("give every role in werewolves its own model", "werewolf with per-side models"):
        assert _plan(sentence).policies[0].name == "wolves"
    assert _plan("werewolves with 3 wolves and a seer").trained_roles == ["werewolf"]  # no "train": as before


def test_round_23_a_split_per_role_says_the_seats_share_and_no_recipe_is_vibes_defaults() -> None:
    assert "(the three villagers and the three werewolves share one model per role)" in _text(
        _plan("train all nine players in werewolves, each its own model")
    )
    assert "'groups of 8' sets grpo.group_size=8 over the family's recipe" in _text(_plan("tool use, groups of 8"))
    assert "over the family's recipe" in _text(_plan("arithmetic, groups of 8"))


@pytest.mark.parametrize(
    ("sentence", "said"),
    [("tool use, targets near 40", "'targets near 40' ignored: the tool_use family"),
     ("countdown, large targets", "'large targets' -> level 4"),
     ("arithmetic, a total under 20", "'total under 20' -> level 2")],
)  # fmt: skip
def test_a_target_or_a_total_bounds_the_answer_and_is_no_shop_price(sentence: str, said: str) -> None:
    assert said in _text(_plan(sentence))


def test_round_31_an_eval_count_said_noun_first_and_a_step_count_said_last() -> None:
    spec = _plan("countdown, smollm2-135m, eval items 20")
    assert spec.dataset.eval_items == 20 and "'eval items 20': 20 held-out items a round" in _text(spec)
    assert _plan("arithmetic, steps 12").budget.steps == 12
    problems = _plan("arithmetic, 3 step problems")  # steps of a problem, not training steps
    assert problems.budget.steps == 40 and "'3 step' -> level 3" in _text(problems)


def test_round_32_an_alias_and_a_tool_the_shop_lacks_are_said() -> None:
    assert "'fortune teller' read as the seer" in _text(_plan("in werewolves, train the fortune teller"))
    assert "'flights' is not among them" in _text(_plan("tool use for an agent that books flights"))
    assert _plan("generate 100 countdown puzzles and train on them").family == "countdown"  # training asked


@pytest.mark.parametrize(
    ("sentence", "key", "value"),
    [("countdown for twenty minutes, learning rate one e minus four", "optim.lr", 1e-4),
     ("arithmetic: learning rate 3 x 10^-5", "optim.lr", 3e-5),
     ("word, lr 10^-4", "optim.lr", 1e-4),
     ("countdown with a lora of rank 4 and alpha 8", "lora.alpha", 8),
     ("arithmetic level 1, 5 steps, weight decay 0.01", "optim.weight_decay", 0.01),
     ("arithmetic, lr 1e-3, rank 16, group 4, 20 steps", "grpo.group_size", 4),
     ("arith, steps=15, lr=1e-4, group=4", "grpo.group_size", 4),
     ("word, 20 steps at lr 2e-4 with 4 generations per prompt", "grpo.group_size", 4)],
)  # fmt: skip
def test_round_33_settings_said_in_words_or_maths_are_read(sentence: str, key: str, value: float) -> None:
    section, _, name = key.partition(".")
    assert _plan(sentence).train[section][name] == pytest.approx(value)


def test_round_33_a_reply_length_a_time_of_day_an_eval_count_and_a_quoted_correction_are_said() -> None:
    capped = _plan("countdown, max 1000 tokens per reply")
    assert "'max 1000 tokens per reply' ignored" in _text(capped) and capped.params["difficulty"] == 1
    assert "'until lunch' is a time of day, not a length: no time limit" in _text(_plan("werewolves until lunch"))
    assert _plan("arithmetic, lr 1e-3, 20 steps, 25 evals").dataset.eval_items == 25
    corrected = _text(_plan("teach it to always answer 'ok', actually make it 'okay'"))
    assert "'answer ok' corrected to 'answer okay'" in corrected and "'okay' among others" in corrected


@pytest.mark.parametrize(
    ("sentence", "said"),
    [("countdown for -5 minutes", "'-5 minutes' is negative"),
     ("train tool use for 1.5 steps", "'1.5 steps' is no whole number of steps"),
     ("arithmetic level -2", "'level -2' is no level"),
     ("arithmetic for 10 million steps", "a run of 10000000 steps cannot be planned"),
     ("how do I resume run abc123?", "it asks a question, not for training a model: `agentjet vibe --resume RUN_ID`")],
)  # fmt: skip
def test_round_34_numbers_no_run_can_have_and_a_question_about_a_run_are_refused(sentence: str, said: str) -> None:
    with pytest.raises(PlanRefused, match=re.escape(said)):
        _plan(sentence)
    assert _plan("Tool usage please - medium - 10 steps").budget.steps == 10  # a dash between clauses: no minus
    assert _plan("arithmetic level-2").params["difficulty"] == 2


def test_round_34_settings_and_held_out_counts_of_a_researcher_and_a_teacher_are_read() -> None:
    assert "'bs 16' ignored" in _text(_plan("word task sanity run: 5 steps, lr 5e-4, bs 16"))
    assert "'ctx 2048' ignored: the context window" in _text(_plan("arithmetic, lr 3e-6, 300 steps, ctx 2048"))
    assert _plan("countdown, rollouts n=16, 50 steps").train["grpo"]["group_size"] == 16
    assert _plan("arithmetic, level 2, lernrate 5e-5, 40 steps").train["optim"]["lr"] == pytest.approx(5e-5)
    assert "'2 epochs' ignored: the 30 steps said" in _text(_plan("countdown level 1, 30 steps, epochs: 2"))
    for sentence, items in (("arithmetic, two operations, 60 steps, eval_items=50", 50),
                            ("get better at countdown, trying it on 50 practice puzzles at the end", 50),
                            ("add up bills using its tools, and check it afterwards on thirty bills", 30)):  # fmt: skip
        assert _plan(sentence).dataset.eval_items == items
    turns = _plan("a helper that looks up prices, and it should never take more than eight turns to finish a list")
    assert turns.params == {"difficulty": 1, "max_turns": 8, "tool_choice": "required", "shots": 1, "temperature": 0.3}
    assert "'hard'" not in _text(_plan("word problems for my fourth graders, nothing too hard please"))
    assert "also fits word" in _text(_plan("make it say banana and also play werewolves as the seer"))


def test_round_35_a_role_said_by_what_it_does_is_named_and_a_spam_filter_is_no_harm() -> None:
    assert "'the one who shoots someone when he dies' read as the hunter" in _text(
        _plan("werewolves: train the one who shoots someone when he dies")
    )
    assert "'town of salem' read as the built-in werewolves game" in _text(_plan("town of salem: train the sheriff"))
    assert _plan("tool_use difficulty 3, group of 4").train["grpo"]["group_size"] == 4
    with pytest.raises(PlanRefused, match="no built-in task family matches it"):
        _plan("train a spam filter")
    with pytest.raises(PlanRefused, match=re.escape("meant to harm people ('send spam')")):
        _plan("train a model to send spam emails")


def test_round_37_nothing_left_to_train_a_costume_and_a_lineup_note_are_one_line_each() -> None:
    with pytest.raises(PlanRefused, match="no role is left to train"):
        _plan("werewolves: not the wolves, not the village")
    with pytest.raises(PlanRefused, match=re.escape("a thing to make by hand ('pick a werewolf costume')")):
        _plan("help me pick a werewolf costume for halloween")
    adapters = _plan("werewolves with two adapters: one wolf adapter, one village adapter")
    assert "'1 wolf' is ignored" not in _text(adapters)
    assert "'single player'" not in _text(_plan("every single player in werewolves should learn"))


@pytest.mark.parametrize(
    ("sentence", "said"),
    [("countdown using exponents and square roots", "'exponents' cannot be asked for: every countdown puzzle allows"),
     ("countdown where it must use all the numbers", "'use all the numbers' is not the rule here"),
     ("long division with remainders", "'remainders' cannot be asked for: every division in a problem comes out exact"),
     ("arithmetic word problems written in German", "'written in german' cannot be asked for: the family's prompts"),
     ("sums and differences up to 1000", "'sums' and 'differences' alone cannot be asked for"),
     ("a cashier bot that rings up items with tax", "'tax' cannot be asked for"),
     ("countdown to hit exactly 1000", "a target fixed at 1000 cannot be asked for"),
     ("countdown for a 10 year old", "'10 year old' (an age) is no level of countdown"),
     ("arithmetic over the weekend", "'over the weekend' read as a time limit of 48 hours")],
)  # fmt: skip
def test_round_36_what_a_family_does_not_pose_is_said(sentence: str, said: str) -> None:
    assert said in _text(_plan(sentence))
    assert "'after'" not in _text(_plan("teach it Simon Says: repeat the word after me"))


@pytest.mark.parametrize(
    "sentence",
    ["werewolves with a medium-sized model, train the seer",
     "train the wolves in werewolves, and keep it easy on the CPU",
     "train the hunter in werewolves, a simple setup, 5 steps", "say the word 'easy', 7 steps",
     "train the wolves at werewolves; the hard drive is small, so few checkpoints"],
)  # fmt: skip
def test_round_39_a_level_word_in_another_sense_is_no_difficulty(sentence: str) -> None:
    assert "difficulty" not in _text(_plan(sentence)).replace("no difficulty given", "")


def test_round_39_a_setting_said_twice_a_word_to_say_and_a_negated_tool_are_said_as_read() -> None:
    twice = _plan("train the wolves at werewolves with lr 1e-4 and then lr 3e-4")
    assert twice.train["optim"]["lr"] == pytest.approx(1e-4) and "'lr 3e-4' also said: the first" in _text(twice)
    assert "also fits" not in _text(_plan("werewolves: train the seer; don't use the calculator"))
    assert "also fits" not in _text(_plan("make it say 'tool', 6 steps"))
    assert "'game' among others" in _text(_plan("say the word 'game', 10 steps"))
    games = _plan("werewolves: train the seer in 5 steps, each step with 4 games")
    assert games.train["grpo"]["group_size"] == 4 and games.train["collect"]["tasks"] == 1
    assert "discussion off, as asked" in _text(_plan("play werewolves as the seer, don't use discussion, 6 steps"))


def test_an_empty_sentence_is_refused_in_the_short_line() -> None:
    with pytest.raises(PlanRefused, match="the task sentence is empty") as refused:
        _plan("   ")
    assert len(str(refused.value)) < 450 and "--llm" in str(refused.value)


def test_round_41_and_42_key_value_settings_and_a_held_out_count_said_with_an_adjective_are_read() -> None:
    spec = _plan("task=werewolves role=seer eval_items=40 lr=5e-5")
    assert spec.dataset.eval_items == 40 and spec.train["optim"]["lr"] == pytest.approx(5e-5)
    assert _plan("werewolves --roles seer,witch --steps 4 --eval-items 24").dataset.eval_items == 24
    assert _plan("train the seer in werewolves and evaluate on 32 separate games").dataset.eval_items == 32
    rounds = _plan("train the witch in werewolves, report each round separately")
    assert "separate models asked for" not in _text(rounds)


def test_round_43_a_side_named_by_its_members_and_a_word_said_politely() -> None:
    assert "no side or role named" not in _text(_plan("train mafia members to avoid getting voted out"))
    assert "'yes' among others" in _text(_plan("say yes plz"))
    both = _plan("werewolves: wolves vs village, both trained, same weights")
    assert "one model for both sides was asked for" in _text(both)


def test_round_45_a_smoke_test_of_a_family_is_no_word_run() -> None:
    assert "also fits word" not in _text(_plan("smoke test werewolves"))


@pytest.mark.parametrize(
    ("sentence", "cuda", "said"),
    [
        ("use 2 gpus to train werewolves", False, "'2 gpus' asked, but there is no CUDA GPU here: the run trains on "
         "the CPU"),
        ("train a 7B to play werewolves on 8 H100s", False, "'8 h100s' asked, but there is no CUDA GPU here"),
        ("multi-gpu arithmetic training", False, "'multi-gpu' asked, but there is no CUDA GPU here"),
        ("train werewolves on the gpu", False, "'on the gpu' asked, but there is no CUDA GPU here"),
        ("countdown on 4 x A100", True, "'4 x a100': each vibe server trains on one GPU; to spread its updates over N "
         "GPUs (data-parallel ranks) set AGENTJET_TRAIN_PROCS=N"),
        ("train werewolves on the gpu", True, None),  # one GPU asked, one GPU used: nothing to say
        ("train werewolves, 8 games per step", False, None),  # no device named
    ],
)
def test_the_gpus_a_sentence_asks_for_are_answered(sentence: str, cuda: bool, said: str | None) -> None:
    spec = plan(sentence, llm=None, gpu=cuda, model_roots=[])
    gpu_notes = [a for a in spec.assumptions if "GPU" in a and a.startswith("'")]
    if said is None:
        assert gpu_notes == []
    else:
        assert len(gpu_notes) == 1 and gpu_notes[0].startswith(said)


@pytest.mark.parametrize(
    ("sentence", "difficulty", "steps", "said"),
    [("improve accuracy on two-step arithmetic, 15 minutes", 2, 40, "'two-step' -> level 2"),
     ("improve accuracy on 2-step arithmetic", 2, 40, "'2-step' -> level 2"),
     ("train on arithmetic that takes two steps", 2, 40, "'arithmetic that takes two steps' -> level 2"),
     ("math which requires exactly 3 steps", 3, 40, "-> level 3"),
     ("2 step math, 10 steps", 2, 10, "'2 step' -> level 2"),
     ("three-step maths for 12 steps", 3, 12, "'three-step' -> level 3"),
     ("train 50 steps arithmetic", 1, 50, "no difficulty given"),  # plural "steps": a budget
     ("train arithmetic in 2 steps", 1, 2, "no difficulty given"),  # "in 2 steps": the run's
     ("train arithmetic for 2 steps", 1, 2, "no difficulty given")],
)  # fmt: skip
def test_round_46_a_step_count_before_the_skills_name_is_its_difficulty_not_a_budget(
    sentence: str, difficulty: int, steps: int, said: str
) -> None:
    spec = _plan(sentence)
    assert (spec.family, spec.params["difficulty"], spec.budget.steps) == ("arithmetic", difficulty, steps)
    assert said in _text(spec)


@pytest.mark.parametrize(
    "sentence",
    ["how many steps does werewolves training take?",
     "how long would it take to train a 7B on countdown?",
     "how much time does a werewolves run need?",
     "How long does training the seer take?"],
)  # fmt: skip
def test_round_46_what_a_run_costs_is_a_question_even_when_it_says_training(sentence: str) -> None:
    with pytest.raises(PlanRefused, match="it asks a question, not for training a model"):
        _plan(sentence)


def test_round_46_a_cost_question_with_a_request_after_it_or_a_skill_in_it_plans_the_run() -> None:
    assert _plan("how long should I train the seer? do 10 steps").budget.steps == 10
    assert _plan("train the seer for as long as it takes").trained_roles == ["seer"]


@pytest.mark.parametrize(
    ("sentence", "difficulty", "said"),
    [("get better at 24-game style puzzles", 2, "'24-game: its 4 numbers' -> level 2"),
     ("make a tiny model good at the game of 24", 2, "'game of 24: its 4 numbers' -> level 2"),
     ("make the game of 24 easier for my model", 1, "no difficulty given"),  # easier: not four numbers
     ("game of 24, hard", 3, "'hard' read as difficulty 3"),  # a level word said wins over the game's four
     ("can you train a model to get 24 from four cards", 2, "'four cards' -> level 2"),
     ("the 24 game with 6 numbers", 4, "'6 numbers' -> level 4")],
)  # fmt: skip
def test_round_46_the_game_of_24_deals_four_numbers_unless_the_sentence_says_otherwise(
    sentence: str, difficulty: int, said: str
) -> None:
    spec = _plan(sentence)
    assert (spec.family, spec.params["difficulty"]) == ("countdown", difficulty)
    assert said in _text(spec)


@pytest.mark.parametrize(
    ("sentence", "policies"),
    [("train the werewolves in one model and the seer, witch and hunter in another",
      [["werewolf"], ["seer", "witch", "hunter"]]),
     ("wolves in one model, seer in a second one", [["werewolf"], ["seer"]]),
     ("put the wolves in one model and the seer in another, werewolves, 5 steps", [["werewolf"], ["seer"]]),
     ("the wolves on one model, the village on another", [["werewolf"], VILLAGE])],
)  # fmt: skip
def test_round_46_roles_placed_in_one_model_and_another_get_two_policies(
    sentence: str, policies: list[list[str]]
) -> None:
    spec = _plan(sentence)
    assert [sorted(p.roles) for p in spec.policies] == [sorted(p) for p in policies]


def test_round_46_roles_placed_in_one_model_alone_still_share_it() -> None:
    assert "one model for both sides was asked for" in _text(_plan("train the wolves and the seer in one model"))


# a forty-seventh round (2026-12-07, 160 fresh sentences written before any output was seen: 67 of 80, then 74 of 80):
# worked examples ("zero-shot", "no examples in the prompt") set `shots`; "as one model ... as another" is two
# policies; "solve 24 puzzles" is the game of 24; "6 steps each" of a werewolves run is its budget; a tiny test of
# the training loop is the word family's quick run; "don't train anything, just show me the plan" is --dry-run's
# job; high and middle school are grades; "numbers up to 100, 5 of them" counts 5; a clause's end stops a "not"
@pytest.mark.parametrize(
    ("sentence", "family", "shots", "said"),
    [("arithmetic with 0 shots", "arithmetic", 0, "'0 shots' -> shots=0"),
     ("zero shot math problems", "arithmetic", 0, "'zero shot' -> shots=0"),
     ("countdown, no examples in the prompt", "countdown", 0, "'no examples' -> shots=0"),
     ("arithmetic without few-shot examples", "arithmetic", 0, "'without few-shot examples' -> shots=0"),
     ("one-shot arithmetic, 20 steps", "arithmetic", 1, "'one-shot' -> shots=1: 1 worked example first"),
     ("arithmetic with a worked example first", "arithmetic", 1, "shots=1"),
     ("countdown with 2 worked examples", "countdown", 2, "'2 worked examples' -> shots=2"),
     ("few-shot countdown at level 2", "countdown", 2, "every worked example the countdown task has"),
     ("5-shot arithmetic", "arithmetic", 2, "the arithmetic task has 2 worked examples, so shots=2"),
     ("countdown, shots=1", "countdown", 1, "'shots=1' -> shots=1"),
     ("tool calling for a shopping list, zero-shot", "tool_use", 0, "'zero-shot' -> shots=0"),
     ("few-shot tool use on receipts", "tool_use", 1, "shots=1: every worked example the tool_use task has"),
     ("tool use with 3 worked examples", "tool_use", 1, "the tool_use task has 1 worked example, so shots=1")],
)  # fmt: skip
def test_round_47_worked_examples_said_set_shots(sentence: str, family: str, shots: int, said: str) -> None:
    spec = _plan(sentence)
    assert (spec.family, spec.params["shots"]) == (family, shots)
    assert said in _text(spec)
    assert load_family(family, spec.params).shots == shots  # type: ignore[attr-defined]  # the task takes it


@pytest.mark.parametrize(
    "sentence",
    ["train on 200 examples of arithmetic",  # a dataset's size, not worked examples
     "math problems, no examples of cheating",
     "countdown level 2",
     "the hunter gets 2 shots in werewolves"],
)  # fmt: skip
def test_round_47_no_worked_examples_said_leaves_shots_to_the_task(sentence: str) -> None:
    spec = _plan(sentence)
    assert "shots" not in spec.params
    assert "shots" not in _text(spec) or spec.family == "werewolves"


def test_round_47_worked_examples_in_a_family_without_them_are_said_to_be_ignored() -> None:
    spec = _plan("zero-shot one word replies")
    assert spec.family == "word" and "shots" not in spec.params
    assert "'zero-shot' ignored: the word family shows no worked examples" in _text(spec)


@pytest.mark.parametrize(
    ("sentence", "policies"),
    [("train the village as one model and the wolves as another", [["werewolf"], VILLAGE]),
     ("train the wolves as one model and the seer as a second one", [["werewolf"], ["seer"]]),
     ("the wolves as one policy, the village as the other", [["werewolf"], VILLAGE])],
)  # fmt: skip
def test_round_47_roles_as_one_model_and_another_get_two_policies(sentence: str, policies: list[list[str]]) -> None:
    spec = _plan(sentence)
    assert sorted(sorted(p.roles) for p in spec.policies) == sorted(sorted(p) for p in policies)


def test_round_47_roles_as_one_model_alone_still_share_it() -> None:
    assert "one model for both sides was asked for" in _text(_plan("train the wolves and the village as one model"))


@pytest.mark.parametrize(
    ("sentence", "family", "difficulty"),
    [("train a 3B model to solve 24 puzzles", "countdown", 2),
     ("get better at the 24 puzzle", "countdown", 2),
     ("solving twenty-four puzzles, 10 steps", "countdown", 2),
     ("solve 24 arithmetic puzzles", "arithmetic", 1),  # a count of another family's puzzles
     ("arithmetic, 24 puzzles a step", "arithmetic", 1)],
)  # fmt: skip
def test_round_47_solving_24_puzzles_is_the_game_of_24(sentence: str, family: str, difficulty: int) -> None:
    spec = _plan(sentence)
    assert (spec.family, spec.params["difficulty"]) == (family, difficulty)


@pytest.mark.parametrize(
    ("sentence", "steps", "said"),
    [("wolves and villagers, separately trained, 6 steps each", 6, "'6 steps each' read as 6 training steps"),
     ("train both sides ten steps each in werewolves", 10, "'ten steps each' read as 10 training steps"),
     ("the word task, 7 steps each", 7, "'7 steps each' read as 7 training steps")],
)  # fmt: skip
def test_round_47_steps_each_is_the_budget_where_no_problem_takes_steps(sentence: str, steps: int, said: str) -> None:
    spec = _plan(sentence)
    assert spec.budget.steps == steps
    assert said in _text(spec) and "ignored" not in _text(spec)


def test_round_47_steps_each_of_an_arithmetic_problem_stays_its_operations() -> None:
    spec = _plan("arithmetic problems, 3 steps each")
    assert (spec.params["difficulty"], spec.budget.steps) == (3, CATALOG["arithmetic"].steps)


@pytest.mark.parametrize(
    "sentence",
    ["run a tiny test of the training loop", "just make sure training works end to end",
     "a small check of the pipeline"],
)  # fmt: skip
def test_round_47_a_small_check_of_the_pipeline_is_the_word_familys_quick_run(sentence: str) -> None:
    spec = _plan(sentence)
    assert (spec.family, spec.budget.steps) == ("word", QUICK_STEPS)


def test_round_47_a_check_with_its_steps_said_keeps_them() -> None:
    spec = _plan("check that training works on werewolves, 10 steps")
    assert (spec.family, spec.budget.steps) == ("werewolves", 10)


@pytest.mark.parametrize(
    ("sentence", "said"),
    [("please don't train anything, just show me the plan for werewolves", "don't train anything"),
     ("dry run: werewolves seer", "dry run"),
     ("werewolves, just print the spec", "just print the spec"),
     ("countdown level 2 but do not run it yet", "do not run it")],
)  # fmt: skip
def test_round_47_the_plan_without_a_run_points_to_dry_run(sentence: str, said: str) -> None:
    with pytest.raises(PlanRefused, match="add --dry-run to print the plan and write nothing") as refused:
        _plan(sentence)
    assert f"('{said}')" in str(refused.value)


@pytest.mark.parametrize(
    ("sentence", "roles"),
    [("don't train the wolves, train the village", VILLAGE),
     ("do not train the witch; the seer only", ["seer"]),
     ("not the witch. the seer", ["seer"]),
     ("do not train the witch, the seer or the hunter", ["villager"])],  # a list stays in the "not"
)  # fmt: skip
def test_round_47_not_reaches_no_further_than_its_clause(sentence: str, roles: list[str]) -> None:
    assert _plan(sentence).trained_roles == roles


@pytest.mark.parametrize(
    ("sentence", "family", "difficulty", "said"),
    [("math for high schoolers", "arithmetic", 5, "'high schoolers' (a school grade) read as level 5"),
     ("middle school word problems", "arithmetic", 4, "'middle school' (a school grade) read as level 4"),
     ("junior high arithmetic, 5th grade", "arithmetic", 3, "'5th grade'"),  # a grade said wins over its school
     ("countdown: numbers up to 100, 5 of them", "countdown", 3, "'5 of them: 5 numbers' -> level 3"),
     ("countdown with numbers, five of those", "countdown", 3, "'five of those: 5 numbers'"),
     ("tool use, grocery items, four of them", "tool_use", 4, "'four of them: 4 items' -> level 4")],
)  # fmt: skip
def test_round_47_schools_are_grades_and_a_count_said_after_its_noun_counts(
    sentence: str, family: str, difficulty: int, said: str
) -> None:
    spec = _plan(sentence)
    assert (spec.family, spec.params["difficulty"]) == (family, difficulty)
    assert said in _text(spec)


def test_round_47_the_plan_without_a_run_is_what_dry_run_prints() -> None:
    spec = plan("dry run: werewolves seer", llm=None, dry_run=True)
    assert (spec.family, spec.trained_roles) == ("werewolves", ["seer"])


@pytest.mark.parametrize(
    ("sentence", "steps", "said"),
    [("train the wolves for 3 steps, then the village for 3 steps", 3, "'3 steps, then the village for 3 steps'"),
     ("train the wolves for 3 steps, then the village for 5 steps", 3, "the first count, 3 steps, is the run's"),
     ("arithmetic 10 steps then 20 steps", 10, "not one phase after another")],
)  # fmt: skip
def test_round_47_phases_one_after_another_are_said_to_train_together(sentence: str, steps: int, said: str) -> None:
    spec = _plan(sentence)
    assert spec.budget.steps == steps
    assert said in _text(spec)


def test_round_47_one_step_count_says_nothing_of_phases() -> None:
    assert "phase" not in _text(_plan("werewolves, 5 steps, then report"))


@pytest.mark.parametrize(
    ("sentence", "roles"),
    [("werewolves where everyone but the seer is scripted", ["seer"]),
     ("everyone but the seer and the witch are bots, werewolves", ["seer", "witch"]),
     ("everyone except the wolves is frozen in werewolves", ["werewolf"]),
     ("all but the wolves are frozen, werewolves", ["werewolf"]),
     ("everyone but the seer trains in werewolves", ["werewolf", "villager", "witch", "hunter"]),  # the seer out
     ("make the werewolves worse", VILLAGE),  # the side to beat
     ("the werewolves should get weaker", VILLAGE)],
)  # fmt: skip
def test_round_47_everyone_but_a_role_scripted_trains_that_role(sentence: str, roles: list[str]) -> None:
    assert _plan(sentence).trained_roles == roles


@pytest.mark.parametrize(
    ("sentence", "steps", "minutes"),
    [("train a 7B to play werewolves with fewer steps, like 2", 2, None),
     ("werewolves, more steps (20)", 20, None),
     ("arithmetic steps, maybe 12.", 12, None),
     ("werewolves 10 steps, like 2 hours", 10, 120.0)],
)  # fmt: skip
def test_round_47_a_step_count_said_after_the_word_steps(sentence: str, steps: int, minutes: float | None) -> None:
    spec = _plan(sentence)
    assert (spec.budget.steps, spec.budget.minutes) == (steps, minutes)


@pytest.mark.parametrize(
    ("sentence", "params", "said"),
    [("train a 7b to play werewolves with a per-episode penalty", {"penalty": "episode"},
      "'per-episode penalty' -> penalty='episode'"),
     ("werewolves, penalty per game", {"penalty": "episode"}, "-0.1 for a game with any invalid answer"),
     ("werewolves, no penalty for invalid moves", {"penalty": "episode", "invalid_tolerance": 1.0},
      "an invalid answer costs nothing itself"),
     ("werewolves, don't penalize invalid answers", {"invalid_tolerance": 1.0}, "'don't penalize'"),
     ("werewolves, penalty weight 5", {"penalty": "per_action", "penalty_weight": 5.0}, "penalty_weight=5"),
     ("werewolves, penalize illegal moves 2x", {"penalty_weight": 2.0}, "'penalize illegal moves 2x'"),
     ("werewolves with a penalty of 20", {"penalty_weight": 10.0}, "20 is past the game's most, 10"),
     ("werewolf game where the wolves get penalised per illegal action", {"penalty": "per_action",
      "penalty_weight": 3.0}, "the recipe's own penalty")],
)  # fmt: skip
def test_round_47_the_werewolves_penalty_said_sets_the_reward(sentence: str, params: dict[str, Any], said: str) -> None:
    spec = _plan(sentence)
    assert {key: spec.params.get(key) for key in params} == params
    assert said in _text(spec)
    load_family("werewolves", spec.params)  # the game takes the settings


@pytest.mark.parametrize(
    "sentence", ["train the seer, kl penalty 0.01", "werewolves without kl penalty", "werewolves 10% penalty"]
)
def test_round_47_a_penalty_of_training_is_no_penalty_of_the_game(sentence: str) -> None:
    spec = _plan(sentence)
    assert (spec.params["penalty"], spec.params["penalty_weight"]) == ("per_action", 3.0)
    assert "invalid_tolerance" not in spec.params


@pytest.mark.parametrize(
    ("sentence", "steps"),
    [("a short werewolves run with the wolves, just to check", QUICK_STEPS),
     ("countdown, just to see it works", QUICK_STEPS),
     ("countdown, a short list of numbers", CATALOG["countdown"].steps)],  # a short list is no short run
)  # fmt: skip
def test_round_47_a_short_run_of_a_family_is_the_quick_run(sentence: str, steps: int) -> None:
    assert _plan(sentence).budget.steps == steps


def test_round_47_a_share_to_reach_is_no_bound_of_a_number() -> None:
    text = _text(_plan("train the werewolves, werewolves should win at least 70% of the time"))
    assert "ignored" not in text and "is not a stop rule vibe has" in text


@pytest.mark.parametrize(
    ("sentence", "roles"),
    [("werewolf roles: seer and witch trained, both sharing one adapter", ["seer", "witch"]),
     ("werewolves roles - train the hunter", ["hunter"]),
     ("the werewolf roles should win more", ["werewolf"])],  # no list after it: the wolves' side
)  # fmt: skip
def test_round_47_the_games_roles_listed_after_its_name_are_no_wolves(sentence: str, roles: list[str]) -> None:
    assert _plan(sentence).trained_roles == roles


# ---- round 48: 80 fresh sentences (the comparisons, the scripted members, a part of a turn) -------------------


@pytest.mark.parametrize(
    ("sentence", "roles"),
    [("the wolves play worse than the village, train the wolves", ["werewolf"]),
     ("my wolves are weaker than the town: train the wolves", ["werewolf"]),
     ("train the seer to be smarter than the wolves", ["seer"]),
     ("the village should win more often than the wolves", ["villager", "seer", "witch", "hunter"]),
     ("train the seer rather than the witch", ["seer"])],
)  # fmt: skip
def test_round_48_what_a_side_is_compared_with_is_no_trained_side(sentence: str, roles: list[str]) -> None:
    spec = _plan(sentence)
    assert spec.trained_roles == roles and len(spec.policies) == 1


@pytest.mark.parametrize(
    ("sentence", "roles"),
    [("Train the town in mafia; mafia members stay scripted.", ["villager", "seer", "witch", "hunter"]),
     ("train the village in werewolves; wolf players are scripted", ["villager", "seer", "witch", "hunter"]),
     ("werewolves: train the seer, the wolf pack stays scripted", ["seer"]),
     ("werewolves: the wolf players should lose, train the village", ["villager", "seer", "witch", "hunter"])],
)  # fmt: skip
def test_round_48_a_sides_members_said_scripted_do_not_train(sentence: str, roles: list[str]) -> None:
    assert _plan(sentence).trained_roles == roles


@pytest.mark.parametrize(
    ("sentence", "said"),
    [("train the werewolves but only their night actions", "'only their night actions' cannot be asked for"),
     ("werewolves, night actions only", "'night actions only' cannot be asked for"),
     ("train the seer in werewolves, just the night phase", "'just the night phase' cannot be asked for")],
)  # fmt: skip
def test_round_48_a_part_of_a_roles_turn_is_said_to_train_with_the_rest(sentence: str, said: str) -> None:
    assert said in _text(_plan(sentence))


@pytest.mark.parametrize(
    "sentence", ["train the wolves in werewolves; they only kill at night", "werewolves, seer only"]
)
def test_round_48_only_without_a_part_of_a_turn_has_no_such_note(sentence: str) -> None:
    assert "cannot be asked for: a trained role learns from every call" not in _text(_plan(sentence))


@pytest.mark.parametrize(
    ("sentence", "roles"),
    [("werewolf, the wolves win too often, make the villagers better", ["villager", "seer", "witch", "hunter"]),
     ("the werewolves are too strong; train the village", ["villager", "seer", "witch", "hunter"]),
     ("the village wins too much in werewolves, so train the wolves", ["werewolf"]),
     ("train the wolves so they win more often", ["werewolf"])],
)  # fmt: skip
def test_round_48_a_side_said_to_win_too_often_is_the_one_to_beat(sentence: str, roles: list[str]) -> None:
    spec = _plan(sentence)
    assert spec.trained_roles == roles and len(spec.policies) == 1


@pytest.mark.parametrize(("sentence", "count"), [("werewolves, 3 steps, but evaluate on only 8 deals", 8),
                                                 ("countdown, test it on just 12 puzzles", 12)])  # fmt: skip
def test_round_48_only_or_just_before_a_held_out_count_keeps_it(sentence: str, count: int) -> None:
    assert _plan(sentence).dataset.eval_items == count


@pytest.mark.parametrize(
    ("sentence", "said"),
    [("countdown target exactly 100", "a target fixed at 100 cannot be asked for"),
     ("train werewolves on 4 cpu threads", "'on 4 cpu threads' ignored: a server uses every CPU core"),
     ("countdown using 8 cores", "'using 8 cores' ignored")],
)  # fmt: skip
def test_round_48_a_fixed_target_and_a_thread_count_are_said_not_to_be_settings(sentence: str, said: str) -> None:
    assert said in _text(_plan(sentence))
