"""ChatLLM: configuration from --llm / env, and real HTTP through litellm to the scripted fake LLM."""

from __future__ import annotations

import dataclasses
import socket

import pytest

from agentjet.llm.chat import ENV_API_KEY, ENV_LLM, ENV_MODEL, ChatLLM, LLMError, resolve_llm
from tests.vibe.fake_llm import FakeFailure, serve_fake_llm

USER = [{"role": "user", "content": "plan: train a 7B to play werewolves"}]


@pytest.mark.parametrize("arg", [None, "", "  ", "none", "OFF", "deterministic"])
def test_nothing_configured_means_no_llm(arg: str | None) -> None:
    assert resolve_llm(arg) is None


def test_env_var_configures_a_litellm_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_LLM, "anthropic/claude-test")
    llm = resolve_llm(None)
    assert llm == ChatLLM(model="anthropic/claude-test")
    assert llm.name == "anthropic/claude-test"


def test_flag_wins_over_env_and_none_disables(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_LLM, "anthropic/claude-test")
    llm = resolve_llm("openai/gpt-4o-mini")
    assert llm is not None and llm.model == "openai/gpt-4o-mini"
    assert resolve_llm("none") is None


def test_url_becomes_openai_provider_with_api_base(monkeypatch: pytest.MonkeyPatch) -> None:
    llm = resolve_llm("http://127.0.0.1:8000/v1/")
    assert llm is not None
    assert (llm.model, llm.api_base, llm.api_key) == ("openai/default", "http://127.0.0.1:8000/v1", "EMPTY")
    monkeypatch.setenv(ENV_MODEL, "qwen-72b")
    monkeypatch.setenv(ENV_API_KEY, "sk-test")
    llm = resolve_llm("https://llm.example/v1")
    assert llm is not None
    assert (llm.model, llm.api_key) == ("openai/qwen-72b", "sk-test")
    assert llm.name == "openai/qwen-72b @ https://llm.example/v1"
    assert "sk-test" not in llm.name


def test_spaces_in_the_value_are_refused() -> None:
    with pytest.raises(LLMError, match="has spaces"):
        resolve_llm("gpt 4")


def test_complete_over_real_http_records_the_request(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_API_KEY, "sk-fake")
    with serve_fake_llm(['{"family": "countdown"}', lambda messages: "echo: " + messages[-1]["content"]]) as fake:
        llm = resolve_llm(fake.url)
        assert llm is not None
        assert llm.complete(USER, json=True) == '{"family": "countdown"}'
        assert llm.complete([{"role": "user", "content": "hi"}]) == "echo: hi"
    first, second = fake.requests
    assert first["messages"] == USER
    assert first["model"] == "default"
    assert first["response_format"] == {"type": "json_object"}
    assert first["temperature"] == 0.0
    assert "response_format" not in second
    assert fake.headers[0]["authorization"] == "Bearer sk-fake"


@pytest.mark.parametrize(
    ("failure", "words"),
    [
        (FakeFailure(401, "bad key"), "rejected the API key.*OPENAI_API_KEY"),
        (FakeFailure(404, "no such model"), "does not know the model.*AGENTJET_VIBE_LLM_MODEL"),
        (FakeFailure(429, "slow down"), "rate-limiting"),
        (FakeFailure(500, "boom"), "failed: InternalServerError.*boom"),
    ],
)
def test_http_failures_become_vibe_errors_naming_the_fix(failure: FakeFailure, words: str) -> None:
    with serve_fake_llm([failure]) as fake:
        llm = resolve_llm(fake.url)
        assert llm is not None
        with pytest.raises(LLMError, match=words):
            dataclasses.replace(llm, retries=0).complete(USER)
    assert len(fake.requests) == 1


def test_a_transient_failure_is_retried_once() -> None:
    with serve_fake_llm([FakeFailure(503, "busy"), "ok after a retry"]) as fake:
        llm = resolve_llm(fake.url)
        assert llm is not None
        assert llm.complete(USER) == "ok after a retry"
    assert len(fake.requests) == 2


def test_empty_reply_is_a_vibe_error() -> None:
    with serve_fake_llm(["   "]) as fake:
        llm = resolve_llm(fake.url)
        assert llm is not None
        with pytest.raises(LLMError, match="empty reply"):
            llm.complete(USER)


def test_unreachable_url_says_how_to_configure() -> None:
    with socket.socket() as sock:  # a port nobody listens on once closed
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    llm = resolve_llm(f"http://127.0.0.1:{port}/v1")
    assert llm is not None
    with pytest.raises(LLMError, match=r"cannot reach .*--llm MODEL_OR_URL"):
        dataclasses.replace(llm, retries=0, timeout_s=5).complete(USER)


def test_unknown_provider_is_explained() -> None:
    llm = resolve_llm("no-such-provider-model")
    assert llm is not None
    with pytest.raises(LLMError, match="does not know which provider"):
        llm.complete(USER)
