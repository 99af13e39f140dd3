"""`python -m agentjet ...` is the `agentjet` command: our subprocesses start it without naming the CLI module."""

from agentjet.cli.main import main

main(prog_name="agentjet")
