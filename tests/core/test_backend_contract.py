"""The `Backend` contract, one parametrised suite that every backend passes (Optuna's storage-test habit).

Subjects: the scripted fake, transformers in float32 and bfloat16 (on `AGENTJET_TEST_DEVICE`,
default cpu), and vLLM (a `vllm serve` from `.venv-vllm` or `AGENTJET_VLLM_PYTHON`; its cases
skip with the reason when that venv is absent, and fail instead when `AGENTJET_REQUIRE_VLLM=1`,
as in CI). All model subjects serve the same weights: a random 2-layer Llama with head_dim 32
(vLLM's CPU attention has no kernel for `tiny`'s 16), and the same LoRA adapter. Each subject
runs on one event loop of its own (a thread), as a server's backend does.

Contract checked: exact sampled ids with logprobs = log-softmax of the temperature-scaled
logits of a reference forward pass of the same weights; greedy = argmax; seeded determinism
whatever the batch; stop strings; streaming order; a cancelled stream frees its slot;
`load_adapter` changes what is sampled and tags the new version; context-length errors; 16
concurrent streams. A fake has no weights: the cases that compare against a reference argmax or a
changed adapter check what it can do (determinism, version tags) instead.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Callable, Coroutine, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import pytest
import torch

from agentjet.core.backends.base import Backend
from agentjet.core.errors import ContextLengthExceeded, InvalidRequest
from agentjet.core.types import Generation, GenerationRequest, SamplingParams, TokenDelta

T = TypeVar("T")
VLLM_PYTHON = Path(os.environ.get("AGENTJET_VLLM_PYTHON") or Path(__file__).parents[2] / ".venv-vllm/bin/python")
REQUIRE_VLLM = os.environ.get("AGENTJET_REQUIRE_VLLM") == "1"
DEVICE = os.environ.get("AGENTJET_TEST_DEVICE", "cpu")
PROMPT = "The quick brown fox jumps over the lazy dog. Then the fox"

Reference = Callable[[Sequence[int], Sequence[int], float], list[float]]


class LoopThread:
    """An event loop on its own thread, alive for the subject's life (streams and HTTP clients bind to it)."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self._thread.start()

    def run(self, coro: Coroutine[Any, Any, T], timeout: float = 300.0) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(10)


@dataclass
class Subject:
    name: str
    backend: Backend
    loop: LoopThread
    reference: Reference  # (prompt ids, completion ids, temperature) -> the logprob of each completion token
    logprob_tol: float  # max |backend - reference| per token
    has_weights: bool
    adapter: Path | None = None
    adapter_reference: Reference | None = None
    notes: dict[str, Any] = field(default_factory=dict)

    def run(self, coro: Coroutine[Any, Any, T], timeout: float = 300.0) -> T:
        return self.loop.run(coro, timeout)

    def ids(self, text: str) -> tuple[int, ...]:
        return tuple(self.backend.tokenizer.encode(text, add_special_tokens=False))


