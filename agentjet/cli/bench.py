"""`agentjet bench ...`: one command per benchmark; each checks its flags (the shared ones first) and hands them to
`run_one_shot`."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, cast

import typer

from agentjet.cli.credentials import TokenFileOption, TokenOption, cli_token
from agentjet.cli.one_shot import fail, run_one_shot
from agentjet.core.errors import AgentJetError

if TYPE_CHECKING:
    from agentjet.bench.gpu.shapes import ShapeName

__all__ = ["bench_app"]

bench_app = typer.Typer(help="Benchmarks; each prints JSON.", no_args_is_help=True)

# ---- the flags several commands share, and the checks and defaults of their values -----------------------
JsonOption = Annotated[bool, typer.Option("--json", help="print only the JSON result")]
PolicyModelOption = Annotated[str, typer.Option(help="policy model: smollm2-135m, tiny or an HF folder")]
GroupsOption = Annotated[int, typer.Option(min=1, help="GRPO groups (tasks) of 8 episodes in the batch")]
VllmPythonOption = Annotated[Path | None, typer.Option(help="python of the vLLM venv (--backend vllm)")]


def vllm_python_or_venv(given: Path | None) -> Path:
    """The vLLM venv's python: `--vllm-python`, else `.venv-vllm` here."""
    return given or Path(".venv-vllm/bin/python").absolute()


def checked_backends(given: list[str] | None, python: Path | None) -> tuple[tuple[str, ...], Path | None]:
    """`--backend` values checked (default transformers); vllm's python defaults to `.venv-vllm`."""
    chosen = tuple(dict.fromkeys(given or ["transformers"]))
    if unknown := sorted(set(chosen) - {"transformers", "vllm"}):
        raise fail(ValueError(f"--backend {', '.join(unknown)}: the backends are transformers, vllm"))
    return chosen, vllm_python_or_venv(python) if "vllm" in chosen else python


@bench_app.command("serve")
def bench_serve(
    as_json: JsonOption = False,
    quick: Annotated[bool, typer.Option("--quick", help="skip the smollm2 tokens/s part")] = False,
    backend: Annotated[
        list[str] | None, typer.Option(help="backend of the tokens/s part: transformers, vllm (repeatable)")
    ] = None,
    vllm_python: VllmPythonOption = None,
) -> None:
    """Server overhead (echo backend) vs a bare FastAPI route, and smollm2 tokens/s under concurrency."""
    from agentjet.bench.serving.serve import main as serve_main

    backends, vllm_python = checked_backends(backend, vllm_python)
    run_one_shot(lambda: serve_main(quick=quick, as_json=as_json, backends=backends, vllm_python=vllm_python), catch=())


@bench_app.command("chaos")
def bench_chaos(
    case: Annotated[list[str] | None, typer.Option(help="run only these cases (repeatable)")] = None,
    full: Annotated[
        bool, typer.Option("--full", help="also kill -9 a campaign worker and a vibe run (minutes)")
    ] = False,
    as_json: JsonOption = False,
) -> None:
    """Attacks and faults against real servers, each with its invariant; exit 1 if any invariant broke."""
    from agentjet.bench.chaos.runner import main as chaos_main

    code = run_one_shot(
        lambda: chaos_main(cases=case, full=full, as_json=as_json),
        catch=(AgentJetError, ValueError),
        quiet_tokenizers=True,
    )
    raise typer.Exit(code)


@bench_app.command("load")
def bench_load(
    ctx: typer.Context,
    clients: Annotated[int, typer.Option(min=1, help="clients calling continuously")] = 64,
    calls: Annotated[int, typer.Option(min=1, help="chat calls per episode (multi-turn)")] = 2,
    max_tokens: Annotated[int, typer.Option(min=1, help="max_tokens of each call")] = 32,
    seconds: Annotated[float, typer.Option(min=1.0, help="length of the load window")] = 120.0,
    model: Annotated[str, typer.Option(help="model of the server started here (ignored with --url)")] = "tiny",
    url: Annotated[str | None, typer.Option(help="measure this running server instead (needs its admin token)")] = None,
    token: TokenOption = None,
    token_file: TokenFileOption = None,
    as_json: JsonOption = False,
) -> None:
    """Updates per minute and chat latency (p50/p99) while N clients keep the server busy."""
    from agentjet.bench.load import Workload
    from agentjet.bench.load import main as load_main

    def measure() -> None:
        given = cli_token(ctx, token, token_file, None)
        work = Workload(clients=clients, calls=calls, max_tokens=max_tokens)
        load_main(work=work, seconds=seconds, model=model, url=url, token=given, as_json=as_json)

    run_one_shot(measure, catch=(AgentJetError, ValueError))


