"""Campaign analysis: intervals that cover, importance that ranks, and when the best is called a finding."""

from __future__ import annotations

import math
import random
from dataclasses import replace
from typing import Any

import optuna
import pytest
from optuna.distributions import CategoricalDistribution, FloatDistribution
from optuna.trial import TrialState, create_trial

from agentjet.a3r.analysis.findings import analyze, confirm_best, trial_rows
from agentjet.a3r.analysis.importance import MIN_TRIALS, param_importance
from agentjet.a3r.analysis.questions import answer, extract_questions, mentioned_params
from agentjet.a3r.analysis.stats import difference_interval, mean_interval, t_quantile
from agentjet.a3r.plan.campaign_plan import CampaignPlan, parse_plan
from agentjet.a3r.plan.planner import propose_next_stage
from agentjet.a3r.trial.records import trial_record

PLAN = """---
name: synth
objective: {metric: eval_reward, direction: DIRECTION}
task: {family: arithmetic}
search_space:
  lr: {low: 1.0e-5, high: 1.0e-2, log: true}
  lora_rank: {choices: [4, 8, 16]}
  kl: {low: 0.0, high: 0.1}
budget: {trials: 30}
seeds: {confirm: 3}
---

# Synthetic

Intro text without a question.

## Research questions

1. Which learning rate is best?
2. Does the LoRA rank matter at all, and does the best lr depend on the rank?
3. Do the re-runs with fresh seeds confirm the best?
4. Is the tokenizer to blame
"""
DISTS = {
    "lr": FloatDistribution(1e-5, 1e-2, log=True),
    "lora_rank": CategoricalDistribution([4, 8, 16]),
    "kl": FloatDistribution(0.0, 0.1),
}


def _plan(direction: str = "maximize") -> CampaignPlan:
    return parse_plan(PLAN.replace("DIRECTION", direction))


def _value(params: dict[str, Any]) -> float:
    """Peaks at lr = 10**-3.5, mid-range; the rank barely matters and kl not at all."""
    return 1.0 - 0.4 * (math.log10(params["lr"]) + 3.5) ** 2 + 0.002 * params["lora_rank"]


def _study(n: int, *, seed: int = 0, noise: float = 0.02) -> optuna.Study:
    """A real Optuna study of `n` search trials of the known function above (random params)."""
    rng = random.Random(seed)
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(direction="maximize")
    for _ in range(n):
        params = {"lr": 10 ** rng.uniform(-5, -2), "lora_rank": rng.choice([4, 8, 16]), "kl": rng.uniform(0, 0.1)}
        value = _value(params) + rng.gauss(0, noise)
        study.add_trial(
            create_trial(
                params=params, distributions=DISTS, value=value, intermediate_values={1: value / 2, 2: value},
                user_attrs={"kind": "search", "seed": len(study.trials), "server": "local-0"},
            )
        )  # fmt: skip
    return study


def _confirm(study: optuna.Study, best: int, values: list[float]) -> None:
    params = study.trials[best].params
    for i, value in enumerate(values):
        attrs = {"kind": "confirm", "confirm_of": best, "confirm_index": i, "seed": 100_000 + i}
        study.add_trial(create_trial(params=params, distributions=DISTS, value=value, user_attrs=attrs))


def _records(study: optuna.Study) -> list[dict[str, Any]]:
    return [trial_record(t) for t in study.get_trials(deepcopy=False)]


# -- intervals -------------------------------------------------------------------------------------


@pytest.mark.parametrize(("df", "expected"), [(1, 12.7062), (2, 4.3027), (5, 2.5706), (30, 2.0423)])
def test_t_quantiles_match_the_tables(df: int, expected: float) -> None:
    assert t_quantile(0.975, df) == pytest.approx(expected, abs=1e-3)
    assert t_quantile(0.025, df) == pytest.approx(-expected, abs=1e-3)


@pytest.mark.parametrize("n", [3, 8])
def test_mean_intervals_cover_the_true_mean_about_95_percent(n: int) -> None:
    rng = random.Random(n)
    covered = sum(mean_interval([rng.gauss(0.4, 0.1) for _ in range(n)]).excludes(0.4) is False for _ in range(1500))
    assert 0.93 <= covered / 1500 <= 0.97


def test_welch_intervals_cover_the_true_difference() -> None:
    rng = random.Random(7)
    hits = 0
    for _ in range(1000):
        a = [rng.gauss(0.7, 0.05) for _ in range(3)]
        b = [rng.gauss(0.5, 0.15) for _ in range(9)]
        hits += not difference_interval(a, b).excludes(0.2)
    assert 0.93 <= hits / 1000 <= 0.975


def test_one_value_gives_no_interval_and_no_exclusion() -> None:
    single = mean_interval([0.9])
    assert (single.low, single.high, single.n) == (None, None, 1)
    assert not single.excludes(0.0) and "no interval" in single.describe()
    assert not difference_interval([0.9], [0.1, 0.2]).known
    with pytest.raises(ValueError):
        mean_interval([float("nan")])


# -- best, importance, effects ---------------------------------------------------------------------


