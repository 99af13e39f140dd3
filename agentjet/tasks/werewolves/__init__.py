"""Werewolves, the 9-player social deduction game, as a task family (see docs/tasks.md).

Modules, one job each: `state` (values), `rules` (legal actions and transitions, pure),
`view` (a player's private view), `narrate` (events as English), `claims` (what scripted
players read from the table talk), `scripted` (heuristic players), `prompts` + `parsing` +
`llm_agent` (a player behind an OpenAI-compatible endpoint), `game` (one whole game),
`family` (the `Werewolves` task family and its reward).

agent.py      The seam between the game and its players: an agent answers one decision from its view.
claims.py     What scripted players read out of the public record: claims, accusations, clears, silences,
              abstentions.
family.py     `Werewolves`: the 9-player game as a task family (trained roles on policy servers, the rest scripted).
game.py       Run one whole game: ask each decision's agent, play the legal answer, keep the full record.
llm_agent.py  A player driven by a chat model behind an OpenAI-compatible endpoint (the `openai` SDK).
narrate.py    One line of English per game event: the game log humans read and the history prompts show.
parsing.py    Read an action out of a model's reply: a small JSON object, `ACTION: vote 3`, or a bare `vote 3`.
prompts.py    The chat messages an LLM player gets for one decision: short, private, one format line.
rules.py      The rules: who must act now, which actions are legal, and the state each action leads to.
scripted.py   Scripted heuristic players for every role: the default opponents, free and deterministic.
state.py      The values of a werewolves game: roles, phases, actions, decisions, events and the state.
view.py       A player's private view of the game: all an agent (scripted or LLM) may base a decision on.
"""

from agentjet.tasks.werewolves.family import Werewolves

__all__ = ["Werewolves"]
