"""Generate: every built-in template renders a committed, loadable workspace; the LLM path (a scripted fake
LLM over real HTTP through litellm) writes files from fenced blocks, makes the data in a real sandbox, and
turns unusable replies into repair rounds with the problems in the next prompt."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentjet.llm.chat import ChatLLM, resolve_llm
from agentjet.sandbox import Sandbox
from agentjet.tasks.arithmetic import arithmetic_reward
from agentjet.tasks.countdown import countdown_reward
from agentjet.tasks.registry import load_family
from agentjet.tasks.tool_env import ToolEnv
from agentjet.tasks.tool_use import tool_use_reward
from agentjet.tasks.werewolves.family import side_reward
from agentjet.tasks.werewolves.state import Side
from agentjet.tasks.word import first_word_reward
from agentjet.vibe.errors import VibeError
from agentjet.vibe.generate.contract import CODE_FILES, CONTRACT, DATA_FILES, REWARD_RANGE
from agentjet.vibe.generate.fenced import parse_files, syntax_problems
from agentjet.vibe.generate.generator import generate
from agentjet.vibe.generate.render import TEMPLATES, render_file
from agentjet.vibe.plan.spec import TaskSpec
from agentjet.vibe.plan.werewolves.plan import RECIPE_PARAMS
from agentjet.vibe.workspace import Workspace
from tests.sandbox.conftest import sandbox_for
from tests.vibe.fake_llm import FakeLLM, serve_fake_llm
from tests.vibe.generated_task import PARITY, reply_with

TEMPLATE_PARAMS: dict[str, dict[str, Any]] = {
    "countdown": {"difficulty": 2},
    "arithmetic": {"difficulty": 1, "shots": 1},
    "tool_use": {"difficulty": 2, "tool_choice": "required", "shots": 1},
    "werewolves": {"trained_roles": ["werewolf"], "discussion": True, "penalty": "per_action"},
    "word": {"max_tokens": 4},
}


def make_spec(family: str, *, train: int = 12, eval_items: int = 5, seed: int = 7, **params: Any) -> TaskSpec:
    return TaskSpec(
        name=f"vibe-{family.replace('_', '-')}",
        sentence=f"train a model on {family}",
        family=family,
        params=params,
        environment="the task's environment",
        reward="the task's reward",
        dataset={"train_items": train, "eval_items": eval_items, "seed": seed},
        success_metric={"description": "eval reward mean"},
    )


def rows(ws: Workspace, split: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in ws.read(DATA_FILES[split]).splitlines()]


@pytest.fixture
def docker() -> Sandbox:
    return sandbox_for("docker")


@pytest.fixture
def fake() -> Iterator[FakeLLM]:
    with serve_fake_llm() as server:
        yield server


@pytest.fixture
def llm(fake: FakeLLM) -> ChatLLM:
    found = resolve_llm(fake.url)
    assert found is not None
    return found


# ---- templates ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("family", TEMPLATES)
def test_every_template_generates_a_committed_loadable_workspace(tmp_path: Path, family: str) -> None:
    spec = make_spec(family, **TEMPLATE_PARAMS[family])
    ws = Workspace(tmp_path / "run").init()
    made = generate(spec, ws, llm=None)
    assert made.source == "template" and made.family == family and made.commit == ws.head()
    assert set(made.paths) == {*CODE_FILES, *DATA_FILES.values()}
    subjects = [subject for _, subject in ws.history()]
    assert subjects[:2] == [
        "generate: dataset (12 train, 5 eval items, seed 7)",
        f"generate(template {family}): client.py, reward.py, dataset.py, tests/test_task.py",
    ]
    client = ws.read("client.py")
    assert f"NAME = 'vibe-{family.replace('_', '-')}'  # from task.yaml: name" in client
    assert "# vibe:" not in client + ws.read("dataset.py") + ws.read("reward.py")
    train, evals = rows(ws, "train"), rows(ws, "eval")
    assert (len(train), len(evals)) == (12, 5)
    assert not {r["task_id"] for r in train} & {r["task_id"] for r in evals}
    task = load_family(str(ws.file("client.py")))  # our own template: safe to import on the host
    assert task.name == spec.name and tuple(task.servers) == ("policy",)
    assert [item.task_id for item in task.items("eval", count=7, seed=0)] == [r["task_id"] for r in evals + evals[:2]]


def test_template_values_come_from_the_spec_or_stay_default(tmp_path: Path) -> None:
    ws = Workspace(tmp_path / "run").init()
    generate(make_spec("werewolves", trained_roles=["seer", "witch"], invalid_tolerance=0.25), ws, llm=None)
    reward = ws.read("reward.py")
    assert "INVALID_TOLERANCE = 0.25  # from task.yaml: params.invalid_tolerance" in reward
    assert 'PENALTY = "episode"  # default (task.yaml has no params.penalty)' in reward
    assert "'trained_roles': ['seer', 'witch']" in ws.read("client.py")
    assert render_file("X = 1  # vibe: a.b\n", {"a": {"b": [1, 2]}}) == "X = [1, 2]  # from task.yaml: a.b\n"


def _load(ws: Workspace, name: str) -> Any:
    import importlib.util

    loader = importlib.util.spec_from_file_location(f"test_{name}_{abs(hash(str(ws.path)))}", ws.file(f"{name}.py"))
    assert loader is not None and loader.loader is not None
    module = importlib.util.module_from_spec(loader)
    loader.loader.exec_module(module)
    return module


def test_template_rewards_agree_with_the_built_in_families(tmp_path: Path) -> None:
    """reward.py is what trains; on known replies it must pay exactly what the built-in family pays."""
    made = {}
    for family in TEMPLATES:
        ws = Workspace(tmp_path / family).init()
        generate(make_spec(family, **TEMPLATE_PARAMS[family]), ws, llm=None)
        made[family] = (_load(ws, "reward"), rows(ws, "eval"))
    reward, items = made["countdown"]
    for row in items:
        d = row["data"]
        for reply in (
            f"Answer: {d['solution']}",
            f"Answer: {d['numbers'][0]} + {d['numbers'][1]}",
            "Answer: 2 ** 9",
            "",
        ):
            assert reward.score(d, reply) == countdown_reward(reply, d["numbers"], d["target"])[0]
    reward, items = made["arithmetic"]
    for row in items:
        for reply in (f"Answer: {row['data']['answer']}", "Answer: 3", "Answer: 1 Answer: 2", "no"):
            assert reward.score(row["data"], reply) == arithmetic_reward(reply, row["data"]["answer"])[0]
    reward, items = made["tool_use"]
    for row in items:
        d = row["data"]
        for notes, final, looked in (([f"t {d['total']}"], f"Answer: {d['total']}", list(d["order"])), ([], None, [])):
            env = ToolEnv(prices=d["prices"], notes=notes, looked_up=looked)
            expected = tool_use_reward(env, final, d["order"], d["total"])["reward"]
            assert reward.score(d, {"final_reply": final, "notes": notes, "looked_up": looked}) == expected
    reward, items = made["word"]
    for row in items:
        for reply in (row["data"]["word"], "Banana!", "", f"so {row['data']['word']}"):
            assert reward.score(row["data"], reply) == first_word_reward(reply, row["data"]["word"])
    reward, items = made["werewolves"]
    for winner, invalid in (("wolves", 0), ("village", 0), ("draw", 0), ("wolves", 3)):
        side = None if winner == "draw" else Side(winner)
        expected = side_reward(side, Side.WOLVES, invalid=invalid, actions=10, penalty="per_action")
        outcome = {"winner": winner, "side": "wolves", "invalid": invalid, "actions": 10}
        assert reward.score(items[0]["data"], outcome) == expected


def test_the_planned_werewolves_reward_is_the_weighted_one_scaled_into_the_contracts_range(tmp_path: Path) -> None:
    """The planner's recipe weighs invalid answers 3x the result; reward.py divides by the weight (same advantages)."""
    params = dict(RECIPE_PARAMS, trained_roles=["werewolf"], discussion=False)
    ws = Workspace(tmp_path / "run").init()
    generate(make_spec("werewolves", **params), ws, llm=None)
    reward, items = _load(ws, "reward"), rows(ws, "eval")
    weight = float(params["penalty_weight"])
    assert weight > 1.0
    for winner in ("wolves", "village", "draw"):
        for invalid in range(11):
            side = None if winner == "draw" else Side(winner)
            raw = side_reward(
                side, Side.WOLVES, invalid=invalid, actions=10, penalty="per_action", penalty_weight=weight
            )
            outcome = {"winner": winner, "side": "wolves", "invalid": invalid, "actions": 10}
            value = reward.score(items[0]["data"], outcome)
            assert value == pytest.approx(raw / weight) and REWARD_RANGE[0] <= value <= REWARD_RANGE[1]


