"""LoRA in the activations' dtype: peft's outputs and adapter gradients, without fp32 copies of activations."""

from __future__ import annotations

import copy
from pathlib import Path

import peft
import pytest
import torch
from torch.profiler import ProfilerActivity, profile

from agentjet.core.backends.lora_layers import run_lora_in_input_dtype
from agentjet.core.config import LoraConfig
from agentjet.core.step.policy_model import build_model, to_peft

_ALL = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]


def _peft_model(tiny_model: Path, dtype: torch.dtype) -> peft.PeftModel:
    """peft's own layers, B randomised so the adapter changes the output (a fresh B is zero)."""
    from transformers import AutoModelForCausalLM

    torch.manual_seed(0)
    base = AutoModelForCausalLM.from_pretrained(tiny_model, dtype=dtype)
    model = peft.get_peft_model(base, to_peft(LoraConfig(rank=8, alpha=16, target_modules=_ALL)))
    for name, parameter in model.named_parameters():
        if "lora_B" in name:
            torch.nn.init.normal_(parameter, std=0.05)
    return model


def _logits_and_grads(model: torch.nn.Module, ids: torch.Tensor) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    model.zero_grad(set_to_none=True)
    logits = model(input_ids=ids).logits.float()
    logits.log_softmax(-1)[..., :7].sum().backward()
    grads = {n: p.grad.detach().clone() for n, p in model.named_parameters() if p.grad is not None}
    return logits.detach(), grads


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_outputs_and_adapter_gradients_match_peft(tiny_model: Path, dtype: torch.dtype) -> None:
    ids = torch.randint(0, 1000, (2, 24), generator=torch.Generator().manual_seed(1))
    ours = _peft_model(tiny_model, dtype)
    theirs = copy.deepcopy(ours)
    assert run_lora_in_input_dtype(ours) == 2 * len(_ALL)  # the tiny model's two layers
    logits, grads = _logits_and_grads(ours, ids)
    want_logits, want_grads = _logits_and_grads(theirs, ids)
    assert set(grads) == set(want_grads) and grads and all("lora_" in name for name in grads)
    assert all(g.dtype == torch.float32 for g in grads.values())  # the masters keep float32 gradients
    exact = dtype == torch.float32
    assert torch.allclose(logits, want_logits, atol=1e-5 if exact else 0.05), (logits - want_logits).abs().max()
    for name, want in want_grads.items():
        got = grads[name].flatten()
        if exact:
            assert torch.allclose(got, want.flatten(), rtol=1e-4, atol=1e-7), name
        else:  # bf16 activations in the adapter: the same direction to rounding
            assert torch.nn.functional.cosine_similarity(got, want.flatten(), dim=0) > 0.995, name


def test_a_bf16_forward_copies_no_activation_to_fp32(tiny_model: Path) -> None:
    """The point of the module: peft casts every adapted projection's input to fp32 (`_to_copy` of the
    activations) and its output back; ours casts only the adapter's r x d weights, so it casts activations
    exactly as often as the base model alone (its norms and logits)."""
    ids = torch.randint(0, 1000, (1, 40), generator=torch.Generator().manual_seed(2))

    def activation_casts(model: torch.nn.Module) -> int:
        with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as trace:
            model(input_ids=ids)
        return sum(
            event.count
            for event in trace.key_averages(group_by_input_shape=True)
            if event.key == "aten::_to_copy" and event.input_shapes and event.input_shapes[0][:2] == [1, 40]
        )

    theirs = _peft_model(tiny_model, torch.bfloat16)
    ours = copy.deepcopy(theirs)
    run_lora_in_input_dtype(ours)
    with ours.disable_adapter():
        base = activation_casts(ours)
    assert activation_casts(theirs) >= base + 2 * 2 * len(_ALL)  # peft: in and out, per layer
    assert activation_casts(ours) == base


