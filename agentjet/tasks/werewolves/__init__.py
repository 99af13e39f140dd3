"""Werewolves, the 9-player social deduction game, as a task family (see docs/tasks.md).

Modules, one job each: `state` (values), `rules` (legal actions and transitions, pure),
`view` (a player's private view), `narrate` (events as English), `claims` (what scripted
players read from the table talk), `scripted` (heuristic players), `prompts` + `parsing` +
`llm_agent` (a player behind an OpenAI-compatible endpoint), `game` (one whole game),
`family` (the `Werewolves` task family and its reward).
"""

from agentjet.tasks.werewolves.family import Werewolves

__all__ = ["Werewolves"]