@bench_app.command("train-memory")
def bench_train_memory(
    model: PolicyModelOption = "smollm2-135m",
    budget: Annotated[
        list[int] | None, typer.Option(help="micro_batch_tokens to measure (repeatable; default 4096, 1024, 512)")
    ] = None,
    groups: GroupsOption = 1,
    as_json: JsonOption = False,
) -> None:
    """Peak memory and update time of one training step per micro-batch token budget (a process each)."""
    from agentjet.bench.train_memory import main as train_memory_main

    run_one_shot(
        lambda: train_memory_main(model=model, budgets=budget or [4096, 1024, 512], groups=groups, as_json=as_json),
        catch=(AgentJetError, RuntimeError),
    )


@bench_app.command("logprob-gap")
def bench_logprob_gap(
    model: Annotated[str, typer.Option(help="model: smollm2-135m, tiny or an HF folder")] = "smollm2-135m",
    backend: Annotated[str, typer.Option(help="the sampler: transformers or vllm")] = "transformers",
    device: Annotated[str, typer.Option(help="auto|cpu|cuda|cuda:N, for the sampler and the trainer")] = "auto",
    dtype: Annotated[
        list[str] | None, typer.Option(help="sampler dtype: auto, float32, bfloat16 (repeatable; default both)")
    ] = None,
    prompts: Annotated[int, typer.Option(min=1, help="chat prompts sampled (one completion each)")] = 16,
    max_tokens: Annotated[int, typer.Option(min=1, help="max_tokens of each completion")] = 64,
    temperature: Annotated[float, typer.Option(min=0.0, help="sampling temperature")] = 1.0,
    vllm_python: VllmPythonOption = None,
    vllm_url: Annotated[str | None, typer.Option(help="a running `vllm serve` to attach to (--backend vllm)")] = None,
    as_json: JsonOption = False,
    out: Annotated[Path | None, typer.Option(help="also write the JSON result to this file")] = None,
) -> None:
    """Sampler vs trainer logprobs on the same tokens (fp32 and bf16 trainer): |gap| and the TIS weight."""
    from agentjet.bench.logprob_gap import main as gap_main

    if backend not in ("transformers", "vllm"):
        raise fail(ValueError(f"--backend {backend}: the backends are transformers, vllm"))
    overrides: dict[str, Any] = {}
    if backend == "vllm":
        overrides["vllm_url"] = vllm_url
        overrides["vllm_python"] = None if vllm_url else vllm_python_or_venv(vllm_python)
    run_one_shot(
        lambda: gap_main(
            as_json=as_json,
            out=out,
            model=model,
            backend=backend,
            device=device,
            sampler_dtypes=tuple(dict.fromkeys(dtype or ["float32", "bfloat16"])),
            prompts=prompts,
            max_tokens=max_tokens,
            temperature=temperature,
            settings_overrides=overrides,
        ),
        catch=(AgentJetError, ValueError),
    )


@bench_app.command("merging")
def bench_merging(
    model: PolicyModelOption = "smollm2-135m", groups: GroupsOption = 1, as_json: JsonOption = False
) -> None:
    """Update wall time with merge off / token / text / token + group prefix sharing, and gradient equality."""
    from agentjet.bench.merging import main as merging_main

    run_one_shot(lambda: merging_main(model=model, groups=groups, as_json=as_json))


@bench_app.command("learn-check")
def bench_learn_check(
    model: PolicyModelOption = "smollm2-135m",
    steps: Annotated[int, typer.Option(min=1, help="GRPO steps (16 episodes each)")] = 20,
    as_json: JsonOption = False,
    out: Annotated[Path, typer.Option(help="where learning_curve.png and metrics.jsonl go")] = Path("learn-check"),
    backend: Annotated[
        list[str] | None, typer.Option(help="inference backend: transformers, vllm (repeat to run both)")
    ] = None,
    vllm_python: VllmPythonOption = None,
) -> None:
    """A short GRPO run on a one-word task: does the mean train reward rise? Writes the curve as a PNG."""
    from agentjet.bench.learn_check import main as learn_main

    backends, vllm_python = checked_backends(backend, vllm_python)
    run_one_shot(
        lambda: learn_main(
            model=model, steps=steps, out=out, as_json=as_json, backends=backends, vllm_python=vllm_python
        ),
        quiet_tokenizers=True,
    )


