"""A trained step's weights out of a state dir: the PEFT adapter as is, or merged into its base model.

A step's weights live in `<state_dir>/adapters/step-N/` (the newest few, for serving) and in
`<state_dir>/checkpoints/step-N/adapter/` (the checkpoints kept); either is a folder
`save_pretrained` wrote: a PEFT adapter under LoRA, the whole model under full fine-tuning. The
merged export is a plain Hugging Face model folder (config, safetensors, tokenizer) that
transformers loads and vLLM serves without peft.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

from agentjet.core.errors import ModelError
from agentjet.core.models import model_loading, resolve_model

__all__ = ["StepWeights", "export_step", "find_step_weights", "merge_into"]

_STEP = "step-"


class StepWeights:
    """Where one step's weights are, and what they are (an adapter over `base`, or a whole model)."""

    def __init__(self, folder: Path, step: int) -> None:
        self.folder = folder
        self.step = step
        self.is_adapter = (folder / "adapter_config.json").is_file()
        if not self.is_adapter and not (folder / "config.json").is_file():
            raise ModelError(f"{folder} holds neither a PEFT adapter nor a model (no adapter_config.json/config.json)")

    def base_model(self) -> str | None:
        """The base the adapter was trained on, as its `adapter_config.json` names it (None for a whole model)."""
        if not self.is_adapter:
            return None
        config = json.loads((self.folder / "adapter_config.json").read_text(encoding="utf-8"))
        base = config.get("base_model_name_or_path")
        return str(base) if base else None


def _steps_under(root: Path) -> set[int]:
    if not root.is_dir():
        return set()
    return {int(p.name[len(_STEP) :]) for p in root.glob(f"{_STEP}*") if p.name[len(_STEP) :].isdigit()}


def find_step_weights(state_dir: Path, step: int | None = None) -> StepWeights:
    """Step `step`'s weights (the newest step when None); a clear error naming the steps there are."""
    if not state_dir.is_dir():
        raise ModelError(f"state dir {state_dir} does not exist")
    served, kept = _steps_under(state_dir / "adapters"), _steps_under(state_dir / "checkpoints")
    available = served | kept
    if not available:
        raise ModelError(f"{state_dir} has no trained step yet (no adapters/step-N or checkpoints/step-N)")
    chosen = max(available) if step is None else step
    if chosen not in available:
        raise ModelError(f"{state_dir} has no step {chosen}; steps there: {', '.join(map(str, sorted(available)))}")
    folder = (
        state_dir / "adapters" / f"{_STEP}{chosen}"
        if chosen in served
        else state_dir / "checkpoints" / f"{_STEP}{chosen}" / "adapter"
    )
    return StepWeights(folder, chosen)


def _fresh_out(out: Path) -> Path:
    """A staging folder beside `out`; `out` itself must not exist or be empty (nothing of the user's is replaced)."""
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise ModelError(f"{out} exists and is not empty: give a new --out folder")
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        return Path(tempfile.mkdtemp(prefix=f".{out.name}-", dir=out.parent))
    except OSError as exc:  # a file on the way, or a folder we may not write to
        raise ModelError(f"--out {out}: cannot write there ({exc.strerror}); give a new folder") from exc


def merge_into(weights: StepWeights, folder: Path, *, base: str | None = None) -> None:
    """Write the base model with the adapter merged in (float32) and the base's tokenizer into `folder`.

    `base` (a registered name or a folder) overrides the base the adapter names; a whole-model step needs none.
    """
    import peft
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    base_name = base or weights.base_model()
    if weights.is_adapter and base_name is None:
        raise ModelError(f"{weights.folder}/adapter_config.json names no base model: give --base MODEL")
    base_dir = resolve_model(base_name) if base_name is not None else weights.folder
    with model_loading():
        model = AutoModelForCausalLM.from_pretrained(base_dir, dtype=torch.float32)
        if weights.is_adapter:
            model = peft.PeftModel.from_pretrained(model, str(weights.folder)).merge_and_unload()
    model.save_pretrained(folder, safe_serialization=True)
    AutoTokenizer.from_pretrained(base_dir).save_pretrained(folder)


def export_step(
    weights: StepWeights, out: Path, *, merged: bool = False, gguf_type: str | None = None, base: str | None = None
) -> list[Path]:
    """Export one step into the new folder `out`: the adapter as is, or merged (and a GGUF file beside it).

    Everything is written into a staging folder that is renamed into place at the end, so an
    interrupted export leaves no half folder under `out`. Returns the files written, relative to `out`.
    """
    from agentjet.core.export.gguf_file import write_gguf

    staging = _fresh_out(out)
    try:
        if merged or gguf_type is not None:
            merge_into(weights, staging, base=base)
            if gguf_type is not None:
                write_gguf(staging, staging / f"model-{gguf_type}.gguf", dtype=gguf_type)
        else:
            shutil.copytree(weights.folder, staging, dirs_exist_ok=True)
        written = sorted(p.relative_to(staging) for p in staging.rglob("*") if p.is_file())
        if out.exists():
            out.rmdir()
        staging.rename(out)
        return written
    finally:
        shutil.rmtree(staging, ignore_errors=True)
