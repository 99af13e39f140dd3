"""LoRA layers that run their adapter in the activations' dtype, so a bf16 model never copies its activations to fp32.

peft keeps an adapter in float32 (AdamW's small updates would round away in bf16) and, in each
adapted projection's forward, casts the projection's input to float32, runs the two rank-r
matmuls there, scales the result and adds it to the bf16 output: five passes over a whole
activation, plus as many in the backward. On a CPU that cost about as much as the projections
themselves (a `[2, 255]` micro-batch of SmolLM2-135M with LoRA on every projection: 816 ms
forward and backward in peft's way, 622 ms in this one; docs/vibe.md, *Faster updates*).

Here the adapter's two small weights are cast instead (r x d values, not tokens x d), with the
scaling folded into B. The float32 weights stay the masters: their gradients come back through
the cast in float32, so the optimiser, the saved adapter and a float32 model are as before. The
trainer (`step/policy_model.py`) and the embedded server (`transformers_backend.py`) both use it,
so their LoRA math stays one.

Layers in a state this path does not cover (adapters disabled or merged, per-row adapter names,
a LoRA variant such as DoRA) run peft's own forward.

A server also samples the base beside the policy in one batch (an eval of the base after training
began): `RowAdapters` is a per-row switch the decode loop sets around a forward, read by every layer
it was given to; a row switched off gets the base projection alone.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from types import MethodType
from typing import Any

import torch
import torch.nn.functional as F
from torch import Tensor, nn

__all__ = ["RowAdapters", "run_lora_in_input_dtype"]


class RowAdapters:
    """Which rows of the next forward get the adapter: `picked` is None (every row) or the indices of those
    that do (the others get the base projection alone, and cost no adapter math). Set by its one owner,
    the decode loop, around each forward."""

    def __init__(self) -> None:
        self.picked: Tensor | None = None

    @contextmanager
    def only(self, use_adapter: list[bool], device: torch.device) -> Iterator[None]:
        """For the forward inside: the adapter on the rows marked True alone (all on is the plain path)."""
        if all(use_adapter):
            yield
            return
        self.picked = torch.tensor([i for i, on in enumerate(use_adapter) if on], dtype=torch.long, device=device)
        try:
            yield
        finally:
            self.picked = None


def run_lora_in_input_dtype(model: nn.Module, rows: RowAdapters | None = None) -> int:
    """Give every peft LoRA `Linear` in `model` the input-dtype forward; how many layers it covers.

    Call it again after loading or writing adapter weights under `torch.inference_mode()` (the
    server's loop): it drops the casts kept for serving, since inference tensors count no writes.
    With `rows`, each layer adds its adapter's output to the rows `rows.picked` names only (a serving batch).
    """
    from peft.tuners.lora.layer import Linear as LoraLinear

    covered = 0
    for module in model.modules():
        if type(module) is LoraLinear:  # subclasses (quantised layers) keep their own forward
            module.forward = MethodType(_forward, module)  # type: ignore[method-assign]  # per instance, on purpose
            module.__dict__.pop("_lora_casts", None)
            module.__dict__["_lora_rows"] = rows
            covered += 1
    return covered


def _forward(layer: Any, x: Tensor, *args: Any, **kwargs: Any) -> Tensor:
    """The base projection plus each active adapter's (x A^T)(s B)^T, computed in x's dtype."""
    own = type(layer).forward
    if layer.disable_adapters or layer.merged or "adapter_names" in kwargs:
        return own(layer, x, *args, **kwargs)  # type: ignore[no-any-return]
    active = [name for name in layer.active_adapters if name in layer.lora_A]
    if any(name in layer.lora_variant for name in active):
        return own(layer, x, *args, **kwargs)  # type: ignore[no-any-return]
    result: Tensor = layer.base_layer(x, *args, **kwargs)
    rows: RowAdapters | None = layer.__dict__.get("_lora_rows")
    picked = None if rows is None else rows.picked
    if picked is not None:
        x = x.index_select(0, picked)  # the adapter's rows only: a base row costs no adapter math
    for name in active:
        down, up = _cast_weights(layer, name, x.dtype)
        delta = F.linear(F.linear(layer.lora_dropout[name](x), down), up).to(result.dtype)
        result = result + delta if picked is None else result.index_add(0, picked, delta)
    return result


def _cast_weights(layer: Any, name: str, dtype: torch.dtype) -> tuple[Tensor, Tensor]:
    """(A, s x B) in `dtype`. Without grad (serving), kept per layer until a weight changes: a decode step
    of one token per row is short enough that recasting 200 adapters' weights was a sixth of it."""
    a, b, scaling = layer.lora_A[name].weight, layer.lora_B[name].weight, layer.scaling[name]
    if torch.is_grad_enabled():  # training: the casts are in the graph that carries the masters' gradients
        return a.to(dtype), (b * scaling).to(dtype)
    kept: dict[str, _Casts] = layer.__dict__.setdefault("_lora_casts", {})
    casts = kept.get(name)
    if casts is None or not casts.still_of(a, b, scaling, dtype):
        for gone in [n for n in kept if n not in layer.lora_A]:  # adapters deleted since (a hot swap)
            del kept[gone]
        casts = kept[name] = _Casts(a, b, scaling, dtype)
    return casts.down, casts.up


class _Casts:
    """One adapter's weights cast for serving, and what they were cast from: the same parameter objects
    (weak references), unchanged since (`_version` counts in-place writes: optimiser steps, loads;
    inference tensors count none, hence the reset in `run_lora_in_input_dtype`)."""

    def __init__(self, a: Tensor, b: Tensor, scaling: float, dtype: torch.dtype) -> None:
        self.sources = (weakref.ref(a), _writes(a), weakref.ref(b), _writes(b), scaling, dtype)
        self.down, self.up = a.to(dtype), (b * scaling).to(dtype)

    def still_of(self, a: Tensor, b: Tensor, scaling: float, dtype: torch.dtype) -> bool:
        ref_a, writes_a, ref_b, writes_b, was_scaling, was_dtype = self.sources
        return (
            ref_a() is a and _writes(a) == writes_a and ref_b() is b and _writes(b) == writes_b
            and scaling == was_scaling and dtype == was_dtype
        )  # fmt: skip


def _writes(weight: Tensor) -> int | None:
    """How many in-place writes `weight` has had; None for an inference tensor, which does not count them."""
    return None if weight.is_inference() else weight._version
