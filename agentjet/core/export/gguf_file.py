"""A merged Llama-family model folder -> one GGUF file for llama.cpp, written with the `gguf` package.

What llama.cpp's own converter does for this architecture, in the few lines our models need: the
hyperparameters as `llama.*` keys, the byte-level BPE vocabulary as `gpt2` tokens with merges,
special ids and the chat template, and the tensors under GGUF names, with the query and key
projections permuted into the interleaved rotary layout llama.cpp expects. Weights are written as
F32 (exact) or F16 (half the size); quantising further is llama.cpp's `llama-quantize`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agentjet.core.errors import ModelError

__all__ = ["GGUF_TYPES", "write_gguf"]

GGUF_TYPES = ("f32", "f16")
_ARCHITECTURES = {"LlamaForCausalLM"}


def _permute(weight: Any, heads: int) -> Any:
    """Hugging Face's rotary halves -> llama.cpp's interleaved pairs, per head (as llama.cpp's converter does)."""
    rows = weight.shape[0]
    return weight.reshape(heads, 2, rows // heads // 2, *weight.shape[1:]).swapaxes(1, 2).reshape(weight.shape)


def _vocabulary(folder: Path, vocab_size: int) -> tuple[list[str], list[int]]:
    """The token strings (byte-level BPE as stored) and their GGUF types, padded to the model's vocab size."""
    import gguf
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(folder)
    if getattr(tokenizer, "backend_tokenizer", None) is None:
        raise ModelError(f"{folder}: only fast (tokenizer.json) byte-level BPE tokenizers export to GGUF")
    special = set(tokenizer.all_special_ids)
    added = {i for i, token in tokenizer.added_tokens_decoder.items() if not token.special}
    by_id = {i: t for t, i in tokenizer.get_vocab().items()}
    tokens: list[str] = []
    types: list[int] = []
    for i in range(vocab_size):
        if i not in by_id:
            tokens.append(f"[PAD{i}]")
            types.append(int(gguf.TokenType.UNUSED))
            continue
        tokens.append(by_id[i])
        kind = gguf.TokenType.CONTROL if i in special else gguf.TokenType.USER_DEFINED if i in added else None
        types.append(int(kind if kind is not None else gguf.TokenType.NORMAL))
    return tokens, types


def write_gguf(model_dir: Path, out: Path, *, dtype: str = "f32") -> Path:
    """Write `model_dir` (a merged HF folder of a Llama-family model) as the GGUF file `out`."""
    import gguf
    import numpy as np
    import torch
    from safetensors.torch import load_file

    if dtype not in GGUF_TYPES:
        raise ModelError(f"GGUF type {dtype!r} is not one of {', '.join(GGUF_TYPES)}")
    config = json.loads((model_dir / "config.json").read_text(encoding="utf-8"))
    architectures = set(config.get("architectures") or [])
    if not architectures & _ARCHITECTURES:
        raise ModelError(f"GGUF export knows {', '.join(sorted(_ARCHITECTURES))}, not {sorted(architectures)}")
    if config.get("rope_scaling"):
        raise ModelError("GGUF export does not write rope scaling; this model has one")
    heads, kv_heads = config["num_attention_heads"], config.get("num_key_value_heads", config["num_attention_heads"])
    blocks, hidden = config["num_hidden_layers"], config["hidden_size"]
    head_dim = config.get("head_dim") or hidden // heads
    rope = config.get("rope_theta") or (config.get("rope_parameters") or {}).get("rope_theta", 10000.0)

    writer = gguf.GGUFWriter(str(out), "llama")
    writer.add_name(model_dir.name)
    writer.add_context_length(config["max_position_embeddings"])
    writer.add_embedding_length(hidden)
    writer.add_block_count(blocks)
    writer.add_feed_forward_length(config["intermediate_size"])
    writer.add_head_count(heads)
    writer.add_head_count_kv(kv_heads)
    writer.add_rope_dimension_count(head_dim)
    writer.add_rope_freq_base(float(rope))
    writer.add_layer_norm_rms_eps(config["rms_norm_eps"])
    writer.add_vocab_size(config["vocab_size"])
    writer.add_file_type(gguf.LlamaFileType.ALL_F32 if dtype == "f32" else gguf.LlamaFileType.MOSTLY_F16)
    tokens, types = _vocabulary(model_dir, config["vocab_size"])
    writer.add_tokenizer_model("gpt2")
    writer.add_tokenizer_pre("default")
    writer.add_token_list(tokens)
    writer.add_token_types(types)
    gguf.SpecialVocab(model_dir, load_merges=True, n_vocab=config["vocab_size"]).add_to_gguf(writer, quiet=True)

    names = gguf.get_tensor_name_map(gguf.MODEL_ARCH.LLAMA, blocks)
    state: dict[str, torch.Tensor] = {}
    for shard in sorted(model_dir.glob("*.safetensors")):
        state.update(load_file(shard))
    if not state:
        raise ModelError(f"{model_dir} has no *.safetensors weights")
    for hf_name, tensor in state.items():
        if hf_name == "lm_head.weight" and config.get("tie_word_embeddings"):
            continue  # llama.cpp reads the output projection from token_embd when output.weight is absent
        name = names.get_name(hf_name, try_suffixes=(".weight", ".bias"))
        if name is None:
            raise ModelError(f"no GGUF name for tensor {hf_name!r}")
        data = tensor.to(torch.float32).numpy()
        if hf_name.endswith("q_proj.weight"):
            data = _permute(data, heads)
        elif hf_name.endswith("k_proj.weight"):
            data = _permute(data, kv_heads)
        keep_f32 = dtype == "f32" or data.ndim == 1  # norms stay F32, as llama.cpp's converter keeps them
        writer.add_tensor(name, data if keep_f32 else data.astype(np.float16))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return out
