"""GRPO group advantages."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentjet.core.training.advantages import group_advantages


def test_centred_and_scaled_per_group() -> None:
    adv = group_advantages([1.0, 0.0, 5.0, 5.0, 5.0], ["a", "a", "b", "b", "b"], std_floor=0.0)
    assert adv == pytest.approx([1.0, -1.0, 0.0, 0.0, 0.0])
    unscaled = group_advantages([1.0, 0.0, 2.0], ["a", "a", "a"], scale=False)
    assert unscaled == pytest.approx([0.0, -1.0, 1.0])


def test_all_equal_groups_are_zero_not_nan() -> None:
    assert group_advantages([0.3, 0.3], ["a", "a"], std_floor=0.0) == [0.0, 0.0]


def test_mismatched_lengths_raise() -> None:
    with pytest.raises(ValueError, match="2 rewards but 1"):
        group_advantages([1.0, 2.0], ["a"])


@given(st.lists(st.tuples(st.floats(-10, 10), st.sampled_from("abc")), min_size=1, max_size=30))
def test_each_group_sums_to_zero(pairs: list[tuple[float, str]]) -> None:
    rewards, groups = [r for r, _ in pairs], [g for _, g in pairs]
    adv = group_advantages(rewards, groups)
    assert all(math.isfinite(a) for a in adv)
    for group in set(groups):
        assert abs(sum(a for a, g in zip(adv, groups, strict=True) if g == group)) < 1e-3 * len(adv) + 1e-6
