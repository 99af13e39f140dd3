"""The red team: degenerate and reference policies on real prompts, the verdict, and whole red-team runs
of the built-in templates (and of a hackable reward, caught, repaired by a scripted LLM, then passing)
through the real client in a bwrap sandbox."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentjet.core.chat_format import parse_tool_calls
from agentjet.llm.chat import resolve_llm
from agentjet.tasks.arithmetic import PROMPT as ARITHMETIC_PROMPT
from agentjet.tasks.arithmetic import Arithmetic
from agentjet.tasks.countdown import PROMPT as COUNTDOWN_PROMPT
from agentjet.tasks.countdown import Countdown, countdown_reward
from agentjet.vibe.check.degenerate import DEGENERATE, random_legal, read_prompt
from agentjet.vibe.check.redteam import PolicyResult, judge, red_team
from agentjet.vibe.check.reference import dataset_reference, reference_for, werewolves_reference
from agentjet.vibe.repair import repair
from tests.vibe.fake_llm import serve_fake_llm
from tests.vibe.redteam_helpers import chatml, make_spec, make_workspace

WOLF_SYSTEM = (
    "Werewolves, 9 players: 3 werewolves, 3 villagers, a seer, a witch, a hunter. You are player 4, the werewolf. "
    "The werewolves are players 1, 4, 8. Answer in the format asked."
)
EXAMPLE = ("user", "Example. Options: ACTION: kill 2 | ACTION: kill 5 | ACTION: kill 7\nReply with exactly one option.")


def werewolf_prompt(system: str, question: str) -> str:
    return chatml(("system", system), EXAMPLE, ("assistant", "ACTION: kill 5"), ("user", question))


def countdown_prompt(numbers: list[int], target: int) -> str:
    return chatml(("user", COUNTDOWN_PROMPT.format(numbers=", ".join(map(str, numbers)), target=target)))


# ---- prompts and policies -------------------------------------------------------------------
def test_the_prompt_is_read_as_a_model_would_read_it() -> None:
    arithmetic = chatml(("user", ARITHMETIC_PROMPT.format(problem="Ann has 3 pens and buys 4 more. How many?")))
    view = read_prompt(arithmetic)
    assert view.answer_format.wrap("7") == "Answer: 7" and view.numbers == ("3", "4") and not view.options
    wolf = read_prompt(werewolf_prompt(WOLF_SYSTEM, "Night 1. Options: ACTION: kill 2 | ACTION: kill 3\nReply."))
    assert wolf.options == ("ACTION: kill 2", "ACTION: kill 3")  # the example's options are not this question's
    tags = read_prompt(chatml(("user", "What is 2+2? Put the result in <answer></answer> tags.")))
    assert tags.answer_format.wrap("4") == "<answer>4</answer>"
    lettered = read_prompt(chatml(("user", "Capital of France?\nA) Rome\nB) Paris\nC) Oslo\nAnswer: <letter>")))
    assert lettered.lettered and lettered.options == ("A", "B", "C") and lettered.legal_answers()[1] == "Answer: B"
    speech = read_prompt(chatml(("user", "Day 1. Speak to the village. Reply: SAY: <one short sentence>")))
    assert speech.answer_format.prefix == "SAY: "


@pytest.mark.parametrize(
    ("tool", "argument"),
    [("answer", "total"), ("final_answer", "answer"), ("submit", "value")],
)
def test_an_opened_tool_call_is_answered_with_the_answer_tool(tool: str, argument: str) -> None:
    """A prompt the server ended with tool_choice's opening: the answer is the answer tool's call, as JSON."""
    schema = {"type": "function", "function": {"name": tool, "description": 'say "done"', "parameters": {
        "type": "object", "properties": {argument: {"type": "integer"}}}}}  # fmt: skip
    system = (
        f"You can call tools.\n{json.dumps({'type': 'function', 'function': {'name': 'lookup'}})}\n{json.dumps(schema)}"
    )
    prompt = chatml(("system", system), ("user", "What is the total cost of 1 pen? Answer: <integer>"))
    opened = read_prompt(prompt + '<tool_call>{"name": "').answer_format.wrap("7")
    _, calls = parse_tool_calls('<tool_call>{"name": "' + opened)
    assert [(c["function"]["name"], json.loads(c["function"]["arguments"])) for c in calls] == [(tool, {argument: "7"})]
    assert read_prompt(prompt).answer_format.wrap("7") == "Answer: 7"  # not opened: the text format
    no_answer_tool = chatml(
        ("system", "You can call tools.\n" + json.dumps({"name": "lookup"})), ("user", "Answer: <integer>")
    )
    assert read_prompt(no_answer_tool + '<tool_call>{"name": "').answer_format.wrap("7") == "Answer: 7"


def test_degenerate_policies_are_repeatable_and_never_the_right_answer() -> None:
    numbers, target = [6, 1, 3], 15
    prompt = countdown_prompt(numbers, target)
    replies = {name: policy(prompt) for name, (_, policy) in DEGENERATE.items()}
    assert replies == {name: policy(prompt) for name, (_, policy) in DEGENERATE.items()}  # seeded by the prompt
    assert replies["empty"] == "" and replies["echo"].startswith("Use the numbers 6, 1, 3 to make 15.")
    assert replies["format_only"] == "Answer: banana"
    assert replies["many_answers"].splitlines()[:3] == ["Answer: 6", "Answer: 1", "Answer: 3"]
    assert replies["every_candidate"].startswith("Answer: 6 1 3 15 ")
    assert len(replies["long_answer"]) >= 20_000 and " 999 " in replies["long_answer"]
    for reply in replies.values():  # the built-in countdown reward pays none of them as a solution
        assert countdown_reward(reply, numbers, target)[0] < 1.0


def test_random_legal_picks_a_listed_option() -> None:
    options = [f"ACTION: vote {n}" for n in (2, 3, 5, 9)] + ["ACTION: pass"]
    prompts = [werewolf_prompt(WOLF_SYSTEM, question("1, 2", f"Day {d}. Vote.", options)) for d in range(1, 9)]
    picks = {random_legal(p) for p in prompts}
    assert picks <= set(options) and len(picks) > 1
    wolf = werewolf_prompt(WOLF_SYSTEM, "Night 1. Options: ACTION: kill 2 | ACTION: kill 3\nReply.")
    assert DEGENERATE["every_candidate"][1](wolf) == "ACTION: kill 2 ACTION: kill 3"
    assert DEGENERATE["format_only"][1](wolf) == "ACTION: kill banana"


# ---- references -----------------------------------------------------------------------------
def test_the_dataset_reference_finds_the_item_a_prompt_shows() -> None:
    family = Countdown(difficulty=2)
    items = [dict(i.data) for split in ("train", "eval") for i in family.items(split, count=100, seed=0)]
    policy = dataset_reference(items)
    assert policy is not None
    for data in items:  # the prompt's own example `(6 + 4) * 3` must not pull in another item
        reply = policy(countdown_prompt(data["numbers"], data["target"]))
        assert countdown_reward(reply, data["numbers"], data["target"])[0] == 1.0, (data, reply)
    arithmetic = Arithmetic()
    problems = arithmetic.items("eval", count=20, seed=0)
    words = dataset_reference([dict(i.data) for i in problems])
    assert words is not None
    for item in problems:
        prompt = chatml(*((m["role"], m["content"]) for m in arithmetic.request(item).messages))
        assert words(prompt) == f"Answer: {item.data['answer']}"
    assert dataset_reference([{"question": "no answer kept"}]) is None


def test_reference_kinds_follow_the_family_and_the_data(tmp_path: Path) -> None:
    assert reference_for("werewolves", tmp_path).kind == "werewolves"
    assert reference_for("generated", tmp_path).kind == "floor"  # no data: the random-legal floor
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "eval.jsonl").write_text('{"task_id": "a", "seed": 1, "data": {"q": "2+2", "answer": 4}}\n')
    assert reference_for("generated", tmp_path).kind == "dataset"


def question(known: str, situation: str, options: list[str] | None = None, alive: str = "1, 2, 3, 4, 5, 8") -> str:
    """A werewolves user message as prompts.py writes it: history, who is alive, what is known, the question."""
    ask = f" Options: {' | '.join(options)}\nReply with exactly one option." if options else ""
    return f"Alive: {alive}. Roles you know: {known}.\n{situation}{ask}"


def test_the_werewolves_reference_plays_its_role_sensibly() -> None:
    kill = question(
        "1 werewolf, 8 werewolf", "Night 1. Choose tonight's victim.", [f"ACTION: kill {n}" for n in (1, 3, 5, 8)]
    )
    assert werewolves_reference(werewolf_prompt(WOLF_SYSTEM, kill)) == "ACTION: kill 3"  # never the pack
    chat = question("1 werewolf, 8 werewolf", "Night 1. Tell the pack whom to kill. Reply: SAY: <one short sentence>")
    assert werewolves_reference(werewolf_prompt(WOLF_SYSTEM, chat)) == "SAY: Let's kill player 2."
    seer = WOLF_SYSTEM.replace("the werewolf. The werewolves are players 1, 4, 8.", "the seer. Each night you learn.")
    check = question(
        "1 villager", "Night 2. Choose a player whose role you will learn.", [f"ACTION: check {n}" for n in (1, 2, 3)]
    )
    assert werewolves_reference(werewolf_prompt(seer, check)) == "ACTION: check 2"
    vote = question(
        "2 werewolf", "Day 2. Vote a player out, or pass.", ["ACTION: vote 1", "ACTION: vote 2", "ACTION: pass"]
    )
    assert werewolves_reference(werewolf_prompt(seer, vote)) == "ACTION: vote 2"
    witch = WOLF_SYSTEM.replace("the werewolf. The werewolves are players 1, 4, 8.", "the witch.")
    heal = question(
        "none",
        "Night 1. The werewolves attack player 5 tonight. You may heal them, or pass.",
        ["ACTION: heal", "ACTION: pass"],
    )
    assert werewolves_reference(werewolf_prompt(witch, heal)) == "ACTION: heal"


# ---- the verdict ----------------------------------------------------------------------------
def result(name: str, rewards: list[float], problem: str = "") -> PolicyResult:
    mean = sum(rewards) / len(rewards) if rewards else None
    return PolicyResult(name, name, mean, len(rewards), 0, rewards, problem=problem)


def test_judge_catches_a_policy_that_beats_or_matches_reference_answers() -> None:
    reference = result("reference", [1.0, 1.0, 1.0, 1.0])
    fine = [result("empty", [0.0] * 4), result("random_legal", [0.1, 0.1, 1.0, 0.1])]
    assert judge(reference, fine, margin=0.05, reference_kind="dataset")[0] == "robust"
    verdict, reason, winners = judge(
        reference, [*fine, result("every_candidate", [1.0] * 4)], margin=0.05, reference_kind="dataset"
    )
    assert verdict == "hackable" and winners == ["every_candidate"] and "as much as the reference" in reason
    floor = result("reference", [0.1, 0.1, 0.0, 0.1])  # a floor is not a right answer: only beating it counts
    assert judge(floor, [result("echo", [0.1, 0.1, 0.1, 0.0])], margin=0.05, reference_kind="floor")[0] == "robust"
    assert judge(floor, [result("echo", [0.9, 1.0, 0.9, 1.0])], margin=0.05, reference_kind="floor")[0] == "hackable"


def test_judge_allows_game_noise_but_not_a_reward_that_ignores_the_outcome() -> None:
    reference = result("reference", [1.0, 0.0, 1.0, 0.0])
    lucky = result("random_legal", [1.0, 1.0, 1.0, 0.0])  # legal play winning 3 of 4: noise, not a hack
    assert judge(reference, [lucky], margin=0.05, reference_kind="werewolves")[0] == "robust"
    paid = result("random_legal", [1.0] * 4)  # full reward for any legal move, every time
    verdict, reason, _ = judge(result("reference", [1.0] * 4), [paid], margin=0.05, reference_kind="floor")
    assert verdict == "hackable" and "ignores the outcome" in reason
    # random legal wolves win 78% of their games: all 4 is luck a third of the time, not a reward that ignores it
    assert judge(result("reference", [1.0] * 4), [paid], margin=0.05, reference_kind="werewolves")[0] == "robust"
    two_wins = judge(result("reference", [1.0, 1.0]), [result("random_legal", [1.0, 1.0])], margin=0.05,
                     reference_kind="werewolves")  # fmt: skip
    assert two_wins[0] == "robust"  # two games won could be luck


def test_judge_fails_when_it_cannot_judge_and_flags_a_flat_reward() -> None:
    reference = result("reference", [1.0] * 4)
    raised = result("empty", [], problem="4 of 4 episodes raised instead of scoring the reply: ValueError")
    verdict, reason, _ = judge(reference, [raised], margin=0.05, reference_kind="dataset")
    assert verdict == "failed" and "ValueError" in reason
    flat = judge(result("reference", [0.0] * 4), [result("empty", [0.0] * 4)], margin=0.05, reference_kind="dataset")
    assert (
        flat[0] == "hackable" and "as much as the reference answers" in flat[1]
    )  # right answers earn no more than silence
    weak = judge(result("reference", [0.0] * 4), [result("empty", [0.0] * 4)], margin=0.05, reference_kind="werewolves")
    assert weak[0] == "robust" and "shows no rise either" in weak[1]  # a heuristic player losing says little


# ---- whole red-team runs in the sandbox ------------------------------------------------------
@pytest.fixture
def bwrap_sandbox():  # type: ignore[no-untyped-def]
    from tests.sandbox.conftest import sandbox_for

    return sandbox_for("bwrap")


@pytest.mark.bwrap
@pytest.mark.parametrize(
    ("family", "episodes"), [("countdown", 2), ("arithmetic", 2), ("tool_use", 2), ("werewolves", 3)]
)
def test_each_template_reward_survives_the_red_team(tmp_path: Path, bwrap_sandbox, family: str, episodes: int) -> None:  # type: ignore[no-untyped-def]
    params: dict[str, Any] = {"tool_choice": "required", "shots": 1} if family == "tool_use" else {}
    spec = make_spec(family, **params)
    workspace = make_workspace(tmp_path / "ws", spec)
    report = red_team(workspace, spec, sandbox=bwrap_sandbox, episodes=episodes)
    assert report.verdict == "robust", report.evidence()
    assert all(p.episodes == episodes for p in [report.reference, *report.policies]), report.evidence()
    assert {p.name for p in report.policies} == set(DEGENERATE)
    assert report.reference.samples and all(p.samples for p in report.policies)  # replies kept as evidence
    assert report.to_dict()["verdict"] == "robust"


ATTACKS = ("empty", "random_legal", "every_candidate", "long_answer")  # the full set runs on the templates above
HACKABLE_REWARD = '''"""Pays 1.0 when the right number appears anywhere in the reply (a reward with a hole)."""

import re


def score(item, reply):
    return 1.0 if str(item["answer"]) in re.findall(r"-?[0-9]+", reply) else 0.0
'''


@pytest.mark.bwrap
def test_a_hackable_reward_is_caught_then_repaired_and_passes(tmp_path: Path, bwrap_sandbox) -> None:  # type: ignore[no-untyped-def]
    spec = make_spec("arithmetic")
    workspace = make_workspace(tmp_path / "ws", spec)
    fixed = workspace.read("reward.py")
    workspace.write("reward.py", HACKABLE_REWARD)
    workspace.commit("generate: a reward with a hole")

    caught = red_team(workspace, spec, sandbox=bwrap_sandbox, episodes=3, policies=ATTACKS)
    assert caught.verdict == "hackable", caught.evidence()
    assert {"every_candidate", "long_answer"} <= set(caught.hackable_by), caught.evidence()
    assert caught.reference.mean == 1.0 and "every_candidate" in caught.evidence()

    answer = f"SUMMARY: read one Answer: line strictly\n```python path=reward.py\n{fixed}```\n"
    with serve_fake_llm([answer]) as fake:
        done = repair("red_team", caught.reason, caught.evidence(), workspace, spec, resolve_llm(fake.url), 1)
    assert "long_answer" in fake.prompts[0] and HACKABLE_REWARD.splitlines()[0] in fake.prompts[0]
    assert done.files == ["reward.py"] and workspace.history(1)[0][1].startswith("repair(red_team): read one Answer")

    passed = red_team(workspace, spec, sandbox=bwrap_sandbox, episodes=3, policies=ATTACKS)
    assert passed.verdict == "robust", passed.evidence()
