"""`agentjet`: server, models, bench and demo commands."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from agentjet.cli.campaign import campaign_app
from agentjet.cli.credentials import TokenFileOption, TokenOption, cli_token
from agentjet.cli.logs import fail, setup_logging
from agentjet.cli.sandbox import sandbox_app
from agentjet.cli.server import server_app
from agentjet.cli.vibe import vibe_command
from agentjet.core.errors import AgentJetError

if TYPE_CHECKING:
    from agentjet.tasks.play.runner import RunSettings

app = typer.Typer(help="AgentJet: agentic RL training servers, clients and research tools.", no_args_is_help=True)
models_app = typer.Typer(help="List and prepare models (offline).", no_args_is_help=True)
bench_app = typer.Typer(help="Benchmarks; each prints JSON.", no_args_is_help=True)
client_app = typer.Typer(help="Run task families (built-in or a client file) against servers.", no_args_is_help=True)
app.add_typer(server_app, name="server")
app.add_typer(models_app, name="models")
app.add_typer(bench_app, name="bench")
app.add_typer(client_app, name="client")
app.add_typer(sandbox_app, name="sandbox")
app.add_typer(campaign_app, name="campaign")
app.command("vibe")(vibe_command)


@models_app.command("list")
def models_list() -> None:
    """Registered models, whether they are prepared, and where."""
    from agentjet.core.models import MODELS, cache_dir, is_prepared

    for spec in MODELS.values():
        state = "prepared" if is_prepared(spec.name) else "not prepared"
        typer.echo(f"{spec.name:<14} {state:<13} {cache_dir() / spec.name}  {spec.description}")
    typer.echo("(any local Hugging Face model folder also works: --model /path/to/folder)")


@models_app.command("prepare")
def models_prepare(
    name: Annotated[str, typer.Argument(help="registered model name")],
    force: Annotated[bool, typer.Option("--force", help="rebuild even if cached")] = False,
) -> None:
    """Build a registered model into the local cache (offline)."""
    from agentjet.core.models import prepare_model

    setup_logging()
    try:
        path = prepare_model(name, force=force)
    except AgentJetError as exc:
        raise fail(exc) from exc
    typer.echo(str(path))


def _backends(given: list[str] | None, vllm_python: Path | None) -> tuple[tuple[str, ...], Path | None]:
    """`--backend` values checked (default transformers); vllm's python defaults to `.venv-vllm`."""
    backends = tuple(dict.fromkeys(given or ["transformers"]))
    if unknown := sorted(set(backends) - {"transformers", "vllm"}):
        raise fail(ValueError(f"--backend {', '.join(unknown)}: the backends are transformers, vllm"))
    if "vllm" in backends and vllm_python is None:
        vllm_python = Path(".venv-vllm/bin/python").absolute()
    return backends, vllm_python


@bench_app.command("serve")
def bench_serve(
    as_json: Annotated[bool, typer.Option("--json", help="print only the JSON result")] = False,
    quick: Annotated[bool, typer.Option("--quick", help="skip the smollm2 tokens/s part")] = False,
    backend: Annotated[
        list[str] | None, typer.Option(help="backend of the tokens/s part: transformers, vllm (repeatable)")
    ] = None,
    vllm_python: Annotated[Path | None, typer.Option(help="python of the vLLM venv (--backend vllm)")] = None,
) -> None:
    """Server overhead (echo backend) vs a bare FastAPI route, and smollm2 tokens/s under concurrency."""
    from agentjet.bench.serve import main as serve_main

    setup_logging("WARNING")
    backends, vllm_python = _backends(backend, vllm_python)
    serve_main(quick=quick, as_json=as_json, backends=backends, vllm_python=vllm_python)  # prints the figures


