"""A randomly initialised model of a given shape, saved as a local HF folder the real code paths load.

No weights can be downloaded, so the GPU check builds its model: a Qwen2 config with the shape
of Qwen2-7B (`7b`), of SmolLM2-135M's sizes with the werewolves headline's first update as its
workload (`135m`), or a 2-layer toy (`small`), `from_config` straight onto
the target device in bfloat16, saved with safetensors next to a byte-level tokenizer made with
the `tokenizers` library (no hub, no GGUF wheel). A fresh LoRA adapter of the default
`TrainConfig().lora` is saved beside it (peft keeps it float32 on the bf16 base), so rollouts
run through the adapter code path as a training server's do. The model has no EOS token: every
request generates exactly `max_tokens`, which keeps throughput figures comparable.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

__all__ = ["SHAPES", "BuiltModel", "Shape", "ShapeName", "build_random_model"]

ShapeName = Literal["7b", "135m", "small"]
_PAD = "<|endoftext|>"
_CHAT_TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


@dataclass(frozen=True)
class Shape:
    """The model's Qwen2 shape and the workload the check runs on it."""

    hidden: int
    layers: int
    heads: int
    kv_heads: int
    intermediate: int
    vocab: int
    concurrency: tuple[int, ...]  # rollout levels: requests in flight at once
    prompt_tokens: int
    new_tokens: int
    micro_batch_tokens: int | Literal["auto"]  # auto: TrainConfig's default on the device

    def qwen2_kwargs(self) -> dict[str, Any]:
        return {
            "hidden_size": self.hidden,
            "num_hidden_layers": self.layers,
            "num_attention_heads": self.heads,
            "num_key_value_heads": self.kv_heads,
            "intermediate_size": self.intermediate,
            "vocab_size": self.vocab,
            "max_position_embeddings": 32768 if self.layers > 2 else 2048,
            "tie_word_embeddings": False,
            "use_sliding_window": False,
        }


SHAPES: dict[ShapeName, Shape] = {
    # Qwen2-7B: 7.6e9 parameters, ~15.2 GB in bf16; the largest level's rollouts are ~18k tokens to train on
    "7b": Shape(3584, 28, 28, 4, 18944, 152064, (1, 32, 128), 16, 128, 4096),
    # SmolLM2-135M's sizes; the workload of the vibe headline's first update: ~240 wolf calls of ~330
    # tokens, in TrainConfig's default micro-batches
    "135m": Shape(576, 30, 9, 3, 1536, 49152, (1, 32, 240), 300, 32, "auto"),
    "small": Shape(64, 2, 4, 2, 128, 1024, (1, 4, 16), 8, 16, 128),
}


@dataclass(frozen=True)
class BuiltModel:
    """Where the model and its fresh adapter were saved, and what building them cost."""

    path: Path
    adapter: Path
    parameters: int
    tokenizer_vocab: int  # prompt ids are drawn below this
    build_s: float
    save_s: float


def _byte_tokenizer() -> Any:
    """A byte-level BPE tokenizer with no merges: 256 byte tokens plus ChatML markers."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    alphabet = sorted(pre_tokenizers.ByteLevel.alphabet())
    core = Tokenizer(models.BPE(vocab={c: i for i, c in enumerate(alphabet)}, merges=[]))
    core.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    core.decoder = decoders.ByteLevel()
    core.add_special_tokens([_PAD, "<|im_start|>", "<|im_end|>"])
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=core, pad_token=_PAD)  # type: ignore[no-untyped-call]
    tokenizer.chat_template = _CHAT_TEMPLATE
    return tokenizer


def _save_tokenizer(tokenizer: Any, folder: Path) -> None:
    """Save it with `eos_token: null` written out: Qwen2's tokenizer class would default it to <|endoftext|>."""
    tokenizer.save_pretrained(folder)
    config_file = folder / "tokenizer_config.json"
    config = json.loads(config_file.read_text())
    config["eos_token"] = None
    config_file.write_text(json.dumps(config, indent=2) + "\n")


def build_random_model(shape: Shape, folder: Path, *, device: str, seed: int = 0) -> BuiltModel:
    """Build `shape` in bf16 on `device`; save it and its tokenizer to `folder/model`, a fresh adapter beside it."""
    import peft
    import torch
    from transformers import AutoModelForCausalLM, Qwen2Config

    from agentjet.core.config import TrainConfig
    from agentjet.core.step.policy_model import to_peft

    tokenizer = _byte_tokenizer()
    config = Qwen2Config(
        **shape.qwen2_kwargs(), pad_token_id=tokenizer.pad_token_id, bos_token_id=None, eos_token_id=None
    )
    started = time.perf_counter()
    torch.manual_seed(seed)
    with torch.device(device):
        model = AutoModelForCausalLM.from_config(config, dtype=torch.bfloat16)  # type: ignore[no-untyped-call]
    model.generation_config.eos_token_id = None
    parameters = sum(p.numel() for p in model.parameters())
    if device.startswith("cuda"):
        torch.cuda.synchronize(device)
    build_s = time.perf_counter() - started
    started = time.perf_counter()
    model.save_pretrained(folder / "model")
    _save_tokenizer(tokenizer, folder / "model")
    lora = peft.get_peft_model(model, to_peft(TrainConfig().lora))  # LoRA B starts at 0: the base's outputs
    lora.save_pretrained(str(folder / "adapter"))
    save_s = time.perf_counter() - started
    return BuiltModel(folder / "model", folder / "adapter", parameters, len(tokenizer), build_s, save_s)
