"""The vLLM backend's plumbing that needs no vLLM: start failures, argv, and how vLLM's replies map to our errors."""

from __future__ import annotations

import json
import os
import stat
import time
from pathlib import Path

import pytest

from agentjet.core.backends.vllm.backend import _event, _request_error
from agentjet.core.backends.vllm.process import VllmProcess, vllm_command
from agentjet.core.errors import BackendError, ContextLengthExceeded, InvalidRequest
from agentjet.core.placement import Placement

CPU = Placement("cpu", "float32")


def test_the_vllm_argv_serves_on_loopback_with_runtime_lora_and_processed_logprobs() -> None:
    argv = vllm_command(
        Path("/venv/bin/python"), Path("/m"), served_name="m", port=9, placement=CPU, max_lora_rank=64,
        extra_args=("--max-model-len", "512"),
    )  # fmt: skip
    text = " ".join(argv)
    assert argv[:3] == ["/venv/bin/python", "-m", "vllm.entrypoints.openai.api_server"]
    assert "--host 127.0.0.1" in text and "--port 9" in text and "--dtype float32" in text
    assert "--enable-lora" in text and "--max-lora-rank 64" in text
    assert "--logprobs-mode processed_logprobs" in text and "--enforce-eager" in text
    assert argv[-2:] == ["--max-model-len", "512"]  # the user's arguments come last: they win
    gpu = vllm_command(Path("p"), Path("m"), served_name="m", port=9, placement=Placement("cuda:1", "bfloat16"),
                       max_lora_rank=16)  # fmt: skip
    assert "--enforce-eager" not in gpu and "--gpu-memory-utilization" in gpu and "bfloat16" in gpu


def test_a_vllm_that_dies_at_start_is_a_backend_error_with_its_log(tmp_path: Path) -> None:
    fake = tmp_path / "python"
    fake.write_text("#!/bin/sh\necho 'ValueError: no such model' >&2\nexit 3\n")
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    process = VllmProcess(fake, tmp_path, served_name="m", placement=CPU, log_path=tmp_path / "vllm.log")
    process.launch()
    with pytest.raises(BackendError, match="exited with 3 at start.*no such model"):
        process.wait_healthy()
    process.stop()


def test_a_missing_vllm_python_is_named(tmp_path: Path) -> None:
    with pytest.raises(BackendError, match="does not exist"):
        VllmProcess(tmp_path / "nope", tmp_path, served_name="m", placement=CPU, log_path=tmp_path / "l")


def test_stop_ends_the_whole_process_group(tmp_path: Path) -> None:
    fake = tmp_path / "python"
    fake.write_text(f"#!/bin/sh\nsleep 300 &\necho $! > {tmp_path}/child\nwait\n")
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    process = VllmProcess(fake, tmp_path, served_name="m", placement=CPU, log_path=tmp_path / "vllm.log")
    process.launch()
    for _ in range(100):
        if (tmp_path / "child").exists() and (tmp_path / "child").read_text().strip():
            break
        time.sleep(0.05)
    child = int((tmp_path / "child").read_text())
    process.stop(timeout_s=5)
    with pytest.raises(ProcessLookupError):
        for _ in range(50):
            os.kill(child, 0)  # raises once the grandchild is gone
            time.sleep(0.1)


@pytest.mark.parametrize(
    ("status", "message", "kind"),
    [
        (400, "This model's maximum context length is 2048 tokens", ContextLengthExceeded),
        (400, "temperature must be non-negative", InvalidRequest),
        (404, "The model `x` does not exist.", InvalidRequest),
        (500, "EngineCore encountered an issue", BackendError),
    ],
)
def test_vllm_refusals_map_to_our_errors(status: int, message: str, kind: type[Exception]) -> None:
    error = _request_error(status, json.dumps({"error": {"message": message, "code": status}}))
    assert type(error) is kind and message in str(error)


def test_stream_events_are_read_and_an_error_event_raises() -> None:
    assert _event("") is None and _event("data: [DONE]") is None and _event(": keep-alive") is None
    chunk = _event('data: {"choices": [{"token_ids": [5], "logprobs": {"token_logprobs": [-0.5]}}]}')
    assert chunk is not None and chunk["choices"][0]["token_ids"] == [5]
    with pytest.raises(BackendError, match="engine died"):
        _event('data: {"error": {"message": "engine died"}}')
