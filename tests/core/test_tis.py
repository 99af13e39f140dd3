"""Truncated importance sampling (`grpo.tis`): the sampler's logprobs disagree with the trainer's.

With TIS the PPO ratio is taken against the trainer's own old logprobs and each token's policy
term is weighted by w = min(exp(old - behaviour), tis_cap), detached. These tests check that it
changes nothing when the sampler is the trainer's forward, that the weights, the truncation, the
loss and the gradients are those computed by hand, that `auto` follows the trainer's sampler and
that the knob is live, and that a run whose sampler logprobs are off still learns.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
import torch

from agentjet.core.config import GrpoConfig, OptimConfig, TrainConfig
from agentjet.core.episodes.merging import Sample, merge_timelines
from agentjet.core.step.step_stats import StepStats
from agentjet.core.step.trainer import Trainer, sequence_logprobs, truncated_is_weights
from agentjet.core.training.advantages import group_advantages
from agentjet.core.training.metrics import step_metrics
from tests.core.factories import call_record, randomise_lora_b
from tests.core.test_trainer import (
    VOCAB,
    _assert_same,
    _growing_episode,
    _logprobs,
    _loss_and_grads,
    _on_policy,
)


@pytest.fixture(autouse=True)
def _one_thread() -> Iterator[None]:
    """The tiny model gains nothing from threads, and on a busy machine they cost 4x in spin-waits."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def _config(tis: str = "auto", *, cap: float = 2.0, kl_coef: float = 0.0, lr: float = 1e-3) -> TrainConfig:
    return TrainConfig(grpo=GrpoConfig(tis=tis, tis_cap=cap, kl_coef=kl_coef), optim=OptimConfig(lr=lr))


def _with_tis(trainer: Trainer, tis: str) -> None:
    trainer.config = trainer.config.model_copy(update={"grpo": trainer.config.grpo.model_copy(update={"tis": tis})})


# ---- (a) the sampler is the trainer's own forward: TIS changes nothing ----------------------------
def test_with_on_policy_behaviour_tis_on_and_off_give_the_same_loss_and_gradients(tiny_model: Path) -> None:
    trainer = Trainer(tiny_model, _config("off", kl_coef=0.1), seed=0)
    randomise_lora_b(trainer.model)
    separate, _ = merge_timelines(_growing_episode(), match="off")
    samples = [_on_policy(trainer, s) for s in separate]
    advantages = [0.7, -0.4, 1.2]
    off = _loss_and_grads(trainer, samples, advantages)
    _with_tis(trainer, "on")
    assert trainer.tis_active
    _assert_same(_loss_and_grads(trainer, samples, advantages), off)
    stats = trainer.step(samples, advantages)
    assert stats.tis_applied and stats.clip_fraction == 0.0
    assert stats.tis_weight_mean == pytest.approx(1.0, abs=1e-5) and stats.tis_truncated_fraction == 0.0


# ---- (b) perturbed behaviour logprobs: weights, truncation, loss and gradients by hand -------------
DELTAS = (-1.0, -0.5, 0.0, 0.3, -0.8, 0.6)  # behaviour = trainer's own logprob + delta
ADVANTAGE = 0.7


def _perturbed(trainer: Trainer) -> tuple[Sample, list[float]]:
    """One sample of 6 sampled tokens whose behaviour logprobs are the trainer's own + DELTAS."""
    rng = random.Random(5)
    call = call_record(0, [rng.randrange(1, VOCAB) for _ in range(9)], [rng.randrange(1, VOCAB) for _ in DELTAS])
    own = _logprobs(trainer, call.prompt_ids + call.completion_ids)[-len(DELTAS) :]
    call = replace(call, completion_logprobs=tuple(lp + d for lp, d in zip(own, DELTAS, strict=True)))
    (sample,), _ = merge_timelines([call], match="off")
    return sample, own


