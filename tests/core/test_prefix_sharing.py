"""Group prefix sharing: who shares what (pure), and the gradients equal the unshared ones (tiny model)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
import torch
from torch import Tensor

from agentjet.core.config import GrpoConfig, LoraConfig, OptimConfig, TrainConfig
from agentjet.core.episodes.merging import Sample
from agentjet.core.step.prefix_sharing import PrefixGroup, SharedPrefix, plan_shared_prefixes, suffix_samples
from agentjet.core.step.step_plan import WorkUnit, plan_work
from agentjet.core.step.trainer import Trainer
from tests.core.factories import randomise_lora_b

VOCAB = 49152


def _sample(ids: list[int], prompt: int, tag: int = 0) -> Sample:
    """A sample whose first `prompt` tokens are context and the rest alternate sampled/context runs."""
    mask = tuple(i >= prompt and (i - prompt) % 10 < 6 for i in range(len(ids)))
    rng = random.Random(tag)
    behaviour = tuple(-rng.uniform(9.0, 12.0) if m else 0.0 for m in mask)
    return Sample(f"ep-{tag}", tuple(ids), mask, behaviour, tuple(0 if m else -1 for m in mask), ((0, 0),))


def _group(rng: random.Random, head: list[int], members: int, first_tag: int) -> list[Sample]:
    """`members` episodes of one task: the same prompt `head`, then their own turns."""
    out = []
    for k in range(members):
        tail = [rng.randrange(1, VOCAB) for _ in range(20 + 7 * k)]
        out.append(_sample(head + tail, len(head), first_tag + k))
    return out


def _workload() -> list[Sample]:
    """Two tasks that share a system prompt (30 tokens) and differ in their task prompt (+20 tokens)."""
    rng = random.Random(3)
    system = [rng.randrange(1, VOCAB) for _ in range(30)]
    task_a = system + [rng.randrange(1, VOCAB) for _ in range(20)]
    task_b = system + [rng.randrange(1, VOCAB) for _ in range(20)]
    loner = _sample([rng.randrange(1, VOCAB) for _ in range(40)], 10, 99)
    return [*_group(rng, task_a, 3, 0), loner, *_group(rng, task_b, 4, 10)]


def test_each_task_group_shares_its_whole_prompt_and_loners_stay_alone() -> None:
    samples = _workload()
    groups = plan_shared_prefixes(samples, min_tokens=16)
    assert sorted(i for g in groups for i in g.indices) == list(range(len(samples)))
    shared = sorted((g for g in groups if g.length), key=lambda g: g.indices)
    # The task prompt is 50 tokens; the shareable part stops one short of the first sampled token.
    assert [(g.length, sorted(g.indices)) for g in shared] == [(49, [0, 1, 2]), (49, [4, 5, 6, 7])]
    assert PrefixGroup(0, (3,)) in groups


def test_a_short_common_prefix_is_not_shared() -> None:
    samples = _workload()
    assert all(g.length == 0 for g in plan_shared_prefixes(samples, min_tokens=50))


def test_no_trainable_token_is_hidden_in_a_prefix() -> None:
    rng = random.Random(5)
    head = [rng.randrange(1, VOCAB) for _ in range(40)]
    early = _sample(head + [7] * 30, 5)  # samples from position 5 on: only 4 tokens shareable
    late = _sample(head + [8] * 30, 40)
    (group,) = [g for g in plan_shared_prefixes([early, late], min_tokens=2) if g.length]
    assert group.length == 4
    suffixes = suffix_samples([early, late], group)
    assert not any(s.loss_mask[0] for s in suffixes)  # the cut token is context for every member
    assert [len(s.token_ids) for s in suffixes] == [66, 66]


def _trainer(model: Path, *, share: bool, lora: bool = True, budget: int = 4096, kl: float = 0.1) -> Trainer:
    config = TrainConfig(
        grpo=GrpoConfig(kl_coef=kl),
        lora=LoraConfig(enabled=lora),
        optim=OptimConfig(micro_batch_tokens=budget, share_prefix=share, share_prefix_min_tokens=16),
    )
    trainer = Trainer(model, config, seed=0)
    randomise_lora_b(trainer.model)
    return trainer


def _loss_and_grads(
    trainer: Trainer, samples: list[Sample], advantages: list[float], units: list[WorkUnit] | None = None
) -> tuple[float, dict[str, Tensor]]:
    totals = trainer.accumulate_gradients(samples, advantages, units)
    grads = {n: p.grad.detach().clone() for n, p in trainer.model.named_parameters() if p.grad is not None}
    return totals.loss.item(), grads


@pytest.mark.parametrize(("lora", "budget"), [(True, 4096), (True, 128), (False, 4096)])
def test_shared_prefix_gives_the_unshared_loss_and_gradients(tiny_model: Path, lora: bool, budget: int) -> None:
    samples = _workload()
    advantages = [1.0, -0.5, -0.5, 0.3, 1.5, -1.5, 0.5, -0.5]
    shared, plain = (
        _trainer(tiny_model, share=True, lora=lora, budget=budget),
        _trainer(tiny_model, share=False, lora=lora, budget=budget),
    )
    totals = shared.accumulate_gradients(samples, advantages)
    assert totals.prefix_tokens_saved == 2 * 49 + 3 * 49
    if budget == 128:
        assert totals.micro_batches > 3  # suffixes of one group span several micro-batches
    loss_a, grads_a = _loss_and_grads(shared, samples, advantages)
    loss_b, grads_b = _loss_and_grads(plain, samples, advantages)
    assert loss_b != 0.0 and abs(loss_a - loss_b) <= 1e-4 * abs(loss_b)
    assert grads_a.keys() == grads_b.keys() and grads_a
    worst = 0.0
    for name, grad in grads_b.items():
        scale = grad.abs().max().item()
        if scale == 0:
            continue  # e.g. embeddings of tokens no sample uses under full fine-tune
        worst = max(worst, (grads_a[name] - grad).abs().max().item() / scale)
    assert worst <= 1e-4
    # The prefix really carries gradient: the earliest layer's LoRA/weights see the shared tokens.
    assert any(g.abs().max().item() > 0 for n, g in grads_a.items() if "layers.0." in n)


def test_the_prefix_pass_never_copies_the_output_head(tiny_model: Path) -> None:
    """The prefix is run for its keys/values only. Asked for its last logit by an int `logits_to_keep`, a bf16
    head's matmul got a strided view under grad and copied the whole (1, hidden, vocab) head each time
    (~0.1 s a prefix for smollm2-135m on a CPU)."""
    config = TrainConfig(optim=OptimConfig(share_prefix=True, share_prefix_min_tokens=16))
    trainer = Trainer(tiny_model, config, seed=0, dtype=torch.bfloat16)
    hidden = int(trainer.model.config.hidden_size)
    with torch.profiler.profile(record_shapes=True) as prof:
        prefix = SharedPrefix(trainer.model, list(range(5, 60)), torch.device("cpu"))
    copies = [e.input_shapes[0] for e in prof.events() if e.name == "aten::copy_" and e.input_shapes]
    assert prefix.length == 55 and copies  # the profiler saw the pass's copies
    assert [shape for shape in copies if shape[-2:] == [hidden, VOCAB]] == []


# ---- samples whose advantage is 0 are not run --------------------------------------------------


def test_zero_advantage_samples_are_left_out_of_the_plan_only_without_a_kl_term(tiny_model: Path) -> None:
    samples = _workload()
    advantages = [0.0, 0.0, 0.0, 0.3, 1.5, -1.5, 0.0, 0.0]  # task a's whole group scored the same
    plain = _trainer(tiny_model, share=True, kl=0.0)
    ran = sorted(i for unit in plain.plan(samples, advantages) for i in unit.indices)
    assert ran == [3, 4, 5]
    with_kl = _trainer(tiny_model, share=True, kl=0.1)  # the KL term has a gradient at advantage 0
    assert sorted(i for unit in with_kl.plan(samples, advantages) for i in unit.indices) == list(range(8))
    assert plan_work(samples, plain.config.optim, [0.0] * 8) == []


@pytest.mark.parametrize("share", [True, False])
def test_leaving_zero_advantage_samples_out_gives_the_same_loss_and_gradients(tiny_model: Path, share: bool) -> None:
    samples = _workload()
    advantages = [0.0, 0.0, 0.0, 0.3, 1.5, -1.5, 0.0, 0.5]
    trainer = _trainer(tiny_model, share=share, kl=0.0)
    every = plan_work(samples, trainer.config.optim)  # the plan that runs every sample
    loss_all, grads_all = _loss_and_grads(trainer, samples, advantages, every)
    loss_skip, grads_skip = _loss_and_grads(trainer, samples, advantages)
    assert loss_all != 0.0 and abs(loss_skip - loss_all) <= 1e-5 * abs(loss_all)
    assert grads_skip.keys() == grads_all.keys() and grads_all
    for name, grad in grads_all.items():
        assert torch.allclose(grads_skip[name], grad, atol=1e-7, rtol=1e-5), name


def test_a_step_whose_advantages_are_all_zero_runs_nothing_and_still_steps(tiny_model: Path) -> None:
    samples = _workload()
    trainer = _trainer(tiny_model, share=True, kl=0.0)
    stats = trainer.step(samples, [0.0] * len(samples))
    assert stats.micro_batches == 0 and stats.samples_skipped == len(samples) and stats.loss == 0.0
    assert stats.tokens_trained > 0 and trainer.steps == 1
    assert all(p.grad is None for p in trainer.trainable_parameters())  # zeroed after the AdamW step
    mixed = _trainer(tiny_model, share=True, kl=0.0).step(samples, [0.0, 0.0, 0.0, 0.3, 1.5, -1.5, 0.0, 0.0])
    alone = _trainer(tiny_model, share=True, kl=0.0).step(samples[3:6], [0.3, 1.5, -1.5])  # only what ran
    assert mixed.samples_skipped == 5 and alone.samples_skipped == 0
    assert mixed.tis_weight_mean is not None and alone.tis_weight_mean is not None
    assert abs(mixed.tis_weight_mean - alone.tis_weight_mean) < 1e-5  # a mean over the tokens that ran
    assert abs(mixed.loss * mixed.tokens_trained - alone.loss * alone.tokens_trained) < 1e-4  # same loss sum