@bench_app.command("chaos")
def bench_chaos(
    case: Annotated[list[str] | None, typer.Option(help="run only these cases (repeatable)")] = None,
    full: Annotated[
        bool, typer.Option("--full", help="also kill -9 a campaign worker and a vibe run (minutes)")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="print only the JSON result")] = False,
) -> None:
    """Attacks and faults against real servers, each with its invariant; exit 1 if any invariant broke."""
    from agentjet.bench.chaos.runner import main as chaos_main

    setup_logging("WARNING")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    try:
        code = chaos_main(cases=case, full=full, as_json=as_json)
    except (AgentJetError, ValueError) as exc:
        raise fail(exc) from exc
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
    as_json: Annotated[bool, typer.Option("--json", help="print only the JSON result")] = False,
) -> None:
    """Updates per minute and chat latency (p50/p99) while N clients keep the server busy."""
    from agentjet.bench.load import Workload
    from agentjet.bench.load import main as load_main

    setup_logging("WARNING")
    try:
        given = cli_token(ctx, token, token_file, None)
        work = Workload(clients=clients, calls=calls, max_tokens=max_tokens)
        load_main(work=work, seconds=seconds, model=model, url=url, token=given, as_json=as_json)
    except (AgentJetError, ValueError) as exc:
        raise fail(exc) from exc


@bench_app.command("train-memory")
def bench_train_memory(
    model: Annotated[str, typer.Option(help="policy model: smollm2-135m, tiny or an HF folder")] = "smollm2-135m",
    budget: Annotated[
        list[int] | None, typer.Option(help="micro_batch_tokens to measure (repeatable; default 4096, 1024, 512)")
    ] = None,
    groups: Annotated[int, typer.Option(min=1, help="GRPO groups (tasks) of 8 episodes in the batch")] = 1,
    as_json: Annotated[bool, typer.Option("--json", help="print only the JSON result")] = False,
) -> None:
    """Peak memory and update time of one training step per micro-batch token budget (a process each)."""
    from agentjet.bench.train_memory import main as train_memory_main

    setup_logging("WARNING")
    try:
        train_memory_main(model=model, budgets=budget or [4096, 1024, 512], groups=groups, as_json=as_json)
    except (AgentJetError, RuntimeError) as exc:
        raise fail(exc) from exc


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
    vllm_python: Annotated[Path | None, typer.Option(help="python of the vLLM venv (--backend vllm)")] = None,
    vllm_url: Annotated[str | None, typer.Option(help="a running `vllm serve` to attach to (--backend vllm)")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="print only the JSON result")] = False,
    out: Annotated[Path | None, typer.Option(help="also write the JSON result to this file")] = None,
) -> None:
    """Sampler vs trainer logprobs on the same tokens (fp32 and bf16 trainer): |gap| and the TIS weight."""
    from agentjet.bench.logprob_gap import main as gap_main

    setup_logging("WARNING")
    if backend not in ("transformers", "vllm"):
        raise fail(ValueError(f"--backend {backend}: the backends are transformers, vllm"))
    overrides: dict[str, Any] = {}
    if backend == "vllm":
        overrides["vllm_url"] = vllm_url
        overrides["vllm_python"] = None if vllm_url else vllm_python or Path(".venv-vllm/bin/python").absolute()
    try:
        gap_main(
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
        )
    except (AgentJetError, ValueError) as exc:
        raise fail(exc) from exc


@bench_app.command("merging")
def bench_merging(
    model: Annotated[str, typer.Option(help="policy model: smollm2-135m, tiny or an HF folder")] = "smollm2-135m",
    groups: Annotated[int, typer.Option(min=1, help="GRPO groups (tasks) of 8 episodes in the batch")] = 1,
    as_json: Annotated[bool, typer.Option("--json", help="print only the JSON result")] = False,
) -> None:
    """Update wall time with merge off / token / text / token + group prefix sharing, and gradient equality."""
    from agentjet.bench.merging import main as merging_main

    setup_logging("WARNING")
    try:
        merging_main(model=model, groups=groups, as_json=as_json)  # prints the figures itself
    except AgentJetError as exc:
        raise fail(exc) from exc


@bench_app.command("learn-check")
def bench_learn_check(
    model: Annotated[str, typer.Option(help="policy model: smollm2-135m, tiny or an HF folder")] = "smollm2-135m",
    steps: Annotated[int, typer.Option(min=1, help="GRPO steps (16 episodes each)")] = 20,
    as_json: Annotated[bool, typer.Option("--json", help="print only the JSON result")] = False,
    out: Annotated[Path, typer.Option(help="where learning_curve.png and metrics.jsonl go")] = Path("learn-check"),
    backend: Annotated[
        list[str] | None, typer.Option(help="inference backend: transformers, vllm (repeat to run both)")
    ] = None,
    vllm_python: Annotated[Path | None, typer.Option(help="python of the vLLM venv (--backend vllm)")] = None,
) -> None:
    """A short GRPO run on a one-word task: does the mean train reward rise? Writes the curve as a PNG."""
    from agentjet.bench.learn_check import main as learn_main

    setup_logging("WARNING")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    backends, vllm_python = _backends(backend, vllm_python)
    try:
        learn_main(model=model, steps=steps, out=out, as_json=as_json, backends=backends, vllm_python=vllm_python)
    except AgentJetError as exc:
        raise fail(exc) from exc