# ---- shared weights ------------------------------------------------------------------------
@pytest.fixture(scope="session")
def contract_model(tiny_model: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`tiny` reshaped to head_dim 32 (2 heads, 1 KV head), seeded: the weights every model subject serves."""
    from transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM

    out = tmp_path_factory.mktemp("contract-model")
    config = LlamaConfig.from_pretrained(tiny_model)
    config.num_attention_heads, config.num_key_value_heads, config.head_dim = 2, 1, 32
    torch.manual_seed(1234)
    model = LlamaForCausalLM(config)
    with torch.no_grad():  # sharper than a fresh init: greedy and sampled continuations differ, EOS is reachable
        model.lm_head.weight.mul_(3.0)
    model.save_pretrained(out)
    AutoTokenizer.from_pretrained(tiny_model).save_pretrained(out)
    return out


def _random_adapter(contract_model: Path, out: Path, config: Any, seed: int, randomise: str) -> Path:
    """`config`'s LoRA adapter on the contract model, with the weights named `randomise` drawn from N(0, 0.5)
    (peft's init leaves B at 0, which would leave the policy unchanged)."""
    import peft
    from transformers import AutoModelForCausalLM

    base = AutoModelForCausalLM.from_pretrained(contract_model, dtype=torch.float32)
    torch.manual_seed(seed)
    model = peft.get_peft_model(base, config)
    with torch.no_grad():
        for name, param in model.named_parameters():
            if randomise in name:
                param.normal_(0, 0.5)
    model.save_pretrained(out)
    return out


@pytest.fixture(scope="session")
def contract_adapter(contract_model: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A LoRA adapter with non-zero B on every layer."""
    import peft

    config = peft.LoraConfig(r=8, lora_alpha=16, target_modules=["q_proj", "v_proj"], init_lora_weights=False)
    return _random_adapter(contract_model, tmp_path_factory.mktemp("contract-adapter"), config, 99, "lora_B")


@pytest.fixture(scope="session")
def top_layer_adapter(contract_model: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A LoRA adapter on the top layer only (`lora.layers: 1`), with random A and B."""
    from agentjet.core.config import LoraConfig
    from agentjet.core.step.policy_model import to_peft

    config = to_peft(LoraConfig(rank=8, alpha=16.0, target_modules=("q_proj", "v_proj"), layers=1), 2)
    return _random_adapter(contract_model, tmp_path_factory.mktemp("top-layer-adapter"), config, 7, "lora_")


class ForwardReference:
    """log_softmax(logits / T) of an fp32 transformers forward on CPU (plain logits when T == 0)."""

    def __init__(self, model_path: Path, adapter: Path | None = None) -> None:
        from transformers import AutoModelForCausalLM

        model: Any = AutoModelForCausalLM.from_pretrained(model_path, dtype=torch.float32).eval()
        if adapter is not None:
            import peft

            model = peft.PeftModel.from_pretrained(model, adapter).eval()
        self.model = model

    @torch.no_grad()
    def _logprobs(self, prompt: Sequence[int], completion: Sequence[int], temperature: float) -> torch.Tensor:
        ids = torch.tensor([list(prompt) + list(completion)])
        logits = self.model(input_ids=ids).logits[0, len(prompt) - 1 : -1].float()  # row k predicts completion[k]
        return torch.log_softmax(logits / (temperature or 1.0), dim=-1)

    def __call__(self, prompt: Sequence[int], completion: Sequence[int], temperature: float) -> list[float]:
        logprobs = self._logprobs(prompt, completion, temperature)
        return [float(logprobs[k, t]) for k, t in enumerate(completion)]

    def argmax(self, prompt: Sequence[int], completion: Sequence[int]) -> list[int]:
        return [int(t) for t in self._logprobs(prompt, completion, 1.0).argmax(dim=-1)]


# ---- subjects ------------------------------------------------------------------------------
def _scripted(tokenizer: Any) -> tuple[Backend, Reference]:
    from agentjet.core.backends import fakes

    text = " one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen"
    backend = fakes.ScriptedBackend(tokenizer, [text], name="scripted", token_delay_s=0.001)
    return backend, lambda _p, completion, _t: [fakes._fake_logprob(t) for t in completion]


def _vllm_python_or_skip() -> Path:
    if VLLM_PYTHON.is_file():
        return VLLM_PYTHON
    reason = f"vLLM venv absent ({VLLM_PYTHON}; `make vllm-venv` creates it)"
    if REQUIRE_VLLM:
        pytest.fail(f"AGENTJET_REQUIRE_VLLM=1 but {reason}")
    pytest.skip(reason)


SUBJECTS = ["scripted", "transformers-float32", "transformers-bfloat16", "vllm-float32"]


@pytest.fixture(scope="module", params=SUBJECTS)
def subject(
    request: pytest.FixtureRequest,
    contract_model: Path,
    contract_adapter: Path,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Subject]:
    from agentjet.core.backends.fakes import load_tokenizer
    from agentjet.core.placement import Placement

    kind: str = request.param
    loop = LoopThread()
    reference: Reference = ForwardReference(contract_model)
    adapter_reference: Reference | None = None
    if kind == "scripted":
        backend, reference = _scripted(load_tokenizer(contract_model))
        tol, has_weights = 1e-9, False
    elif kind.startswith("transformers"):
        from agentjet.core.backends.transformers_backend import TransformersBackend

        dtype = torch.bfloat16 if kind.endswith("bfloat16") else torch.float32
        backend = TransformersBackend(contract_model, name="contract", max_batch_size=8, device=DEVICE, dtype=dtype)
        tol, has_weights = (1e-3 if dtype == torch.float32 else 0.35), True
    else:
        from agentjet.core.backends.vllm.backend import VllmBackend
        from agentjet.core.backends.vllm.process import VllmProcess

        python = _vllm_python_or_skip()
        placement = Placement("cpu", "float32")
        log_path = tmp_path_factory.mktemp("vllm") / "vllm.log"
        process = VllmProcess(
            python, contract_model, served_name="contract", placement=placement, log_path=log_path,
            max_lora_rank=8, extra_args=("--max-model-len", "1024", "--max-num-seqs", "8"),
        )  # fmt: skip
        backend = VllmBackend(contract_model, name="contract", placement=placement, process=process)
        tol, has_weights = 2e-3, True
    if has_weights:
        adapter_reference = ForwardReference(contract_model, contract_adapter)
    try:
        loop.run(backend.start(), timeout=900)
    except BaseException:
        loop.stop()
        raise
    yield Subject(
        kind, backend, loop, reference, tol, has_weights,
        adapter=contract_adapter if has_weights else None, adapter_reference=adapter_reference,
    )  # fmt: skip
    loop.run(backend.close(), timeout=120)
    loop.stop()


def _request(subject: Subject, rid: str = "r", text: str = PROMPT, **params: Any) -> GenerationRequest:
    return GenerationRequest(rid, subject.ids(text), SamplingParams(**params))


async def _deltas(backend: Backend, request: GenerationRequest) -> list[TokenDelta]:
    """Open the stream inside the subject's loop (backends bind a stream to the running loop)."""
    return [delta async for delta in backend.stream(request)]


def _joined(deltas: Sequence[TokenDelta]) -> tuple[tuple[int, ...], tuple[float, ...], str]:
    ids = tuple(t for d in deltas for t in d.token_ids)
    return ids, tuple(lp for d in deltas for lp in d.logprobs), "".join(d.text for d in deltas)


def _assert_close(subject: Subject, got: Sequence[float], want: Sequence[float]) -> None:
    assert len(got) == len(want)
    worst = max((abs(a - b) for a, b in zip(got, want, strict=True)), default=0.0)
    assert worst <= subject.logprob_tol, f"{subject.name}: max |Δ logprob| {worst:.2e} > {subject.logprob_tol:.0e}"


# ---- the contract --------------------------------------------------------------------------
def test_it_is_a_backend_with_a_context_and_a_chat_tokenizer(subject: Subject) -> None:
    assert isinstance(subject.backend, Backend)
    assert subject.backend.max_context > 0
    assert subject.backend.tokenizer.chat_template
    assert subject.backend.policy_version == 0


@pytest.mark.parametrize("temperature", [1.0, 0.6, 1.5])
def test_sampled_ids_carry_the_logprobs_of_a_reference_forward_at_that_temperature(
    subject: Subject, temperature: float
) -> None:
    request = _request(subject, max_tokens=12, temperature=temperature, seed=11)
    generation: Generation = subject.run(subject.backend.generate(request))
    assert generation.completion_ids and len(generation.completion_ids) == len(generation.logprobs)
    want = subject.reference(request.prompt_ids, generation.completion_ids, temperature)
    _assert_close(subject, generation.logprobs, want)
    decoded = subject.backend.tokenizer.decode(list(generation.completion_ids), skip_special_tokens=True)
    assert generation.text == decoded


def test_greedy_takes_the_reference_argmax_and_its_plain_logprob(subject: Subject) -> None:
    """Greedy is deterministic with the reference's logprobs; with weights, each token is the reference's argmax."""
    request = _request(subject, max_tokens=10, temperature=0.0)
    generation = subject.run(subject.backend.generate(request))
    _assert_close(subject, generation.logprobs, subject.reference(request.prompt_ids, generation.completion_ids, 0.0))
    again = subject.run(subject.backend.generate(request))
    assert again.completion_ids == generation.completion_ids
    if isinstance(subject.reference, ForwardReference):  # the fake's tokens are scripted: no argmax to take
        modes = subject.reference.argmax(request.prompt_ids, generation.completion_ids)
        assert list(generation.completion_ids) == modes[: len(generation.completion_ids)]


def test_a_seed_gives_the_same_tokens_alone_and_in_a_busy_batch(subject: Subject) -> None:
    request = _request(subject, "solo", max_tokens=10, temperature=1.0, seed=2024)
    alone = subject.run(subject.backend.generate(request))

    async def busy() -> list[Generation]:
        others = [_request(subject, f"o{i}", text=PROMPT[: 10 + 3 * i], max_tokens=14, seed=i) for i in range(7)]
        return await asyncio.gather(*(subject.backend.generate(r) for r in [*others[:3], request, *others[3:]]))

    batched = subject.run(busy())[3]
    assert batched.completion_ids == alone.completion_ids
    other_seed = subject.run(subject.backend.generate(_request(subject, max_tokens=10, temperature=1.0, seed=7)))
    if subject.has_weights:
        assert other_seed.completion_ids != alone.completion_ids  # the seed, not luck, fixed the tokens


def test_a_stop_string_ends_the_text_before_it_and_keeps_the_token_that_completed_it(subject: Subject) -> None:
    free = subject.run(subject.backend.generate(_request(subject, max_tokens=12, temperature=1.0, seed=5)))
    decode = subject.backend.tokenizer.decode
    cut = next(k for k in range(2, len(free.completion_ids)) if decode(list(free.completion_ids[:k])).strip())
    before = decode(list(free.completion_ids[: cut - 1]), skip_special_tokens=True)
    through = decode(list(free.completion_ids[:cut]), skip_special_tokens=True)
    stop = through[len(before) :].strip()[:3] or through.strip()[-3:]
    assert stop and stop not in before, "pick a stop string that first appears in token `cut`"
    stopped = subject.run(
        subject.backend.generate(_request(subject, max_tokens=12, temperature=1.0, seed=5, stop=(stop,)))
    )
    assert stopped.finish_reason == "stop"
    assert stop not in stopped.text and free.text.startswith(stopped.text)
    assert stopped.completion_ids == free.completion_ids[: len(stopped.completion_ids)]
    assert len(stopped.completion_ids) == cut


def test_a_stream_yields_its_tokens_in_order_and_finishes_once(subject: Subject) -> None:
    request = _request(subject, max_tokens=9, temperature=1.0, seed=3)
    deltas = subject.run(_deltas(subject.backend, request))
    ids, logprobs, text = _joined(deltas)
    whole = subject.run(subject.backend.generate(request))
    assert (ids, logprobs, text) == (whole.completion_ids, whole.logprobs, whole.text)
    assert len(deltas) >= 2, "tokens must arrive as they are sampled, not all at the end"
    assert [d.finish_reason is not None for d in deltas] == [False] * (len(deltas) - 1) + [True]
    assert deltas[-1].finish_reason in ("length", "stop")


def test_max_tokens_bounds_the_completion_and_says_length(subject: Subject) -> None:
    generation = subject.run(subject.backend.generate(_request(subject, max_tokens=3, temperature=1.0, seed=8)))
    assert len(generation.completion_ids) <= 3
    if len(generation.completion_ids) == 3 and generation.finish_reason != "stop":
        assert generation.finish_reason == "length"


def test_a_cancelled_stream_frees_its_slot(subject: Subject) -> None:
    async def cancel_many() -> Generation:
        for i in range(12):  # more than any subject's batch: a leaked slot would block the last request
            stream = subject.backend.stream(_request(subject, f"c{i}", max_tokens=200, temperature=1.0, seed=i))
            first = await anext(stream)  # type: ignore[arg-type]
            assert first.token_ids
            await stream.aclose()  # type: ignore[attr-defined]
        return await asyncio.wait_for(
            subject.backend.generate(_request(subject, "after", max_tokens=4, temperature=1.0, seed=1)), 120
        )

    after = subject.run(cancel_many())
    assert 1 <= len(after.completion_ids) <= 4


def test_sixteen_concurrent_streams_each_get_their_own_complete_answer(subject: Subject) -> None:
    async def many() -> list[list[TokenDelta]]:
        requests = [_request(subject, f"s{i}", max_tokens=6, temperature=1.0, seed=100 + i) for i in range(16)]
        return await asyncio.gather(*(_deltas(subject.backend, r) for r in requests))

    results = subject.run(many())
    assert len(results) == 16
    for deltas in results:
        assert deltas[-1].finish_reason is not None
        assert 1 <= len(_joined(deltas)[0]) <= 6
    if subject.has_weights:
        assert len({_joined(d)[0] for d in results}) > 1  # different seeds, different samples


def test_a_prompt_past_the_context_is_a_context_length_error(subject: Subject) -> None:
    too_long = GenerationRequest("long", (5,) * subject.backend.max_context, SamplingParams(max_tokens=4))
    with pytest.raises(ContextLengthExceeded):
        subject.run(_deltas(subject.backend, too_long))
    with pytest.raises(InvalidRequest):
        subject.run(_deltas(subject.backend, GenerationRequest("empty", (), SamplingParams())))


def test_load_adapter_changes_what_is_sampled_and_tags_the_new_version(subject: Subject) -> None:
    """Near the end of the module: the subject serves the adapter afterwards. A fake has no weights to
    change: it must still tag what it samples with the version it was told."""
    request = _request(subject, max_tokens=10, temperature=0.0)
    if not subject.has_weights:
        subject.run(subject.backend.load_adapter(Path("unused-by-a-fake"), 1))
        tagged = subject.run(subject.backend.generate(request))
        assert subject.backend.policy_version == 1 and tagged.policy_version == 1
        assert {d.policy_version for d in subject.run(_deltas(subject.backend, request)) if d.token_ids} == {1}
        return
    assert subject.adapter is not None and subject.adapter_reference is not None
    before = subject.run(subject.backend.generate(request))
    assert {d.policy_version for d in subject.run(_deltas(subject.backend, request)) if d.token_ids} == {0}
    subject.run(subject.backend.load_adapter(subject.adapter, 1))
    after = subject.run(subject.backend.generate(request))
    assert {d.policy_version for d in subject.run(_deltas(subject.backend, request)) if d.token_ids} == {1}
    assert subject.backend.policy_version == 1 and after.policy_version == 1 and before.policy_version == 0
    assert after.completion_ids != before.completion_ids
    _assert_close(subject, after.logprobs, subject.adapter_reference(request.prompt_ids, after.completion_ids, 0.0))
    sampled = subject.run(subject.backend.generate(_request(subject, max_tokens=8, temperature=1.0, seed=4)))
    want = subject.adapter_reference(_request(subject).prompt_ids, sampled.completion_ids, 1.0)
    _assert_close(subject, sampled.logprobs, want)
    subject.run(subject.backend.load_adapter(subject.adapter, 2))  # a reload is a new version, same weights
    again = subject.run(subject.backend.generate(request))
    assert again.policy_version == 2 and again.completion_ids == after.completion_ids


def test_a_base_request_beside_the_adapter_samples_the_base_and_says_version_0(subject: Subject) -> None:
    """After the adapter test (the subject serves a trained version): `base=True` sequences sample the base
    weights, in the same batch as adapter sequences (a held-out eval of the base while training goes on)."""
    version = subject.backend.policy_version
    assert version >= 1
    plain = _request(subject, "p", max_tokens=8, temperature=1.0, seed=9)
    base = GenerationRequest("b", plain.prompt_ids, plain.params, base=True)
    if subject.name.startswith("vllm") and DEVICE == "cpu":  # its CPU LoRA ops would give the row an adapter
        with pytest.raises(InvalidRequest, match="cannot sample the base beside a trained adapter"):
            subject.run(subject.backend.generate(base))
        return

    async def together() -> list[Generation]:
        return list(await asyncio.gather(subject.backend.generate(base), subject.backend.generate(plain)))

    on_base, on_adapter = subject.run(together())
    assert (on_base.policy_version, on_adapter.policy_version) == (0, version)
    assert {d.policy_version for d in subject.run(_deltas(subject.backend, base)) if d.token_ids} == {0}
    if not subject.has_weights:
        return
    assert subject.adapter_reference is not None
    _assert_close(subject, on_base.logprobs, subject.reference(base.prompt_ids, on_base.completion_ids, 1.0))
    _assert_close(
        subject, on_adapter.logprobs, subject.adapter_reference(plain.prompt_ids, on_adapter.completion_ids, 1.0)
    )
    assert on_base.completion_ids != on_adapter.completion_ids


def test_an_adapter_on_the_top_layer_only_serves_as_its_reference(
    subject: Subject, contract_model: Path, top_layer_adapter: Path
) -> None:
    """The last case: an adapter whose lower layers have no LoRA weights at all (`lora.layers`) serves as a
    forward pass of it computes; the backend must take the missing layers for neither an error nor weights."""
    request = _request(subject, max_tokens=10, temperature=0.0)
    subject.run(subject.backend.load_adapter(top_layer_adapter, 7))
    served = subject.run(subject.backend.generate(request))
    assert served.policy_version == 7
    if not subject.has_weights:
        return
    reference = ForwardReference(contract_model, top_layer_adapter)
    _assert_close(subject, served.logprobs, reference(request.prompt_ids, served.completion_ids, 0.0))
