"""A3R campaigns (issue: "A3R campaigns"): Optuna studies over pools of swarm servers.

Uses the core only through `agentjet.core.__all__` and the CLI. The plan format: `plan.py` and
campaigns/README.md; the planner: `planner.py`.

errors.py  Errors of A3R campaigns: every one says what went wrong and what the user can do about it.
repo.py    The campaign repo: a git repository (GitPython) that tells the campaign's story commit by commit.
analysis/  What a campaign found: best configuration, parameter importance, effects with intervals, confirmation,
           and the research questions.
plan/      The campaign plan: markdown with YAML front matter -> a validated `CampaignPlan`, its search params, pool
           spec, and the LLM planner.
pool/      The server pool: local `agentjet server start` members and remote URLs, their health, and proof that a
           trial starts fresh.
report/    The campaign report: figures and `report.md` from the analysis, committed to the campaign repo.
session/   One campaign process: the session (lock, resume, study, repo) and the scheduler that runs trials on the
           pool.
trial/     One trial: fresh adapter, train rounds and evals on one pool member, its records and curve (or the
           synthetic stand-in).
"""
