"""The launch-and-watch step: the run's swarm server (one per policy when they train apart), its sandboxed
client processes behind episode taps, hot-swaps, trouble detection, and the held-out rounds that say
whether the agent got better.

budget.py            A vibe run's wall-clock budget (`--budget M`): when training stops, and where the pace says it
                     will stop.
client_process.py    One client process of a vibe run: the sandbox it runs in, starting it behind its own episode
                     tap, stopping it.
client_standby.py    A client process started ahead of need, so a hot-swap does not wait for an interpreter to
                     start.
early_server.py      The run's own server and its training, started during validation (the training held still
                     until the checks pass), so nothing waits for them twice.
episode_tap.py       A loopback pass-through to one swarm server that notes every episode begun through it.
evaluation.py        The held-out rounds of a vibe run: the base policy's, the final policy's after the last
                     update, and any between.
hot_swap.py          Hot-swap a vibe run's client: a new client file takes over while the server keeps running and
                     its step count.
launch.py            Launch a vibe run's training: the server (started, adopted or reused), the sandboxed client,
                     its next generations and the held-out client.
launch_options.py    What a vibe launch trains and how each client process of it runs: `LaunchOptions`, and the
                     client settings a generation gets (`client_settings`, `eval_only` for a held-out round's
                     client).
outcome.py           Did the agent get better? The held-out success rate before the first update and after the last,
                     and the change. Pure.
recipe.py            The training settings of a vibe run: the default TrainConfig, a spec's recipe merged into it,
                     greedy held-out rounds.
sandboxed_client.py  The host side of one sandboxed client process of a vibe run (`python -m
                     agentjet.vibe.run.sandboxed_client`).
swarm_server.py      The swarm server of a vibe run: start one as a subprocess, adopt the one a killed run left, or
                     reuse a URL.
trouble.py           What can go wrong in a training run, read from its metrics and episodes, and what to do about
                     each. Pure.
watch.py             Watch a launched run until it reaches its target step: read metrics and episodes, detect
                     trouble, act.
"""
