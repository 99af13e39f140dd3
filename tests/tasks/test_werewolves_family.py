"""The Werewolves family: items, role -> server mapping, rewards, and whole games against live servers.

The live tests play full games through real HTTP: scripted backends answer like a model would
(reading the question in the prompt), with garbage mixed in; one server per side for non-shared
parameters; an opponent model for the village; and the real `tiny` model, whose replies are noise.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterator, Mapping
from contextlib import ExitStack, contextmanager
from typing import Any

import pytest

from agentjet.core import SwarmClient
from agentjet.core.backends.fakes import ScriptedBackend
from agentjet.core.testing import RunningServer
from agentjet.tasks.base import POLICY, Endpoint, Outcome, TaskFamily, TaskItem
from agentjet.tasks.werewolves import Werewolves
from agentjet.tasks.werewolves.family import ERROR_REWARD, side_reward
from agentjet.tasks.werewolves.state import Side
from tests.conftest import TOKEN

GARBAGE = ("I refuse.", "ACTION: dance 3", '{"action": "vote"', "", "ACTION: vote 99", "kill kill kill")


# ---- a model that answers the question in its prompt ---------------------------------------
def answer(prompt: str) -> str:
    """A competent reply to the question a werewolves prompt ends with: a line, or the first legal target."""
    question = prompt[prompt.rindex("Alive:") :]
    if "SAY:" in question:
        return "SAY: I suspect player 2."
    options = re.search(r"Options: (ACTION: [^|\n]+)", question)
    assert options, question
    return options.group(1).strip()  # the first option offered


class Mixed:
    """`answer`, except every `every`-th action question gets garbage; counts what it sent."""

    def __init__(self, every: int) -> None:
        self.every = every
        self.actions = 0
        self.garbage = 0
        self.prompts: list[str] = []
        self._garbage = itertools.cycle(GARBAGE)

    def __call__(self, prompt: str) -> str:
        self.prompts.append(prompt)
        reply = answer(prompt)
        if reply.startswith("SAY:"):
            return reply
        self.actions += 1
        if self.every and self.actions % self.every == 0:
            self.garbage += 1
            return next(self._garbage)
        return reply


def roles_prompted(prompts: list[str]) -> set[str]:
    return {m.group(1) for p in prompts if (m := re.search(r"You are player \d, the (\w+)\.", p))}


@contextmanager
def episodes(
    servers: Mapping[str, RunningServer], task_id: str
) -> Iterator[tuple[dict[str, Endpoint], dict[str, Any]]]:
    """Begin one episode per server (as the runner does); yields endpoints and the episode handles."""
    with ExitStack() as stack:
        handles: dict[str, Any] = {}
        for name, server in servers.items():
            client = stack.enter_context(SwarmClient(server.url, TOKEN))
            handles[name] = (client, client.begin_episode(task_id, agent="werewolves"))
        yield {name: Endpoint(ep.base_url, ep.api_key) for name, (_, ep) in handles.items()}, handles


def play_live(
    family: TaskFamily, item: TaskItem, servers: Mapping[str, RunningServer]
) -> tuple[Outcome, dict[str, Any]]:
    """Run one item with an episode per server, end each with its reward; return the journaled records."""
    with episodes(servers, item.task_id) as (endpoints, handles):
        outcome = family.run(item, endpoints)
        records = {}
        for name, (client, episode) in handles.items():
            episode.end(outcome.rewards[name])
            records[name] = client.get_episode(episode.episode_id)
    return outcome, records


# ---- items, configuration, reward -----------------------------------------------------------
def test_items_are_seeded_deals_and_splits_never_meet() -> None:
    family = Werewolves()
    train = family.items("train", count=50, seed=1)
    assert train == family.items("train", count=50, seed=1)
    assert len({i.task_id for i in train}) == len({i.data["deal"] for i in train}) == 50
    assert all(i.task_id.startswith("werewolves/") for i in train)
    evals = family.items("eval", count=50, seed=1)
    assert not {i.data["deal"] for i in train} & {i.data["deal"] for i in evals}
    assert family.items("train", count=5, seed=1) == train[:5]
    assert family.items("train", count=5, seed=2) != train[:5]


def test_default_trains_the_wolves_on_policy_and_servers_map_roles() -> None:
    assert Werewolves().servers == (POLICY,) and Werewolves().sides == {POLICY: Side.WOLVES}
    split = Werewolves(servers={"werewolf": "wolves", "seer": "village", "witch": "village"})
    assert split.servers == ("wolves", "village")
    assert split.sides == {"wolves": Side.WOLVES, "village": Side.VILLAGE}
    village = Werewolves(trained_roles=("seer", "witch", "hunter", "villager"))
    assert village.servers == (POLICY,) and village.sides == {POLICY: Side.VILLAGE}


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"trained_roles": ("werewolf", "seer")}, "both sides"),
        ({"servers": {"werewolf": "a", "seer": "a"}}, "both sides"),
        ({"trained_roles": ("wizard",)}, "unknown role"),
        ({"trained_roles": ()}, "no trained role"),
        ({"trained_roles": ("seer",), "servers": {"witch": "v"}}, "disagree"),
        ({"max_rounds": 0}, "max_rounds"),
        ({"invalid_tolerance": 2.0}, "invalid_tolerance"),
        ({"action_max_tokens": 0}, "max_tokens"),
        ({"penalty": "harsh"}, "penalty"),
    ],
)
def test_bad_configuration_is_a_clear_value_error(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Werewolves(**kwargs)


def test_cli_params_build_the_family() -> None:
    from agentjet.tasks.registry import load_family, parse_params

    params = parse_params(['servers={"werewolf": "wolves", "seer": "village"}', "discussion=false", "max_rounds=4"])
    family = load_family("werewolves", params)
    assert isinstance(family, Werewolves) and family.servers == ("wolves", "village")
    assert family.rules.discussion is False and family.rules.max_rounds == 4


def test_side_reward_is_win_loss_draw_or_error() -> None:
    assert side_reward(Side.WOLVES, Side.WOLVES, invalid=0, actions=9, invalid_tolerance=0.0) == 1.0
    assert side_reward(Side.VILLAGE, Side.WOLVES, invalid=0, actions=9, invalid_tolerance=0.0) == 0.0
    assert side_reward(None, Side.WOLVES, invalid=0, actions=9, invalid_tolerance=0.0) == 0.0  # draw = loss
    assert side_reward(Side.WOLVES, Side.WOLVES, invalid=1, actions=9, invalid_tolerance=0.0) == ERROR_REWARD
    assert side_reward(Side.WOLVES, Side.WOLVES, invalid=2, actions=10, invalid_tolerance=0.2) == 1.0
    assert side_reward(Side.WOLVES, Side.WOLVES, invalid=3, actions=10, invalid_tolerance=0.2) == ERROR_REWARD

    def graded(winner: Side, invalid: int) -> float:
        return side_reward(winner, Side.WOLVES, invalid=invalid, actions=10, penalty="per_action")

    assert graded(Side.WOLVES, 5) == pytest.approx(0.95)
    assert graded(Side.VILLAGE, 10) == pytest.approx(-0.1) and graded(Side.VILLAGE, 0) == 0.0
    heavy = side_reward(Side.WOLVES, Side.WOLVES, invalid=4, actions=10, penalty="per_action", penalty_weight=0.5)
    assert heavy == pytest.approx(0.8)
    with pytest.raises(ValueError, match="penalty_weight"):
        Werewolves(penalty="per_action", penalty_weight=10.5)
    with pytest.raises(ValueError, match="penalty_weight"):
        Werewolves(penalty="per_action", penalty_weight=-0.1)
    validity_first = side_reward(
        Side.WOLVES, Side.WOLVES, invalid=4, actions=10, penalty="per_action", penalty_weight=3.0
    )
    assert validity_first == pytest.approx(1.0 - 3 * 0.4)  # a weight above 1: validity outweighs the result


def test_missing_endpoint_is_named() -> None:
    family = Werewolves(servers={"werewolf": "wolves", "seer": "village"})
    with pytest.raises(KeyError, match="village"):
        family.run(family.items("train", count=1, seed=0)[0], {"wolves": Endpoint("http://127.0.0.1:9/v1", "k")})


# ---- whole games on live servers ------------------------------------------------------------
Start = Callable[..., RunningServer]


@pytest.fixture
def scripted_server(
    live_server: Start, scripted_backend: Callable[..., ScriptedBackend]
) -> Callable[[Any], RunningServer]:
    return lambda script: live_server(scripted_backend(script))


def test_llm_wolves_with_garbage_replies_finish_the_game_and_are_penalised(
    scripted_server: Callable[[Any], RunningServer],
) -> None:
    model = Mixed(every=4)
    family = Werewolves()
    item = family.items("train", count=1, seed=0)[0]
    outcome, records = play_live(family, item, {POLICY: scripted_server(model)})
    meta = outcome.metadata
    assert meta["winner"] in ("wolves", "village", "draw") and meta["log"][-1].startswith(
        f"Day {meta['rounds']}: game over"
    )
    assert model.garbage > 0 and meta["invalid"] == {POLICY: model.garbage}
    assert meta["actions"] == {POLICY: model.actions}
    assert outcome.rewards == {POLICY: ERROR_REWARD}
    assert roles_prompted(model.prompts) == {"werewolf"}
    calls = records[POLICY]["calls"]
    assert len(calls) == len(model.prompts) and records[POLICY]["reward"] == ERROR_REWARD
    seeds = [c["sampling"]["seed"] for c in calls]
    assert len(set(seeds)) == len(seeds)  # a seed per call, derived from the item's seed
    assert {c["sampling"]["max_tokens"] for c in calls} == {32}


def test_llm_wolves_that_answer_well_get_the_game_result_and_replay_identically(
    scripted_server: Callable[[Any], RunningServer],
) -> None:
    family = Werewolves()
    server = scripted_server(Mixed(every=0))
    results = []
    for item in family.items("train", count=3, seed=5) + family.items("train", count=1, seed=5):
        outcome, records = play_live(family, item, {POLICY: server})
        assert outcome.metadata["invalid"] == {POLICY: 0}
        expected = 1.0 if outcome.metadata["winner"] == "wolves" else 0.0
        assert outcome.rewards == {POLICY: expected} and records[POLICY]["reward"] == expected
        results.append(outcome.metadata["log"])
    assert results[3] == results[0]  # same deal, same seed, same replies: the same game


def test_tolerance_lets_a_few_invalid_answers_through(scripted_server: Callable[[Any], RunningServer]) -> None:
    model = Mixed(every=4)
    family = Werewolves(invalid_tolerance=0.5, discussion=False)
    outcome, _ = play_live(family, family.items("train", count=1, seed=0)[0], {POLICY: scripted_server(model)})
    assert 0 < outcome.metadata["invalid"][POLICY] <= 0.5 * outcome.metadata["actions"][POLICY]
    assert outcome.rewards[POLICY] in (0.0, 1.0)


def test_wolves_and_village_train_on_their_own_servers(scripted_server: Callable[[Any], RunningServer]) -> None:
    wolves_model, village_model = Mixed(every=0), Mixed(every=0)
    servers = {"wolves": scripted_server(wolves_model), "village": scripted_server(village_model)}
    family = Werewolves(servers={"werewolf": "wolves", "seer": "village", "witch": "village"})
    for item in family.items("train", count=2, seed=3):
        outcome, records = play_live(family, item, servers)
        winner = outcome.metadata["winner"]
        assert outcome.rewards == {"wolves": float(winner == "wolves"), "village": float(winner == "village")}
        assert outcome.metadata["won"] == {"wolves": winner == "wolves", "village": winner == "village"}
        assert {records[s]["reward"] for s in servers} == {0.0, 1.0}
        assert set(outcome.metadata["seats"].values()) == {"wolves", "village"}
    assert roles_prompted(wolves_model.prompts) == {"werewolf"}
    assert roles_prompted(village_model.prompts) == {"seer", "witch"}


def test_an_opponent_model_plays_the_untrained_seats(scripted_server: Callable[[Any], RunningServer]) -> None:
    wolves_model, opponent_model = Mixed(every=0), Mixed(every=3)
    policy, other = scripted_server(wolves_model), scripted_server(opponent_model)
    with SwarmClient(other.url, TOKEN) as client:
        key = client.begin_episode("opponent-seats")  # a swarm server wants an episode key
        family = Werewolves(opponent_url=key.base_url, opponent_api_key=key.api_key)
        outcome, _ = play_live(family, family.items("eval", count=1, seed=0)[0], {POLICY: policy})
        key.end(0.0)
    assert roles_prompted(opponent_model.prompts) >= {"villager", "seer"}
    assert "werewolf" not in roles_prompted(opponent_model.prompts)
    assert outcome.metadata["opponent_invalid"] == opponent_model.garbage > 0
    assert outcome.rewards[POLICY] in (0.0, 1.0)  # the opponent's garbage is not the policy's error


def test_a_game_against_the_real_tiny_model_finishes(live_server: Start) -> None:
    server = live_server()  # the real transformers backend on the random-init `tiny` model
    family = Werewolves(discussion=False, max_rounds=3, action_max_tokens=8)
    outcome, records = play_live(family, family.items("train", count=1, seed=0)[0], {POLICY: server})
    assert outcome.rewards[POLICY] in (1.0, 0.0, ERROR_REWARD)
    assert outcome.metadata["log"][-1].split(": ", 1)[1].startswith("game over")
    calls = records[POLICY]["calls"]
    assert len(calls) == outcome.metadata["actions"][POLICY] > 0
