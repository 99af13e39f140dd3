"""Wilson and Newcombe intervals against published values (Newcombe 1998, Table II)."""

from __future__ import annotations

import pytest

from agentjet.tasks.play.proportions import Rate, difference_ci, wilson


def test_wilson_matches_newcombe_1998_examples() -> None:
    assert wilson(Rate(81, 263)) == pytest.approx((0.2553, 0.3662), abs=1e-4)
    assert wilson(Rate(0, 10)) == pytest.approx((0.0, 0.2775), abs=1e-4)  # no collapse at 0 successes
    assert wilson(Rate(10, 10)) == pytest.approx((0.7225, 1.0), abs=1e-4)


def test_difference_matches_newcombe_method_10() -> None:
    assert difference_ci(Rate(56, 70), Rate(48, 80)) == pytest.approx((0.0524, 0.3339), abs=1e-4)
    assert difference_ci(Rate(9, 10), Rate(3, 10)) == pytest.approx((0.1705, 0.8090), abs=1e-4)


def test_no_change_interval_contains_zero_and_big_change_excludes_it() -> None:
    low, high = difference_ci(Rate(20, 40), Rate(18, 40))
    assert low < 0 < high
    low, high = difference_ci(Rate(35, 40), Rate(10, 40))
    assert low > 0


def test_bad_counts_are_rejected() -> None:
    with pytest.raises(ValueError):
        Rate(5, 3)
    with pytest.raises(ValueError):
        Rate(0, 0)
