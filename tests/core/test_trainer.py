"""The training step: merged = unmerged, 1x8 = 8x1 micro-batches, LoRA moves, base stays, KL and clip."""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import peft
import pytest
import torch
from torch import Tensor
from transformers import AutoModelForCausalLM

from agentjet.core.config import GrpoConfig, LoraConfig, OptimConfig, TrainConfig
from agentjet.core.episodes.merging import Sample, merge_timelines
from agentjet.core.step.packing import plan_micro_batches
from agentjet.core.step.policy_model import to_peft
from agentjet.core.step.step_stats import StepStats
from agentjet.core.step.trainer import Trainer, kl_k3, ppo_clip_loss, sequence_logprobs
from agentjet.core.types import CallRecord
from tests.core.factories import call_record, randomise_lora_b, stop_string_turns

VOCAB = 49152  # the tiny model's (SmolLM2's) vocabulary


def _trainer(model: Path, *, kl_coef: float = 0.0, lr: float = 1e-3, budget: int = 4096, lora: bool = True) -> Trainer:
    config = TrainConfig(
        grpo=GrpoConfig(kl_coef=kl_coef),
        lora=LoraConfig(enabled=lora),
        optim=OptimConfig(lr=lr, micro_batch_tokens=budget),
    )
    return Trainer(model, config, seed=0)


def _logprobs(trainer: Trainer, token_ids: Sequence[int]) -> list[float]:
    """The current policy's logprob of each token after the first (unbatched, no padding)."""
    ids = torch.tensor([list(token_ids)])  # (1, T)
    with torch.no_grad():
        return sequence_logprobs(trainer.model, ids, torch.ones_like(ids))[0].tolist()  # (T-1,)


def _near_policy(trainer: Trainer, call: CallRecord) -> CallRecord:
    """Behaviour logprobs = current policy's, nudged by up to +-0.1 so ratios differ from 1 (inside the clip)."""
    lps = _logprobs(trainer, call.prompt_ids + call.completion_ids)[-len(call.completion_ids) :]
    nudged = tuple(lp + 0.05 * (t % 5 - 2) for lp, t in zip(lps, call.completion_ids, strict=True))
    return replace(call, completion_logprobs=nudged)


def _on_policy(trainer: Trainer, sample: Sample) -> Sample:
    lps = _logprobs(trainer, sample.token_ids)
    behaviour = (0.0, *(lp if m else 0.0 for lp, m in zip(lps, sample.loss_mask[1:], strict=True)))
    return replace(sample, behaviour_logprobs=behaviour)


def _loss_and_grads(
    trainer: Trainer, samples: Sequence[Sample], advantages: Sequence[float]
) -> tuple[float, dict[str, Tensor]]:
    totals = trainer.accumulate_gradients(samples, advantages)
    grads = {}
    for name, param in trainer.model.named_parameters():
        if param.requires_grad:
            assert param.grad is not None, name
            grads[name] = param.grad.detach().clone()
    return totals.loss.item(), grads


def _assert_same(a: tuple[float, dict[str, Tensor]], b: tuple[float, dict[str, Tensor]]) -> None:
    """Loss and every gradient agree to a max relative difference of 1e-4 (and carry signal)."""
    (loss_a, grads_a), (loss_b, grads_b) = a, b
    assert loss_b != 0.0 and abs(loss_a - loss_b) <= 1e-4 * abs(loss_b)
    assert grads_a.keys() == grads_b.keys() and grads_a
    for name, grad in grads_b.items():
        scale = grad.abs().max().item()
        assert scale > 0, f"{name} has no gradient: the comparison would be vacuous"
        assert (grads_a[name] - grad).abs().max().item() <= 1e-4 * scale, name


def _growing_episode() -> list[CallRecord]:
    """Three calls, each prompt = the previous prompt + its completion + new user tokens."""
    rng = random.Random(0)

    def tokens(n: int) -> list[int]:
        return [rng.randrange(1, VOCAB) for _ in range(n)]

    first = call_record(0, tokens(12), tokens(5))
    second = call_record(1, [*first.prompt_ids, *first.completion_ids, *tokens(6)], tokens(4), version=1)
    third = call_record(2, [*second.prompt_ids, *second.completion_ids, *tokens(3)], tokens(6), version=1)
    return [first, second, third]


def test_merged_timeline_trains_like_the_separate_calls(tiny_model: Path) -> None:
    trainer = _trainer(tiny_model, kl_coef=0.1)
    randomise_lora_b(trainer.model)
    calls = [_near_policy(trainer, c) for c in _growing_episode()]
    merged, _ = merge_timelines(calls, match="token")
    separate, _ = merge_timelines(calls, match="off")
    assert len(merged) == 1 and len(separate) == 3
    assert sum(merged[0].loss_mask) == sum(sum(s.loss_mask) for s in separate) == 15
    _assert_same(_loss_and_grads(trainer, merged, [0.7]), _loss_and_grads(trainer, separate, [0.7] * 3))


