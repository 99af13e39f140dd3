"""`Werewolves`: the 9-player game as a task family (trained roles on policy servers, the rest scripted).

An item is a deal: `data["deal"]` seats the nine roles (and seeds the rules' tie-breaks),
`task_id` names it (`werewolves/<hash of the deal>`), so a GRPO group is several plays of the
same table. `item.seed` drives everything random in one play (the scripted players' draws and
each LLM call's sampling seed); the runner gives each episode of a group its own `item.seed`.

Which seats the trained models play is a mapping role -> server name (`servers=`), by default
every `trained_roles` role on `"policy"`. A server's roles must all be on one side: its reward
is that side's result. The other seats are scripted players, or an `opponent` model.

Reward per server: 1 when its side wins, 0 when it loses or the round cap ends the game (a draw
counts as a loss for everyone), -0.1 (an error) when more than `invalid_tolerance` of its
players' action answers were invalid (unreadable or illegal, replaced by the legal default).
`penalty="per_action"` instead subtracts `penalty_weight` (0.1) x the invalid share from the win/loss reward.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any, Literal, get_args

from agentjet.tasks.base import POLICY, Endpoint, Outcome, Split, TaskItem
from agentjet.tasks.splits import Draft, draw_items
from agentjet.tasks.werewolves.agent import Agent
from agentjet.tasks.werewolves.game import GameRecord, play
from agentjet.tasks.werewolves.llm_agent import LlmPlayer, Sampling
from agentjet.tasks.werewolves.scripted import ScriptedPlayer
from agentjet.tasks.werewolves.state import Role, RuleConfig, Side, deal_roles, side_of

__all__ = ["ERROR_REWARD", "LOSS_REWARD", "WIN_REWARD", "Penalty", "Werewolves", "side_reward"]

WIN_REWARD, LOSS_REWARD, ERROR_REWARD = 1.0, 0.0, -0.1
# `per_action` weights above 1 let the answers' validity outweigh the game's result: a small model
# that has not learnt the format yet needs that (at 3: held-out invalid answers 69% -> 18% in `bench
# learn`, docs/tasks.md, and 67% -> 0% in vibe's default run, docs/vibe.md, where weights of 0.1-0.5
# and win/loss alone drifted to more invalid answers)
MAX_PENALTY_WEIGHT = 10.0
Penalty = Literal["episode", "per_action"]
_LOG_LINES = 400  # the game log kept in an outcome's metadata, at most


def side_reward(
    winner: Side | None,
    side: Side,
    *,
    invalid: int,
    actions: int,
    invalid_tolerance: float = 0.0,
    penalty: Penalty = "episode",
    penalty_weight: float = -ERROR_REWARD,
) -> float:
    """One side's reward from the game's result and its players' invalid answers.

    `episode`: the error reward when more than `invalid_tolerance` of the answers were invalid,
    else win or loss. `per_action`: win or loss minus `penalty_weight` x the invalid share (a
    graded signal for models that rarely answer in format yet)."""
    result = WIN_REWARD if winner is side else LOSS_REWARD
    if penalty == "per_action":
        return result - penalty_weight * (invalid / actions if actions else 0.0)
    return ERROR_REWARD if invalid > invalid_tolerance * actions else result


class Werewolves:
    """The werewolves task family. Every parameter is a keyword with a default (docs/tasks.md)."""

    name = "werewolves"

    def __init__(
        self,
        *,
        trained_roles: Sequence[str] | None = None,
        servers: Mapping[str, str] | None = None,
        opponent: Endpoint | None = None,
        opponent_url: str | None = None,
        opponent_model: str = "policy",
        opponent_api_key: str = "EMPTY",
        discussion: bool = True,
        max_rounds: int = 10,
        action_max_tokens: int = 32,
        speech_max_tokens: int = 32,
        temperature: float = 1.0,
        memory_events: int = 12,
        invalid_tolerance: float = 0.0,
        penalty: Penalty = "episode",
        penalty_weight: float = -ERROR_REWARD,
        timeout_s: float = 600.0,
    ) -> None:
        self.role_servers = _role_servers(trained_roles, servers)
        self.servers: tuple[str, ...] = tuple(dict.fromkeys(self.role_servers.values()))
        self.sides = _server_sides(self.role_servers)
        if opponent is None and opponent_url is not None:
            opponent = Endpoint(opponent_url, opponent_api_key, opponent_model)
        self.opponent = opponent
        self.rules = RuleConfig(max_rounds=max_rounds, discussion=discussion)
        self.sampling = Sampling(action_max_tokens, speech_max_tokens, temperature, memory_events)
        if not 0.0 <= invalid_tolerance <= 1.0:
            raise ValueError(f"invalid_tolerance must be within [0, 1], got {invalid_tolerance}")
        self.invalid_tolerance = invalid_tolerance
        if penalty not in get_args(Penalty):
            raise ValueError(f"penalty must be one of {get_args(Penalty)}, got {penalty!r}")
        self.penalty: Penalty = penalty
        if not 0.0 <= penalty_weight <= MAX_PENALTY_WEIGHT:
            raise ValueError(f"penalty_weight must be within [0, {MAX_PENALTY_WEIGHT:g}], got {penalty_weight}")
        self.penalty_weight = penalty_weight
        self.timeout_s = timeout_s

    def items(self, split: Split, *, count: int, seed: int) -> list[TaskItem]:
        """`count` distinct deals of `split` (`splits.draw_items`: train and eval deals never meet)."""
        return draw_items("werewolves", split, count=count, seed=seed, draw=_draw_deal)

    def run(self, item: TaskItem, llms: Mapping[str, Endpoint]) -> Outcome:
        deal = int(item.data.get("deal", item.seed))
        roles = deal_roles(deal)
        missing = [s for s in self.servers if s not in llms]
        if missing:
            raise KeyError(f"no endpoint for server(s) {missing}; this family needs {list(self.servers)}")
        clients = {server: _client(llms[server], self.timeout_s) for server in self.servers}
        opponent = _client(self.opponent, self.timeout_s) if self.opponent is not None else None
        try:
            agents, seat_server = self._seat_agents(roles, item.seed, llms, clients, opponent)
            record = play(deal, agents, self.rules)
        finally:
            for client in [*clients.values(), opponent]:
                if client is not None:
                    client.close()
        invalid, actions = record.invalid_by_player(), record.actions_by_player()
        rewards = {}
        for server in self.servers:
            seats = [p for p, s in seat_server.items() if s == server]
            rewards[server] = side_reward(
                record.winner,
                self.sides[server],
                invalid=sum(invalid[p] for p in seats),
                actions=sum(actions[p] for p in seats),
                invalid_tolerance=self.invalid_tolerance,
                penalty=self.penalty,
                penalty_weight=self.penalty_weight,
            )
        metadata = _metadata(record, roles, seat_server)
        metadata["won"] = {server: record.winner is self.sides[server] for server in self.servers}
        return Outcome(rewards, metadata)

    def _seat_agents(
        self,
        roles: tuple[Role, ...],
        seed: int,
        llms: Mapping[str, Endpoint],
        clients: Mapping[str, Any],
        opponent: Any,
    ) -> tuple[dict[int, Agent], dict[int, str]]:
        """One agent per seat: trained roles on their server, the rest the opponent model or scripted."""
        agents: dict[int, Agent] = {}
        seat_server: dict[int, str] = {}
        for player, role in enumerate(roles, start=1):
            seat_seed = f"{seed}/{player}"
            server = self.role_servers.get(role)
            if server is not None:
                seat_server[player] = server
                agents[player] = LlmPlayer(clients[server], llms[server].model, seed=seat_seed, sampling=self.sampling)
            elif self.opponent is not None:
                model = self.opponent.model
                agents[player] = LlmPlayer(opponent, model, seed=seat_seed, sampling=self.sampling)
            else:
                agents[player] = ScriptedPlayer(seat_seed)
        return agents, seat_server


def _draw_deal(rng: random.Random) -> Draft:
    deal = rng.randrange(2**31)
    return Draft(key=str(deal), data={"deal": deal})


def _role_servers(trained_roles: Sequence[str] | None, servers: Mapping[str, str] | None) -> dict[Role, str]:
    if servers is None:
        servers = {role: POLICY for role in (trained_roles if trained_roles is not None else ("werewolf",))}
    elif trained_roles is not None and set(trained_roles) != set(servers):
        raise ValueError(f"trained_roles {sorted(trained_roles)} disagree with the roles of servers {sorted(servers)}")
    if not servers:
        raise ValueError("no trained role: name at least one of " + ", ".join(r.value for r in Role))
    known = {r.value for r in Role}
    unknown = sorted(set(servers) - known)
    if unknown:
        raise ValueError(f"unknown role(s) {unknown}; roles are {sorted(known)}")
    return {Role(role): server for role, server in servers.items()}


def _server_sides(role_servers: Mapping[Role, str]) -> dict[str, Side]:
    sides: dict[str, Side] = {}
    for role, server in role_servers.items():
        side = side_of(role)
        if sides.setdefault(server, side) is not side:
            raise ValueError(f"server {server!r} plays roles of both sides; give wolves and village their own servers")
    return sides


def _client(endpoint: Endpoint, timeout_s: float) -> Any:
    from openai import OpenAI  # the agents extra; only needed once a model plays

    return OpenAI(base_url=endpoint.base_url, api_key=endpoint.api_key, max_retries=0, timeout=timeout_s)


def _metadata(record: GameRecord, roles: tuple[Role, ...], seat_server: Mapping[int, str]) -> dict[str, Any]:
    invalid = record.invalid_by_player()
    actions = record.actions_by_player()
    servers = sorted(set(seat_server.values()))
    return {
        "winner": record.winner.value if record.winner else "draw",
        "rounds": record.final.round,
        "roles": {str(p): r.value for p, r in enumerate(roles, start=1)},
        "seats": {str(p): s for p, s in seat_server.items()},
        "invalid": {s: sum(invalid[p] for p, ss in seat_server.items() if ss == s) for s in servers},
        "actions": {s: sum(actions[p] for p, ss in seat_server.items() if ss == s) for s in servers},
        "opponent_invalid": sum(n for p, n in invalid.items() if p not in seat_server),
        "log": record.lines()[:_LOG_LINES],
    }
