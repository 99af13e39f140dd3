"""The held-out rounds' settings a run is planned with: `--eval-every N` or "evaluate every N steps" (rounds between
the base's and the final one, for the curve), and a seed said in the sentence ("seed 42") as `--seed` gives it.
A flag wins over the sentence's words, and the plan says so."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentjet.cli.main import app
from agentjet.vibe.errors import PlanRefused
from agentjet.vibe.plan.planner import plan
from agentjet.vibe.plan.spec import TaskSpec, spec_text
from agentjet.vibe.plan.train_words import read_eval_every, read_seed

runner = CliRunner()


def _plan(sentence: str, **flags: int) -> TaskSpec:
    return plan(sentence, llm=None, gpu=False, model_roots=[], **flags)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("text", "every"),
    [("evaluate every 5 steps", 5), ("an eval round after each update", 1), ("eval every other step", 2),
     ("eval_every=5", 5), ("held-out rounds every 3 updates", 3), ("test it every 4 steps", 4),
     ("evaluate on 50 problems every 5 steps", 5), ("a werewolves run that evaluates every 2 steps", 2),
     ("measure the win rate every 2 steps", 2), ("evaluate after every step", 1), ("eval every 10 training steps", 10),
     ("the seer checks every night", None), ("train for 10 steps", None), ("evaluate 5 steps", None),
     ("every 5 steps", None), ("evaluate on 32 games", None), ("a quick run to test every step of the pipeline", None)],
)  # fmt: skip
def test_the_steps_between_rounds_are_read_from_the_words_for_them(text: str, every: int | None) -> None:
    said = read_eval_every(text)
    assert (said and said[0]) == every


@pytest.mark.parametrize(
    ("text", "seed"),
    [("seed 42", 42), ("with seed 3", 3), ("random seed=7", 7), ("seeded with 9", 9), ("data seed: 11", 11),
     ("the seer", None), ("seeded solvable puzzles", None), ("seed the village", None)],
)  # fmt: skip
def test_a_seed_is_read_only_where_a_number_follows_it(text: str, seed: int | None) -> None:
    said = read_seed(text)
    assert (said and said[0]) == seed


@pytest.mark.parametrize(
    ("sentence", "every", "steps", "count"),
    [("countdown, evaluate every 5 steps", 5, 30, 64),
     ("arithmetic, held-out eval every 10 steps, 40 steps, evaluate on 32 problems", 10, 40, 32),
     ("werewolves, eval after each update", 1, 8, 16),
     ("say one word, measure it every other step, 6 steps", 2, 6, 16)],
)  # fmt: skip
def test_rounds_between_said_in_the_sentence_reach_the_spec(sentence: str, every: int, steps: int, count: int) -> None:
    spec = _plan(sentence)
    assert (spec.dataset.eval_every, spec.budget.steps, spec.dataset.eval_items) == (every, steps, count)
    assert any(f"a held-out round every {every} step" in a for a in spec.assumptions), spec.assumptions
    assert f"and every {every} step" in spec_text(spec)


def test_without_words_for_it_a_run_has_the_first_and_the_last_round_only() -> None:
    spec = _plan("train a 7B to play werewolves")
    assert spec.dataset.eval_every is None and spec.dataset.seed == 0
    assert "between" not in spec_text(spec).split("held-out", 1)[1].split("\n", 1)[0]


def test_the_flags_win_over_the_sentence_and_say_so() -> None:
    spec = _plan("countdown, evaluate every 5 steps, seed 42", eval_every=3, seed=7)
    assert (spec.dataset.eval_every, spec.dataset.seed) == (3, 7)
    text = " ".join(spec.assumptions)
    assert "--eval-every 3 overrides 'evaluate every 5 steps' in the sentence" in text
    assert "--seed 7: the train and held-out items are drawn with seed 7 (over 'seed 42' in the sentence)" in text


def test_a_seed_said_is_the_seed_flag_s() -> None:
    said, flagged = _plan("countdown with random seed 123 and 6 numbers"), _plan("countdown with 6 numbers", seed=123)
    assert said.dataset == flagged.dataset and said.params == flagged.params == {"difficulty": 4}
    assert "'random seed 123': the train and held-out items are drawn with seed 123" in said.assumptions


def test_rounds_every_n_steps_of_a_run_no_longer_than_n_are_said_to_fall_nowhere() -> None:
    spec = _plan("werewolves, 4 steps, evaluate every 4 steps")
    assert spec.dataset.eval_every == 4
    assert any("in a run of 4 steps, none falls between the first and last" in a for a in spec.assumptions)


@pytest.mark.parametrize(
    ("flags", "words"),
    [({"eval_every": 0}, "a held-out round every 0 steps cannot be planned: say 1 to 100000"),
     ({"seed": -1}, "seed -1 cannot be planned"),
     ({"eval_items": 0}, "0 held-out items cannot be planned")],
)  # fmt: skip
def test_a_setting_out_of_range_is_refused_in_one_line(flags: dict[str, int], words: str) -> None:
    with pytest.raises(PlanRefused, match=words):
        _plan("countdown", **flags)


def test_the_cli_plans_eval_every_and_refuses_it_on_a_resume(tmp_path: Path) -> None:
    result = runner.invoke(app, ["vibe", "countdown, 6 steps", "--eval-every", "2", "--dry-run", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["dataset"]["eval_every"] == 2
    text = runner.invoke(app, ["vibe", "countdown, 6 steps", "--eval-every", "2", "--dry-run"])
    assert "before and after training, and every 2 steps between" in text.output
    for flag, value in (("--eval-every", "0"), ("--eval-every", "100001"), ("--eval-items", "100001")):
        bad = runner.invoke(app, ["vibe", "countdown", flag, value, "--workdir", str(tmp_path)])
        assert bad.exit_code == 2 and flag in bad.output, bad.output
        assert isinstance(bad.exception, SystemExit)  # a usage error, not a traceback
    resumed = runner.invoke(app, ["vibe", "--resume", "x", "--eval-every", "3", "--workdir", str(tmp_path)])
    assert resumed.exit_code == 2 and "--eval-every goes with a new run" in resumed.output
    assert not list(tmp_path.iterdir())  # nothing written
