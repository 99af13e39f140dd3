"""One chat call to an LLM through litellm, configured by `--llm` or `AGENTJET_VIBE_LLM`.

Any litellm model name (`openai/gpt-4o-mini`, `anthropic/claude-...`, keys from the provider's
usual env vars) or an OpenAI-compatible base URL (`http://host:port/v1`, sent as litellm's
`openai/<AGENTJET_VIBE_LLM_MODEL or "default">` with that `api_base`; a swarm server works too).
litellm is imported on the first call only (it takes seconds) and always offline: the cost map
is the bundled one and nothing is fetched at import.
"""

from __future__ import annotations

import json as _json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from agentjet.core import AgentJetError

__all__ = ["ENV_API_KEY", "ENV_LLM", "ENV_MODEL", "HOW_TO_CONFIGURE", "ChatLLM", "LLMError", "ToolCall", "resolve_llm"]

ENV_LLM = "AGENTJET_VIBE_LLM"  # a litellm model name or an OpenAI-compatible URL
ENV_MODEL = "AGENTJET_VIBE_LLM_MODEL"  # the model name sent to a URL endpoint
ENV_API_KEY = "AGENTJET_VIBE_LLM_API_KEY"  # a key for the endpoint (providers also read their own vars)
_OFF = {"", "none", "off", "deterministic"}
HOW_TO_CONFIGURE = (
    f"configure an LLM with --llm MODEL_OR_URL or the {ENV_LLM} env var: a litellm model name such as "
    f"openai/gpt-4o-mini (with OPENAI_API_KEY set) or an OpenAI-compatible URL such as http://127.0.0.1:8000/v1 "
    f"(model name from {ENV_MODEL}, key from {ENV_API_KEY})"
)

Message = Mapping[str, Any]


class LLMError(AgentJetError):
    """The LLM could not be configured or reached, or sent an unusable reply; the message names the fix."""


@dataclass(frozen=True)
class ToolCall:
    """One function call the LLM asked for (OpenAI `tool_calls`), its arguments parsed."""

    call_id: str
    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True)
class ChatLLM:
    """A configured LLM. `complete` is thread-safe (each call is its own HTTP request)."""

    model: str  # the litellm model name, e.g. "openai/default"
    api_base: str | None = None
    api_key: str | None = None
    timeout_s: float = 300.0
    retries: int = 1  # litellm retries of transient failures (rate limits, 5xx)
    temperature: float = 0.0  # plans and code should be as repeatable as the provider allows

    @property
    def name(self) -> str:
        """How the spec and the report name this LLM (never the key)."""
        return f"{self.model} @ {self.api_base}" if self.api_base else self.model

    def complete(self, messages: Sequence[Message], *, json: bool = False) -> str:
        """The assistant's reply text; `json=True` asks for a JSON object. Failures are LLMErrors."""
        kwargs = self._kwargs(messages)
        if json:
            kwargs["response_format"] = {"type": "json_object"}
        return _reply_text(self._call(kwargs), self)

    def complete_with_tools(
        self, messages: Sequence[Message], tools: Sequence[Mapping[str, Any]]
    ) -> tuple[str | None, list[ToolCall]]:
        """One turn of a tool-calling agent: (reply text or None, the tool calls asked for)."""
        kwargs = self._kwargs(messages)
        kwargs["tools"] = [dict(t) for t in tools]
        response = self._call(kwargs)
        try:
            message = response.choices[0].message
        except (AttributeError, IndexError, TypeError) as exc:
            raise LLMError(f"the LLM {self.name} sent a reply without a message: {response!r:.300}") from exc
        calls = []
        for call in getattr(message, "tool_calls", None) or []:
            try:
                arguments = _json.loads(call.function.arguments or "{}")
            except ValueError as exc:
                raise LLMError(
                    f"the LLM {self.name} called {call.function.name} with arguments that are not JSON"
                ) from exc
            calls.append(
                ToolCall(str(call.id), str(call.function.name), arguments if isinstance(arguments, dict) else {})
            )
        text = message.content if isinstance(message.content, str) and message.content.strip() else None
        if text is None and not calls:
            raise LLMError(f"the LLM {self.name} sent an empty reply; try again or pick another model with --llm")
        return text, calls

    def _call(self, kwargs: dict[str, Any]) -> Any:
        try:
            return _litellm().completion(**kwargs)
        except Exception as exc:  # litellm maps every provider's failure onto its own classes
            raise LLMError(_explain(exc, self)) from exc

    def _kwargs(self, messages: Sequence[Message]) -> dict[str, Any]:
        kwargs: dict[str, Any] = {
            "model": self.model,
            "messages": [dict(m) for m in messages],
            "temperature": self.temperature,
            "timeout": self.timeout_s,
            "num_retries": self.retries,
            "max_retries": 0,  # the OpenAI SDK's own retries would stack on litellm's
            "drop_params": True,  # a provider without JSON mode still answers
        }
        if self.api_base:
            kwargs["api_base"] = self.api_base
        if self.api_key:
            kwargs["api_key"] = self.api_key
        return kwargs


