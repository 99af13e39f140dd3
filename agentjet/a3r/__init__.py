"""A3R campaigns (issue: "A3R campaigns"): Optuna studies over pools of swarm servers.

Uses the core only through `agentjet.core.__all__` and the CLI. The plan format: `plan.py` and
campaigns/README.md; the planner: `planner.py`.
"""