def test_disabled_adapters_give_the_base_model(tiny_model: Path) -> None:
    """The reference policy of the KL term runs under `disable_adapter()`: peft's path, the base weights."""
    ids = torch.randint(0, 1000, (1, 16), generator=torch.Generator().manual_seed(3))
    model = _peft_model(tiny_model, torch.float32)
    run_lora_in_input_dtype(model)
    with torch.no_grad():
        adapted = model(input_ids=ids).logits
        with model.disable_adapter():
            base = model(input_ids=ids).logits
        plain = model.get_base_model()
    assert not torch.allclose(adapted, base)
    with torch.no_grad(), model.disable_adapter():
        assert torch.equal(plain(input_ids=ids).logits, base)


def test_the_trainer_builds_its_policy_with_it(tiny_model: Path) -> None:
    model = build_model(tiny_model, LoraConfig(target_modules=["q_proj", "v_proj"]), torch.device("cpu"))
    layers = [m for m in model.modules() if type(m).__name__ == "Linear" and hasattr(m, "lora_A")]
    assert len(layers) == 4 and all(m.forward.__func__.__module__.endswith("lora_layers") for m in layers)


def test_serving_reuses_its_casts_only_while_the_weights_are_unchanged(tiny_model: Path, tmp_path: Path) -> None:
    """Without grad the casts are kept per layer; an in-place write (an optimiser step, a load) or a
    hot-swapped adapter must never be served from stale casts."""
    ids = torch.randint(0, 1000, (1, 16), generator=torch.Generator().manual_seed(4))
    theirs = _peft_model(tiny_model, torch.bfloat16)
    ours = copy.deepcopy(theirs)
    run_lora_in_input_dtype(ours)

    def agree() -> torch.Tensor:
        with torch.no_grad():
            got, want = ours(input_ids=ids).logits, theirs(input_ids=ids).logits
        assert torch.allclose(got.float(), want.float(), atol=0.05), (got.float() - want.float()).abs().max()
        return got

    first = agree()
    layer = next(m for m in ours.modules() if hasattr(m, "_lora_casts"))
    kept = layer._lora_casts["default"]
    assert agree().equal(first) and layer._lora_casts["default"] is kept  # reused, not recast
    for model in (ours, theirs):  # what AdamW's step does: write the masters in place
        with torch.no_grad():
            for name, parameter in model.named_parameters():
                if "lora_B" in name:
                    parameter.mul_(-3.0)
    assert not agree().equal(first)
    theirs.save_pretrained(tmp_path / "swap")  # a hot swap: a new adapter, the old one deleted
    ours.load_adapter(str(tmp_path / "swap"), adapter_name="next")
    ours.set_adapter("next")
    ours.delete_adapter("default")
    run_lora_in_input_dtype(ours)
    agree()
    assert set(layer._lora_casts) == {"next"}  # the deleted adapter's casts are dropped


def test_weights_loaded_in_inference_mode_are_served_and_a_reload_recasts(tiny_model: Path, tmp_path: Path) -> None:
    """The server's decode loop loads adapters under `torch.inference_mode()`: inference tensors have no
    write counter, so the casts rest on identity and on the reset that each load's call makes."""
    ids = torch.randint(0, 1000, (1, 12), generator=torch.Generator().manual_seed(5))
    source = _peft_model(tiny_model, torch.float32)
    source.save_pretrained(tmp_path / "adapter")
    from transformers import AutoModelForCausalLM

    with torch.inference_mode():
        served = peft.PeftModel.from_pretrained(AutoModelForCausalLM.from_pretrained(tiny_model), tmp_path / "adapter")
        run_lora_in_input_dtype(served)
        got = served(input_ids=ids).logits
        with torch.no_grad():
            want = source(input_ids=ids).logits
        assert torch.allclose(got, want, atol=1e-5)
        for name, parameter in served.named_parameters():  # a write the loop would make, then the reset
            if "lora_B" in name:
                parameter.zero_()
        run_lora_in_input_dtype(served)
        with served.disable_adapter():
            base = served(input_ids=ids).logits
        assert torch.allclose(served(input_ids=ids).logits, base, atol=1e-6)
