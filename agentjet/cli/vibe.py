"""`agentjet vibe TEXT`: a sentence in, a validated and watched training run (and its report) out.

Exit status: 0 the run finished, 1 it failed (the report says why), 2 nothing ran (the planner
refused the sentence, a bad flag, no such run to resume), 130 interrupted by Ctrl-C or SIGTERM (resumable).
"""

from __future__ import annotations

import logging
import math
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from agentjet.core.errors import AgentJetError
from agentjet.core.launch.interrupts import signals_stop_once

if TYPE_CHECKING:
    from agentjet.vibe.driver import RunResult
    from agentjet.vibe.progress import LiveProgress, PlainProgress
    from agentjet.vibe.state import VibeOptions

__all__ = ["vibe_command"]

_EXIT = {"done": 0, "failed": 1, "refused": 2}


class _ToProgress(logging.Handler):
    """Shows the vibe modules' INFO lines as the progress view's last log line (the graph's own are its rows)."""

    def __init__(self, progress: PlainProgress | LiveProgress) -> None:
        super().__init__(logging.INFO)
        self._progress = progress

    def emit(self, record: logging.LogRecord) -> None:
        if not record.name.startswith(("agentjet.vibe.graph", "agentjet.vibe.driver")):
            self._progress.log(record.getMessage())


def _setup_logging(progress: PlainProgress | LiveProgress) -> list[tuple[logging.Logger, logging.Handler]]:
    """Warnings of any module to stderr; the vibe modules' INFO lines to the progress view."""
    to_stderr = logging.StreamHandler(sys.stderr)
    to_stderr.setLevel(logging.WARNING)
    to_stderr.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    vibe_log = logging.getLogger("agentjet.vibe")
    vibe_log.setLevel(logging.INFO)
    installed = [(logging.getLogger(), to_stderr), (vibe_log, _ToProgress(progress))]
    for logger, handler in installed:
        logger.addHandler(handler)
    return installed


_STILL_STOPPING = (
    "still stopping: the running step is shutting down its client and servers "
    "(kill -9 forces it; --resume adopts a server left running)"
)


def _finish(result: RunResult, workdir: Path) -> None:
    colour = {"done": typer.colors.GREEN, "failed": typer.colors.RED}.get(result.status, typer.colors.YELLOW)
    if result.status == "refused":
        typer.secho(f"refused: {result.message}", fg=typer.colors.RED, err=True)
        raise typer.Exit(2)
    typer.secho(f"run {result.run_id}: {result.status}", fg=colour, bold=True)
    if result.message:
        typer.echo(result.message)
    if result.outcome:
        typer.secho(f"held-out:  {result.outcome}", bold=True)
    typer.echo(f"workspace: {result.workspace}")
    if result.report is not None:
        typer.echo(f"report:    {result.report}")
    if result.status == "running":
        typer.echo(f"resume with: agentjet vibe --resume {result.run_id} --workdir {workdir}")
    raise typer.Exit(_EXIT.get(result.status, 1))


def _dry_run(text: str | None, options: VibeOptions, *, as_json: bool) -> None:
    """Plan the sentence and print the spec (text or JSON); no workspace, run DB or state dir is made."""
    from agentjet.llm.chat import resolve_llm
    from agentjet.vibe.plan.planner import plan
    from agentjet.vibe.plan.spec import dry_run_json, spec_text

    if text is None:
        typer.secho("error: --dry-run plans a sentence: give TEXT, not --resume", fg=typer.colors.RED, err=True)
        raise typer.Exit(2)
    with _in_one_line():
        spec = plan(text, llm=resolve_llm(options.llm), dry_run=True, **options.plan_flags())
    typer.echo(dry_run_json(spec) if as_json else spec_text(spec))
    raise typer.Exit(0)


@contextmanager
def _in_one_line() -> Iterator[None]:
    """A refused sentence or a mistake the user can act on: one line on stderr and exit 2, nothing run."""
    from agentjet.vibe.errors import PlanRefused

    try:
        yield
    except PlanRefused as exc:
        typer.secho(f"refused: {exc}", fg=typer.colors.RED, err=True)
        raise typer.Exit(2) from exc
    except AgentJetError as exc:
        typer.secho(f"error: {exc}", fg=typer.colors.RED, err=True)
        raise typer.Exit(2) from exc


def _flag_mistake(text: str | None, model: str | None, budget: float | None) -> str | None:
    """What is wrong with flags Typer takes as given (a blank sentence, an empty --model, an infinite budget)."""
    if text is not None and not text.strip():
        return 'say what to train, e.g. agentjet vibe "train a 7B to play werewolves"'
    if model is not None and not model.strip():
        return "--model is empty: give a registered name (agentjet models list), a size such as 7B, or a model folder"
    if budget is not None and not math.isfinite(budget):
        return f"--budget must be a finite number of minutes, got {budget}"
    return None


def _refused_offline(text: str, options: VibeOptions) -> None:
    """Plan `text` once with the deterministic planner when no LLM is configured, so a refused sentence (or
    settings that do not fit the recipe) is one line before a run id is shown; the run plans it again."""
    from agentjet.llm.chat import resolve_llm
    from agentjet.vibe.plan.planner import plan

    if resolve_llm(options.llm) is None:
        plan(text, llm=None, **options.plan_flags())