@bench_app.command("gpu")
def bench_gpu(
    device: Annotated[str, typer.Option(help="auto|cpu|cuda|cuda:N")] = "auto",
    shape: Annotated[str, typer.Option(help="the random model's shape: 7b (Qwen2-7B) or small (2 layers)")] = "7b",
    as_json: Annotated[bool, typer.Option("--json", help="print only the JSON result")] = False,
    out: Annotated[Path, typer.Option(help="gpu_check.json and learn-check/ go here")] = Path("gpu-check"),
    budget: Annotated[float, typer.Option(min=0, help="seconds; a part that no longer fits is skipped")] = 450.0,
    skip: Annotated[list[str] | None, typer.Option(help="a part to skip (repeatable)")] = None,
) -> None:
    """The GPU check: backend contract, rollouts + a training update on a random 7B-shaped model, a learn-check."""
    from agentjet.bench.gpu import PARTS, GpuCheckSettings
    from agentjet.bench.gpu import main as gpu_main

    setup_logging("WARNING")
    if shape not in ("7b", "small"):
        raise fail(ValueError(f"--shape {shape!r} is not one of 7b, small"))
    if unknown := sorted(set(skip or ()) - set(PARTS)):
        raise fail(ValueError(f"--skip {', '.join(unknown)}: the parts are {', '.join(PARTS)}"))
    settings = GpuCheckSettings(
        device=device,
        shape="7b" if shape == "7b" else "small",
        out=out,
        budget_s=budget,
        skip=frozenset(skip or ()),
    )
    try:
        code = gpu_main(settings, as_json=as_json)
    except AgentJetError as exc:
        raise fail(exc) from exc
    raise typer.Exit(code)


@bench_app.command("frameworks")
def bench_frameworks(
    model: Annotated[str, typer.Option(help="policy model: tiny, smollm2-135m or an HF folder")] = "tiny",
    steps: Annotated[int, typer.Option(min=1, help="GRPO steps per framework")] = 3,
    param: Annotated[list[str] | None, typer.Option(help="arithmetic parameter key=value (repeatable)")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="print only the JSON result")] = False,
) -> None:
    """Arithmetic trained through openai SDK / LangChain / LangGraph / httpx clients: reward and loss dispersion."""
    from agentjet.bench.frameworks import main as frameworks_main
    from agentjet.tasks.registry import parse_params

    setup_logging("WARNING")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    try:
        frameworks_main(model=model, steps=steps, params=parse_params(param or []), as_json=as_json)
    except AgentJetError as exc:
        raise fail(exc) from exc


@bench_app.command("sandbox")
def bench_sandbox(
    runs: Annotated[int, typer.Option(min=1, help="sequential runs per backend for the latency percentiles")] = 20,
    concurrency: Annotated[int, typer.Option(min=1, help="sandboxes started at once")] = 8,
    as_json: Annotated[bool, typer.Option("--json", help="print only the JSON result")] = False,
) -> None:
    """Start-to-exit latency of `python3 -c pass` in docker and bwrap sandboxes (p50/p95), and N at once."""
    from agentjet.bench.sandbox import main as sandbox_main

    setup_logging("WARNING")
    sandbox_main(runs=runs, concurrency=concurrency, as_json=as_json)  # prints the figures itself


