"""The base weights served beside a loaded adapter, row by row in one batch (`GenerationRequest.base`).

Why: a vibe run evaluates the base on held-out games once training has begun, in the same batches as the
policy's games. A base row must sample exactly what the base alone samples, an adapter row exactly what the
adapter alone samples, whatever shares their batch, and each is stamped with the version that sampled it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
import torch

from agentjet.core import AgentJetError, SwarmClient
from agentjet.core.backends.fakes import EchoBackend, ScriptedBackend
from agentjet.core.backends.lora_layers import RowAdapters, run_lora_in_input_dtype
from agentjet.core.backends.transformers_backend import TransformersBackend
from agentjet.core.testing import RunningServer
from agentjet.core.types import GenerationRequest, SamplingParams
from agentjet.tasks.play.runner import RunSettings, TaskRunner
from agentjet.tasks.play.sandboxed_run import settings_flags
from agentjet.tasks.registry import load_family
from tests.conftest import TOKEN
from tests.core.test_transformers_backend import _save_random_lora
from tests.tasks.swarm_helpers import journal

_PROMPTS = ("The quick brown fox", "Once upon a time in a village", "Werewolves, 9 players: 3 werewolves")


def _request(backend: Any, text: str, rid: str, *, base: bool, **params: Any) -> GenerationRequest:
    ids = tuple(backend.tokenizer.encode(text, add_special_tokens=False))
    return GenerationRequest(rid, ids, SamplingParams(**params), base=base)


async def _together(backend: Any, requests: list[GenerationRequest]) -> list[Any]:
    return list(await asyncio.gather(*(backend.generate(r) for r in requests)))


@pytest.mark.asyncio
@pytest.mark.parametrize("temperature", [0.0, 1.0])
async def test_base_rows_beside_adapter_rows_sample_what_each_samples_alone(
    tiny_model: Path, tmp_path: Path, temperature: float
) -> None:
    backend = TransformersBackend(tiny_model, name="mixed", max_batch_size=8)
    await backend.start()
    try:
        params = {"max_tokens": 24, "temperature": temperature, "seed": 11}
        base_alone = [await backend.generate(_request(backend, p, f"b{i}", base=False, **params))
                      for i, p in enumerate(_PROMPTS)]  # fmt: skip
        await backend.load_adapter(_save_random_lora(tiny_model, tmp_path / "a1", seed=1), version=1)
        policy_alone = [await backend.generate(_request(backend, p, f"p{i}", base=False, **params))
                        for i, p in enumerate(_PROMPTS)]  # fmt: skip
        mixed = await _together(
            backend,
            [_request(backend, p, f"m{i}{b}", base=b, **params) for i, p in enumerate(_PROMPTS) for b in (True, False)],
        )
    finally:
        await backend.close()
    assert [g.completion_ids for g in policy_alone] != [g.completion_ids for g in base_alone]  # the adapter matters
    assert [g.completion_ids for g in mixed[0::2]] == [g.completion_ids for g in base_alone]
    assert [g.completion_ids for g in mixed[1::2]] == [g.completion_ids for g in policy_alone]
    assert {g.policy_version for g in mixed[0::2]} == {0} and {g.policy_version for g in mixed[1::2]} == {1}
    for together, alone in zip(mixed[0::2], base_alone, strict=True):
        assert together.logprobs == pytest.approx(alone.logprobs, abs=1e-4)


@pytest.mark.asyncio
async def test_the_base_prefix_cache_outlives_a_hot_load_and_keeps_apart_from_the_policys(
    tiny_model: Path, tmp_path: Path
) -> None:
    backend = TransformersBackend(tiny_model, name="cached", max_batch_size=4)
    await backend.start()
    try:
        long = "Werewolves, 9 players: 3 werewolves, 3 villagers, a seer, a witch, a hunter. Each night"
        await backend.load_adapter(_save_random_lora(tiny_model, tmp_path / "a1", seed=1), version=1)
        first = await backend.generate(_request(backend, long, "base1", base=True, max_tokens=6, temperature=0.0))
        loop = backend._loop
        assert loop is not None and len(loop._base_prefix or ()) == 1 and len(loop._prefix or ()) == 0
        await backend.load_adapter(_save_random_lora(tiny_model, tmp_path / "a2", seed=2), version=2)
        assert len(loop._base_prefix or ()) == 1  # the base's KV is still the base's
        again = await backend.generate(_request(backend, long, "base2", base=True, max_tokens=6, temperature=0.0))
        policy = await backend.generate(_request(backend, long, "pol", base=False, max_tokens=6, temperature=0.0))
    finally:
        await backend.close()
    assert again.completion_ids == first.completion_ids and again.policy_version == 0
    assert policy.policy_version == 2 and policy.completion_ids != first.completion_ids


def test_the_row_switch_zeroes_only_the_adapter_of_base_rows(tiny_model: Path, tmp_path: Path) -> None:
    """One forward, rows switched: each row's logits equal those of the model it asked for."""
    from peft import PeftModel
    from transformers import AutoModelForCausalLM

    base = AutoModelForCausalLM.from_pretrained(tiny_model).eval()
    ids = torch.randint(5, 200, (3, 9), generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        plain = base(input_ids=ids).logits
    peft = PeftModel.from_pretrained(base, _save_random_lora(tiny_model, tmp_path / "a", seed=3)).eval()
    rows = RowAdapters()
    assert run_lora_in_input_dtype(peft, rows) > 0
    with torch.no_grad():
        adapted = peft(input_ids=ids).logits
        with rows.only([False, True, False], torch.device("cpu")):
            switched = peft(input_ids=ids).logits
        assert rows.picked is None  # the switch holds for the forward inside only
        with rows.only([False, False, False], torch.device("cpu")):
            all_base = peft(input_ids=ids).logits
        with rows.only([True, True, True], torch.device("cpu")):
            assert rows.picked is None  # every row on: the plain path
    assert not torch.allclose(adapted[1], plain[1], atol=1e-3)
    torch.testing.assert_close(switched[0], plain[0], atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(switched[2], plain[2], atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(switched[1], adapted[1], atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(all_base, plain, atol=1e-5, rtol=1e-5)


@pytest.mark.asyncio
async def test_the_fakes_stamp_base_sequences_with_version_zero(tiny_tokenizer: Any, tmp_path: Path) -> None:
    for backend in (ScriptedBackend(tiny_tokenizer, ["alpha beta"]), EchoBackend(tiny_tokenizer)):
        await backend.load_adapter(tmp_path, 3)
        ids = tuple(tiny_tokenizer("hi")["input_ids"])
        base = await backend.generate(GenerationRequest("b", ids, SamplingParams(max_tokens=4), base=True))
        policy = await backend.generate(GenerationRequest("p", ids, SamplingParams(max_tokens=4)))
        assert (base.policy_version, policy.policy_version) == (0, 3)


def _chat(episode: Any, text: str) -> httpx.Response:
    return httpx.post(
        f"{episode.base_url}/chat/completions",
        json={"model": "policy", "messages": [{"role": "user", "content": text}], "max_tokens": 4},
        headers={"Authorization": f"Bearer {episode.api_key}"},
        timeout=30,
    )


def test_an_eval_episode_on_the_base_model_records_version_zero_and_a_train_one_is_refused(
    live_server: Callable[..., RunningServer], tiny_tokenizer: Any, tmp_path: Path
) -> None:
    backend = ScriptedBackend(tiny_tokenizer, ["alpha beta"])
    asyncio.run(backend.load_adapter(tmp_path, 2))  # a trained policy is being served
    server = live_server(backend)
    with SwarmClient(server.url, TOKEN) as client:
        base = client.begin_episode("t-base", kind="eval", base_model=True)
        policy = client.begin_episode("t-policy", kind="eval")
        assert _chat(base, "go").status_code == 200 and _chat(policy, "go").status_code == 200
        base.end(1.0)
        policy.end(0.0)
        refused = httpx.post(
            f"{server.url}/swarm/episodes", json={"task_id": "t", "kind": "train", "base_model": True},
            headers={"Authorization": f"Bearer {TOKEN}"}, timeout=30,
        )  # fmt: skip
        with pytest.raises(AgentJetError, match="eval episodes only"):
            client.begin_episode("t", kind="train", base_model=True)
        assert client.get_episode(base.episode_id)["base_model"] is True
    assert refused.status_code == 400 and "eval episodes only" in refused.text
    records = {r.task_id: r for r in journal(tmp_path / "state")}
    assert [c.policy_version for c in records["t-base"].calls] == [0] and records["t-base"].base_model
    assert records["t-base"].policy_version_at_begin == 0
    assert [c.policy_version for c in records["t-policy"].calls] == [2] and not records["t-policy"].base_model


def test_the_runner_plays_its_eval_split_on_the_base_model_when_asked(
    live_server: Callable[..., RunningServer], tiny_tokenizer: Any, tmp_path: Path
) -> None:
    """`client run --base-model`: every eval episode is the base's; train episodes stay the policy's."""
    backend = ScriptedBackend(tiny_tokenizer, ["42"])
    asyncio.run(backend.load_adapter(tmp_path, 1))
    server = live_server(backend)
    settings = RunSettings(episodes=2, eval_episodes=3, eval_first=True, group_size=2, base_model=True)
    with SwarmClient(server.url, TOKEN) as client:
        summary = TaskRunner(load_family("arithmetic", {}), {"policy": client}, settings).run()
    assert summary["errors"] == 0, summary
    records = journal(tmp_path / "state")
    evals = [r for r in records if r.kind == "eval"]
    trains = [r for r in records if r.kind == "train"]
    assert len(evals) == 3 and all(r.base_model and {c.policy_version for c in r.calls} == {0} for r in evals)
    assert len(trains) == 2 and not any(r.base_model for r in trains)
    assert {c.policy_version for r in trains for c in r.calls} == {1}
    assert "--base-model" in settings_flags(settings)
