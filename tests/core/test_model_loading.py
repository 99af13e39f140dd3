"""Models built in several threads at once come out whole (transformers' loading is not thread-safe)."""

from __future__ import annotations

import threading
from pathlib import Path

import torch

from agentjet.core.config import LoraConfig
from agentjet.core.step.policy_model import build_model


def test_concurrent_builds_do_not_corrupt_each_other(tiny_model: Path) -> None:
    """Unlocked, every one of these builds fails with "Cannot copy out of meta tensor"."""
    reference = build_model(tiny_model, LoraConfig(enabled=False), torch.device("cpu")).state_dict()
    errors: list[BaseException] = []
    built: list[dict[str, torch.Tensor]] = []

    def build() -> None:
        for _ in range(3):
            try:
                built.append(build_model(tiny_model, LoraConfig(enabled=False), torch.device("cpu")).state_dict())
            except BaseException as exc:  # noqa: BLE001  # the test reports every failure
                errors.append(exc)

    threads = [threading.Thread(target=build) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert len(built) == 9
    for state in built:
        assert all(torch.equal(state[name], tensor) for name, tensor in reference.items())
