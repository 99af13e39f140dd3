"""What a vibe launch trains and how each client process of it runs: `LaunchOptions`, and the client
settings a generation gets (`client_settings`, `eval_only` for a held-out round's client). Pure.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from agentjet.core import TrainConfig
from agentjet.vibe.errors import VibeError
from agentjet.vibe.run.client_process import ClientSettings

__all__ = ["LaunchOptions", "client_settings", "eval_only"]

_EPISODE_MARGIN = 3  # a client runs this many times the episodes its steps need; the watcher stops it at the target


@dataclass(frozen=True)
class LaunchOptions:
    """What to train and where. `sandbox="none"` or a missing sandbox needs `allow_unsandboxed`."""

    model: str = "smollm2-135m"
    steps: int = 10
    server_url: str | None = None  # reuse this server instead of starting one
    token: str | None = None  # its token (else AGENTJET_TOKEN)
    sandbox: str = "auto"  # auto, docker, bwrap, none
    allow_unsandboxed: bool = False  # the explicit opt-out: run the generated client on the host
    concurrency: int = 16  # episodes in flight: a whole step of the default recipes at once (batched decoding)
    params: tuple[str, ...] = ()  # `--param key=value` for the client's make_task
    train_config: TrainConfig | None = None  # None: default_train_config()
    eval_rounds: int = 0  # the training client's own eval rounds, spread over the run (0: none; see evaluation.py)
    eval_episodes: int = 0  # held-out items per round (evaluation.py: before, between, after); 0: no evaluation
    eval_params: tuple[str, ...] = ()  # `--param`s of the held-out rounds only (e.g. temperature=0: greedy)
    policies: tuple[str, ...] = ()  # two or more: the task's servers, one trained policy each (else one server)
    seed: int = 0
    ready_timeout_s: float = 600.0
    client_memory: str = "2g"

    def __post_init__(self) -> None:
        if self.steps < 1 or self.eval_episodes < 0:
            raise VibeError(f"steps must be >= 1 and eval_episodes >= 0, got {self.steps} and {self.eval_episodes}")
        if len(set(self.policies)) != len(self.policies):
            raise VibeError(f"policy names must differ, got {list(self.policies)}")
        if len(self.policies) > 1 and self.server_url is not None:
            raise VibeError("a run whose policies train apart starts its own servers: it cannot reuse --server URL")


def client_settings(
    options: LaunchOptions,
    launch_step: int,
    step: int,
    target: int,
    per_step: int,
    group: int,
    generation: int,
) -> ClientSettings:
    """Enough episodes for the steps left (with a margin, whole groups), played in rounds of one step each."""
    left = max(1, target - step)
    episodes = math.ceil(left * per_step * _EPISODE_MARGIN / group) * group
    rounds = options.eval_rounds
    eval_every = per_step * max(1, (target - launch_step) // rounds) if rounds else None
    return ClientSettings(
        episodes=episodes,
        concurrency=options.concurrency,
        group_size=group,
        eval_every=eval_every,
        eval_episodes=options.eval_episodes or 4,  # the client's own rounds (eval_rounds) when no size is given
        update_every=per_step,  # rounds: play a step's episodes, then wait while it trains (2 cores: no contention)
        seed=options.seed + generation - 1,  # a new client process draws fresh items
        params=options.params,
        memory=options.client_memory,
    )


def eval_only(settings: ClientSettings, options: LaunchOptions) -> ClientSettings:
    """The settings of a client that plays only the held-out round: the same items every round (the run's
    seed), the round's own params, every episode in flight at once up to 16."""
    return replace(
        settings,
        episodes=0,
        eval_every=None,
        update_every=None,
        eval_first=True,
        seed=options.seed,
        params=(*options.params, *options.eval_params),
        concurrency=max(settings.concurrency, min(16, settings.eval_episodes)),
    )
