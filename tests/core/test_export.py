"""`agentjet export`: a trained step as a PEFT adapter, merged into its base, and as GGUF, each checked by reading
it back: the merged model's logits against the ones the server sampled with, the GGUF file with `gguf` and with
transformers' own GGUF loader."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import openai
import pytest
import torch
from typer.testing import CliRunner

from agentjet.cli.main import app
from agentjet.core.episodes.journal import Journal
from agentjet.core.errors import ModelError
from agentjet.core.export.weights import find_step_weights
from agentjet.core.models import resolve_model
from tests.trained_tiny import tiny_after_one_step

runner = CliRunner()
TOLERANCE = 1e-4  # float32 logprobs: merged weights vs base + LoRA as the server computes them


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Any]]:
    """A `tiny` state dir after one GRPO step, and the greedy calls the step-1 policy answered (journal)."""
    root = tmp_path_factory.mktemp("export")
    # float32, so that the served logprobs are the exact reference TOLERANCE needs (auto is bf16 on some CPUs)
    with tiny_after_one_step(root, dtype="float32") as (_server, client), client.episode("probe") as episode:
        agent = openai.OpenAI(base_url=episode.base_url, api_key=episode.api_key, max_retries=0)
        for text in ("hello there", "what is 2 + 3?"):  # greedy calls of the step-1 policy, captured token for token
            agent.chat.completions.create(
                model="tiny", messages=[{"role": "user", "content": text}], max_tokens=12, temperature=0
            )
        episode.abort()
    journal = Journal(root / "state" / "journal.sqlite")
    try:
        calls = [c for _, r in journal.read_from(0) if r.task_id == "probe" for c in r.calls]
    finally:
        journal.close()
    assert len(calls) == 2 and all(c.policy_version == 1 for c in calls)
    return root / "state", calls


def _completion_logprobs(model: Any, call: Any) -> torch.Tensor:
    ids = torch.tensor([list(call.prompt_ids) + list(call.completion_ids)])
    with torch.no_grad():
        logits = model(ids).logits[0, len(call.prompt_ids) - 1 : -1].float()
    chosen = torch.tensor(call.completion_ids)[:, None]
    return torch.log_softmax(logits, dim=-1).gather(1, chosen)[:, 0]


def _max_gap(model: Any, calls: list[Any]) -> float:
    return max((_completion_logprobs(model, c) - torch.tensor(c.completion_logprobs)).abs().max().item() for c in calls)


def test_the_merged_model_gives_the_served_policys_logprobs(trained: tuple[Path, list[Any]], tmp_path: Path) -> None:
    from transformers import AutoModelForCausalLM

    state, calls = trained
    result = runner.invoke(app, ["export", str(state), "--step", "1", "--merged", "--out", str(tmp_path / "merged")])
    assert result.exit_code == 0, result.output
    merged_dir = tmp_path / "merged"
    assert (merged_dir / "config.json").is_file() and (merged_dir / "tokenizer.json").is_file()
    assert not (merged_dir / "adapter_config.json").exists() and list(merged_dir.glob("*.safetensors"))
    merged = AutoModelForCausalLM.from_pretrained(merged_dir, dtype=torch.float32)  # plain transformers, no peft
    base = AutoModelForCausalLM.from_pretrained(resolve_model("tiny"), dtype=torch.float32)
    assert _max_gap(merged, calls) < TOLERANCE
    assert _max_gap(base, calls) > 100 * TOLERANCE  # the step moved the policy: the check above could fail


def test_the_adapter_export_is_the_peft_folder_of_that_step(trained: tuple[Path, list[Any]], tmp_path: Path) -> None:
    import peft
    from transformers import AutoModelForCausalLM

    state, calls = trained
    result = runner.invoke(app, ["export", str(state), "--out", str(tmp_path / "adapter")])  # the newest step
    assert result.exit_code == 0, result.output
    assert json.loads((tmp_path / "adapter" / "adapter_config.json").read_text())["peft_type"] == "LORA"
    base = AutoModelForCausalLM.from_pretrained(resolve_model("tiny"), dtype=torch.float32)
    assert _max_gap(peft.PeftModel.from_pretrained(base, str(tmp_path / "adapter")), calls) < TOLERANCE


def test_the_gguf_file_reads_back_with_gguf_and_transformers(trained: tuple[Path, list[Any]], tmp_path: Path) -> None:
    import gguf
    from transformers import AutoModelForCausalLM, AutoTokenizer

    state, calls = trained
    out = tmp_path / "gguf"
    result = runner.invoke(app, ["export", str(state), "--step", "1", "--gguf", "--out", str(out)])
    assert result.exit_code == 0, result.output
    reader = gguf.GGUFReader(str(out / "model-f32.gguf"))
    fields = {name: field.contents() for name, field in reader.fields.items() if not name.startswith("GGUF.")}
    config = json.loads((out / "config.json").read_text())
    assert fields["general.architecture"] == "llama"
    assert fields["llama.block_count"] == config["num_hidden_layers"]
    assert fields["llama.attention.head_count_kv"] == config["num_key_value_heads"]
    assert len(fields["tokenizer.ggml.tokens"]) == config["vocab_size"]
    assert fields["tokenizer.ggml.eos_token_id"] == config["eos_token_id"]
    tensors = {t.name: t for t in reader.tensors}
    assert "token_embd.weight" in tensors and "blk.1.attn_q.weight" in tensors
    assert all(t.tensor_type == gguf.GGMLQuantizationType.F32 for t in tensors.values())
    # transformers' GGUF loader undoes the rotary permutation: equal logprobs mean every tensor landed right
    from_gguf = AutoModelForCausalLM.from_pretrained(out, gguf_file="model-f32.gguf", dtype=torch.float32)
    assert _max_gap(from_gguf, calls) < TOLERANCE
    tokenizer = AutoTokenizer.from_pretrained(out, gguf_file="model-f32.gguf")
    original = AutoTokenizer.from_pretrained(out)
    text = "Hello, world! 2 + 3 = 5 <|im_start|>user\n"
    assert tokenizer(text)["input_ids"] == original(text)["input_ids"]


def test_f16_gguf_halves_the_matrices_and_keeps_norms_f32(trained: tuple[Path, list[Any]], tmp_path: Path) -> None:
    import gguf

    state, _calls = trained
    out = tmp_path / "f16"
    assert runner.invoke(app, ["export", str(state), "--gguf", "--gguf-type", "f16", "--out", str(out)]).exit_code == 0
    types = {t.name: t.tensor_type for t in gguf.GGUFReader(str(out / "model-f16.gguf")).tensors}
    assert types["blk.0.attn_q.weight"] == gguf.GGMLQuantizationType.F16
    assert types["blk.0.attn_norm.weight"] == gguf.GGMLQuantizationType.F32


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--step", "7"], "has no step 7; steps there: 1"),
        (["--gguf-type", "q4"], "--gguf-type q4: one of f32, f16"),
        (["--out", "{existing}"], "exists and is not empty"),
        (["--out", "{existing}/mine.txt"], "exists and is not empty"),  # a file
        (["--out", "{existing}/mine.txt/sub"], "sub: cannot write there"),  # under a file
    ],
)
def test_export_mistakes_are_one_line_and_write_nothing(
    trained: tuple[Path, list[Any]], tmp_path: Path, args: list[str], message: str
) -> None:
    state, _calls = trained
    (tmp_path / "existing").mkdir()
    (tmp_path / "existing" / "mine.txt").write_text("keep me")
    args = [a.replace("{existing}", str(tmp_path / "existing")) for a in args]
    out = ["--out", str(tmp_path / "new")] if "--out" not in args else []
    result = runner.invoke(app, ["export", str(state), *out, *args])
    assert result.exit_code == 2 and message in result.output and "Traceback" not in result.output
    assert not (tmp_path / "new").exists() and (tmp_path / "existing" / "mine.txt").read_text() == "keep me"
    assert [p.name for p in tmp_path.iterdir()] == ["existing"]  # no staging folder left behind


def test_a_state_dir_without_steps_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ModelError, match="does not exist"):
        find_step_weights(tmp_path / "nowhere")
    (tmp_path / "state").mkdir()
    with pytest.raises(ModelError, match="has no trained step yet"):
        find_step_weights(tmp_path / "state")