def resolve_llm(arg: str | None = None) -> ChatLLM | None:
    """`--llm` (else `AGENTJET_VIBE_LLM`) -> a ChatLLM; None when nothing (or "none") is configured."""
    value = (arg if arg is not None else os.environ.get(ENV_LLM, "")).strip()
    if value.lower() in _OFF:
        return None
    if any(c.isspace() for c in value):
        raise LLMError(f"--llm {value!r} has spaces: give a litellm model name or a URL; {HOW_TO_CONFIGURE}")
    api_key = os.environ.get(ENV_API_KEY) or None
    if value.startswith(("http://", "https://")):
        model = os.environ.get(ENV_MODEL, "").strip() or "default"
        return ChatLLM(model=f"openai/{model}", api_base=value.rstrip("/"), api_key=api_key or "EMPTY")
    return ChatLLM(model=value, api_key=api_key)


_LITELLM: Any = None


def _litellm() -> Any:
    """Import litellm once, offline (bundled cost map, no telemetry, no banner on stdout)."""
    global _LITELLM
    if _LITELLM is None:
        os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
        os.environ["LITELLM_OFFLINE_MODE"] = "true"
        import litellm

        litellm.suppress_debug_info = True
        litellm.telemetry = False
        _LITELLM = litellm
    return _LITELLM


def _reply_text(response: Any, llm: ChatLLM) -> str:
    try:
        text = response.choices[0].message.content
    except (AttributeError, IndexError, TypeError) as exc:
        raise LLMError(f"the LLM {llm.name} sent a reply without a message: {response!r:.300}") from exc
    if not isinstance(text, str) or not text.strip():
        raise LLMError(f"the LLM {llm.name} sent an empty reply; try again or pick another model with --llm")
    return text


def _explain(exc: Exception, llm: ChatLLM) -> str:
    """A litellm exception -> one sentence of what happened and what to do."""
    kind = type(exc).__name__
    detail = str(exc).strip().splitlines()[0][:300] if str(exc).strip() else kind
    where = f"the LLM {llm.name}"
    if kind == "AuthenticationError":
        return f"{where} rejected the API key ({detail}); set the provider's key (e.g. OPENAI_API_KEY) or {ENV_API_KEY}"
    if kind == "APIConnectionError" or "connect" in detail.lower():
        return f"cannot reach {where} ({detail}); is the server running and the URL right? {HOW_TO_CONFIGURE}"
    if kind == "NotFoundError":
        return f"{where} does not know the model ({detail}); check the name (URL endpoints take {ENV_MODEL})"
    if kind == "Timeout":
        return f"{where} did not answer within {llm.timeout_s:.0f}s ({detail})"
    if kind == "RateLimitError":
        return f"{where} is rate-limiting us ({detail}); wait and resume the run"
    if kind == "BadRequestError" and "provider" in detail.lower():
        return f"litellm does not know which provider serves {llm.model!r} ({detail}); {HOW_TO_CONFIGURE}"
    return f"{where} failed: {kind}: {detail}"
