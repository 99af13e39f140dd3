"""Validate in a real sandbox: every template's own tests pass and a dry run plays episodes against a scripted
policy; real episodes run against a tiny server (given, or started for the check); bugs in generated code
(a reward that raises, a reward of 2.0, failing tests, bad data, a client that does not load) fail the right
check with a log tail that names the cause."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentjet.core import TrainConfig
from agentjet.core.types import EpisodeStatus
from agentjet.llm.chat import resolve_llm
from agentjet.sandbox import Sandbox, SwarmAccess
from agentjet.vibe.check.dataset_check import check_rows
from agentjet.vibe.check.dry_policy import plausible_reply
from agentjet.vibe.check.validate import Report, ValidateOptions, validate
from agentjet.vibe.errors import VibeError
from agentjet.vibe.generate.generator import generate
from agentjet.vibe.generate.render import TEMPLATES
from agentjet.vibe.workspace import Workspace
from tests.sandbox.conftest import sandbox_for
from tests.tasks.swarm_helpers import TOKEN, journal, tiny_training_server
from tests.vibe.fake_llm import serve_fake_llm
from tests.vibe.generated_task import PARITY, REWARD_PAYS_TWO, REWARD_RAISES, reply_with
from tests.vibe.test_generate import TEMPLATE_PARAMS, make_spec

DRY_ONLY = ValidateOptions(dry_episodes=2, real=False)


@pytest.fixture
def docker() -> Sandbox:
    return sandbox_for("docker")


def _checks(report: Report) -> dict[str, tuple[bool, bool]]:
    return {c.name: (c.ok, c.skipped) for c in report.checks}


def _generated(tmp_path: Path, sandbox: Sandbox, files: dict[str, str]) -> Workspace:
    """A `generated` workspace written through the LLM path (fake LLM over HTTP, dataset.py in the sandbox)."""
    ws = Workspace(tmp_path / "run").init()
    with serve_fake_llm([reply_with(files)]) as fake:
        generate(make_spec("generated", train=8, eval_items=4), ws, llm=resolve_llm(fake.url), sandbox=sandbox)
    return ws


@pytest.mark.docker
@pytest.mark.parametrize("family", TEMPLATES)
def test_every_template_passes_its_tests_and_plays_dry_episodes(tmp_path: Path, docker: Sandbox, family: str) -> None:
    spec = make_spec(family, **TEMPLATE_PARAMS[family])
    ws = Workspace(tmp_path / "run").init()
    generate(spec, ws, llm=None)
    report = validate(ws, spec, sandbox=docker, options=DRY_ONLY)
    assert report.ok, report.logs()
    tests, dataset, dry, real = report.checks
    written = (ws.path / "tests" / "test_task.py").read_text().count("\ndef test_")
    assert written >= 6 and tests.summary == f"{written} passed, 0 failed"  # every test the template wrote ran
    assert dataset.summary == "12 train and 5 eval items"
    assert dry.details["episodes"] == 2 and len(dry.details["rewards"]) == 2
    assert all(-1.0 <= r <= 1.0 for r in dry.details["rewards"]) and all(dry.details["replies"])
    assert real.skipped and report.backend == "docker"
    assert json.loads(json.dumps(report.to_dict()))["ok"] is True


@pytest.mark.bwrap
def test_a_template_validates_under_bwrap_too(tmp_path: Path) -> None:
    spec = make_spec("arithmetic", difficulty=1)
    ws = Workspace(tmp_path / "run").init()
    generate(spec, ws, llm=None)
    report = validate(ws, spec, sandbox=sandbox_for("bwrap"), options=DRY_ONLY)
    assert report.ok and report.backend == "bwrap", report.logs()


@pytest.fixture
def tiny_server(tmp_path: Path) -> Iterator[tuple[SwarmAccess, Path]]:
    with tiny_training_server(tmp_path / "state", TrainConfig()) as running:
        yield SwarmAccess(running.url, TOKEN), tmp_path / "state"


@pytest.mark.docker
def test_real_episodes_run_against_a_given_server_as_eval_and_leave_it_no_reward(
    tmp_path: Path, docker: Sandbox, tiny_server: tuple[SwarmAccess, Path]
) -> None:
    access, state_dir = tiny_server
    spec = make_spec("countdown", difficulty=1, max_tokens=16)
    ws = Workspace(tmp_path / "run").init()
    generate(spec, ws, llm=None)
    waited: list[str] = []

    def starting() -> SwarmAccess:  # the run's own server, still starting when validation began
        waited.append("real_run")
        return access

    options = ValidateOptions(dry_episodes=1, real_episodes=2)
    report = validate(ws, spec, sandbox=docker, server=starting, options=options)
    assert _checks(report) == {n: (True, False) for n in ("tests", "dataset", "dry_run", "real_run")}, report.logs()
    assert waited == ["real_run"] and report.checks[-1].details["episodes"] == 2
    kept = journal(state_dir)  # played as eval (never trained), then aborted: the run's eval metrics count none
    assert [(str(r.kind), r.status) for r in kept] == [("eval", EpisodeStatus.ABORTED)] * 2
    assert {r.agent for r in kept} == {spec.name}


@pytest.mark.docker
def test_a_server_that_did_not_start_fails_the_real_run_with_its_reason(tmp_path: Path, docker: Sandbox) -> None:
    spec = make_spec("arithmetic", difficulty=1, max_tokens=8)
    ws = Workspace(tmp_path / "run").init()
    generate(spec, ws, llm=None)

    def broken() -> SwarmAccess:
        raise VibeError("the run's server did not start: port in use")

    report = validate(ws, spec, sandbox=docker, server=broken, options=ValidateOptions(dry_episodes=1))
    real = report.checks[-1]
    assert (real.name, real.ok, real.skipped) == ("real_run", False, False)
    assert "port in use" in real.summary and real in report.failures


@pytest.mark.docker
def test_without_a_server_one_is_started_for_the_check_and_stopped(tmp_path: Path, docker: Sandbox) -> None:
    spec = make_spec("arithmetic", difficulty=1, max_tokens=8).model_copy(update={"model": "tiny"})
    ws = Workspace(tmp_path / "run").init()
    generate(spec, ws, llm=None)
    report = validate(ws, spec, sandbox=docker, options=ValidateOptions(dry_episodes=1, real_episodes=1))
    real = report.checks[-1]
    assert real.ok and real.details["episodes"] == 1, report.logs()


@pytest.mark.docker
@pytest.mark.parametrize(
    ("reward", "expected"),
    [
        (REWARD_RAISES, ["KeyError: '1'", 'reward.py", line', "return {item["]),
        (REWARD_PAYS_TWO, ["reward {'policy': 2.0} outside [-1.0, 1.0]", "Answer: 1"]),
    ],
    ids=["raises", "pays-2.0"],
)
def test_a_buggy_generated_reward_is_caught_by_the_dry_run(
    tmp_path: Path, docker: Sandbox, reward: str, expected: list[str]
) -> None:
    ws = _generated(tmp_path, docker, {**PARITY, "reward.py": reward})
    report = validate(ws, make_spec("generated", train=8, eval_items=4), sandbox=docker, options=DRY_ONLY)
    assert _checks(report) == {
        "tests": (True, False),  # the workspace's own tests miss the bug
        "dataset": (True, False),
        "dry_run": (False, False),
        "real_run": (True, True),
    }
    dry = report.checks[2]
    for text in expected:
        assert text in dry.log_tail, dry.log_tail
    assert dry.summary.startswith("episode parity-") and "[dry_run]" in report.logs()


@pytest.mark.docker
def test_failing_workspace_tests_fail_the_tests_check_and_skip_the_episodes(tmp_path: Path, docker: Sandbox) -> None:
    spec = make_spec("countdown", difficulty=1)
    ws = Workspace(tmp_path / "run").init()
    generate(spec, ws, llm=None)
    ws.write("reward.py", ws.read("reward.py").replace("    return value\n", "    return 1.0\n"))  # pays everything
    heard: list[str] = []
    report = validate(ws, spec, sandbox=docker, on_check=lambda check: heard.append(check.name))
    assert heard == ["tests", "dataset", "dry_run", "real_run"]  # each as it ends, skipped ones too
    assert _checks(report) == {
        "tests": (False, False),
        "dataset": (True, False),
        "dry_run": (False, True),
        "real_run": (False, True),
    }
    tests = report.checks[0]
    assert "FAIL test_reward_is_low_for_a_wrong_expression" in tests.summary
    assert "AssertionError" in tests.log_tail and "4 passed, 2 failed" in tests.log_tail


@pytest.mark.docker
def test_bad_data_fails_the_dataset_check_with_line_numbers(tmp_path: Path, docker: Sandbox) -> None:
    spec = make_spec("countdown", difficulty=1)
    ws = Workspace(tmp_path / "run").init()
    generate(spec, ws, llm=None)
    train = ws.read("data/train.jsonl").splitlines()
    evals = ws.read("data/eval.jsonl").splitlines()
    ws.write("data/train.jsonl", "\n".join([train[0], "not json", '{"task_id": 3, "seed": 1, "data": {}}', evals[0]]))
    report = validate(ws, spec, sandbox=docker)
    dataset = report.checks[1]
    assert not dataset.ok
    for text in (
        "data/train.jsonl line 2 is not JSON",
        "data/train.jsonl line 3 task_id must be a string",
        "data/train.jsonl has 4 items, the plan asks for 12",
        "train and eval share 1 task_id(s)",
    ):
        assert text in dataset.log_tail, dataset.log_tail
    assert report.checks[2].skipped


@pytest.mark.docker
def test_a_client_that_does_not_load_is_reported_with_its_error(tmp_path: Path, docker: Sandbox) -> None:
    client = PARITY["client.py"].replace("reward = _load_reward()", "reward = _load_reward()\nimport numpy_not_here")
    tests = PARITY["tests/test_task.py"].replace("def test_client():", "def skipped_client():")
    ws = _generated(tmp_path, docker, {**PARITY, "client.py": client, "tests/test_task.py": tests})
    report = validate(ws, make_spec("generated", train=8, eval_items=4), sandbox=docker, options=DRY_ONLY)
    dry = report.checks[2]
    assert not dry.ok and dry.summary.startswith("client.py does not load")
    assert "numpy_not_here" in dry.log_tail


def test_no_working_sandbox_is_a_vibe_error_naming_the_doctor(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTJET_SANDBOX_BACKEND", "nope")
    spec = make_spec("countdown")
    with pytest.raises(VibeError, match="agentjet sandbox doctor"):
        validate(tmp_path, spec)


def test_dataset_rows_are_checked_as_data() -> None:
    good = '{"task_id": "a", "seed": 1, "data": {"x": 1}}'
    count, ids, problems = check_rows(f"{good}\n\n{good}\n[1]\n" + '{"task_id": "b", "seed": true, "data": {}}\n', "f")
    assert count == 4 and ids == {"a"}
    assert problems == [
        "f line 3 repeats task_id 'a'",
        "f line 4 is a JSON list, not an object",
        "f line 5 seed must be a non-negative integer, got True",
    ]
    assert check_rows("", "f") == (0, set(), ["f holds no items"])


def _chatml(*turns: tuple[str, str]) -> str:
    return "".join(f"<|im_start|>{role}\n{text}<|im_end|>\n" for role, text in turns) + "<|im_start|>assistant\n"


def test_the_dry_policy_answers_each_family_in_its_format() -> None:
    wolves = _chatml(
        ("system", "You are player 2, the werewolf."),
        ("user", "Example. Options: ACTION: kill 2 | ACTION: kill 5\nReply with exactly one option."),
        ("assistant", "ACTION: kill 5"),
        (
            "user",
            "Night 1. Choose tonight's victim. Options: ACTION: kill 4 | ACTION: kill 7\n"
            "Reply with exactly one option.",
        ),
    )
    assert plausible_reply(wolves) == "ACTION: kill 4"  # the last question's options, not the example's
    assert plausible_reply(
        _chatml(("user", "Day 1. Speak to the village. Reply: SAY: <one short sentence>"))
    ).startswith("SAY: ")
    assert plausible_reply(_chatml(("user", "Use the numbers 10, 7, 50 to make 33. ..."))) == "Answer: 10 + 7"
    assert plausible_reply(_chatml(("user", "Is 7 even or odd? End with `Answer: even`."))) == "Answer: 1"
    assert plausible_reply(_chatml(("user", "Reply with just the word 'river' and nothing else."))) == "river"
    question = ("user", "What is the total cost of 2 pens and 1 apple?")
    tools = ("system", "You can call tools. To call a tool, reply with <tool_call>{...}</tool_call>")
    first = plausible_reply(_chatml(tools, question))
    assert first.count("<tool_call>") == 2 and '"item": "pen"' in first and '"item": "apple"' in first
    prices = (
        "user",
        "<tool_response>\npen: 3 dollars each\n</tool_response>\n"
        "<tool_response>\napple: 4 dollars each\n</tool_response>",
    )
    assert '"text": "total: 10"' in plausible_reply(_chatml(tools, question, ("assistant", first), prices))
    noted = ("user", "<tool_response>\nsaved note 1\n</tool_response>")
    assert (
        plausible_reply(_chatml(tools, question, ("assistant", first), prices, ("assistant", "x"), noted))
        == "Answer: 10"
    )


def test_the_dry_policy_plays_a_forced_tool_use_episode_after_a_worked_one() -> None:
    """tool_choice "required" with `shots=1`: the reply continues the opened call, for this episode, not the example."""
    opening = '<tool_call>{"name": "'
    tools = ("system", "You can call tools. To call a tool, reply with <tool_call>{...}</tool_call>")
    example = (
        ("user", "What is the total cost of 1 candle and 1 ruler?"),
        ("assistant", '<tool_call>{"name": "lookup", "arguments": {"item": "candle"}}</tool_call>'),
        ("user", "<tool_response>\ncandle: 4 dollars each\n</tool_response>"),
        ("assistant", '<tool_call>{"name": "write_note", "arguments": {"text": "total: 4"}}</tool_call>'),
        ("user", "<tool_response>\nsaved note 1\n</tool_response>"),
    )
    question = ("user", "What is the total cost of 2 pens?")
    first = plausible_reply(_chatml(tools, *example, question) + opening)
    assert first == 'lookup", "arguments": {"item": "pen"}}</tool_call>'  # not the example's candle, not noted yet
    price = ("user", "<tool_response>\npen: 3 dollars each\n</tool_response>")
    noted = ("user", "<tool_response>\nsaved note 1\n</tool_response>")
    turns = (question, ("assistant", opening + first), price, ("assistant", "x"), noted)
    assert (
        plausible_reply(_chatml(tools, *example, *turns) + opening) == 'answer", "arguments": {"total": 6}}</tool_call>'
    )
    assert plausible_reply(_chatml(tools, *example, *turns)) == "Answer: 6"  # unforced: the text answer
