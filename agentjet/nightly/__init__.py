"""Nightly regression benchmarks (`agentjet nightly`): speed and training quality per commit, judged over a history.

A commit is measured in its own git worktree with its own code (`runner.py`, `measure.py`), every
sample goes to a history store keyed by commit, machine and packages (`history.py`), and each
metric is judged against the same machine's history: a Mann-Whitney rank test plus a minimum
effect, a step detector for slow drift, and "unstable" for a metric too noisy to judge
(`detect.py`). Uses the core only through `agentjet.core.__all__`; the probes are the benchmarks'
(`agentjet.bench`). Docs: docs/nightly.md.

bisect.py          `agentjet nightly bisect`: `git bisect run` with a probe that re-measures the metric with repeats.
dashboard.py       What the history says per metric: a static offline HTML page with one PNG per metric, summary.md
                   and summary.json.
dashboard_plot.py  The dashboard's chart of one metric along the commits (samples, median, baseline band, verdicts,
                   infra failures, steps).
detect.py          Regression detection: per-commit verdicts (Mann-Whitney / exact), drift steps, noise and
                   instability.
history.py         The SQL history store (SQLite or PostgreSQL): runs, raw samples, metric declarations, notes.
invariants.py      Training invariants: equivalence classes of seeded `tiny` runs held to committed reference curves.
machine.py         Which machine a sample comes from, and with which packages: history compares within one machine.
measure.py         `python -m agentjet.nightly.measure`: run a suite's probes in this checkout, write what they
                   measured.
metrics.py         What a nightly metric is (`Metric`) and what one suite run of one commit produced (`RunRecord`).
probe.py           `python -m agentjet.nightly.probe CONFIG`: one `git bisect run` step (exit 0 good, 1 bad, 125 skip).
runner.py          `agentjet nightly run`: measure commits in their own worktrees and append every sample to the
                   history.
schedule.py        Every night on this machine: a systemd timer (or a cron line where systemd is absent), and its
                   removal.
suites.py          The `quick` and `full` suites: which metrics each measures, and how (the probes).
worktree.py        A commit's own checkout and Python environment, so each commit is measured with its own code.
references/        The committed reference curves of the training invariants (one JSON per equivalence class).
"""