@bench_app.command("gpu")
def bench_gpu(
    device: Annotated[str, typer.Option(help="auto|cpu|cuda|cuda:N")] = "auto",
    shape: Annotated[
        str, typer.Option(help="the random model's shape: 7b (Qwen2-7B), 135m (SmolLM2's sizes) or small (2 layers)")
    ] = "7b",
    as_json: JsonOption = False,
    out: Annotated[Path, typer.Option(help="gpu_check.json and learn-check/ go here")] = Path("gpu-check"),
    budget: Annotated[float, typer.Option(min=0, help="seconds; a part that no longer fits is skipped")] = 450.0,
    skip: Annotated[list[str] | None, typer.Option(help="a part to skip (repeatable)")] = None,
) -> None:
    """The GPU check: backend contract, rollouts + a training update on a random 7B-shaped model, a learn-check."""
    from agentjet.bench.gpu import PARTS, GpuCheckSettings
    from agentjet.bench.gpu import main as gpu_main
    from agentjet.bench.gpu.shapes import SHAPES

    if shape not in SHAPES:
        raise fail(ValueError(f"--shape {shape!r} is not one of {', '.join(SHAPES)}"))
    if unknown := sorted(set(skip or ()) - set(PARTS)):
        raise fail(ValueError(f"--skip {', '.join(unknown)}: the parts are {', '.join(PARTS)}"))
    settings = GpuCheckSettings(
        device=device,
        shape=cast("ShapeName", shape),
        out=out,
        budget_s=budget,
        skip=frozenset(skip or ()),
    )
    raise typer.Exit(run_one_shot(lambda: gpu_main(settings, as_json=as_json)))


@bench_app.command("frameworks")
def bench_frameworks(
    task: Annotated[
        str, typer.Option(help="arithmetic (six frameworks) or tool_use (openai, agentscope, autogen)")
    ] = "arithmetic",
    model: Annotated[str, typer.Option(help="policy model: tiny, smollm2-135m or an HF folder")] = "tiny",
    steps: Annotated[int, typer.Option(min=1, help="GRPO steps per framework")] = 3,
    param: Annotated[list[str] | None, typer.Option(help="task parameter key=value (repeatable)")] = None,
    as_json: JsonOption = False,
) -> None:
    """One task trained through each agent framework (openai SDK, LangChain, LangGraph, httpx, AgentScope,
    AutoGen): reward and loss dispersion, and whether every sampled token was the same."""
    from agentjet.bench.frameworks import main as frameworks_main
    from agentjet.tasks.registry import parse_params

    run_one_shot(
        lambda: frameworks_main(task=task, model=model, steps=steps, params=parse_params(param or []), as_json=as_json),
        catch=(AgentJetError, ValueError),
        quiet_tokenizers=True,
    )


@bench_app.command("sandbox")
def bench_sandbox(
    runs: Annotated[int, typer.Option(min=1, help="sequential runs per backend for the latency percentiles")] = 20,
    concurrency: Annotated[int, typer.Option(min=1, help="sandboxes started at once")] = 8,
    as_json: JsonOption = False,
) -> None:
    """Start-to-exit latency of `python3 -c pass` in docker and bwrap sandboxes (p50/p95), and N at once."""
    from agentjet.bench.sandbox import main as sandbox_main

    run_one_shot(lambda: sandbox_main(runs=runs, concurrency=concurrency, as_json=as_json), catch=())


