"""How a trial reads a failure on its pool member (`a3r/trial/runner.py`): lost, passed on, or a CampaignError."""

from __future__ import annotations

from typing import Any, cast

import pytest

from agentjet.a3r.errors import CampaignError, ServerLost
from agentjet.a3r.pool.members import PoolMember
from agentjet.a3r.trial import runner
from agentjet.core import AgentJetError


class _Member:
    """The part of a PoolMember a failure reading uses: the health probe and marking it down."""

    name = "m0"

    def __init__(self, probe: str | None) -> None:
        self._probe = probe
        self.down: str | None = None

    def probe(self) -> str | None:
        return self._probe

    def is_dead(self) -> bool:
        return False

    def mark_down(self, reason: str) -> None:
        self.down = reason


def _raise_in(member: _Member, exc: Exception, passing: type[AgentJetError] = AgentJetError) -> Any:
    with runner._server_failures(cast(PoolMember, member), passing=passing, what="it broke"):
        raise exc


def test_a_failure_on_a_member_that_fails_its_probe_loses_the_member() -> None:
    member = _Member(probe="no answer to /health")
    with pytest.raises(ServerLost, match="no answer to /health.*OSError: reset") as lost:
        _raise_in(member, OSError("reset"))
    assert lost.value.server == "m0" and member.down == "no answer to /health"


def test_on_a_healthy_member_a_passing_error_passes_and_any_other_becomes_a_campaign_error() -> None:
    member = _Member(probe=None)
    own = AgentJetError("refused")
    with pytest.raises(AgentJetError) as passed:
        _raise_in(member, own)
    assert passed.value is own
    with pytest.raises(CampaignError, match="^it broke: 3 train episodes failed") as wrapped:
        _raise_in(member, RuntimeError("3 train episodes failed"))
    assert isinstance(wrapped.value.__cause__, RuntimeError) and member.down is None
    lost = ServerLost("m0", "gone")
    with pytest.raises(ServerLost) as kept:
        _raise_in(member, lost, passing=CampaignError)
    assert kept.value is lost