@bench_app.command("learn")
def bench_learn(
    task: Annotated[str, typer.Argument(help="registered task family (arithmetic, countdown, werewolves, ...)")],
    model: Annotated[str, typer.Option(help="policy model: smollm2-135m, tiny or an HF folder")] = "smollm2-135m",
    param: Annotated[list[str] | None, typer.Option(help="task parameter key=value (repeatable)")] = None,
    minutes: Annotated[float, typer.Option(min=0.0, help="wall-clock training budget")] = 60.0,
    steps: Annotated[int | None, typer.Option(min=1, help="stop after this many steps")] = None,
    eval_items: Annotated[int, typer.Option(min=1, help="held-out eval episodes per evaluation")] = 64,
    eval_every: Annotated[int, typer.Option(min=1, help="steps between evaluations")] = 10,
    lr: Annotated[float, typer.Option(help="LoRA learning rate")] = 2e-4,
    as_json: Annotated[bool, typer.Option("--json", help="print only the JSON result")] = False,
    out: Annotated[Path, typer.Option(help="where learning_curve.png, learn.json, metrics.jsonl go")] = Path("learn"),
) -> None:
    """Held-out accuracy (or win rate) before and after GRPO training through a real server; writes a PNG."""
    from agentjet.bench.learn import LearnSettings
    from agentjet.bench.learn import main as learn_main
    from agentjet.tasks.registry import parse_params

    setup_logging("WARNING")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    settings = LearnSettings(
        task=task,
        params=parse_params(param or []),
        model=model,
        minutes=minutes,
        steps=steps,
        eval_items=eval_items,
        eval_every=eval_every,
        lr=lr,
    )
    try:
        learn_main(settings, out, as_json=as_json)  # prints the figures itself
    except AgentJetError as exc:
        raise fail(exc) from exc


@bench_app.command("vibe-hotswap")
def bench_vibe_hotswap(
    model: Annotated[str, typer.Option(help="policy model: tiny, smollm2-135m or an HF folder")] = "tiny",
    swaps: Annotated[int, typer.Option(min=1, help="client edits hot-swapped (the median is reported)")] = 5,
    sandbox: Annotated[str, typer.Option(help="auto, docker, bwrap, or none (clients on the host)")] = "auto",
    as_json: Annotated[bool, typer.Option("--json", help="print only the JSON result")] = False,
) -> None:
    """Vibe client hot-swap latency (edit -> first episode of the new client) vs a server cold start."""
    from agentjet.bench.vibe_hotswap import main as hotswap_main

    setup_logging("WARNING")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    try:
        hotswap_main(model=model, swaps=swaps, sandbox=sandbox, as_json=as_json)  # prints the figures itself
    except AgentJetError as exc:
        raise fail(exc) from exc


@bench_app.command("campaign")
def bench_campaign(
    servers: Annotated[int, typer.Option(min=1, help="pool members (local:N)")] = 4,
    trials: Annotated[int, typer.Option(min=1, help="synthetic trials")] = 40,
    steps: Annotated[int, typer.Option(min=1, help="steps per trial (one eval report each)")] = 5,
    step_s: Annotated[float, typer.Option(min=0.0, help="seconds each synthetic step sleeps")] = 0.2,
    members: Annotated[str, typer.Option(help="local (real tiny servers) or synthetic (no process)")] = "local",
    storage: Annotated[str, typer.Option(help="study storage: sqlite, journal or an RDB URL")] = "sqlite",
    quick: Annotated[bool, typer.Option("--quick", help="8 short trials on synthetic members")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="print only the JSON result")] = False,
) -> None:
    """Campaign scheduler overhead per trial and pool utilisation, with fast synthetic trials on local:4."""
    from agentjet.bench.campaign import main as campaign_main

    if members not in ("local", "synthetic"):
        raise fail(ValueError(f"--members {members!r}: use local or synthetic"))
    setup_logging("WARNING")
    try:
        campaign_main(
            as_json=as_json, quick=quick, servers=servers, trials=trials, steps=steps, step_s=step_s,
            members=members, storage=storage,
        )  # fmt: skip
    except AgentJetError as exc:
        raise fail(exc) from exc


