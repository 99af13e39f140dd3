"""Sandbox fixtures: `backend` runs a test once per backend, skipping one that cannot run here.

With AGENTJET_REQUIRE_SANDBOX=1 (set by `make test` after it started the engine and built the
image) an unavailable backend fails the test instead, so CI cannot pass by skipping.
"""

from __future__ import annotations

import os

import pytest

from agentjet.sandbox.api import Sandbox
from agentjet.sandbox.errors import SandboxUnavailable

_checked: dict[str, Sandbox | SandboxUnavailable] = {}


def require_sandbox() -> bool:
    return os.environ.get("AGENTJET_REQUIRE_SANDBOX") == "1"


def sandbox_for(name: str) -> Sandbox:
    """A checked Sandbox on backend `name` (checked once per session), or skip/fail with the reason."""
    if name not in _checked:
        try:
            _checked[name] = Sandbox(name)
        except SandboxUnavailable as exc:
            _checked[name] = exc
    found = _checked[name]
    if isinstance(found, SandboxUnavailable):
        message = f"the {name} sandbox backend is unavailable: {found}"
        if require_sandbox():
            pytest.fail(message + " (AGENTJET_REQUIRE_SANDBOX=1)")
        pytest.skip(message)
    return found


@pytest.fixture(
    params=[
        pytest.param("docker", marks=pytest.mark.docker),
        pytest.param("bwrap", marks=pytest.mark.bwrap),
    ]
)
def backend(request: pytest.FixtureRequest) -> str:
    """Yields "docker" or "bwrap"; skipped (or failed, see above) when that backend cannot run here."""
    name: str = request.param
    sandbox_for(name)
    return name


@pytest.fixture
def sandbox(backend: str) -> Sandbox:
    """The session's checked Sandbox for `backend`."""
    return sandbox_for(backend)
