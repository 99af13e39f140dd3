"""Vibe training (issue: "Vibe training"): a sentence -> generated client, reward and dataset.

Uses the core only through `agentjet.core.__all__` and the CLI; not built yet.
"""
