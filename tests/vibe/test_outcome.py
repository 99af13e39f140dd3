"""The held-out outcome: episodes counted at the version that played them, success by the task's bar, the verdict."""

from __future__ import annotations

from typing import Any

import pytest

from agentjet.tasks.play.proportions import Rate, difference_ci
from agentjet.vibe.report.outcome_text import outcome_fields, outcome_line, outcome_section
from agentjet.vibe.run.outcome import IMPROVED, NO_CHANGE, WORSE, EvalEpisode, eval_episode, measure_outcome


def _episodes(rewards: list[float], version: int, status: str = "ended") -> list[EvalEpisode]:
    return [EvalEpisode(f"e{version}-{i}", status, r, version) for i, r in enumerate(rewards)]


def _body(versions: list[int], reward: float | None = 1.0, status: str = "ended") -> dict[str, Any]:
    return {
        "episode_id": "x",
        "status": status,
        "reward": reward,
        "policy_version_at_begin": versions[0] if versions else 3,
        "calls": [{"policy_version": v} for v in versions],
    }


@pytest.mark.parametrize(
    ("body", "version"),
    [
        (_body([2, 2, 2]), 2),
        (_body([2, 3]), None),  # straddled a hot-load: no one version played it
        (_body([]), 3),  # no model call: the version it began under
        (_body([0], reward=None, status="aborted"), 0),
    ],
)
def test_an_episode_belongs_to_the_one_version_that_sampled_all_its_calls(body: dict[str, Any], version: int) -> None:
    assert eval_episode(body).version == version


@pytest.mark.parametrize(
    ("before", "after", "verdict"),
    [
        ([0.0] * 13 + [1.0] * 3, [1.0] * 14 + [0.0] * 2, IMPROVED),
        ([1.0] * 14 + [0.0] * 2, [0.0] * 13 + [1.0] * 3, WORSE),
        ([0.0] * 8 + [1.0] * 8, [0.0] * 7 + [1.0] * 9, NO_CHANGE),
        ([0.0] * 4, [1.0] * 4, IMPROVED),  # 0/4 -> 4/4 excludes no change even with 4 items each
        ([0.0] * 2, [1.0, 0.0], NO_CHANGE),  # 0/2 -> 1/2 does not
    ],
)
def test_the_verdict_follows_the_newcombe_interval(before: list[float], after: list[float], verdict: str) -> None:
    outcome = measure_outcome(
        _episodes(before, 0), _episodes(after, 6), launch_step=0, final_step=None, success_reward=1.0, rate_name="x"
    )
    assert outcome.before is not None and outcome.after is not None and outcome.after.step == 6
    expected = difference_ci(
        Rate(int(sum(after)), len(after)), Rate(int(sum(before)), len(before))
    )  # the same interval bench learn reports
    assert outcome.ci95 == expected and outcome.verdict == verdict
    assert outcome.change == pytest.approx(sum(after) / len(after) - sum(before) / len(before))


def test_success_is_the_tasks_bar_not_the_mean_reward() -> None:
    before = _episodes([0.95, 0.9, -0.1, 0.0], 0)  # a win minus a small penalty still counts as a win
    after = _episodes([1.0, 0.49, 0.5, 0.5], 4)
    outcome = measure_outcome(before, after, launch_step=0, final_step=4, success_reward=0.5, rate_name="win rate")
    assert (outcome.before.successes, outcome.after.successes) == (2, 3)  # type: ignore[union-attr]
    assert outcome.before.reward_mean == pytest.approx(0.4375)  # type: ignore[union-attr]
    assert outcome.sentence().startswith("win rate 2/4 (50%) -> 3/4 (75%)")