def vibe_command(
    text: Annotated[
        str | None, typer.Argument(metavar="TEXT", help='what to train, e.g. "train a 7B to play werewolves"')
    ] = None,
    resume: Annotated[str | None, typer.Option("--resume", metavar="RUN_ID", help="continue a stopped run")] = None,
    llm: Annotated[
        str | None, typer.Option(help="planner/coder LLM: a litellm model name or an OpenAI-compatible URL")
    ] = None,
    model: Annotated[str | None, typer.Option(help="policy model to train (overrides the sentence)")] = None,
    steps: Annotated[int | None, typer.Option(min=1, help="training steps (overrides the sentence)")] = None,
    budget: Annotated[float | None, typer.Option(min=0.1, help="wall-clock budget of the run, minutes")] = None,
    eval_items: Annotated[
        int | None,
        typer.Option(min=1, max=100_000, help="held-out items the policy plays before and after training"),
    ] = None,
    eval_every: Annotated[
        int | None,
        typer.Option(
            min=1,
            max=100_000,
            help="a held-out round every N steps between the base's and the final one, for the curve (each round "
            "plays the held-out items again; default: those two rounds only)",
        ),
    ] = None,
    seed: Annotated[
        int | None,
        typer.Option(
            min=0,
            max=2**31 - 1,
            help="the seed the train and held-out items are drawn with (default 0): another seed gives other "
            "deals, puzzles or lists, so a second run is a second sample, not a replicate",
        ),
    ] = None,
    train: Annotated[
        list[str] | None,
        typer.Option(
            "--train",
            metavar="KEY=VALUE",
            help="a training setting over the family's recipe, train.yaml's field with dots, e.g. collect.tasks=1 "
            "(repeatable; a key given twice takes its last value)",
        ),
    ] = None,
    workdir: Annotated[Path, typer.Option(help="runs go to WORKDIR/RUN_ID; checkpoints to WORKDIR/.vibe")] = Path(
        "vibe-runs"
    ),
    max_repairs: Annotated[int, typer.Option(min=0, max=20, help="repair rounds per failing step")] = 3,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="print the spec the sentence gives and exit; writes nothing")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="with --dry-run: the spec as JSON")] = False,
) -> None:
    """Turn a sentence into a generated, sandbox-validated, red-teamed and watched training run, with a report.

    Without --llm (or AGENTJET_VIBE_LLM) a deterministic planner maps the sentence onto the built-in task families
    and says so; a sentence it cannot map is refused and nothing is written.
    """
    from agentjet.vibe.driver import check_request, check_resume, resume_vibe, run_vibe
    from agentjet.vibe.plan.train_overrides import parse_train_overrides
    from agentjet.vibe.progress import make_progress
    from agentjet.vibe.state import VibeOptions, new_run_id

    if (text is None) == (resume is None):
        typer.secho(
            'error: give either TEXT (a new run) or --resume RUN_ID, e.g. agentjet vibe "train a 7B to play '
            'werewolves"',
            fg=typer.colors.RED,
            err=True,
        )
        raise typer.Exit(2)
    if as_json and not dry_run:
        typer.secho("error: --json goes with --dry-run", fg=typer.colors.RED, err=True)
        raise typer.Exit(2)
    if mistake := _flag_mistake(text, model, budget):
        typer.secho(f"error: {mistake}", fg=typer.colors.RED, err=True)
        raise typer.Exit(2)
    given = (("--train", bool(train)), ("--seed", seed is not None), ("--eval-every", eval_every is not None))
    new_run_only = [flag for flag, used in given if used]
    if resume is not None and new_run_only:
        typer.secho(f"error: {' and '.join(new_run_only)} go{'es' if len(new_run_only) == 1 else ''} with a new run "
                    "(a resumed run keeps its settings)", fg=typer.colors.RED, err=True)  # fmt: skip
        raise typer.Exit(2)
    try:
        overrides = parse_train_overrides(train or [])
    except AgentJetError as exc:
        typer.secho(f"error: {exc}", fg=typer.colors.RED, err=True)
        raise typer.Exit(2) from exc
    options = VibeOptions(
        llm=llm,
        model=model,
        steps=steps,
        budget_minutes=budget,
        eval_items=eval_items,
        eval_every=eval_every,
        seed=seed,
        train=overrides,
        workdir=str(workdir),
        max_repairs=max_repairs,
    )
    if dry_run:
        _dry_run(text, options, as_json=as_json)
    with _in_one_line():  # before the run's first progress line: a mistake is one line, nothing run
        if text is not None:
            check_request(text, options)
            _refused_offline(text, options)
        else:
            check_resume(resume or "", workdir)
    run_id = resume or new_run_id(text or "")
    progress = make_progress(sys.stdout, run_id, text or "")
    handlers = _setup_logging(progress)
    try:
        with signals_stop_once(_STILL_STOPPING), progress:
            if resume is not None:
                result = resume_vibe(resume, workdir, progress=progress)
            else:
                result = run_vibe(text or "", options, run_id=run_id, progress=progress)
    except KeyboardInterrupt:
        typer.secho(f"interrupted: resume with agentjet vibe --resume {run_id} --workdir {workdir}", err=True)
        raise typer.Exit(130) from None
    except AgentJetError as exc:
        typer.secho(f"error: {exc}", fg=typer.colors.RED, err=True)
        raise typer.Exit(2) from exc
    finally:
        for logger, handler in handlers:
            logger.removeHandler(handler)
    _finish(result, workdir)