def test_text_merge_trains_like_separate_calls_over_the_spliced_tokens(tiny_model: Path, tiny_tokenizer: Any) -> None:
    trainer = _trainer(tiny_model, kl_coef=0.1)
    randomise_lora_b(trainer.model)
    first, second = stop_string_turns(tiny_tokenizer, "Sure thing")
    first, second = _near_policy(trainer, first), _near_policy(trainer, second)
    assert len(merge_timelines([first, second], match="token")[0]) == 2  # tokens differ: only text merges
    merged, drifts = merge_timelines([first, second], match="text")
    assert drifts == [] and len(merged) == 1
    cut = second.last_assistant_end
    assert cut is not None
    spliced = replace(second, prompt_ids=(*first.prompt_ids, *first.completion_ids, *second.prompt_ids[cut:]))
    separate, _ = merge_timelines([first, spliced], match="off")
    assert len(separate) == 2
    _assert_same(_loss_and_grads(trainer, merged, [-0.4]), _loss_and_grads(trainer, separate, [-0.4] * 2))


def _eight_samples() -> tuple[list[Sample], list[float]]:
    rng = random.Random(1)
    samples = []
    for i in range(8):
        n = 33 + i  # 2 x 33 > 64: a budget of 64 holds exactly one sample
        ids = tuple(rng.randrange(1, VOCAB) for _ in range(n))
        mask = tuple(t >= n - 10 for t in range(n))
        behaviour = tuple(-rng.uniform(9.0, 12.0) if m else 0.0 for m in mask)
        samples.append(Sample("ep", ids, mask, behaviour, tuple(0 if m else -1 for m in mask), ((i, 0),)))
    return samples, [1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 0.25, -0.25]


def test_one_micro_batch_of_eight_equals_eight_of_one(tiny_model: Path) -> None:
    samples, advantages = _eight_samples()
    wide, narrow = _trainer(tiny_model, kl_coef=0.1, budget=4096), _trainer(tiny_model, kl_coef=0.1, budget=64)
    randomise_lora_b(wide.model)
    randomise_lora_b(narrow.model)
    assert wide.accumulate_gradients(samples, advantages).micro_batches == 1
    assert narrow.accumulate_gradients(samples, advantages).micro_batches == 8
    _assert_same(_loss_and_grads(wide, samples, advantages), _loss_and_grads(narrow, samples, advantages))


def test_packing_respects_the_budget_and_keeps_every_sample() -> None:
    lengths = [10, 70, 30, 30, 5, 200, 31]
    groups = plan_micro_batches(lengths, 64)
    assert sorted(i for g in groups for i in g) == list(range(len(lengths)))
    for group in groups:
        assert len(group) * max(lengths[i] for i in group) <= 64 or len(group) == 1
    assert [5] in groups and [1] in groups  # longer than the budget: alone


def _shifted(sample: Sample, delta: float) -> Sample:
    behaviour = tuple(b + delta if m else 0.0 for b, m in zip(sample.behaviour_logprobs, sample.loss_mask, strict=True))
    return replace(sample, behaviour_logprobs=behaviour)


def _step(trainer: Trainer, samples: list[Sample], advantages: list[float]) -> StepStats:
    return trainer.step([_on_policy(trainer, s) for s in samples], advantages)


def test_a_step_moves_every_lora_parameter_and_no_base_weight(tiny_model: Path) -> None:
    trainer = _trainer(tiny_model, lr=1e-2)
    before = {name: p.detach().clone() for name, p in trainer.model.named_parameters()}
    samples, advantages = _eight_samples()
    for _ in range(2):  # B starts at 0, so A gets its first gradient on the second step
        stats = _step(trainer, samples, advantages)
    assert stats.samples == 8 and stats.tokens_trained == 80 and stats.grad_norm > 0
    lora = {name for name in before if "lora_" in name}
    assert len(lora) == 16
    for name, param in trainer.model.named_parameters():
        changed = not torch.equal(param.detach(), before[name])
        assert changed == (name in lora), name
    assert trainer.steps == 2 and trainer.state_dict()["step"] == 2


def test_on_policy_ratio_is_one_and_nothing_is_clipped(tiny_model: Path) -> None:
    trainer = _trainer(tiny_model)
    samples, _ = _eight_samples()
    skewed = [1.0, 1.0, 1.0, -1.0, -1.0, -1.0, -1.0, -0.5]
    stats = _step(trainer, samples, skewed)
    assert stats.clip_fraction == 0.0
    assert stats.loss == pytest.approx(-sum(skewed) * 10 / 80, abs=1e-6)  # ratio 1: each token's loss is -advantage
    stale = [_shifted(_on_policy(trainer, s), -1.0) for s in samples]  # sampled by a policy less sure of them
    clipped = trainer.step(stale, skewed)  # ratio e > 1 + eps: clipped exactly where advantage > 0
    assert clipped.clip_fraction == pytest.approx(3 / 8)


