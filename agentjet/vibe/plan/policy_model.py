"""Which policy model a vibe run trains: what the sentence asked for, if it can run here, else the embedded one.

A model of 1B or more trains only on a CUDA GPU; any model other than the embedded
`smollm2-135m` must already be on disk (the AgentJet model cache or the Hugging Face hub
cache: nothing is downloaded). A `--model` that is neither a registered name nor a model folder is
refused, unless it is a bare size ("7B"), which is read as if the sentence had said it. Whenever the
request cannot be honoured the run trains `smollm2-135m` and the note says so in plain words.
`--model` always wins.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from agentjet.core import check_model

__all__ = [
    "EMBEDDED", "ModelChoice", "asks_for_small", "choose_model", "default_roots", "devices_note", "has_cuda",
    "model_name_said", "size_in_billions", "size_said", "sizes_said",
]  # fmt: skip

EMBEDDED = "smollm2-135m"
_GPU_FLOOR_B = 1.0  # at or above this many billion parameters, CPU training is not useful
_SIZE_TOKEN = re.compile(r"(?<![\d.])(\d+(?:\.\d+)?)\s*([bm])(?![a-z])")
_BARE_SIZE = re.compile(r"\d+(?:\.\d+)?\s*[bm]", re.IGNORECASE)
_EMBEDDED_HINTS = {"smollm", "smollm2"}
_EMBEDDED_B = 0.135
_GPU_NAMES = r"(?:gpus?|h100s?|h200s?|h800s?|a100s?|a800s?|a10g?s?|l4s?|l40s?|v100s?|t4s?|[34]090s?)"
_DEVICES = re.compile(  # "on 8 H100s", "2 gpus", "multi-gpu", "on the gpu": where the sentence wants it trained
    rf"\b(?P<count>\d+|two|four|eight|several|multiple|many)\s*(?:x\s*)?(?:nvidia\s+)?{_GPU_NAMES}\b|"
    rf"\bmulti[- ]?gpus?\b|\b(?:on|with|using|use)\s+(?:a|one|the|my|our|its|1)\s+(?:nvidia\s+)?{_GPU_NAMES}\b"
)
_CPU_THREADS = re.compile(  # "on 4 cpu threads", "using 8 cores": no vibe setting, the cores the process is given
    r"\b(?:on|with|using|use|across)\s+(\d+|one|two|four|eight|sixteen)\s+(?:cpu\s+)?(?:threads|cores|cpus)\b"
)
_HOSTED = {"gpt3.5", "gpt4", "gpt4o", "gpt4.1", "gpt5", "chatgpt", "claude", "gemini"}  # no weights to train


@dataclass(frozen=True)
class ModelChoice:
    model: str  # a registered name or a model folder path (what `agentjet server start --model` takes)
    note: str  # why, in plain words


def has_cuda() -> bool:
    """True when torch sees a CUDA GPU (imports torch: call once per plan)."""
    import torch

    return bool(torch.cuda.is_available())


def size_in_billions(text: str) -> float | None:
    """The first parameter count in `text` ("7B", "qwen2.5-0.5b-instruct", "135M") in billions."""
    match = _SIZE_TOKEN.search(text.lower())
    if match is None:
        return None
    value = float(match.group(1))
    return value if match.group(2) == "b" else value / 1000.0


def default_roots() -> list[Path]:
    """Where local models are looked for: the AgentJet model cache, then the Hugging Face hub cache."""
    agentjet = Path(os.environ.get("AGENTJET_CACHE_DIR") or Path.home() / ".cache" / "agentjet") / "models"
    hf_home = Path(os.environ.get("HF_HOME") or Path.home() / ".cache" / "huggingface")
    hub = Path(os.environ.get("HF_HUB_CACHE") or hf_home / "hub")
    return [agentjet, hub]


def choose_model(
    requested: str | None,
    *,
    override: str | None = None,
    gpu: bool,
    roots: Sequence[Path] | None = None,
) -> ModelChoice:
    """The model to train for a request like "7B", "qwen 0.5B", "qwen", "a small model" or None."""
    asked = f" (the sentence asked for {requested})" if requested else ""
    if override and override.strip().lower() in _EMBEDDED_HINTS:  # "--model smollm": the embedded one's short name
        return ModelChoice(EMBEDDED, f"--model {override} given: training the embedded {EMBEDDED}{asked}")
    if override and _BARE_SIZE.fullmatch(override.strip()) and not Path(override).exists():
        chosen = choose_model(override.strip().upper(), gpu=gpu, roots=roots)  # "--model 7B": a size, as if said
        note = chosen.note.removesuffix(_PASS_MODEL)  # it was passed: no advice to pass it
        return ModelChoice(chosen.model, f"--model {override} is a size, not a model name{asked}: {note}")
    if override:
        check_model(override)  # a mistyped --model fails here, in one line, not at the server's start
        return ModelChoice(override, f"--model {override} given: training it{asked}")
    if requested is None:
        return ModelChoice(EMBEDDED, f"no model named: training the embedded {EMBEDDED}")
    size_b = size_in_billions(requested)
    name = _name_hint(requested)
    if name and any(_squashed(name).startswith(hosted) for hosted in _HOSTED):
        return _fallback(f"{requested} is a hosted model whose weights are not available to train")
    embedded = name in _EMBEDDED_HINTS and (size_b is None or _same_size(size_b, _EMBEDDED_B))
    if embedded or requested == "a small model" or (size_b is not None and size_b <= 0.2):
        return ModelChoice(EMBEDDED, f"{requested} asked for: training the embedded {EMBEDDED}")
    if size_b is not None and size_b >= _GPU_FLOOR_B and not gpu:
        return _fallback(f"no CUDA GPU here, and a {requested} model does not train on a CPU in useful time")
    found = _find_local(list(roots) if roots is not None else default_roots(), size_b, name)
    if found is None:
        where = ", ".join(str(r) for r in (roots if roots is not None else default_roots()))
        return _fallback(f"no local copy of a {requested} model was found (looked in {where}; nothing is downloaded)")
    found_b = size_in_billions(found.name) or size_in_billions(str(found)) or _config_billions(found)
    if found_b is not None and found_b >= _GPU_FLOOR_B and not gpu:
        return _fallback(f"the local {requested} model {found} has {found_b:.3g}B parameters and there is no CUDA GPU")
    device = "on the GPU" if gpu else "on the CPU"
    return ModelChoice(str(found), f"found a local {requested} model at {found}: training it {device}")


def _fallback(reason: str) -> ModelChoice:
    return ModelChoice(EMBEDDED, f"{reason}, so this run trains the embedded {EMBEDDED} instead{_PASS_MODEL}")


_PASS_MODEL = " (pass --model to choose another)"


def _name_hint(requested: str) -> str | None:
    """The name and version of a request ("llama 3.1" of "llama 3.1 8B", "phi-3 mini"), without its size."""
    words = [w for w in requested.lower().split() if size_in_billions(w) is None and w not in {"a", "small", "model"}]
    return " ".join(words) if words else None


def _find_local(roots: Sequence[Path], size_b: float | None, name: str | None) -> Path | None:
    """The first (sorted, instruct models first) local model folder matching the size and the name."""
    matches: list[tuple[bool, str, Path]] = []
    named = _names(name) if name else None
    for label, folder in _local_models(roots):
        low = label.lower()
        if named and not named.search(low):  # "llama-3.2" finds "Llama-3.2-1B", "llama3" too; not "llama-3-8b"
            continue
        if size_b is not None and not _same_size(size_in_billions(low), size_b):
            continue
        matches.append(("instruct" not in low, low, folder))
    return min(matches)[2] if matches else None


def _names(name: str) -> re.Pattern[str]:
    """A folder name that holds `name` word for word, each separator optional, and no more digits of a version after
    it: "llama 3.1" finds "Meta-Llama-3.1-8B" but not "Meta-Llama-3-8B"; "gemma 2" finds "gemma-2-2b-it", not
    "gemma-2b-it" (Gemma 1's 2B)."""
    parts = [re.escape(part) for part in re.findall(r"\d+(?:\.\d+)*|[a-z]+", name)]  # "llama3": "llama", "3"
    end = r"(?![\d.]|b(?![a-z]))" if name[-1:].isdigit() else ""  # a version: no more of it after
    return re.compile("[-_ ]?".join(parts) + end)


def _squashed(name: str) -> str:
    """A model name without separators, so "gpt-4o" is "gpt4o" and "llama3" matches "llama-3"; dots kept (2.5)."""
    return re.sub(r"[-_ ]", "", name)


def _config_billions(folder: Path) -> float | None:
    """About how many billion parameters a model folder's config.json describes (per layer 4 x hidden^2 of
    attention and 3 x hidden x intermediate of a gated MLP, plus the embeddings), for a folder whose name gives no
    size ("Phi-3-medium-4k-instruct"); None when it cannot say."""
    try:
        config = json.loads((folder / "config.json").read_text())
        hidden, layers = int(config["hidden_size"]), int(config["num_hidden_layers"])
        inner = int(config.get("intermediate_size") or 4 * hidden)
        vocab = int(config.get("vocab_size") or 0)
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return (layers * (4 * hidden * hidden + 3 * hidden * inner) + vocab * hidden) / 1e9


def _same_size(found: float | None, wanted: float) -> bool:
    return found is not None and abs(found - wanted) <= 0.05 * wanted


def _local_models(roots: Sequence[Path]) -> list[tuple[str, Path]]:
    """(label, folder) of every model folder with a config.json under the roots (HF hub snapshots too)."""
    models: list[tuple[str, Path]] = []
    for root in roots:
        if not root.is_dir():
            continue
        for child in sorted(root.iterdir()):
            if child.name in ("tiny", EMBEDDED):
                continue
            if (child / "config.json").is_file():
                models.append((child.name, child))
            elif child.name.startswith("models--"):
                label = child.name.removeprefix("models--").replace("--", "/")
                snapshots = sorted((child / "snapshots").glob("*/config.json"))
                if snapshots:
                    models.append((label, snapshots[-1].parent))
    return models


# What a sentence says of the model: "qwen2.5 0.5b", "a 7 billion parameter model", "a tiny model"
_SIZE = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)\s*(b|bn|billion|m|million)\b")
_MODEL_NAME = re.compile(
    r"\b(qwen|llama|mistral|gemma|phi|smollm|deepseek|olmo|gpt-?oss|gpt-?2|gpt-?3\.5|gpt-?4o|gpt-?4\.1|gpt-?4|gpt-?5|"
    r"chatgpt|claude|gemini)(?:[-_.]?\d[\w.-]*|[-_.][a-z][\w.-]*)?(?![a-z/])"  # not "phishing", "llamas", "qwen/"
    r"(?:[- ](?:mini|small|medium|large|nano)\b)?"  # "phi-3 mini"
    r"(?:\s+\d+(?:\.\d+)*(?![\d.]*\s*(?:b|bn|billion|m|million)\b))?"  # "llama 3.1 8b": 3.1
)
_OPPONENTS_BY = re.compile(r"\b(?:run|played|controlled|driven|powered|handled)\s+by\s+$")
_SMALL = re.compile(r"\b(?:small|tiny|little|smallest|toy|mini|baby)\s+(?:\w+\s+)?(?:model|llm|lm|agent|one)\b")


