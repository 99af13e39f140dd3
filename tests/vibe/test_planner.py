"""The planner: deterministic keyword plans (a table of phrasings), refusals, the LLM path, model choice."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentjet.llm.chat import ChatLLM, resolve_llm
from agentjet.tasks.registry import load_family
from agentjet.vibe.errors import PlanRefused, VibeError
from agentjet.vibe.plan.families import CATALOG, VILLAGE_ROLES
from agentjet.vibe.plan.planner import DEFAULT_STEPS, plan
from agentjet.vibe.plan.policy_model import EMBEDDED, choose_model, size_in_billions
from tests.vibe.fake_llm import serve_fake_llm

VILLAGE = list(VILLAGE_ROLES)

# sentence -> (family, expected params subset, trained roles or None, steps or None, requested model)
PLANS: list[tuple[str, str, dict[str, Any], list[str] | None, int | None, str | None]] = [
    ("train a 7B to play werewolves", "werewolves", {"discussion": False}, ["werewolf"], None, "7B"),
    ("teach a small model to win at werewolf as the seer", "werewolves", {}, ["seer"], None, "a small model"),
    ("RL a 0.5B on countdown for 50 steps", "countdown", {"difficulty": 1}, None, 50, "0.5B"),
    (
        "make qwen better at grade-school math word problems, hard ones",
        "arithmetic",
        {"difficulty": 3},
        None,
        None,
        "qwen",
    ),
    ("train an agent that uses a calculator and a lookup table", "tool_use", {"difficulty": 1}, None, None, None),
    ("train the village side in mafia", "werewolves", {}, VILLAGE, None, None),
    ("train a 1.5B model to play mafia as the detective", "werewolves", {}, ["seer"], None, "1.5B"),
    (
        "Train the wolves in werewolves without discussion",
        "werewolves",
        {"discussion": False},
        ["werewolf"],
        None,
        None,
    ),
    ("teach smollm to solve countdown puzzles at level 3", "countdown", {"difficulty": 3}, None, None, "smollm"),
    ("get a model to reach the target number with + - * /", "countdown", {"difficulty": 1}, None, None, None),
    ("train a 135M model on easy arithmetic for 5 steps", "arithmetic", {"difficulty": 1}, None, 5, "135M"),
    ("improve GSM8K-style math reasoning", "arithmetic", {"difficulty": 1}, None, None, None),
    ("fine-tune a model to use tools for shopping totals, hard", "tool_use", {"difficulty": 3}, None, None, None),
    ("RL on the numbers game for 20 training steps", "countdown", {}, None, 20, None),
    ("train a model to play werewolves as the witch and the seer", "werewolves", {}, ["seer", "witch"], None, None),
    ("play social deduction games as a villager", "werewolves", {}, ["villager"], None, None),
    ("teach a model multi-turn tool calling", "tool_use", {}, None, None, None),
    ("werewolves", "werewolves", {}, ["werewolf"], None, None),
    ("COUNTDOWN!!", "countdown", {}, None, None, None),
    ("train a 70B on arithmetic with difficulty 5 in 30 minutes", "arithmetic", {"difficulty": 5}, None, None, "70B"),
    ("make the model say the word banana", "word", {}, None, None, None),
    ("train a wolf team for 12 steps in werewolf", "werewolves", {}, ["werewolf"], 12, None),
    ("train a model to play mafia as the doctor and the town", "werewolves", {}, VILLAGE, None, None),
    ("teach a model arithmetic word problems at difficulty 9", "arithmetic", {"difficulty": 5}, None, None, None),
    ("train an agent to use a calculator to solve math word problems", "tool_use", {}, None, None, None),
    ("countdown, the hardest level, 8-step run", "countdown", {"difficulty": 4}, None, 8, None),
    ("I want llama-3-8b to get good at adding numbers", "arithmetic", {}, None, None, "llama-3 8B"),
    ("train the hunter in werewolves with discussion", "werewolves", {"discussion": True}, ["hunter"], None, None),
    ("RL smollm on werewolf for 3 steps with the seer and witch", "werewolves", {}, ["seer", "witch"], 3, "smollm"),
    ("train a werewolves village team model, level 2", "werewolves", {}, VILLAGE, None, None),
    ("let the wolves learn to deceive", "werewolves", {}, ["werewolf"], None, None),
    ("Get SmolLM to play Werewolf as the Witch.", "werewolves", {}, ["witch"], None, "smollm"),
    ("train villagers to beat the wolves", "werewolves", {}, VILLAGE, None, None),
    ("teach an agent to look things up and take notes", "tool_use", {}, None, None, None),
    ("train qwen 0.5b to play werewolf as the seer", "werewolves", {}, ["seer"], None, "qwen 0.5B"),
]

REFUSED = [
    ("write me a poem", "asks for text"),
    ("train a model to drive a car", "no built-in task family"),
    ("", "empty"),
    ("   \n\t ", "empty"),
    ("write me a poem about werewolves", "asks for text"),
    ("teach a model to play chess", "no built-in task family"),
    ("fine-tune llama 7B on my emails for 10 steps", r"understood: model llama 7B, 10 steps"),
    ("what is countdown?", "asks a question"),
    ("train a model to summarize news articles", "another skill \\('to summarize'\\)"),
    ("train a 7B model to write python code", r"understood: model 7B\)"),
    # round 24: a dataset said with "no training", a dataset as a file a few words on, a 3D model
    ("make a dataset of 1000 arithmetic problems, no training", "asks for a dataset \\('make a dataset'\\)"),
    ("generate 500 word problems as a CSV file", "asks for a dataset \\('generate 500 word problems as a csv'\\)"),
    ("make a 3D model of a wolf", "asks for a 3D model \\('make a 3d model'\\)"),
    # round 25: a question before a request for text; documents asked for with no training named
    ("could you write me a poem about countdown?", "asks for text"),
    ("generate 500 math worksheets as PDF", "asks for writing \\('generate 500 math worksheets'\\), not for training"),
    ("train a model to write poems about werewolves", "asks to train writing"),
    # round 27: a picture asked of the model, music, roles of the game with no game named
    ("make a model that generates images of wolves", "asks for a picture \\('generates images'\\)"),
    ("compose music in the style of Bach", "asks for music \\('compose music'\\)"),
    ("make the cop and doctor better, 8 steps", "cop, doctor may be werewolves roles: say 'in werewolves'"),
]


def _plan(sentence: str, **kwargs: Any) -> Any:
    return plan(sentence, llm=None, gpu=False, model_roots=[], **kwargs)


@pytest.mark.parametrize(("sentence", "family", "params", "roles", "steps", "requested"), PLANS)
def test_deterministic_plans(
    sentence: str,
    family: str,
    params: dict[str, Any],
    roles: list[str] | None,
    steps: int | None,
    requested: str | None,
) -> None:
    spec = _plan(sentence)
    assert spec.family == family
    assert params.items() <= spec.params.items()
    if roles is not None:
        assert spec.trained_roles == roles
        assert spec.params["trained_roles"] == roles
    assert spec.budget.steps == (steps or CATALOG[family].steps or DEFAULT_STEPS)  # the family's default budget
    assert spec.train == dict(CATALOG[family].train)  # its measured recipe travels in the spec
    assert spec.requested_model == requested
    assert spec.planner == "deterministic"
    assert spec.model == EMBEDDED and spec.model_note
    assert spec.sentence == sentence
    assert any("without an LLM" in a for a in spec.assumptions)
    load_family(spec.family, spec.params)  # the params fit the family's constructor


def test_table_covers_enough_phrasings() -> None:
    assert len(PLANS) + len(REFUSED) >= 30
    assert {row[1] for row in PLANS} == set(CATALOG)


@pytest.mark.parametrize(("sentence", "words"), REFUSED)
def test_refusals_name_the_families_and_how_to_configure_an_llm(sentence: str, words: str) -> None:
    with pytest.raises(PlanRefused, match=words) as caught:
        _plan(sentence)
    message = str(caught.value)
    for family in CATALOG:
        assert family in message
    assert "--llm" in message and "AGENTJET_VIBE_LLM" in message


@pytest.mark.parametrize(
    ("sentence", "flags", "words"),
    [
        ("train werewolves 0 steps", {}, "a run of 0 steps cannot be planned: say a step count from 1 to 100000"),
        ("countdown for 200000 steps", {}, "200000 steps"),
        ("countdown", {"steps": 0}, "0 steps"),
        ("train werewolves in 0 minutes", {}, "a time limit of 0 minutes leaves no time to train"),
    ],
)
def test_a_budget_that_cannot_run_is_refused_in_one_sentence(sentence: str, flags: dict[str, Any], words: str) -> None:
    with pytest.raises(PlanRefused, match=words):
        plan(sentence, llm=None, gpu=False, model_roots=[], **flags)


@pytest.mark.parametrize(
    ("sentence", "model", "warned"),
    [
        ("train an agent to use tools to total shopping lists of 3 items", None, True),
        ("tool use, difficulty 2", None, True),
        ("tool use, hard", None, True),
        ("train an agent to use tools to total a shopping list", None, False),  # level 1 learns there
        ("tool calling agent, 4 items", "tiny", False),  # not the embedded model
        ("train a 7B to play werewolves", None, False),
    ],
)
def test_a_level_that_has_not_learned_on_the_embedded_model_says_so_before_the_run(
    sentence: str, model: str | None, warned: bool
) -> None:
    spec = plan(sentence, llm=None, model=model, gpu=False, model_roots=[])
    notes = [a for a in spec.assumptions if "not reached a success" in a]
    assert bool(notes) == warned, spec.assumptions
    assert all("--model" in a for a in notes)


def test_every_guess_is_an_assumption() -> None:
    spec = _plan("train a 7B to play werewolves")
    text = " ".join(spec.assumptions)
    assert "no side or role named" in text
    assert "discussion off" in text
    assert f"{CATALOG['werewolves'].steps} training steps (the family's default)" in text
    assert "bench learn werewolves" in text and "temperature 0.5" in text  # the recipe is said, not hidden
    assert "no CUDA GPU" in spec.model_note and "7B" in spec.model_note and EMBEDDED in spec.model_note
    spec = _plan("make qwen better at grade-school math word problems, hard ones")
    assert any("'hard' read as difficulty 3 of 1-5" in a for a in spec.assumptions)
    assert any("GSM8K itself is not downloaded" in a for a in spec.assumptions)
    spec = _plan("train a model to play mafia as the detective")
    assert any("'detective' read as the seer" in a for a in spec.assumptions)
    assert any("mafia is played as werewolves" in a for a in spec.assumptions)


def test_difficulty_for_a_family_without_levels_is_noted() -> None:
    spec = _plan("train a werewolves village team model, level 2")
    assert any("has no difficulty levels" in a for a in spec.assumptions)


def test_stated_values_are_not_assumptions() -> None:
    spec = _plan("RL a 0.5B on countdown at level 2 for 50 steps")
    assert not any("step" in a or "difficulty" in a for a in spec.assumptions)


def test_both_sides_asked_to_train_get_a_policy_each_and_a_lineup_trains_the_first() -> None:
    spec = _plan("train the village side and the wolves in werewolves")
    assert spec.trained_roles == ["werewolf", *VILLAGE]
    assert [p.name for p in spec.policies] == ["wolves", "village"]
    assert any("since both sides train and a policy plays one side" in a for a in spec.assumptions)
    one = _plan("train the village side and the wolves on one shared model in werewolves")  # said shared: the first
    assert one.trained_roles == VILLAGE and any("other side" in a for a in one.assumptions)
    lineup = _plan("werewolves with 3 wolves and a seer")  # no training verb: who is dealt, not who trains
    assert lineup.trained_roles == ["werewolf"]


def test_flags_win_over_the_sentence() -> None:
    spec = _plan("RL a 0.5B on countdown for 50 steps in 20 minutes", model="tiny", steps=3, minutes=5)
    assert (spec.model, spec.budget.steps, spec.budget.minutes) == ("tiny", 3, 5)
    assert "--model tiny" in spec.model_note and "0.5B" in spec.model_note
    assert any("--steps 3 overrides the 50 steps" in a for a in spec.assumptions)


def test_same_sentence_same_plan() -> None:
    assert _plan("train the village side in mafia") == _plan("train the village side in mafia")


def test_family_levels_match_the_families() -> None:
    from agentjet.tasks import arithmetic, countdown, tool_use

    assert CATALOG["arithmetic"].levels == len(arithmetic.LEVELS)
    assert CATALOG["countdown"].levels == len(countdown.LEVELS)
    assert CATALOG["tool_use"].levels == len(tool_use.LEVELS)


# --- model choice ---------------------------------------------------------------------------


def _model_folder(root: Path, name: str) -> Path:
    folder = root / name
    folder.mkdir(parents=True)
    (folder / "config.json").write_text("{}")
    return folder


def test_big_model_without_gpu_falls_back_with_a_plain_note(tmp_path: Path) -> None:
    _model_folder(tmp_path, "Qwen2.5-7B-Instruct")
    choice = choose_model("7B", gpu=False, roots=[tmp_path])
    assert choice.model == EMBEDDED
    assert choice.note.startswith("no CUDA GPU here") and "--model" in choice.note


def test_big_model_with_gpu_uses_a_local_copy(tmp_path: Path) -> None:
    _model_folder(tmp_path, "Qwen2.5-7B")
    wanted = _model_folder(tmp_path, "Qwen2.5-7B-Instruct")
    _model_folder(tmp_path, "Qwen2.5-0.5B-Instruct")
    choice = choose_model("7B", gpu=True, roots=[tmp_path])
    assert choice.model == str(wanted)
    assert "on the GPU" in choice.note


def test_gpu_but_no_local_copy_falls_back(tmp_path: Path) -> None:
    choice = choose_model("qwen 7B", gpu=True, roots=[tmp_path])
    assert choice.model == EMBEDDED
    assert "no local copy of a qwen 7B model" in choice.note and "nothing is downloaded" in choice.note


def test_a_local_model_matches_the_version_asked_and_its_config_gives_its_size(tmp_path: Path) -> None:
    _model_folder(tmp_path, "Meta-Llama-3-8B-Instruct")
    _model_folder(tmp_path, "gemma-2b-it")  # Gemma 1
    medium = _model_folder(tmp_path, "Phi-3-medium-4k-instruct")  # 14B, no size in its name: the config says it
    (medium / "config.json").write_text(
        '{"hidden_size": 5120, "num_hidden_layers": 40, "intermediate_size": 17920, "vocab_size": 32064}'
    )
    mini = _model_folder(tmp_path, "Phi-3-mini-4k-instruct")
    assert choose_model("llama 3.1 8B", gpu=True, roots=[tmp_path]).model == EMBEDDED  # Llama 3 is no 3.1
    assert choose_model("gemma 2 2B", gpu=True, roots=[tmp_path]).model == EMBEDDED  # Gemma 1's 2B is no Gemma 2
    assert choose_model("llama3", gpu=True, roots=[tmp_path]).model.endswith("Meta-Llama-3-8B-Instruct")
    assert choose_model("phi-3 mini", gpu=True, roots=[tmp_path]).model == str(mini)
    on_cpu = choose_model("phi-3 medium", gpu=False, roots=[tmp_path])
    assert on_cpu.model == EMBEDDED and "has 15.4B parameters and there is no CUDA GPU" in on_cpu.note


def test_hf_hub_snapshot_is_found(tmp_path: Path) -> None:
    snapshot = tmp_path / "models--Qwen--Qwen2.5-0.5B-Instruct" / "snapshots" / "abc123"
    snapshot.mkdir(parents=True)
    (snapshot / "config.json").write_text("{}")
    choice = choose_model("qwen 0.5B", gpu=False, roots=[tmp_path])
    assert choice.model == str(snapshot)
    assert "on the CPU" in choice.note


def test_name_without_size_respects_the_gpu_floor(tmp_path: Path) -> None:
    _model_folder(tmp_path, "llama-3-8b")
    assert choose_model("llama", gpu=False, roots=[tmp_path]).model == EMBEDDED
    assert choose_model("llama", gpu=True, roots=[tmp_path]).model == str(tmp_path / "llama-3-8b")


def test_a_version_in_the_name_picks_that_version(tmp_path: Path) -> None:
    _model_folder(tmp_path, "Qwen1.5-0.5B-Chat")
    wanted = _model_folder(tmp_path, "Qwen2.5-0.5B-Instruct")
    assert choose_model("qwen2.5 0.5B", gpu=False, roots=[tmp_path]).model == str(wanted)
    assert choose_model("qwen3 0.5B", gpu=False, roots=[tmp_path]).model == EMBEDDED  # no qwen3 here: not another


@pytest.mark.parametrize("hosted", ["gpt-4o", "gpt-3.5-turbo", "claude-3-opus", "gemini-1.5-pro"])
def test_hosted_models_with_versions_are_named_as_hosted(hosted: str, tmp_path: Path) -> None:
    assert "hosted model" in choose_model(hosted, gpu=True, roots=[tmp_path]).note


def test_the_embedded_models_short_name_and_a_size_flag_over_the_sentence(tmp_path: Path) -> None:
    assert choose_model(None, override="smollm", gpu=False, roots=[tmp_path]).model == EMBEDDED
    note = choose_model("7B", override="0.5B", gpu=False, roots=[tmp_path]).note
    assert note.startswith("--model 0.5B is a size, not a model name (the sentence asked for 7B): ")


@pytest.mark.parametrize(("flag", "note"), [("7B", "no CUDA GPU here"), ("135m", "training the embedded")])
def test_a_size_given_as_model_flag_is_read_as_a_size(flag: str, note: str, tmp_path: Path) -> None:
    choice = choose_model(None, override=flag, gpu=False, roots=[tmp_path])
    assert choice.model == EMBEDDED
    assert choice.note.startswith(f"--model {flag} is a size, not a model name: ") and note in choice.note
    assert "pass --model" not in choice.note  # it was passed
    assert "pass --model to choose another" in choose_model("7B", gpu=False, roots=[tmp_path]).note


@pytest.mark.parametrize("requested", [None, "135M", "smollm", "a small model"])
def test_small_requests_use_the_embedded_model(requested: str | None, tmp_path: Path) -> None:
    assert choose_model(requested, gpu=True, roots=[tmp_path]).model == EMBEDDED


def test_another_smollm_size_is_looked_for_not_read_as_the_embedded_one(tmp_path: Path) -> None:
    assert "no local copy of a smollm 360M model" in choose_model("smollm 360M", gpu=False, roots=[tmp_path]).note
    folder = _model_folder(tmp_path, "SmolLM2-360M-Instruct")
    assert choose_model("smollm 360M", gpu=False, roots=[tmp_path]).model == str(folder)
    assert choose_model("smollm 135M", gpu=False, roots=[tmp_path]).model == EMBEDDED


@pytest.mark.parametrize("sentence", ["werewolves on gpt-4", "train GPT-4o at countdown", "claude for arithmetic"])
def test_a_hosted_model_is_named_as_untrainable(sentence: str) -> None:
    spec = plan(sentence, llm=None, gpu=True, model_roots=[])
    assert spec.model == EMBEDDED
    assert "is a hosted model whose weights are not available to train" in (spec.model_note or "")


def test_plan_uses_a_local_model_on_gpu(tmp_path: Path) -> None:
    folder = _model_folder(tmp_path, "Qwen2.5-7B-Instruct")
    spec = plan("train a 7B to play werewolves", llm=None, gpu=True, model_roots=[tmp_path])
    assert spec.model == str(folder)


@pytest.mark.parametrize(
    ("text", "billions"), [("7B", 7.0), ("qwen2.5-0.5b-instruct", 0.5), ("135M", 0.135), ("llama", None)]
)
def test_size_in_billions(text: str, billions: float | None) -> None:
    assert size_in_billions(text) == billions


# --- the LLM path (scripted fake LLM over real HTTP through litellm) --------------------------


def _llm_spec(**overrides: Any) -> str:
    spec: dict[str, Any] = {
        "name": "Werewolves Seer",
        "family": "werewolves",
        "params": {"trained_roles": ["seer"], "discussion": True},
        "requested_model": "7B",
        "environment": "the 9-player game",
        "actors": ["seer", "8 scripted players"],
        "trained_roles": ["seer"],
        "reward": "1 win, 0 loss",
        "dataset": {"train_items": 16, "eval_items": 4, "seed": 3},
        "success_metric": {"name": "eval_reward_mean", "description": "win rate"},
        "budget": {"steps": 6},
        "assumptions": ["seer only"],
    }
    spec.update(overrides)
    return json.dumps(spec)


def _llm(url: str) -> ChatLLM:
    llm = resolve_llm(url)
    assert llm is not None
    return llm


def test_llm_plan_is_validated_and_annotated() -> None:
    with serve_fake_llm([_llm_spec()]) as fake:
        llm = _llm(fake.url)
        spec = plan("teach a 7B the seer", llm=llm, gpu=False, model_roots=[])
    assert (spec.family, spec.name, spec.trained_roles) == ("werewolves", "werewolves-seer", ["seer"])
    assert spec.planner == llm.name
    assert spec.dataset.train_items == 16 and spec.budget.steps == 6
    assert spec.assumptions[0].startswith("planned by the LLM") and "seer only" in spec.assumptions
    assert spec.model == EMBEDDED and "no CUDA GPU" in spec.model_note
    system = fake.requests[0]["messages"][0]["content"]
    assert "countdown" in system and '"refused"' in system and "success_metric" in system
    assert fake.requests[0]["response_format"] == {"type": "json_object"}
    assert "teach a 7B the seer" in fake.requests[0]["messages"][1]["content"]


def test_invalid_json_is_retried_once_with_the_error() -> None:
    with serve_fake_llm(["sure! here is the plan: {not json}", "```json\n" + _llm_spec() + "\n```"]) as fake:
        spec = plan("werewolves as the seer", llm=_llm(fake.url), gpu=False, model_roots=[])
    assert spec.family == "werewolves"
    retry = fake.requests[1]["messages"]
    assert retry[-2] == {"role": "assistant", "content": "sure! here is the plan: {not json}"}
    assert "not valid JSON" in retry[-1]["content"]


def test_schema_violation_is_retried_with_the_field_named() -> None:
    bad = _llm_spec(reward="", budget={"steps": 0})
    with serve_fake_llm([bad, _llm_spec()]) as fake:
        plan("werewolves as the seer", llm=_llm(fake.url), gpu=False, model_roots=[])
    feedback = fake.requests[1]["messages"][-1]["content"]
    assert "reward:" in feedback and "budget.steps:" in feedback


def test_params_that_do_not_fit_the_family_are_retried() -> None:
    bad = _llm_spec(params={"trained_roles": ["seer"], "num_players": 12})
    with serve_fake_llm([bad, _llm_spec()]) as fake:
        spec = plan("werewolves as the seer", llm=_llm(fake.url), gpu=False, model_roots=[])
    assert "num_players" not in spec.params
    assert "params do not fit the werewolves family" in fake.requests[1]["messages"][-1]["content"]


def test_two_bad_replies_are_a_vibe_error() -> None:
    with serve_fake_llm(["nope", "still nope"]) as fake:
        with pytest.raises(VibeError, match="gave no valid plan in 2 tries.*no JSON object") as caught:
            plan("werewolves", llm=_llm(fake.url), gpu=False, model_roots=[])
    assert not isinstance(caught.value, PlanRefused)
    assert len(fake.requests) == 2


def test_unknown_family_becomes_generated() -> None:
    reply = _llm_spec(family="chess", params={"board": 8}, name="chess-openings", trained_roles=["white"])
    with serve_fake_llm([reply]) as fake:
        spec = plan("teach a model chess openings", llm=_llm(fake.url), gpu=False, model_roots=[])
    assert spec.family == "generated" and spec.is_generated
    assert spec.params == {"board": 8}
    assert any("'chess'" in a and "generated" in a for a in spec.assumptions)


def test_llm_cannot_set_the_fields_the_planner_owns() -> None:
    reply = _llm_spec(model="gpt-4", planner="me", sentence="something else", model_note="x")
    with serve_fake_llm([reply]) as fake:
        llm = _llm(fake.url)
        spec = plan("werewolves seer", llm=llm, model="tiny", steps=2, gpu=False, model_roots=[])
    assert (spec.model, spec.planner, spec.sentence) == ("tiny", llm.name, "werewolves seer")
    assert spec.budget.steps == 2


def test_llm_may_refuse() -> None:
    with serve_fake_llm(['{"refused": "a poem has no checkable reward"}']) as fake:
        with pytest.raises(PlanRefused, match="declined.*no checkable reward.*countdown"):
            plan("write me a poem", llm=_llm(fake.url), gpu=False, model_roots=[])


def test_empty_sentence_never_reaches_the_llm() -> None:
    with serve_fake_llm([]) as fake:
        with pytest.raises(PlanRefused, match="empty"):
            plan("  ", llm=_llm(fake.url), gpu=False, model_roots=[])
    assert fake.requests == []


def test_a_reading_that_gives_no_valid_spec_is_refused_in_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """A planner bug that builds an invalid spec (two policies named alike) is a refusal, not a traceback."""
    import agentjet.vibe.plan.planner as planner
    from agentjet.vibe.plan.spec import Policy
    from agentjet.vibe.plan.werewolves.plan import WerewolvesPlan

    twins = [Policy(name="village", roles=["seer"]), Policy(name="village", roles=["witch"])]
    broken = WerewolvesPlan(params={"trained_roles": ["seer", "witch"]}, roles=["seer", "witch"], policies=twins,
                            name="werewolves-twins")  # fmt: skip
    monkeypatch.setattr(planner, "plan_werewolves", lambda reading, assumptions: broken)
    with pytest.raises(PlanRefused, match="its reading is no valid plan .*policy names must differ") as caught:
        _plan("train the seer and the witch in werewolves")
    assert "\n" not in str(caught.value)