def test_analysis_finds_the_known_best_and_ranks_lr_first() -> None:
    study = _study(30)
    result = analyze(_plan(), _records(study))
    assert result.best is not None and result.best.number == study.best_trial.number
    assert abs(math.log10(result.best.params["lr"]) + 3.5) < 0.5  # near the peak
    assert list(result.importance)[0] == "lr"
    assert result.importance["lr"] > 0.5
    assert sum(result.importance.values()) == pytest.approx(1.0)
    assert "PED-ANOVA over 30" in result.importance_note


def test_level_effects_show_the_lr_optimum_and_cover_every_trial() -> None:
    study = _study(30, noise=0.01)
    effects = analyze(_plan(), _records(study)).effects
    lr_levels = effects["lr"]
    assert len(lr_levels) == 3 and sum(lv.interval.n for lv in lr_levels) == 30
    middle = lr_levels[1].interval
    assert middle.mean > lr_levels[0].interval.mean and middle.mean > lr_levels[2].interval.mean
    assert [lv.level for lv in effects["lora_rank"]] == ["4", "8", "16"]
    assert sum(lv.interval.n for lv in effects["lora_rank"]) == 30


def test_importance_on_few_trials_and_single_valued_params_is_said_plainly() -> None:
    plan = _plan()
    few = [({"lr": 1e-3, "lora_rank": 4, "kl": 0.0}, 0.5)] * (MIN_TRIALS - 1)
    shares, note = param_importance(plan, few)
    assert shares == {} and "not estimated" in note and str(MIN_TRIALS) in note
    rng = random.Random(1)
    fixed_rank = [({"lr": 10 ** rng.uniform(-5, -2), "lora_rank": 8, "kl": 0.05}, rng.random()) for _ in range(8)]
    shares, note = param_importance(plan, fixed_rank)
    assert shares["lora_rank"] == 0.0 and shares["kl"] == 0.0 and shares["lr"] == pytest.approx(1.0)
    assert "lora_rank, kl took one value" in note
    flat = [({"lr": 10 ** rng.uniform(-5, -2), "lora_rank": 4, "kl": 0.0}, 0.25) for _ in range(6)]
    shares, note = param_importance(plan, flat)
    assert set(shares.values()) == {0.0} and "no param made a difference" in note


def test_void_and_unfinished_trials_are_listed_but_never_counted() -> None:
    study = _study(6)
    for state, attrs in ((TrialState.FAIL, {"retried": True, "fail_reason": "server local-1 was lost"}),
                         (TrialState.RUNNING, {})):  # fmt: skip
        study.add_trial(create_trial(state=state, params={"lr": 1e-3, "lora_rank": 4, "kl": 0.0}, distributions=DISTS,
                                     user_attrs={"kind": "search", **attrs}))  # fmt: skip
    result = analyze(_plan(), _records(study))
    assert len(result.rows) == 8
    assert result.counts() == {"COMPLETE": 6, "void": 1, "RUNNING": 1}
    assert sum(lv.interval.n for lv in result.effects["lora_rank"]) == 6
    assert any("voided" in n for n in result.notes) and any("had not finished" in n for n in result.notes)
    assert {t["number"] for t in result.stage_results().trials} == {0, 1, 2, 3, 4, 5, 7}


# -- finding or not ----------------------------------------------------------------------------------


def test_reruns_clearly_above_the_other_trials_are_a_finding() -> None:
    study = _study(12)
    best = study.best_trial.number
    _confirm(study, best, [1.00, 1.01, 0.99])
    result = analyze(_plan(), _records(study))
    c = result.confirmation
    assert c.verdict == "finding" and c.best_number == best
    assert c.baseline_label == "the other search trials" and c.baseline is not None and c.baseline.n == 11
    assert c.difference is not None and c.difference.low is not None and c.difference.low > 0


def test_noisy_reruns_overlapping_the_baseline_are_not_confirmed() -> None:
    study = _study(12)
    others = [t.value for t in study.trials if t.number != study.best_trial.number]
    centre = sum(others) / len(others)  # type: ignore[arg-type]
    _confirm(study, study.best_trial.number, [centre + 0.5, centre - 0.5, centre])
    c = analyze(_plan(), _records(study)).confirmation
    assert c.verdict == "not confirmed" and "does not lie above" in c.reason


def test_baseline_reruns_are_preferred_to_the_other_search_trials() -> None:
    study = _study(12)
    best = study.best_trial.number
    _confirm(study, best, [1.00, 1.01, 0.99])
    for value in (0.99, 1.0, 1.01):  # the base config does just as well: no finding
        study.add_trial(create_trial(params={}, distributions={}, value=value, user_attrs={"kind": "baseline"}))
    c = analyze(_plan(), _records(study)).confirmation
    assert c.baseline_label == "the base config" and c.verdict == "not confirmed"


