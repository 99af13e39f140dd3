"""The campaign planner: front matter needs no LLM; prose and next stages go through litellm to a
scripted fake OpenAI-compatible server on loopback (real HTTP); offline stages narrow the space."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentjet.a3r.errors import PlanError, PlannerError
from agentjet.a3r.plan.campaign_plan import CampaignPlan, load_plan, parse_plan
from agentjet.a3r.plan.examples import EXAMPLES_DIR
from agentjet.a3r.plan.planner import (
    ENV_LLM,
    StageResults,
    narrow_search_space,
    plan_from_file,
    plan_from_prose,
    propose_next_stage,
    resolve_planner_llm,
)
from agentjet.llm.chat import ENV_LLM as VIBE_ENV_LLM
from tests.vibe.fake_llm import FakeFailure, serve_fake_llm

CAMPAIGNS = EXAMPLES_DIR
PROSE = """# Does the learning rate matter for arithmetic?

Train the tiny model on arithmetic and compare learning rates between 1e-4 and 1e-2 and LoRA
ranks 2 and 4. Four trials of two steps each on two local servers.
"""
FRONT = {
    "task": {"family": "arithmetic", "params": {"max_tokens": 8}},
    "model": "tiny",
    "search_space": {"lr": {"low": 1e-4, "high": 1e-2, "log": True}, "lora_rank": {"choices": [2, 4]}},
    "budget": {"trials": 4, "steps_per_trial": 2},
    "pool": "local:2",
}


def test_resolve_planner_llm_precedence(monkeypatch: pytest.MonkeyPatch) -> None:
    assert resolve_planner_llm() is None
    monkeypatch.setenv(VIBE_ENV_LLM, "openai/vibe-model")
    assert getattr(resolve_planner_llm(), "model", None) == "openai/vibe-model"
    monkeypatch.setenv(ENV_LLM, "http://127.0.0.1:9/v1")
    assert getattr(resolve_planner_llm(), "api_base", None) == "http://127.0.0.1:9/v1"
    assert getattr(resolve_planner_llm("openai/flag"), "model", None) == "openai/flag"
    assert resolve_planner_llm("none") is None
    with pytest.raises(PlannerError, match="has spaces"):
        resolve_planner_llm("gpt 4")


def test_front_matter_is_parsed_as_written_without_asking_the_llm() -> None:
    with serve_fake_llm(default=FakeFailure(500, "must not be called")) as fake:
        llm = resolve_planner_llm(fake.url)
        plan = plan_from_file(CAMPAIGNS / "quick-tiny.md", llm=llm)
    assert plan == load_plan(CAMPAIGNS / "quick-tiny.md")
    assert fake.requests == []


def test_prose_without_an_llm_says_add_front_matter_or_configure_one(tmp_path: Path) -> None:
    path = tmp_path / "idea.md"
    path.write_text(PROSE)
    with pytest.raises(PlanError) as caught:
        plan_from_file(path)
    message = str(caught.value)
    assert message.startswith(f"{path}:1: ")
    assert "front matter" in message and "agentjet campaign examples" in message and ENV_LLM in message


def test_prose_becomes_a_plan_through_the_llm(tmp_path: Path) -> None:
    path = tmp_path / "lr-idea.md"
    path.write_text(PROSE)
    reply = "Here is the plan:\n```json\n" + json.dumps(FRONT) + "\n```"
    with serve_fake_llm([reply]) as fake:
        plan = plan_from_file(path, llm=resolve_planner_llm(fake.url))
    assert plan.name == "lr-idea" and plan.model == "tiny" and plan.pool.local == 2
    assert plan.search_space["lr"].log and plan.search_space["lora_rank"].choices == (2, 4)
    assert plan.body.strip() == PROSE.strip()
    (request,) = fake.requests
    system, user = request["messages"]
    assert "search_space" in system["content"] and "lora_rank" in system["content"]
    assert "arithmetic" in system["content"]  # the families are listed for the LLM
    assert user["content"] == PROSE
    assert request["response_format"] == {"type": "json_object"}


def test_an_invalid_reply_is_repaired_once_with_the_errors_quoted() -> None:
    bad = {**FRONT, "search_space": {"lrate": {"low": 1e-4, "high": 1e-2}}}
    with serve_fake_llm([json.dumps(bad), json.dumps(FRONT)]) as fake:
        plan = plan_from_prose(PROSE, resolve_planner_llm(fake.url), name="fixed")  # type: ignore[arg-type]
    assert plan.name == "fixed" and set(plan.search_space) == {"lr", "lora_rank"}
    second = fake.requests[1]["messages"]
    assert second[-2] == {"role": "assistant", "content": json.dumps(bad)}
    assert "unknown param 'lrate'" in second[-1]["content"]


@pytest.mark.parametrize(
    ("replies", "words"),
    [
        (["not json at all", "[1, 2]"], "gave no valid plan in 2 tries; last problem: the reply"),
        ([json.dumps({"task": {"family": "chess"}})] * 2, "unknown family 'chess'"),
        ([FakeFailure(401, "bad key")] * 3, "rejected the API key"),  # litellm may retry once
    ],
)
def test_llm_failures_are_planner_errors(replies: list[Any], words: str) -> None:
    with serve_fake_llm(replies) as fake:
        llm = resolve_planner_llm(fake.url)
        assert llm is not None
        with pytest.raises(PlannerError, match=words):
            plan_from_prose(PROSE, llm, name="x")


def _stage_one() -> CampaignPlan:
    return load_plan(CAMPAIGNS / "synthetic.md")


def test_offline_next_stage_narrows_around_the_best_with_fresh_seeds() -> None:
    plan = _stage_one()
    best = {"lr": 1e-3, "lora_rank": 32, "group_size": 4}
    nxt = propose_next_stage(plan, {"best_params": best, "best_value": 0.71, "trials": []})
    assert (nxt.name, nxt.stage) == ("synthetic-stage2", 2)
    assert nxt.seeds.base == plan.seeds.base + 1000 and nxt.seeds.confirm == plan.seeds.confirm
    lr, old_lr = nxt.search_space["lr"], plan.search_space["lr"]
    assert lr.low is not None and lr.high is not None and old_lr.low is not None and old_lr.high is not None
    assert old_lr.low <= lr.low < 1e-3 < lr.high <= old_lr.high and lr.log
    assert lr.high / lr.low == pytest.approx((old_lr.high / old_lr.low) ** 0.5, rel=1e-3)  # half the log width
    assert nxt.search_space["lora_rank"].choices == (16, 32)  # the best (an edge) and its neighbour
    gs = nxt.search_space["group_size"]
    assert (gs.low, gs.high, gs.step) == (2, 6, 2)
    assert "## Stage 2 (proposed offline from stage 1)" in nxt.body and "0.71" in nxt.body
    assert nxt.body.startswith(plan.body.rstrip())
    assert parse_plan(_render(nxt)) == nxt
    third = propose_next_stage(nxt, StageResults(best_params={"lr": 2e-3}, best_value=0.8))
    assert (third.name, third.stage, third.seeds.base) == ("synthetic-stage3", 3, plan.seeds.base + 2000)
    assert third.search_space["lora_rank"] == nxt.search_space["lora_rank"]  # no best value: kept


def _render(plan: CampaignPlan) -> str:
    from agentjet.a3r.plan.campaign_plan import render_plan

    return render_plan(plan)


def test_narrowing_keeps_width_at_an_edge_and_never_leaves_the_old_range() -> None:
    plan = parse_plan(
        "---\nname: x\ntask: {family: word}\nsearch_space:\n  kl: {low: 0.0, high: 0.4}\n"
        "  lora_rank: {low: 2, high: 64, log: true}\n  strategy: [tasks, episodes, informative_tasks]\n---\n"
    )
    space = narrow_search_space(plan, {"kl": 0.0, "lora_rank": 64, "strategy": "episodes"})
    assert (space["kl"].low, space["kl"].high) == (0.0, 0.2)
    assert (space["lora_rank"].low, space["lora_rank"].high) == (11, 64)  # 64/sqrt(32) = 11.3, rounded down
    assert space["strategy"].choices == ("tasks", "episodes", "informative_tasks")


def test_offline_next_stage_needs_a_completed_trial() -> None:
    with pytest.raises(PlannerError, match="no best trial to narrow around"):
        propose_next_stage(_stage_one(), {"best_params": {}, "trials": [{"number": 0, "state": "FAIL"}]})
    with pytest.raises(PlannerError, match="malformed"):
        propose_next_stage(_stage_one(), {"best_value": "high"})


def test_next_stage_from_the_llm_keeps_name_stage_and_seeds_in_our_hands() -> None:
    plan = _stage_one()
    front = {
        "name": "llm-picked-name",
        "stage": 9,
        "task": {"family": "synthetic", "params": {"step_s": 0.05}},
        "search_space": {"lr": {"low": 1e-4, "high": 1e-3, "log": True}},
        "budget": {"trials": 10, "steps_per_trial": 5},
        "pool": "local:4",
    }
    reply = json.dumps({"front_matter": front, "rationale": "lr dominated the importance; rank did not matter."})
    results = StageResults(best_params={"lr": 3e-4, "lora_rank": 8}, best_value=0.9, importance={"lr": 0.8})
    with serve_fake_llm([reply]) as fake:
        llm = resolve_planner_llm(fake.url)
        nxt = propose_next_stage(plan, results, llm=llm)
    assert (nxt.name, nxt.stage, nxt.seeds.base) == ("synthetic-stage2", 2, 1000)
    assert set(nxt.search_space) == {"lr"} and nxt.budget.trials == 10
    assert "## Stage 2 (proposed by openai/default @ " in nxt.body and "rank did not matter" in nxt.body
    prompt = fake.prompts[0]
    assert '"importance":{"lr":0.8}' in prompt and "name: synthetic" in prompt
