"""Shape core results into OpenAI Chat Completions JSON: whole responses and stream chunks."""

from __future__ import annotations

import json
from typing import Any

from agentjet.core.serving import ChoiceResult

__all__ = ["chunk", "completion", "logprobs_block", "sse", "usage"]


def logprobs_block(tokenizer: Any, result: ChoiceResult) -> dict[str, Any]:
    """OpenAI `logprobs.content`: one entry per sampled token (no top alternatives are computed)."""
    record = result.record
    tokens = tokenizer.convert_ids_to_tokens(list(record.completion_ids))
    return {
        "content": [
            {"token": tok, "logprob": lp, "bytes": list(tok.encode("utf-8")), "top_logprobs": []}
            for tok, lp in zip(tokens, record.completion_logprobs, strict=True)
        ]
    }


def usage(results: list[ChoiceResult]) -> dict[str, int]:
    prompt = len(results[0].record.prompt_ids) if results else 0
    completion = sum(len(r.record.completion_ids) for r in results)
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


def _message(result: ChoiceResult) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": result.content}
    if result.tool_calls:
        message["tool_calls"] = result.tool_calls
    return message


def completion(
    completion_id: str, created: int, model: str, results: list[ChoiceResult], *, tokenizer: Any, with_logprobs: bool
) -> dict[str, Any]:
    return {
        "id": completion_id,
        "object": "chat.completion",
        "created": created,
        "model": model,
        "system_fingerprint": f"policy-v{results[0].record.policy_version}" if results else None,
        "choices": [
            {
                "index": r.index,
                "message": _message(r),
                "logprobs": logprobs_block(tokenizer, r) if with_logprobs else None,
                "finish_reason": r.finish_reason,
            }
            for r in results
        ],
        "usage": usage(results),
    }


def chunk(
    completion_id: str, created: int, model: str, choices: list[dict[str, Any]], usage_: dict[str, int] | None = None
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "id": completion_id,
        "object": "chat.completion.chunk",
        "created": created,
        "model": model,
        "choices": choices,
    }
    if usage_ is not None:
        body["usage"] = usage_
    return body


def sse(payload: dict[str, Any] | str) -> bytes:
    data = payload if isinstance(payload, str) else json.dumps(payload, ensure_ascii=False, separators=(",", ":"))
    return f"data: {data}\n\n".encode()