def test_params_a_family_rejects_are_a_clear_error(tmp_path: Path) -> None:
    ws = Workspace(tmp_path / "run").init()
    with pytest.raises(VibeError, match="difficulty"):
        generate(make_spec("countdown", difficulty=9), ws, llm=None)


def test_a_generated_task_without_an_llm_says_how_to_configure_one(tmp_path: Path) -> None:
    ws = Workspace(tmp_path / "run").init()
    with pytest.raises(VibeError, match="AGENTJET_VIBE_LLM"):
        generate(make_spec("generated"), ws, llm=None)
    assert len(ws.history()) == 1 and not ws.exists("client.py")


def test_llm_code_without_a_sandbox_is_refused(tmp_path: Path, llm: ChatLLM, fake: FakeLLM) -> None:
    ws = Workspace(tmp_path / "run").init()
    with pytest.raises(VibeError, match="sandbox doctor"):
        generate(make_spec("generated"), ws, llm=llm, sandbox=None)
    assert fake.requests == []


# ---- fenced blocks ----------------------------------------------------------------------------------------


def test_fenced_blocks_are_read_with_their_paths() -> None:
    reply = (
        "Sure.\n```python path=client.py\nA = 1\n```\n**reward.py**\n```python\ndef score(i, a):\n    return 0.0\n```\n"
        '```bash\npython3 dataset.py\n```\n```python path="tests/test_task.py"\nB = 2\n```\n'
        "````python path=x.md\n```\n````\n"
    )
    parsed = parse_files(reply)
    assert parsed.files == {
        "client.py": "A = 1\n",
        "reward.py": "def score(i, a):\n    return 0.0\n",
        "tests/test_task.py": "B = 2\n",
        "x.md": "```\n",
    }
    assert parsed.problems == [] and parsed.notes == [
        "a fenced block opened by '```bash' names no file (use ```python path=FILE)"
    ]