def test_ppo_clip_stops_the_gradient_only_where_the_clip_binds() -> None:
    ratio = torch.tensor([[0.5, 1.0, 1.5], [0.5, 1.0, 1.5]])  # (2, 3)
    logprobs = ratio.log().requires_grad_()
    advantages = torch.tensor([2.0, -2.0])  # (2,)
    loss, active = ppo_clip_loss(logprobs, torch.zeros(2, 3), advantages, 0.2)
    torch.testing.assert_close(loss, torch.tensor([[-1.0, -2.0, -2.4], [1.6, 2.0, 3.0]]))
    assert active.tolist() == [[False, False, True], [True, False, False]]
    loss.sum().backward()  # type: ignore[no-untyped-call]
    assert logprobs.grad is not None
    assert ((logprobs.grad == 0) == active).all()


def test_kl_is_zero_at_the_start_and_grows(tiny_model: Path) -> None:
    trainer = _trainer(tiny_model, kl_coef=0.1, lr=1e-2)
    samples, advantages = _eight_samples()
    stats = [_step(trainer, samples, advantages) for _ in range(3)]
    assert stats[0].kl == 0.0  # B = 0: the adapted policy is the reference
    assert stats[-1].kl > 1e-4
    on_policy_loss = -sum(a * 10 for a in advantages) / 80  # ratio 1, so the rest of the loss is the KL term
    assert stats[-1].loss == pytest.approx(on_policy_loss + 0.1 * stats[-1].kl, abs=1e-7)


def test_full_fine_tune_trains_every_weight_against_a_frozen_reference(tiny_model: Path) -> None:
    trainer = _trainer(tiny_model, kl_coef=0.1, lr=1e-3, lora=False)
    assert not isinstance(trainer.model, peft.PeftModel) and trainer.reference is not None
    samples, advantages = _eight_samples()
    first = _step(trainer, samples[:2], advantages[:2])
    second = _step(trainer, samples[:2], advantages[:2])
    assert first.kl == 0.0 and second.kl > 0.0
    assert all(p.requires_grad for p in trainer.model.parameters())


def test_to_peft_maps_the_lora_section() -> None:
    cfg = to_peft(LoraConfig(rank=8, alpha=24.0, dropout=0.1, target_modules=("q_proj", "v_proj")))
    assert (cfg.r, cfg.lora_alpha, cfg.lora_dropout) == (8, 24.0, 0.1)
    assert set(cfg.target_modules or ()) == {"q_proj", "v_proj"}
    assert cfg.task_type == "CAUSAL_LM"


def test_saved_adapter_loads_into_the_same_policy(tiny_model: Path, tmp_path: Path) -> None:
    trainer = _trainer(tiny_model, lr=1e-2)
    samples, advantages = _eight_samples()
    for _ in range(2):
        _step(trainer, samples, advantages)
    trainer.save_adapter(tmp_path / "adapter")
    base = AutoModelForCausalLM.from_pretrained(tiny_model, dtype=torch.float32)
    loaded = peft.PeftModel.from_pretrained(base, tmp_path / "adapter")
    ids = torch.tensor([samples[0].token_ids])  # (1, T)
    with torch.no_grad():
        want = sequence_logprobs(trainer.model, ids, torch.ones_like(ids))
        got = sequence_logprobs(loaded, ids, torch.ones_like(ids))
    torch.testing.assert_close(got, want)
    assert {m.scaling["default"] for m in loaded.modules() if isinstance(m, peft.tuners.lora.LoraLayer)} == {2.0}
    restored = _trainer(tiny_model)
    restored.load_state_dict(trainer.state_dict())
    assert (
        restored.steps == 2
        and restored.optimizer.state_dict()["state"].keys() == trainer.optimizer.state_dict()["state"].keys()
    )


def test_sequence_logprobs_reads_the_next_token_and_ignores_right_padding(tiny_model: Path) -> None:
    model = AutoModelForCausalLM.from_pretrained(tiny_model, dtype=torch.float32)
    long, short = [5, 900, 17, 4000, 23, 8], [77, 301, 9]
    ids = torch.tensor([long, [*short, 0, 0, 0]])  # (2, 6), right-padded
    mask = torch.tensor([[1] * 6, [1, 1, 1, 0, 0, 0]])  # (2, 6)
    with torch.no_grad():
        batched = sequence_logprobs(model, ids, mask)  # (2, 5)
        logits = model(input_ids=torch.tensor([short])).logits[0]  # (3, V)
    assert batched.shape == (2, 5)
    direct = torch.log_softmax(logits, dim=-1)[torch.arange(2), torch.tensor(short[1:])]  # (2,)
    torch.testing.assert_close(batched[1, :2], direct)


def test_k3_is_an_unbiased_estimate_of_kl_policy_to_reference() -> None:
    policy, reference = torch.tensor([0.7, 0.2, 0.1]), torch.tensor([0.3, 0.3, 0.4])
    estimate = (policy * kl_k3(policy.log(), reference.log())).sum()  # E_{x~policy}[k3(x)]
    exact = (policy * (policy / reference).log()).sum()  # KL(policy || reference)
    torch.testing.assert_close(estimate, exact)
