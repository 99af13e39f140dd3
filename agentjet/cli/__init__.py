"""The `agentjet` command line (Typer). Only this package installs log handlers and prints."""