def test_truncated_weights_are_min_of_the_ratio_and_the_cap() -> None:
    old = torch.tensor([[-1.0, -2.0, -3.0, -0.5]])
    behaviour = torch.tensor([[-2.0, -2.5, -3.0, -200.0]])  # ratios e, e^0.5, 1, e^199.5 (inf-safe)
    weights, truncated = truncated_is_weights(old, behaviour, cap=2.0)
    assert weights[0].tolist() == pytest.approx([2.0, math.exp(0.5), 1.0, 2.0])
    assert truncated.tolist() == [[True, False, False, True]]


def test_tis_weight_truncation_loss_and_gradients_are_as_computed_by_hand(tiny_model: Path) -> None:
    trainer = Trainer(tiny_model, _config("on", cap=2.0), seed=0)
    randomise_lora_b(trainer.model)
    sample, _ = _perturbed(trainer)
    ratios = [math.exp(-d) for d in DELTAS]  # exp(old - behaviour)
    weights = [min(r, 2.0) for r in ratios]  # 2 (cut from e), 1.65, 1, 0.74, 2 (cut from 2.23), 0.55
    n = len(DELTAS)

    loss, grads = _loss_and_grads(trainer, [sample], [ADVANTAGE])
    assert loss == pytest.approx(-ADVANTAGE * sum(weights) / n, rel=1e-5)  # ratio vs the trainer's own old: 1
    # by hand: -A * sum_t w_t * log pi(t) / n, with w held constant: the weight carries no gradient
    trainer.optimizer.zero_grad(set_to_none=True)
    ids = torch.tensor([sample.token_ids])
    positions = torch.tensor([i - 1 for i, m in enumerate(sample.loss_mask) if m])
    logprobs = sequence_logprobs(trainer.model, ids, torch.ones_like(ids), positions=positions)[0]  # (n,)
    (-ADVANTAGE * (torch.tensor(weights) * logprobs).sum() / n).backward()  # type: ignore[no-untyped-call]
    for name, param in trainer.model.named_parameters():
        if param.requires_grad:
            assert param.grad is not None
            scale = param.grad.abs().max().item()
            assert scale > 0 and (grads[name] - param.grad).abs().max().item() <= 1e-4 * scale, name

    stats = trainer.step([sample], [ADVANTAGE])
    assert stats.tis_applied and stats.clip_fraction == 0.0  # nothing clipped: the ratio is 1
    assert stats.tis_weight_mean == pytest.approx(sum(weights) / n, rel=1e-5)
    assert stats.tis_truncated_fraction == pytest.approx(2 / n)


def test_without_tis_the_ratio_is_against_the_sampler_and_clips_the_mismatch(tiny_model: Path) -> None:
    trainer = Trainer(tiny_model, _config("off", cap=2.0), seed=0)
    randomise_lora_b(trainer.model)
    sample, _ = _perturbed(trainer)
    ratios = [math.exp(-d) for d in DELTAS]
    per_token = [min(r, min(max(r, 0.8), 1.2)) for r in ratios]  # A > 0: min(r, clip(r, 0.8, 1.2))
    loss, _ = _loss_and_grads(trainer, [sample], [ADVANTAGE])
    assert loss == pytest.approx(-ADVANTAGE * sum(per_token) / len(DELTAS), rel=1e-5)
    stats = trainer.step([sample], [ADVANTAGE])
    assert not stats.tis_applied
    assert stats.clip_fraction == pytest.approx(3 / len(DELTAS))  # e, e^0.5, e^0.8 are above 1.2
    assert stats.tis_weight_mean == pytest.approx(sum(min(r, 2.0) for r in ratios) / len(DELTAS), rel=1e-5)
    assert stats.tis_truncated_fraction == pytest.approx(2 / len(DELTAS))  # measured even when not applied