def test_base_config_runs_on_the_same_seeds_are_compared_pair_by_pair() -> None:
    """Seeds move both runs a lot, the best gains a little on each: only the paired interval sees it."""
    study = _study(8)
    best = study.best_trial.number
    confirm, base = [0.5, 0.8, 0.3, 0.9], [0.45, 0.74, 0.26, 0.84]
    _confirm(study, best, confirm)
    for paired in (True, False):
        for i, value in enumerate(base):
            attrs = {"kind": "baseline", "confirm_of": best, **({"confirm_index": i} if paired else {})}
            study.add_trial(create_trial(params={}, distributions={}, value=value, user_attrs=attrs))
        c = analyze(_plan(), _records(study)).confirmation
        if paired:
            assert c.verdict == "finding" and "on the same seeds, 4 pairs" in c.reason
            assert c.difference is not None and c.difference.mean == pytest.approx(0.0525)
            assert c.baseline_runs == tuple(base)
            study = _study(8)
            _confirm(study, best, confirm)
        else:
            assert c.verdict == "not confirmed" and "pairs" not in c.reason  # Welch cannot tell them apart


@pytest.mark.parametrize(
    ("runs", "verdict", "why"),
    [
        ([], "not confirmed", "no confirmation re-run"),
        ([5.0], "not confirmed", "one re-run gives no interval"),
        ([5.0, 5.1], "finding", "lies above"),
    ],
)
def test_how_many_reruns_it_takes(runs: list[float], verdict: str, why: str) -> None:
    study = _study(8)
    _confirm(study, study.best_trial.number, runs)
    c = analyze(_plan(), _records(study)).confirmation
    assert c.verdict == verdict and why in c.reason


def test_reruns_of_a_trial_that_is_no_longer_the_best_do_not_confirm_it() -> None:
    study = _study(8)
    worst = min(study.trials, key=lambda t: t.value or 0.0).number
    _confirm(study, worst, [9.0, 9.1, 9.2])
    c = analyze(_plan(), _records(study)).confirmation
    assert c.verdict == "not confirmed" and f"confirm trial {worst}, which is no longer the best" in c.reason


def test_minimize_wants_the_interval_below() -> None:
    rows = trial_rows(
        [{"number": i, "state": "COMPLETE", "value": v, "params": {"lr": 1e-3}, "kind": "search"}
         for i, v in enumerate([0.2, 0.5, 0.6, 0.55])]
        + [{"number": 4 + i, "state": "COMPLETE", "value": v, "params": {"lr": 1e-3}, "kind": "confirm",
            "user_attrs": {"confirm_of": 0}} for i, v in enumerate([0.21, 0.19, 0.2])]
    )  # fmt: skip
    best = rows[0]
    assert confirm_best(rows, best, maximize=False).verdict == "finding"
    assert confirm_best(rows, best, maximize=True).verdict == "not confirmed"


def test_nothing_completed_is_no_result() -> None:
    result = analyze(_plan(), [{"number": 0, "state": "PRUNED", "value": 0.1, "params": {"lr": 1e-3}}])
    assert result.best is None and result.confirmation.verdict == "no result"
    assert result.stage_results().best_params == {}


def test_stage_results_drive_the_planner() -> None:
    study = _study(12)
    result = analyze(_plan(), _records(study))
    found = result.stage_results()
    assert found.best_params == study.best_trial.params and found.best_value == study.best_value
    assert list(found.importance)[0] == "lr"
    nxt = propose_next_stage(_plan(), found)
    assert nxt.stage == 2
    narrowed = nxt.search_space["lr"]
    assert narrowed.low is not None and narrowed.high is not None
    assert narrowed.low <= found.best_params["lr"] <= narrowed.high


# -- research questions ------------------------------------------------------------------------------


def test_questions_are_read_from_the_body() -> None:
    questions = extract_questions(_plan().body)
    assert questions == [
        "Which learning rate is best?",
        "Does the LoRA rank matter at all, and does the best lr depend on the rank?",
        "Do the re-runs with fresh seeds confirm the best?",
        "Is the tokenizer to blame",
    ]
    assert mentioned_params(questions[1], ["lr", "lora_rank", "kl"]) == ["lr", "lora_rank"]
    assert mentioned_params("Is a KL penalty useful?", ["lr", "kl"]) == ["kl"]
    assert mentioned_params("Is the ranking stable?", ["lora_rank"]) == []


def test_answers_speak_from_the_data_and_do_not_guess() -> None:
    study = _study(20)
    best = study.best_trial.number
    _confirm(study, best, [1.0, 1.01, 0.99])
    result = analyze(_plan(), _records(study))
    questions = extract_questions(result.plan.body)
    lr_answer = answer(questions[0], result)
    assert f"best trial ({best})" in lr_answer and "lr ranks 1 of 3" in lr_answer
    assert "Best lr at each lora_rank" in answer(questions[1], result)
    assert answer(questions[2], result).startswith("Yes: the best configuration")
    assert "did not measure this directly" in answer(questions[3], result)


def test_a_best_level_whose_trials_tie_exactly_is_not_called_clear() -> None:
    study = _study(20)
    result = analyze(_plan(), _records(study))
    lr_levels = result.effects["lr"]
    tied = [replace(lv, interval=mean_interval([5.0, 5.0])) if i == 0 else lv for i, lv in enumerate(lr_levels)]
    result = replace(result, effects={**result.effects, "lr": tied})
    text = answer("Which learning rate is best?", result)
    assert "scored exactly alike" in text and "clears" not in text