@bench_app.command("learn")
def bench_learn(
    task: Annotated[str, typer.Argument(help="registered task family (arithmetic, countdown, werewolves, ...)")],
    model: PolicyModelOption = "smollm2-135m",
    param: Annotated[list[str] | None, typer.Option(help="task parameter key=value (repeatable)")] = None,
    minutes: Annotated[float, typer.Option(min=0.0, help="wall-clock training budget")] = 60.0,
    steps: Annotated[int | None, typer.Option(min=1, help="stop after this many steps")] = None,
    eval_items: Annotated[int, typer.Option(min=1, help="held-out eval episodes per evaluation")] = 64,
    eval_every: Annotated[int, typer.Option(min=1, help="steps between evaluations")] = 10,
    lr: Annotated[float, typer.Option(help="LoRA learning rate")] = 2e-4,
    as_json: JsonOption = False,
    out: Annotated[Path, typer.Option(help="where learning_curve.png, learn.json, metrics.jsonl go")] = Path("learn"),
) -> None:
    """Held-out accuracy (or win rate) before and after GRPO training through a real server; writes a PNG."""
    from agentjet.bench.learn import LearnSettings
    from agentjet.bench.learn import main as learn_main
    from agentjet.tasks.registry import parse_params

    def run() -> object:  # a bad --param is a one-line error, like every other refusal of the run
        settings = LearnSettings(
            task=task, params=parse_params(param or []), model=model, minutes=minutes, steps=steps,
            eval_items=eval_items, eval_every=eval_every, lr=lr,
        )  # fmt: skip
        return learn_main(settings, out, as_json=as_json)

    run_one_shot(run, quiet_tokenizers=True)


@bench_app.command("vibe-hotswap")
def bench_vibe_hotswap(
    model: Annotated[str, typer.Option(help="policy model: tiny, smollm2-135m or an HF folder")] = "tiny",
    swaps: Annotated[int, typer.Option(min=1, help="client edits hot-swapped (the median is reported)")] = 5,
    sandbox: Annotated[str, typer.Option(help="auto, docker, bwrap, or none (clients on the host)")] = "auto",
    as_json: JsonOption = False,
) -> None:
    """Vibe client hot-swap latency (edit -> first episode of the new client) vs a server cold start."""
    from agentjet.bench.vibe_hotswap import main as hotswap_main

    run_one_shot(
        lambda: hotswap_main(model=model, swaps=swaps, sandbox=sandbox, as_json=as_json), quiet_tokenizers=True
    )


@bench_app.command("campaign")
def bench_campaign(
    servers: Annotated[int, typer.Option(min=1, help="pool members (local:N)")] = 4,
    trials: Annotated[int, typer.Option(min=1, help="synthetic trials")] = 40,
    steps: Annotated[int, typer.Option(min=1, help="steps per trial (one eval report each)")] = 5,
    step_s: Annotated[float, typer.Option(min=0.0, help="seconds each synthetic step sleeps")] = 0.2,
    members: Annotated[str, typer.Option(help="local (real tiny servers) or synthetic (no process)")] = "local",
    storage: Annotated[str, typer.Option(help="study storage: sqlite, journal or an RDB URL")] = "sqlite",
    quick: Annotated[bool, typer.Option("--quick", help="8 short trials on synthetic members")] = False,
    as_json: JsonOption = False,
) -> None:
    """Campaign scheduler overhead per trial and pool utilisation, with fast synthetic trials on local:4."""
    from agentjet.bench.campaign import main as campaign_main

    if members not in ("local", "synthetic"):
        raise fail(ValueError(f"--members {members!r}: use local or synthetic"))
    run_one_shot(
        lambda: campaign_main(
            as_json=as_json, quick=quick, servers=servers, trials=trials, steps=steps, step_s=step_s,
            members=members, storage=storage,
        )
    )  # fmt: skip


@bench_app.command("chat")
def bench_chat(
    model: PolicyModelOption = "smollm2-135m",
    messages: Annotated[int, typer.Option(min=1, help="messages timed each way (p50/p90 over them)")] = 20,
    max_tokens: Annotated[int, typer.Option(min=1, help="max_tokens of each reply")] = 16,
    as_json: JsonOption = False,
    chromium: Annotated[Path, typer.Option(hidden=True, help="the browser the page runs in")] = Path(
        "/usr/bin/chromium"
    ),
) -> None:
    """Time to the first streamed token in the chat page (p50) vs the same call made directly with the openai SDK."""
    from fastapi import FastAPI

    from agentjet.bench.chat_latency import main as chat_main
    from agentjet.chat.security import Sessions
    from agentjet.chat.targets import ChatTarget
    from agentjet.chat.web import create_chat_app

    def chat_app(url: str, token: str, login: str) -> FastAPI:
        return create_chat_app([ChatTarget("policy", url, token)], Sessions(login))

    run_one_shot(
        lambda: chat_main(
            chat_app, model=model, messages=messages, max_tokens=max_tokens, as_json=as_json, chromium=chromium
        ),
        catch=(AgentJetError, RuntimeError),
        quiet_tokenizers=True,
    )