def test_episodes_of_another_version_or_not_ended_are_not_counted() -> None:
    before = _episodes([1.0, 0.0], 0) + _episodes([1.0], 1) + [EvalEpisode("a", "aborted", None, 0)]
    after = _episodes([1.0, 1.0, 1.0], 5) + _episodes([0.0], 4) + [EvalEpisode("s", "ended", 1.0, None)]
    between = _episodes([0.0, 1.0], 2) + [EvalEpisode("o", "open", None, 3)]
    outcome = measure_outcome(before, after, between, launch_step=0, final_step=None, success_reward=1.0,
                              rate_name="accuracy")  # fmt: skip
    assert (outcome.before.episodes, outcome.after.episodes, outcome.after.step) == (2, 3, 5)  # type: ignore[union-attr]
    assert [p.step for p in outcome.curve] == [0, 2, 5]  # base, the round in between, final
    assert outcome.unusable == 5  # version 1 in before, the aborted one, version 4 and the straddler in after, open


def test_a_missing_round_says_what_was_not_measured() -> None:
    outcome = measure_outcome(_episodes([1.0], 0), [], launch_step=0, final_step=None, success_reward=1.0,
                              rate_name="accuracy")  # fmt: skip
    assert outcome.ci95 is None and outcome.verdict == "not measured (no after evaluation)"
    assert outcome_fields(outcome.to_dict())["verdict"] == outcome.verdict


def test_report_and_run_json_carry_before_after_change_interval_and_verdict() -> None:
    outcome = measure_outcome(
        _episodes([0.0] * 12 + [1.0] * 4, 0), _episodes([1.0] * 13 + [0.0] * 3, 8), launch_step=0, final_step=None,
        success_reward=0.5, rate_name="win rate",
    )  # fmt: skip
    data = outcome.to_dict()
    fields = outcome_fields(data)
    assert (fields["before"], fields["after"], fields["verdict"]) == (0.25, 0.8125, IMPROVED)
    assert fields["change"] == pytest.approx(0.5625) and fields["change_ci95"][0] > 0
    line = outcome_line(data)
    assert line.startswith("win rate 4/16 (25.0%) -> 13/16 (81.2%), +56.2 points (95% CI +") and line.endswith(IMPROVED)
    section = "\n".join(outcome_section(data, {"success_metric": {"description": "games won"}}))
    assert "| base (step 0) | 4/16 | 25.0% |" in section and "| final (step 8) | 13/16 | 81.2% |" in section
    assert "Newcombe" in section and "at least 0.5 (games won)" in section


@pytest.mark.parametrize(
    ("metadata", "server", "won"),
    [
        ({"won": {"policy": True}}, "policy", True),
        ({"won": {"policy": False, "village": True}}, "policy", False),
        ({"won": {"wolves": False, "village": True}}, "village", True),
        ({"won": {"wolves": True}}, "policy", None),  # not this server's flag
        ({"won": True}, "anything", True),  # one flag for a one-server task
        ({"won": "yes"}, "policy", None),  # not a bool: the reward bar decides
        ({"won": {"policy": 1}}, "policy", None),
        ({}, "policy", None),
    ],
)
def test_an_episode_reads_the_tasks_won_flag_for_its_server(metadata: dict[str, Any], server: str, won: object) -> None:
    body = _body([1]) | {"metadata": metadata}
    assert eval_episode(body, server).won is won


def test_a_won_flag_decides_success_over_the_reward_bar() -> None:
    """A won werewolves game with invalid answers pays less than the bar; a lost one with a high reward is no win."""
    before = [EvalEpisode("a", "ended", 0.1, 0, won=True), EvalEpisode("b", "ended", 0.9, 0, won=False)]
    after = [EvalEpisode(f"c{i}", "ended", r, 3, won=w) for i, (r, w) in enumerate([(0.33, True), (0.2, None)])]
    outcome = measure_outcome(before, after, launch_step=0, final_step=3, success_reward=0.5, rate_name="win rate")
    assert (outcome.before.successes, outcome.after.successes) == (1, 1)  # type: ignore[union-attr]
    assert outcome.before.reward_mean == pytest.approx(0.5)  # type: ignore[union-attr]
