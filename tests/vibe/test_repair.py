"""One repair round against the scripted fake LLM (real HTTP through litellm): the prompt it gets, the fix
written and committed, unusable replies costing a round with nothing written, and the clear stops."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentjet.llm.chat import resolve_llm
from agentjet.vibe.context import NodeFailed
from agentjet.vibe.plan.spec import TaskSpec
from agentjet.vibe.repair import RepairStopped, repair
from agentjet.vibe.workspace import Workspace
from tests.vibe.fake_llm import FakeFailure, serve_fake_llm
from tests.vibe.redteam_helpers import make_spec, make_workspace

BUGGY = '''"""Countdown reward (buggy: the sign is flipped)."""


def score(item, reply):
    return -1.0
'''
FIXED = '''"""Countdown reward."""

from agentjet.tasks.countdown import countdown_reward


def score(item, reply):
    return countdown_reward(reply, [int(n) for n in item["numbers"]], int(item["target"]))[0]
'''
ERROR = "tests/test_task.py failed: exit 1; FAIL test_right_answer_scores_one"
LOGS = "FAIL test_right_answer_scores_one\nAssertionError: score of the solution is -1.0, expected 1.0"


@pytest.fixture
def broken(tmp_path: Path) -> tuple[Workspace, TaskSpec]:
    spec = make_spec("countdown")
    workspace = make_workspace(tmp_path / "ws", spec)
    workspace.write("reward.py", BUGGY)
    workspace.commit("generate: reward")
    return workspace, spec


def test_a_fix_is_written_and_committed_with_what_the_llm_was_shown(broken: tuple[Workspace, TaskSpec]) -> None:
    workspace, spec = broken
    reply = f"SUMMARY: score with the countdown reader instead of a constant\n\n```python path=reward.py\n{FIXED}```"
    with serve_fake_llm([reply]) as fake:
        result = repair("validate", ERROR, LOGS, workspace, spec, resolve_llm(fake.url), 2)
    assert workspace.read("reward.py") == FIXED
    assert result.files == ["reward.py"] and result.attempt == 2 and result.commit == workspace.head()
    sha, subject = workspace.history(1)[0]
    assert subject == "repair(validate): score with the countdown reader instead of a constant"
    assert "attempt 2 of 3" in workspace.repo.commit(sha).message
    system, user = fake.requests[0]["messages"]
    assert "reward.py" in system["content"] and "must not be gameable" in system["content"]  # the contract
    prompt = user["content"]
    assert ERROR in prompt and "expected 1.0" in prompt and "attempt 2 of 3" in prompt
    assert "return -1.0" in prompt and "```python path=client.py" in prompt  # the current files
    assert "data/eval.jsonl (4 rows" in prompt and "family: countdown" in prompt  # data rows and the spec


@pytest.mark.parametrize(
    ("reply", "why"),
    [
        ("I would change the sign.", "no fenced code block"),
        (f"```python path=reward.py\n{FIXED.replace('return', 'return (')}```", "SyntaxError"),
        (f"```python path=../reward.py\n{FIXED}```", "inside the workspace"),
        (f"```python path=.git/hooks/post-commit.py\n{FIXED}```", ".git"),
        ("```yaml path=task.yaml\nname: x\n```", "not the repair's to change"),
        (f"```python path=reward.py\n{BUGGY}```", "changes nothing"),
    ],
)
def test_an_unusable_reply_costs_a_round_and_writes_nothing(
    broken: tuple[Workspace, TaskSpec], reply: str, why: str
) -> None:
    workspace, spec = broken
    head = workspace.head()
    with serve_fake_llm([reply]) as fake, pytest.raises(NodeFailed, match=why) as failed:
        repair("validate", ERROR, LOGS, workspace, spec, resolve_llm(fake.url), 1)
    assert "unusable" in str(failed.value) or "changes nothing" in str(failed.value)
    assert workspace.head() == head and workspace.read("reward.py") == BUGGY
    assert not (workspace.path.parent / "reward.py").exists()


def test_a_failed_llm_call_costs_a_round(broken: tuple[Workspace, TaskSpec]) -> None:
    workspace, spec = broken
    with serve_fake_llm(default=FakeFailure(500, "overloaded")) as fake, pytest.raises(NodeFailed, match="LLM call"):
        repair("red_team", ERROR, LOGS, workspace, spec, resolve_llm(fake.url), 1)


def test_without_an_llm_a_template_failure_stops_as_a_bug(broken: tuple[Workspace, TaskSpec]) -> None:
    workspace, spec = broken
    head = workspace.head()
    with pytest.raises(RepairStopped) as stopped:
        repair("validate", ERROR, LOGS, workspace, spec, None, 1)
    message = str(stopped.value)
    assert ERROR in message and "AgentJet bug" in message and "--llm" in message
    assert stopped.value.last_error == ERROR and workspace.head() == head
    generated = spec.model_copy(update={"family": "generated"})
    with pytest.raises(RepairStopped) as plain:
        repair("validate", ERROR, LOGS, workspace, generated, None, 1)
    assert "bug" not in str(plain.value) and "AGENTJET_VIBE_LLM" in str(plain.value)


def test_attempts_are_bounded(broken: tuple[Workspace, TaskSpec]) -> None:
    workspace, spec = broken
    with serve_fake_llm([f"```python path=reward.py\n{FIXED}```"]) as fake:
        with pytest.raises(RepairStopped, match="after 2 repair attempt") as stopped:
            repair("validate", ERROR, LOGS, workspace, spec, resolve_llm(fake.url), 3, max_attempts=2)
        assert ERROR in str(stopped.value) and not fake.requests  # stopped before asking
        result = repair("validate", ERROR, LOGS, workspace, spec, resolve_llm(fake.url), 2, max_attempts=2)
    assert result.summary == "rewrote reward.py"  # no SUMMARY line: say what was rewritten
