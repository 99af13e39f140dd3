"""Playing a task against a swarm server: episode rounds, the `client run` entry point, its report, and sandboxed
runs.

client_run.py     `agentjet client run`: flags -> a family, its servers and clients, then one `TaskRunner` run.
episode.py        One episode of a task family on its servers: begin one episode per server, run the family, end
                  each with its reward, or abort them all.
groups.py         GRPO groups: an item played `group_size` times, each member sampling with its own seed.
proportions.py    Confidence intervals for success rates (Wilson) and their change (Newcombe). Pure, no numpy.
rounds.py         Rounds of episodes against one policy server: GRPO train rounds, held-out evals, waiting for a
                  step.
run_report.py     What a task run counts (episodes, rewards per server, errors, evals) and how it is shown.
runner.py         Run episodes of a task family against swarm servers: the engine of `agentjet client run`.
sandboxed_run.py  `agentjet client run --sandbox docker|bwrap`: the same run, re-executed inside a sandbox.
swarm_side.py     The runner's swarm side: which server episodes are open, and on-policy update rounds.
"""