# ---- auto, live reconfiguration, metrics ----------------------------------------------------------
def test_auto_is_on_only_when_the_sampler_is_not_the_trainers_own_forward(tiny_model: Path) -> None:
    own = Trainer(tiny_model, _config("auto"), seed=0)
    foreign = Trainer(tiny_model, _config("auto"), seed=0, sampler_is_own_forward=False)
    assert own.sampler_is_own_forward and not own.tis_active
    assert foreign.tis_active
    _with_tis(own, "on")
    _with_tis(foreign, "off")
    assert own.tis_active and not foreign.tis_active


def test_tis_and_its_cap_change_live_and_reach_the_metrics(tiny_model: Path) -> None:
    trainer = Trainer(tiny_model, _config("off", cap=2.0), seed=0)
    randomise_lora_b(trainer.model)
    sample, _ = _perturbed(trainer)
    assert not trainer.step([sample], [ADVANTAGE]).tis_applied
    trainer.reconfigure(_config("on", cap=1.5))  # accepted: no ConfigConflict
    sample, _ = _perturbed(trainer)  # the step moved the weights: deltas from the new ones
    stats = trainer.step([sample], [ADVANTAGE])
    assert stats.tis_applied and stats.clip_fraction == 0.0
    assert stats.tis_truncated_fraction == pytest.approx(3 / len(DELTAS), abs=1e-9)  # e, e^0.5, e^0.8 > 1.5
    metrics = step_metrics(
        stats, rewards=[1.0], task_ids=["t"], advantages=[ADVANTAGE], drifts=[], calls=1, samples=1, eval_rewards=[]
    )
    assert metrics["tis"] is True
    assert (metrics["tis_weight_mean"], metrics["tis_truncated_fraction"]) == (
        stats.tis_weight_mean,
        stats.tis_truncated_fraction,
    )


# ---- (c) a run whose sampler logprobs are off still learns ----------------------------------------
PROMPTS, GROUP, STEPS, PROMPT_LEN = 4, 16, 12, 6


class _OneTokenTask:
    """Reward 1 when the one sampled token is in a target set (30% of the tiny model's first-step mass).

    The tiny model is random-init: its final norm is scaled up x10 so its logits have a range
    LoRA can move (at init, tokens differ by < 0.3 nat and no LoRA update can shift much mass).
    The target set is the tokens whose embedding lies furthest along a random direction: the
    hidden state can move towards it.
    """

    def __init__(self, trainer: Trainer) -> None:
        base = trainer.model.get_base_model()  # type: ignore[operator]
        with torch.no_grad():
            base.model.norm.weight.mul_(10.0)
        embeddings = trainer.model.get_input_embeddings().weight.detach()  # type: ignore[operator]
        direction = torch.randn(embeddings.shape[1], generator=torch.Generator().manual_seed(7))
        projection = embeddings @ direction  # (V,)
        self.targets = projection > projection.quantile(0.7)  # (V,) bool
        ids = torch.randint(3, VOCAB, (PROMPTS, PROMPT_LEN), generator=torch.Generator().manual_seed(3))
        self.prompts = ids.tolist()

    @torch.no_grad()
    def next_token_logprobs(self, trainer: Trainer) -> torch.Tensor:
        """(PROMPTS, V): the policy's distribution of the first completion token, per prompt."""
        logits: torch.Tensor = trainer.model(input_ids=torch.tensor(self.prompts)).logits[:, -1]  # (P, V)
        return logits.float().log_softmax(-1)

    def target_probability(self, trainer: Trainer) -> float:
        """Mean over the prompts of the probability that the first token is a target."""
        return float(self.next_token_logprobs(trainer)[:, self.targets].exp().sum(-1).mean())


def _perturb(kind: str, logprob: float, is_target: bool, rng: torch.Generator) -> float:
    """The sampler's recorded logprob of a token the trainer's weights gave `logprob`."""
    if kind == "noise":  # a kernel's rounding: independent noise of 0.3 nat per token
        return logprob + 0.3 * float(torch.randn((), generator=rng))
    # a systematic disagreement along the reward: target tokens 0.5 nat less likely, others 0.5 more
    return logprob + (-0.5 if is_target else 0.5)