def test_unreadable_replies_become_problems_not_exceptions() -> None:
    assert parse_files("I cannot help with that.").problems[0].startswith("the reply holds no fenced code block")
    assert "never closed" in parse_files("```python path=client.py\nA = 1\n").problems[0]
    assert syntax_problems({"client.py": "def f(:\n", "notes.md": "def f(:"}) == [
        "client.py line 1: SyntaxError: invalid syntax"
    ]
    assert "null bytes" in syntax_problems({"a.py": "x = 1\0"})[0]


# ---- the LLM path (real sandbox for dataset.py) ------------------------------------------------------------


@pytest.mark.docker
def test_the_llm_writes_the_files_and_the_sandbox_makes_the_data(
    tmp_path: Path, llm: ChatLLM, fake: FakeLLM, docker: Sandbox
) -> None:
    spec = make_spec("generated", train=20, eval_items=8)
    fake.push(reply_with(PARITY, "Here it is. Run it with:\n```bash\npython3 dataset.py\n```"))
    ws = Workspace(tmp_path / "run").init()
    made = generate(spec, ws, llm=llm, sandbox=docker)
    assert (made.source, made.rounds, made.commit) == ("llm", 1, ws.head())
    for path, text in PARITY.items():
        assert ws.read(path) == text.rstrip() + "\n"
    train, evals = rows(ws, "train"), rows(ws, "eval")
    assert (len(train), len(evals)) == (20, 8) and train[0]["data"]["parity"] in ("even", "odd")
    assert [s for _, s in ws.history(2)] == [
        "generate: dataset (20 train, 8 eval items, seed 7)",
        f"generate(llm {llm.name}, round 1): client.py, dataset.py, reward.py, tests/test_task.py",
    ]
    system, user = fake.requests[0]["messages"]
    assert CONTRACT.splitlines()[0] in system["content"] and "```python path=client.py" in system["content"]
    assert "name: vibe-generated" in user["content"] and "family: generated" in user["content"]


@pytest.mark.docker
def test_unusable_replies_cost_rounds_with_the_problems_in_the_next_prompt(
    tmp_path: Path, llm: ChatLLM, fake: FakeLLM, docker: Sandbox
) -> None:
    without_reward = {k: v for k, v in PARITY.items() if k != "reward.py"}
    fake.push(
        "I would write a parity task.",  # no blocks at all
        reply_with({**without_reward, "client.py": PARITY["client.py"].replace("def make_task(", "def make_task(:")}),
        reply_with({**without_reward, "reward.py": PARITY["reward.py"]}),
    )
    ws = Workspace(tmp_path / "run").init()
    made = generate(make_spec("generated"), ws, llm=llm, sandbox=docker)
    assert made.rounds == 3 and ws.read("reward.py") == PARITY["reward.py"]
    second, third = fake.prompts[1], fake.prompts[2]
    assert "holds no fenced code block" in second
    assert "client.py line" in third and "SyntaxError" in third and "still missing: reward.py" in third
    assert len([s for _, s in ws.history() if s.startswith("generate(llm")]) == 1  # bad rounds wrote nothing