def model_name_said(text: str) -> str | None:
    """The model name a sentence names, with its version ("phi-3", "qwen2.5"), if any; not one said to play the
    opponents ("the wolves are run by gpt-4")."""
    names = (m for m in _MODEL_NAME.finditer(text) if not _OPPONENTS_BY.search(text[: m.start()]))
    name = next(names, None)
    return _name_as_written(name.group(0)) if name else None


def asks_for_small(text: str) -> bool:
    """Whether the sentence asks for "a small model" (or a tiny, little, toy one) without naming it."""
    return bool(_SMALL.search(text))


def _name_as_written(word: str) -> str:
    """The model's name and version as written ("phi-3", "qwen2.5", "llama-3.2"): its size and suffix cut off."""
    cut = re.search(r"[-_.]?\d+(?:\.\d+)?[bm](?![a-z])|-(?:instruct|chat|it|base|hf)\b", word)
    return (word[: cut.start()] if cut else word).rstrip("-_.")


def size_said(text: str) -> str | None:
    """The parameter count a sentence names, as "7B", "0.5B" or "135M" (None when it names none)."""
    sizes = sizes_said(text)
    return sizes[0] if sizes else None


def sizes_said(text: str) -> list[str]:
    """Every distinct parameter count a sentence names, in order ("a 3B for the wolves, a 7B for the village")."""
    sizes: list[str] = []
    for match in _SIZE.finditer(text):
        value, unit = float(match.group(1)), match.group(2)[0]
        if unit == "b" and 0.01 <= value <= 2000:
            sizes.append(f"{value:g}B")
        elif unit == "m" and 10 <= value < 1000:
            sizes.append(f"{value:g}M")
    return list(dict.fromkeys(sizes))


def devices_note(text: str, *, cuda: bool | None = None) -> str | None:
    """What becomes of the GPUs (or CPU threads) a sentence asks for ("on 8 H100s"), or None when it names none. A
    vibe server trains on one device; data-parallel ranks are the server's `--train-procs`, which vibe's servers
    read from AGENTJET_TRAIN_PROCS. `cuda` None means ask torch."""
    if threads := _CPU_THREADS.search(text):
        return (
            f"'{threads.group(0)}' ignored: a server uses every CPU core its process may run on (start `agentjet "
            "vibe` under `taskset -c` to give it fewer)"
        )
    said = _DEVICES.search(text)
    if said is None:
        return None
    if not (has_cuda() if cuda is None else cuda):
        return f"'{said.group(0)}' asked, but there is no CUDA GPU here: the run trains on the CPU"
    count = said.group("count")
    if count in (None, "1", "one"):
        return None
    return (
        f"'{said.group(0)}': each vibe server trains on one GPU; to spread its updates over N GPUs (data-parallel "
        "ranks) set AGENTJET_TRAIN_PROCS=N before `agentjet vibe` (docs/gpus.md)"
    )