@client_app.command("run")
def client_run(
    ctx: typer.Context,
    task: Annotated[str, typer.Argument(help="registered task (word, countdown, ...) or a .py client file")],
    server: Annotated[list[str], typer.Option(help="server URL, or NAME=URL for each server the task names")],
    token: TokenOption = None,
    token_file: TokenFileOption = None,
    concurrency: Annotated[int, typer.Option(min=1, help="episodes in flight at once")] = 4,
    episodes: Annotated[int, typer.Option(min=0, help="train episodes")] = 16,
    eval_every: Annotated[int | None, typer.Option(min=1, help="run the eval split every M train episodes")] = None,
    eval_episodes: Annotated[int, typer.Option(min=1, help="episodes per eval round")] = 8,
    group_size: Annotated[int | None, typer.Option(min=1, help="episodes per task (default: server's, else 8)")] = None,
    update_every: Annotated[
        int | None, typer.Option(min=1, help="agree to an update (all_clients) every U episodes and wait for it")
    ] = None,
    param: Annotated[list[str] | None, typer.Option(help="task parameter key=value (repeatable)")] = None,
    seed: Annotated[int, typer.Option(help="dataset seed")] = 0,
    as_json: Annotated[bool, typer.Option("--json", help="print the summary as JSON on stdout")] = False,
    log_level: Annotated[str, typer.Option(help="DEBUG, INFO, WARNING")] = "WARNING",
    sandbox: Annotated[
        str, typer.Option(help="none, docker or bwrap: run the client sandboxed (one --server)")
    ] = "none",
    sandbox_memory: Annotated[str, typer.Option(help="memory of the sandboxed run (e.g. 2g)")] = "2g",
    sandbox_timeout: Annotated[
        float, typer.Option(min=1, help="wall-clock seconds before the sandbox is killed")
    ] = 86400.0,
) -> None:
    """Run episodes of a task family with a progress bar and a summary; Ctrl-C aborts the open episodes."""
    from agentjet.tasks.play.client_run import client_run as run_task
    from agentjet.tasks.play.run_report import show_summary
    from agentjet.tasks.play.runner import RunSettings

    setup_logging(log_level)
    try:
        token = cli_token(ctx, token, token_file, None)
        settings = RunSettings(
            episodes=episodes,
            concurrency=concurrency,
            eval_every=eval_every,
            eval_episodes=eval_episodes,
            group_size=group_size,
            update_every=update_every,
            seed=seed,
        )
        if sandbox == "none":
            summary = run_task(task, servers=server, token=token, params=param or [], settings=settings)
        else:
            summary = _client_run_sandboxed(
                task, sandbox, server, token, param or [], settings, log_level, sandbox_memory, sandbox_timeout
            )
    except (AgentJetError, ValueError, TimeoutError) as exc:
        raise fail(exc) from exc
    raise typer.Exit(show_summary(summary, as_json=as_json))  # JSON or the table; 130 when interrupted


def _client_run_sandboxed(
    task: str,
    backend: str,
    servers: list[str],
    token: str | None,
    params: list[str],
    settings: RunSettings,
    log_level: str,
    memory: str,
    timeout_s: float,
) -> dict[str, Any]:
    """`client run --sandbox`: the inner run's summary; its stderr (logs) is shown here afterwards."""
    from agentjet.tasks.play.sandboxed_run import client_limits, explain, run_in_sandbox

    limits = client_limits(memory=memory, timeout_s=timeout_s)
    typer.secho(f"running {task} in a {backend} sandbox (Ctrl-C stops it)", err=True, fg=typer.colors.CYAN)
    try:
        run = run_in_sandbox(
            task,
            backend=backend,
            servers=servers,
            token=token,
            params=params,
            settings=settings,
            limits=limits,
            log_level=log_level,
        )
    except KeyboardInterrupt:
        typer.secho("interrupted: sandbox stopped, its open episodes aborted", err=True, fg=typer.colors.YELLOW)
        raise typer.Exit(130) from None
    if run.result.stderr.strip():
        typer.echo(run.result.stderr.rstrip(), err=True)
    if run.summary is None:
        raise explain(run)
    return run.summary


@app.command("demo")
def demo(
    model: Annotated[str, typer.Option(help="policy model")] = "smollm2-135m",
    episodes: Annotated[int, typer.Option(help="episodes to run")] = 8,
    concurrency: Annotated[int, typer.Option(help="clients running at once")] = 4,
    state_dir: Annotated[Path | None, typer.Option(help="server state dir (default: a temp dir)")] = None,
) -> None:
    """The swarm demo: a server on loopback and concurrent agent clients; prints what was captured."""
    from agentjet.cli.demo import run_demo

    setup_logging("WARNING")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    try:
        run_demo(model=model, episodes=episodes, concurrency=concurrency, state_dir=state_dir)
    except AgentJetError as exc:
        raise fail(exc) from exc


if __name__ == "__main__":
    app()