@pytest.mark.docker
def test_a_dataset_that_fails_in_the_sandbox_goes_back_with_its_traceback(
    tmp_path: Path, llm: ChatLLM, fake: FakeLLM, docker: Sandbox
) -> None:
    broken = PARITY["dataset.py"].replace(
        "    rng = random.Random(args.seed)\n", "    raise RuntimeError('no numbers today')\n"
    )
    fake.push(reply_with({**PARITY, "dataset.py": broken}), reply_with({"dataset.py": PARITY["dataset.py"]}))
    ws = Workspace(tmp_path / "run").init()
    made = generate(make_spec("generated"), ws, llm=llm, sandbox=docker)
    assert made.rounds == 2 and len(rows(ws, "train")) == 12
    assert "RuntimeError: no numbers today" in fake.prompts[1] and "dataset.py" in fake.prompts[1]
    subjects = [s for _, s in ws.history()]
    assert any("round 1" in s for s in subjects) and any("round 2): dataset.py" in s for s in subjects)


@pytest.mark.docker
def test_running_out_of_rounds_is_a_vibe_error(tmp_path: Path, llm: ChatLLM, fake: FakeLLM, docker: Sandbox) -> None:
    fake.push("no code", "still no code")
    ws = Workspace(tmp_path / "run").init()
    with pytest.raises(VibeError, match="no usable workspace in 2 rounds"):
        generate(make_spec("generated"), ws, llm=llm, sandbox=docker, max_rounds=2)
    assert len(ws.history()) == 1


@pytest.mark.docker
def test_the_llm_may_not_write_the_data_or_the_plan(
    tmp_path: Path, llm: ChatLLM, fake: FakeLLM, docker: Sandbox
) -> None:
    forged = {"data/train.jsonl": '{"task_id": "x", "seed": 0, "data": {}}\n', "task.yaml": "family: hacked\n"}
    fake.push(reply_with({**PARITY, **forged}))
    ws = Workspace(tmp_path / "run").init()
    generate(make_spec("generated"), ws, llm=llm, sandbox=docker)
    assert len(rows(ws, "train")) == 12 and not ws.exists("task.yaml")


@pytest.mark.docker
def test_feedback_hands_a_template_workspace_to_the_llm(
    tmp_path: Path, llm: ChatLLM, fake: FakeLLM, docker: Sandbox
) -> None:
    spec = make_spec("countdown", difficulty=1)
    ws = Workspace(tmp_path / "run").init()
    generate(spec, ws, llm=llm)  # the template: no LLM call
    assert fake.requests == []
    fixed = ws.read("reward.py").replace("    return value\n", "    return min(value, 1.0)\n")
    fake.push(reply_with({"reward.py": fixed}))
    made = generate(
        spec, ws, llm=llm, feedback="red team: the 'every answer' policy beat the reference", sandbox=docker
    )
    assert made.source == "llm" and ws.read("reward.py") == fixed
    prompt = fake.prompts[0]
    assert "the 'every answer' policy beat the reference" in prompt and "class VibeCountdown" in prompt
    assert ws.history(1)[0][1] == f"generate(llm {llm.name}, round 1): reward.py"  # same data: no data commit


# ---- the client file under `agentjet client run` ------------------------------------------------------------


@pytest.mark.parametrize("family", TEMPLATES)
def test_the_workspace_client_runs_under_agentjet_client_run(tmp_path: Path, family: str) -> None:
    """`agentjet client run <workspace>/client.py` from another directory: data and reward are found beside it."""
    from typer.testing import CliRunner

    from agentjet.cli.main import app
    from agentjet.core.scripted_server import serve_scripted
    from agentjet.vibe.check.dry_policy import plausible_reply

    spec = make_spec(family, **TEMPLATE_PARAMS[family])
    ws = Workspace(tmp_path / "run").init()
    generate(spec, ws, llm=None)
    token = "vibe-test-token-0123456789"
    with serve_scripted(plausible_reply, token=token) as server:
        args = ["client", "run", str(ws.file("client.py")), "--server", server.url, "--episodes", "2"]
        args += ["--group-size", "2", "--concurrency", "2", "--eval-every", "2", "--eval-episodes", "2", "--json"]
        result = CliRunner().invoke(app, args, env={"AGENTJET_TOKEN": token})
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["task"] == spec.name and summary["episodes"] == 2 and summary["errors"] == 0, summary
    assert summary["evals"][0]["episodes"] == 2 and summary["evals"][0]["errors"] == 0
