"""Device and precision: `--device/--dtype` resolve once, both model copies follow, LoRA stays float32."""

from __future__ import annotations

import platform
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import torch

from agentjet.core import placement as placement_module
from agentjet.core.config import GrpoConfig, OptimConfig, ServerSettings, TrainConfig
from agentjet.core.episodes.merging import merge_timelines
from agentjet.core.errors import ConfigError
from agentjet.core.placement import (
    avoid_cudnn_attention,
    cpu_has_native_bf16,
    memory_report,
    parameter_bytes,
    resolve_placement,
)
from agentjet.core.step.trainer import Trainer
from tests.core.factories import call_record, randomise_lora_b
from tests.core.test_trainer import _assert_same, _growing_episode, _loss_and_grads


@pytest.mark.parametrize("native_bf16", [True, False])
@pytest.mark.parametrize(
    ("device", "dtype", "want"),
    [
        ("auto", "auto", ("cpu", "fast")),  # no GPU here: the CPU, in bf16 only where it is native
        ("cpu", "auto", ("cpu", "fast")),
        ("CPU", "bfloat16", ("cpu", "bfloat16")),
        ("cpu", "float32", ("cpu", "float32")),
    ],
)
def test_placement_resolves_auto_to_the_cpu_in_bf16_only_where_the_cpu_has_native_bf16(
    device: str, dtype: str, want: tuple[str, str], native_bf16: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU: auto means CUDA + bf16 here")
    monkeypatch.setattr(placement_module, "cpu_has_native_bf16", lambda: native_bf16)
    want_dtype = want[1] if want[1] != "fast" else ("bfloat16" if native_bf16 else "float32")
    placement = resolve_placement(device, dtype)
    assert (placement.device, placement.dtype) == (want[0], want_dtype)
    assert placement.torch_dtype == {"float32": torch.float32, "bfloat16": torch.bfloat16}[want_dtype]


def test_native_bf16_is_what_the_cpu_flags_say_not_plain_avx512() -> None:
    """The probe agrees with the kernel's CPU flags: AVX-512 BF16 or AMX BF16, never AVX-512 alone."""
    cpuinfo = Path("/proc/cpuinfo")
    if not cpuinfo.is_file() or platform.machine() not in ("x86_64", "AMD64"):
        pytest.skip("the flags are read from Linux's /proc/cpuinfo on x86")
    flags = next(line for line in cpuinfo.read_text().splitlines() if line.startswith("flags")).split()
    assert cpu_has_native_bf16() == bool({"avx512_bf16", "amx_bf16"} & set(flags))


@pytest.mark.parametrize(
    ("device", "dtype", "words"),
    [
        ("cuda", "auto", "no CUDA GPU"),
        ("cuda:3", "auto", "no CUDA GPU"),
        ("tpu", "auto", "not one of"),
        ("cuda:x", "auto", "not one of"),
        ("cpu", "float16", "not one of"),
    ],
)
def test_a_device_or_dtype_this_machine_cannot_give_is_one_clear_error(device: str, dtype: str, words: str) -> None:
    if torch.cuda.is_available() and words == "no CUDA GPU":
        pytest.skip("this machine has a GPU")
    with pytest.raises(ConfigError, match=words):
        resolve_placement(device, dtype)


@pytest.fixture
def cudnn_attention_flag() -> Iterator[None]:
    """The process-wide cuDNN attention flag, restored after the test."""
    before = torch.backends.cuda.cudnn_sdp_enabled()
    yield
    torch.backends.cuda.enable_cudnn_sdp(before)


@pytest.mark.usefixtures("cudnn_attention_flag")
def test_cudnn_attention_is_turned_off_for_a_cuda_device_only() -> None:
    torch.backends.cuda.enable_cudnn_sdp(True)
    assert avoid_cudnn_attention("cpu") is False and torch.backends.cuda.cudnn_sdp_enabled()
    assert avoid_cudnn_attention("cuda:0") is True and not torch.backends.cuda.cudnn_sdp_enabled()
    assert avoid_cudnn_attention("cuda:1") is False  # already off: nothing changed, nothing logged again
    assert not torch.backends.cuda.cudnn_sdp_enabled()


def test_server_settings_take_the_placement_and_backend_fields() -> None:
    settings = ServerSettings(device="cpu", dtype="bfloat16", backend="vllm", train_procs=2)
    assert (settings.device, settings.dtype, settings.backend, settings.train_procs) == ("cpu", "bfloat16", "vllm", 2)
    with pytest.raises(ValueError, match="dtype"):
        ServerSettings(dtype="float16")
    with pytest.raises(ValueError, match="backend"):
        ServerSettings(backend="tgi")


def test_a_bf16_trainer_keeps_the_lora_weights_gradients_and_adam_moments_in_float32(tiny_model: Path) -> None:
    trainer = Trainer(tiny_model, TrainConfig(optim=OptimConfig(lr=1e-3)), dtype=torch.bfloat16, seed=0)
    frozen = {p.dtype for p in trainer.model.parameters() if not p.requires_grad}
    trainable = {p.dtype for p in trainer.model.parameters() if p.requires_grad}
    assert frozen == {torch.bfloat16} and trainable == {torch.float32}
    randomise_lora_b(trainer.model)
    samples = merge_timelines(_growing_episode(), match="token")[0]
    stats = trainer.step(samples, [1.0] * len(samples))
    assert stats.grad_norm > 0 and torch.isfinite(torch.tensor(stats.loss))
    moments = [s for state in trainer.optimizer.state.values() for s in (state["exp_avg"], state["exp_avg_sq"])]
    assert moments and {m.dtype for m in moments} == {torch.float32}
    report = trainer.memory_report()
    assert (report["device"], report["dtype"]) == ("cpu", "bfloat16")
    fp32 = Trainer(tiny_model, TrainConfig(), seed=0).memory_report()
    assert report["param_bytes"] < 0.75 * fp32["param_bytes"]  # the base copy is half the size
    assert report["peak_bytes"] > 0 and report["peak_of"] == "process"


def test_a_bf16_step_follows_the_fp32_step_closely(tiny_model: Path) -> None:
    """bf16 changes the numbers a little, never the direction: loss within 2%, gradients correlated."""
    samples = merge_timelines(_growing_episode(), match="token")[0]
    results = []
    for dtype in (torch.float32, torch.bfloat16):
        trainer = Trainer(tiny_model, TrainConfig(), dtype=dtype, seed=0)
        randomise_lora_b(trainer.model)
        results.append(_loss_and_grads(trainer, samples, [1.0] * len(samples)))
    (loss32, grads32), (loss16, grads16) = results
    assert abs(loss16 - loss32) <= 0.02 * abs(loss32)
    flat32 = torch.cat([g.flatten() for g in grads32.values()])
    flat16 = torch.cat([g.flatten() for g in grads16.values()])
    assert torch.nn.functional.cosine_similarity(flat32, flat16, dim=0) > 0.99


@pytest.mark.parametrize("share_prefix", [False, True])
def test_gradient_checkpointing_gives_the_same_loss_and_gradients(tiny_model: Path, share_prefix: bool) -> None:
    rng = random.Random(3)
    prompt = [rng.randrange(1, 49152) for _ in range(60)]  # a GRPO group: one long shared prompt, four completions
    calls = [call_record(0, prompt, [rng.randrange(1, 49152) for _ in range(6)]) for _ in range(4)]
    samples = [s for c in calls for s in merge_timelines([c], match="token")[0]]
    advantages = [1.0, -0.25, 0.5, 0.75]
    results = []
    for checkpointing in (False, True):
        optim = OptimConfig(gradient_checkpointing=checkpointing, share_prefix=share_prefix, share_prefix_min_tokens=8)
        trainer = Trainer(tiny_model, TrainConfig(optim=optim, grpo=GrpoConfig()), seed=0)
        randomise_lora_b(trainer.model)
        results.append(_loss_and_grads(trainer, samples, advantages))
    _assert_same(results[1], results[0])


def test_gradient_checkpointing_turns_on_and_off_at_a_step_boundary(tiny_model: Path) -> None:
    trainer = Trainer(tiny_model, TrainConfig(), seed=0)
    model: Any = trainer.model
    assert not model.base_model.model.model.gradient_checkpointing
    trainer.reconfigure(TrainConfig(optim=OptimConfig(gradient_checkpointing=True)))
    samples = merge_timelines(_growing_episode(), match="token")[0]
    trainer.step(samples, [1.0] * len(samples))
    assert model.base_model.model.model.gradient_checkpointing
    trainer.reconfigure(TrainConfig(optim=OptimConfig(gradient_checkpointing=False)))
    trainer.step(samples, [1.0] * len(samples))
    assert not model.base_model.model.model.gradient_checkpointing


def test_memory_report_counts_parameter_bytes() -> None:
    params = [torch.zeros(10, dtype=torch.float32), torch.zeros(4, dtype=torch.bfloat16)]
    report = memory_report("cpu", "float32", parameter_bytes(params))
    assert report["param_bytes"] == 10 * 4 + 4 * 2
    assert report["peak_bytes"] > 0


def test_a_memory_report_reads_no_parameters_so_a_status_poll_costs_the_update_nothing(tiny_model: Path) -> None:
    """Walking a PEFT model's parameters holds the GIL ~16 ms; a status poll at 10 Hz did it and slowed a
    CPU update by a third. The bytes are counted once, when the copy is built."""
    trainer = Trainer(tiny_model, TrainConfig(), seed=0)
    counted = parameter_bytes(trainer.model.parameters())

    def walked(*args: object, **kwargs: object) -> None:
        raise AssertionError("memory_report walked the parameters")

    trainer.model.parameters = walked  # type: ignore[method-assign]
    trainer.model.named_parameters = walked  # type: ignore[method-assign]
    assert trainer.memory_report()["param_bytes"] == counted > 0