def _train(tiny_model: Path, tis: str, kind: str) -> tuple[list[float], list[StepStats], list[float]]:
    """STEPS GRPO steps, each on GROUP tokens per prompt sampled from the trainer's current weights,
    with perturbed behaviour logprobs. Returns the target probability before each step and at the
    end, each step's stats, and each step's share of tokens with a nonzero advantage."""
    trainer = Trainer(tiny_model, _config(tis, lr=1e-2), seed=0)
    task = _OneTokenTask(trainer)
    rng = torch.Generator().manual_seed(0)
    curve: list[float] = []
    stats: list[StepStats] = []
    signal: list[float] = []
    context = (False,) * PROMPT_LEN
    for step in range(STEPS):
        logprobs = task.next_token_logprobs(trainer)  # (P, V)
        curve.append(float(logprobs[:, task.targets].exp().sum(-1).mean()))
        tokens = torch.multinomial(logprobs.exp(), GROUP, replacement=True, generator=rng)  # (P, G)
        samples, rewards, groups = [], [], []
        for p, prompt in enumerate(task.prompts):
            for token in tokens[p].tolist():
                hit = bool(task.targets[token])
                behaviour = _perturb(kind, float(logprobs[p, token]), hit, rng)
                samples.append(
                    Sample(
                        episode_id=f"p{p}",
                        token_ids=(*prompt, token),
                        loss_mask=(*context, True),
                        behaviour_logprobs=(*(0.0 for _ in context), behaviour),
                        policy_versions=(*(-1 for _ in context), step),
                        calls=((0, 0),),
                    )
                )
                rewards.append(float(hit))
                groups.append(str(p))
        advantages = group_advantages(rewards, groups)
        signal.append(sum(a != 0.0 for a in advantages) / len(advantages))
        stats.append(trainer.step(samples, advantages))
    curve.append(task.target_probability(trainer))
    return curve, stats, signal


@pytest.mark.parametrize("kind", ["noise", "correlated"])
def test_a_run_whose_sampler_logprobs_are_off_still_learns_with_tis(tiny_model: Path, kind: str) -> None:
    on_curve, on_stats, _ = _train(tiny_model, "on", kind)
    off_curve, off_stats, off_signal = _train(tiny_model, "off", kind)
    start = on_curve[0]
    assert off_curve[0] == start and 0.2 < start < 0.35
    # with TIS: the ratio is against the trainer's own forward (never clipped on a fresh batch),
    # the mismatch is in the weights, and the target probability rises (0.26 -> ~0.8 in 12 steps)
    assert all(s.tis_applied and s.clip_fraction == 0.0 for s in on_stats)
    assert on_curve[-1] > start + 0.15, on_curve
    if kind == "noise":
        # w = min(exp(-noise), 2) with noise ~ N(0, 0.3): mean exp(0.045) = 1.046, ~1% truncated
        assert all(0.9 < (s.tis_weight_mean or 0.0) < 1.2 for s in on_stats)
        assert sum(s.tis_truncated_fraction or 0.0 for s in on_stats) / STEPS < 0.05
        # without TIS the ratio against the sampler is exp(-noise): a quarter of the tokens leave the
        # clip band in their advantage's direction and lose their gradient; the rest still learns
        assert all(s.clip_fraction > 0.1 for s in off_stats)
        assert off_curve[-1] > start + 0.1, off_curve
    else:
        # without TIS, every target token (advantage > 0) has ratio e^0.5 > 1.2 and every other token
        # (advantage < 0) e^-0.5 < 0.8: the clip zeroes every gradient and nothing is learnt
        assert [s.clip_fraction for s in off_stats] == pytest.approx(off_signal)  # every token with a signal
        assert max(off_curve) - min(off_curve) < 1e-6, off_curve
