"""Generate a workspace from a task spec: a built-in family's template, or files an LLM writes.

Built-in families (countdown, arithmetic, tool_use, werewolves) are rendered from templates that
wrap the family with the spec's parameters; their dataset.py is our own code, so it runs here. A
`generated` task (or a template an LLM is asked to fix with `feedback`) is written by the LLM:
its reply's fenced blocks are parsed, checked (the required files, Python syntax) and written,
then its dataset.py runs in the sandbox (it is untrusted code) and the data comes back as text. A
reply that cannot be used costs a round with the problems in the next prompt, never a crash;
after `max_rounds` it is a VibeError. Every write is a commit of the workspace.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Protocol

from agentjet.sandbox import Limits, Sandbox
from agentjet.tasks.folder_data import load_beside
from agentjet.vibe.check.validate import log_tail
from agentjet.vibe.errors import VibeError
from agentjet.vibe.generate.codegen_prompt import Message, retry_message, system_message, task_message
from agentjet.vibe.generate.contract import CODE_FILES, DATA_FILES, DATASET, workspace_files
from agentjet.vibe.generate.fenced import parse_files, syntax_problems
from agentjet.vibe.generate.render import TEMPLATES, render_template
from agentjet.vibe.plan.spec import TaskSpec
from agentjet.vibe.workspace import Workspace

__all__ = ["ChatLLM", "GeneratedFiles", "build_dataset", "generate"]

_DATA_MARK = "VIBE-DATA "
_PROTECTED = ("task.yaml", "decisions.md", ".gitignore", "data/")  # the plan, the log, the data: never from an LLM
_WRITABLE = (".py", ".md", ".txt", ".json")


class ChatLLM(Protocol):
    """What generation needs of an LLM (`agentjet.llm.chat.ChatLLM` is one)."""

    @property
    def name(self) -> str: ...

    def complete(self, messages: Sequence[Mapping[str, Any]], *, json: bool = False) -> str: ...


@dataclass(frozen=True)
class GeneratedFiles:
    """What generate wrote: where the files came from, their paths, the last commit."""

    source: str  # "template" or "llm"
    family: str
    paths: tuple[str, ...]
    commit: str
    rounds: int = 0  # LLM replies used (0 for a template)
    notes: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def generate(
    spec: TaskSpec,
    workspace: Workspace,
    *,
    llm: ChatLLM | None,
    feedback: str | None = None,
    sandbox: Sandbox | None = None,
    max_rounds: int = 3,
) -> GeneratedFiles:
    """Write client.py, reward.py, dataset.py, tests/test_task.py and data/*.jsonl into `workspace`.

    A template needs neither LLM nor sandbox. With `feedback` and an LLM, a template workspace is
    handed to the LLM to fix; without an LLM it is rendered again (a template failing is a bug
    that no retry fixes: the caller decides). The LLM path needs `sandbox` for dataset.py."""
    if spec.family in TEMPLATES and (feedback is None or llm is None):
        return _from_template(spec, workspace, ignored_feedback=feedback is not None)
    if llm is None:
        from agentjet.llm.chat import HOW_TO_CONFIGURE

        raise VibeError(
            f"the {spec.family!r} task has no built-in template, so an LLM must write it: {HOW_TO_CONFIGURE}"
        )
    if sandbox is None:
        raise VibeError(
            "LLM-written code (dataset.py) only runs in a sandbox: pass one "
            "(`agentjet sandbox doctor` says which backend works here)"
        )
    return _from_llm(spec, workspace, llm, sandbox, feedback=feedback, max_rounds=max_rounds)


def _context(spec: TaskSpec) -> dict[str, Any]:
    return {"name": spec.name, "params": spec.params, "dataset": spec.dataset.model_dump(mode="json")}


def _from_template(spec: TaskSpec, workspace: Workspace, *, ignored_feedback: bool) -> GeneratedFiles:
    for path, text in render_template(spec.family, _context(spec)).items():
        workspace.write(path, text)
    workspace.commit(f"generate(template {spec.family}): {', '.join(CODE_FILES)}", list(CODE_FILES))
    try:
        _load(workspace.file(DATASET)).main(["--out", str(workspace.file("data"))])
    except (TypeError, ValueError) as exc:  # the plan's params do not fit the family
        raise VibeError(f"the {spec.family} template rejects the plan's params {spec.params}: {exc}") from exc
    sha = workspace.commit(_data_message(spec), list(DATA_FILES.values()))
    notes = ("feedback ignored: a template is fixed code and no LLM is configured",) if ignored_feedback else ()
    return GeneratedFiles("template", spec.family, (*CODE_FILES, *DATA_FILES.values()), sha, notes=notes)


def _load(path: Path) -> Any:
    """A rendered template module (our own code, so it may run on the host)."""
    try:
        return load_beside(path.parent, path.stem)
    except ImportError as exc:
        raise VibeError(str(exc)) from exc


def _data_message(spec: TaskSpec) -> str:
    plan = spec.dataset
    return f"generate: dataset ({plan.train_items} train, {plan.eval_items} eval items, seed {plan.seed})"


def _from_llm(
    spec: TaskSpec, workspace: Workspace, llm: ChatLLM, sandbox: Sandbox, *, feedback: str | None, max_rounds: int
) -> GeneratedFiles:
    current = {path: workspace.read(path) for path in CODE_FILES if feedback and workspace.exists(path)}
    messages: list[Message] = [system_message(), task_message(spec, feedback=feedback, files=current)]
    collected: dict[str, str] = {}
    written: set[str] = set()
    problems: list[str] = []
    for round_number in range(1, max_rounds + 1):
        reply = llm.complete(messages)
        files, problems = _usable_files(reply)
        collected.update(files)
        missing = [p for p in CODE_FILES if p not in collected and not (feedback and workspace.exists(p))]
        problems += syntax_problems(collected)
        if files and not problems and not missing:
            for path, text in files.items():
                workspace.write(path, text)
            written |= set(files)
            workspace.commit(
                f"generate(llm {llm.name}, round {round_number}): {', '.join(sorted(files))}", sorted(files)
            )
            data_problem = _write_dataset(spec, workspace, sandbox)
            if data_problem is None:
                sha = workspace.commit(_data_message(spec), list(DATA_FILES.values()))
                paths = (*sorted(written), *DATA_FILES.values())
                return GeneratedFiles("llm", spec.family, paths, sha, rounds=round_number)
            problems = [data_problem]
        messages += [{"role": "assistant", "content": reply}, retry_message(problems, missing)]
    raise VibeError(f"the LLM gave no usable workspace in {max_rounds} rounds; last problems: {'; '.join(problems)}")


def _usable_files(reply: str) -> tuple[dict[str, str], list[str]]:
    """The reply's files that may be written, and the problems that need another round.

    Blocks naming no file and files the LLM may not write are passed over, not fatal: a reply
    with every needed file is used even if it also holds a shell example."""
    parsed = parse_files(reply)
    files: dict[str, str] = {}
    for path, text in parsed.files.items():
        if path in _PROTECTED or path.startswith(_PROTECTED):
            parsed.notes.append(f"{path} was left out: the plan, the decisions and the data are not the LLM's to write")
        elif not path.endswith(_WRITABLE) or path.startswith(("/", ".")) or ".." in path.split("/"):
            parsed.problems.append(f"{path} is not a file a workspace may hold (relative .py/.md/.txt/.json paths)")
        else:
            files[path] = text
    problems = parsed.problems + (parsed.notes if parsed.problems or not files else [])
    return files, problems


def _write_dataset(spec: TaskSpec, workspace: Workspace, sandbox: Sandbox) -> str | None:
    """Run dataset.py in the sandbox and write its files here; None, or the problem in words."""
    built = build_dataset(workspace, spec, sandbox)
    if isinstance(built, str):
        return built
    for split, relpath in DATA_FILES.items():
        workspace.write(relpath, built[split])
    return None


def build_dataset(workspace: Workspace, spec: TaskSpec, sandbox: Sandbox) -> dict[str, str] | str:
    """The split files' text from running the workspace's dataset.py in the sandbox, or the failure in words."""
    plan = spec.dataset
    make = f"python3 {DATASET} --out data --train {plan.train_items} --eval {plan.eval_items} --seed {plan.seed}"
    dump = (
        "import json, pathlib; print(" + repr(_DATA_MARK) + " + json.dumps({s: pathlib.Path('data', s + '.jsonl')"
        ".read_text() for s in ('train', 'eval')}))"
    )
    limits = Limits(memory_bytes=1024**3, timeout_s=300.0, output_bytes=64 * 1024**2)
    result = sandbox.run(
        f"{make} && python3 -c {shlex.quote(dump)}", files=workspace_files(workspace.path), limits=limits
    )
    line = next((ln for ln in reversed(result.stdout.splitlines()) if ln.startswith(_DATA_MARK)), None)
    if not result.ok or line is None:
        how = f"stopped by {result.stopped_by}, exit {result.exit_code}"
        return f"`{make}` failed in the sandbox ({how}):\n{log_tail(result.stdout + chr(10) + result.stderr)}"
    try:
        data = json.loads(line[len(_DATA_MARK) :])
        return {split: str(data[split]) for split in DATA_FILES}
    except (ValueError, KeyError, TypeError) as exc:
        return f"the data files made by `{make}` could not be read back: {exc}"
