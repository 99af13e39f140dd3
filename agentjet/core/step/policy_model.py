"""The policy network a trainer optimises: the base model with a float32 LoRA adapter, or alone under full fine-tuning.

Built once per trainer (`build_model`), reloaded from a folder `save_pretrained` wrote when a
checkpoint is resumed (`load_policy_weights`); `to_peft` is our LoRA section in peft's words.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import peft
import torch
from torch import nn
from transformers import AutoModelForCausalLM

from agentjet.core.backends.lora_layers import run_lora_in_input_dtype
from agentjet.core.config import LoraConfig
from agentjet.core.errors import ConfigError
from agentjet.core.models import check_cache_argument, model_loading

__all__ = [
    "build_model",
    "check_lora_fits",
    "load_policy_weights",
    "set_activation_checkpointing",
    "to_peft",
    "top_layers",
]


def to_peft(cfg: LoraConfig, depth: int | None = None) -> peft.LoraConfig:
    """Our LoRA section as peft's config for a causal LM of `depth` transformer layers (needed with `layers`)."""
    return peft.LoraConfig(
        task_type="CAUSAL_LM",
        r=cfg.rank,
        lora_alpha=cfg.alpha,  # type: ignore[arg-type]  # annotated int; peft's scaling alpha / r takes floats
        lora_dropout=cfg.dropout,
        target_modules=list(cfg.target_modules),
        layers_to_transform=None if cfg.layers is None else top_layers(cfg.layers, depth),
        bias="none",
    )


def top_layers(count: int | float, depth: int | None) -> list[int]:
    """The indices of the top `count` of `depth` layers, or of the top share `count` (< 1) of them, at least
    one: with the adapter only there, the backward pass of an update stops at the lowest of them (nothing
    below needs a gradient). A share keeps one recipe right for models of any depth."""
    if depth is None:
        raise ConfigError("lora.layers needs the model's depth: this model's config names no num_hidden_layers")
    if isinstance(count, float):
        count = max(1, round(count * depth))
    if count > depth:
        raise ConfigError(f"lora.layers is {count}, but the model has {depth} layers: give at most {depth}")
    return list(range(depth - count, depth))


def check_lora_fits(lora: LoraConfig, model_path: Path) -> None:
    """Refuse a `lora.layers` the model cannot hold when the config is given, not at the first update (a model
    folder without a config.json is left to the build)."""
    config = model_path / "config.json"
    if lora.enabled and lora.layers is not None and config.is_file():
        top_layers(lora.layers, json.loads(config.read_text()).get("num_hidden_layers"))


def build_model(
    model_path: Path, lora: LoraConfig, device: torch.device, dtype: torch.dtype = torch.float32
) -> nn.Module:
    """The policy: the base model in `dtype` wrapped with a fresh float32 LoRA adapter, or itself.

    Under LoRA the frozen base takes `dtype` (bf16 halves its memory) while the adapter, its
    gradients and AdamW's moments stay float32 (peft's `autocast_adapter_dtype`): updates of
    1e-5 relative size vanish in bf16; only the adapter's matmuls run in `dtype`
    (`backends/lora_layers.py`). A full fine-tune trains every weight, so it always keeps
    float32 weights whatever `dtype` says.
    """
    base_dtype = dtype if lora.enabled else torch.float32
    with model_loading():
        model: nn.Module = AutoModelForCausalLM.from_pretrained(model_path, dtype=base_dtype)
        check_cache_argument(model)  # prefix sharing passes the shared prefix's KV as `cache=`
        model.to(device)
        if not lora.enabled:
            return model
        depth = getattr(model.config, "num_hidden_layers", None)
        policy = peft.get_peft_model(model, to_peft(lora, depth), autocast_adapter_dtype=True)
    run_lora_in_input_dtype(policy)  # the adapter's matmuls in the base's dtype, its weights float32
    return policy


def load_policy_weights(model: nn.Module, path: Path, device: torch.device) -> None:
    """Set `model`'s trained weights from a folder its `save_pretrained` wrote: the adapter, or the whole model."""
    if isinstance(model, peft.PeftModel):
        weights = peft.utils.load_peft_weights(str(path), device=str(device))
        loaded: Any = peft.set_peft_model_state_dict(model, weights)  # torch's (missing_keys, unexpected_keys)
        unfit = [k for k in (*loaded.unexpected_keys, *loaded.missing_keys) if "lora_" in k]
        if unfit:  # peft loads what fits and drops the rest: a lora.* change since the checkpoint would go unseen
            raise ConfigError(
                f"the adapter in {path} does not fit this run's lora settings ({len(unfit)} weights apart, e.g. "
                f"{unfit[0]}): lora.rank, lora.target_modules and lora.layers must stay as they were"
            )
    else:
        with model_loading():
            saved = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32)  # full fine-tune: fp32
        model.load_state_dict(saved.state_dict())


def set_activation_checkpointing(model: nn.Module, enabled: bool) -> None:
    """Recompute each layer's activations in the backward pass (memory for long sequences), or stop.

    `use_reentrant=False`: the reentrant variant drops the gradients of a layer whose inputs
    need none (the frozen base's embeddings under LoRA).
    """
    base: Any = model.get_base_model() if isinstance(model, peft.PeftModel) else model
    if enabled:  # transformers 5 calls it activation checkpointing (our pin has the new name)
        base.activation_checkpointing_enable(activation_checkpointing_kwargs={"use_reentrant": False})
    else:
        base.activation_checkpointing_disable()
