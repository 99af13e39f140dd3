"""The `agentjet` command line (Typer). Only this package installs log handlers and prints.

bench.py          `agentjet bench ...`: one command per benchmark; each checks its flags and hands them to
                  `run_one_shot`.
campaign.py       `agentjet campaign start|status|resume|stop|report`: A3R campaigns from the terminal.
campaign_view.py  What `agentjet campaign status` and `start --dry-run` show: the trials table and the study setup.
chat.py           `agentjet chat`: the chat web page on loopback over the swarm servers named with `--server`.
client.py         `agentjet client run`: run a task family (built-in or a client file) against servers, optionally
                  sandboxed.
credentials.py    Where CLI commands take a token from: `--token-file`, `AGENTJET_TOKEN`, a state dir's `token`
                  file.
deploy.py         `agentjet deploy image|compose`: the swarm server as a container image, and a compose example.
demo.py           `agentjet demo`, the swarm demo: one real server on loopback, several concurrent agent clients, no
                  training.
main.py           `agentjet`: the root app, assembled from one module per command group (see the package docstring).
models.py         `agentjet models list|prepare` and `agentjet export`: models into the offline cache, trained
                  steps out of it.
nightly.py        `agentjet nightly run|bisect|report|install|rerecord`: regression benchmarks across commits.
one_shot.py       How a command fails (one red `error:` line, exit 2), its log handler, and how a one-shot
                  command (each `bench ...`, `demo`) runs: quiet logs, its own report, one-line errors.
sandbox.py        `agentjet sandbox ...`: build the sandbox image, check which backends work, run a command in one.
server.py         `agentjet server start|status|repair` and `agentjet server token create|list|revoke`.
vibe.py           `agentjet vibe TEXT`: a sentence in, a validated and watched training run (and its report) out.
"""
