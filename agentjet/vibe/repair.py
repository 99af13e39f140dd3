"""One round of the bounded repair loop: a failed node's error, log tail and the workspace files go to
the LLM; the files of its fenced-block answer are checked, written and committed as `repair(<node>): ...`.

The loop's bound is the attempt counter (`max_attempts`, 3 by default): past it, or with no LLM
configured, `RepairStopped` ends the run with the last error (a built-in template that fails is
an AgentJet bug, and the message says so). A reply that cannot be used (no file, a path outside
the workspace, Python that does not parse, an LLM call that failed) costs a round: `NodeFailed`,
nothing written. Nothing of the reply is executed here; the next validation runs it in the sandbox.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

import yaml

from agentjet.llm.chat import HOW_TO_CONFIGURE, ChatLLM, LLMError
from agentjet.vibe.context import NodeFailed
from agentjet.vibe.errors import VibeError
from agentjet.vibe.generate.contract import CONTRACT, workspace_files
from agentjet.vibe.generate.fenced import parse_files, syntax_problems
from agentjet.vibe.plan.spec import TaskSpec
from agentjet.vibe.workspace import Workspace

__all__ = ["DEFAULT_MAX_ATTEMPTS", "RepairResult", "RepairStopped", "repair", "repair_messages"]

DEFAULT_MAX_ATTEMPTS = 3
_LOG_CHARS = 6000  # the end of the logs shown
_FILE_CHARS = 12_000  # per code file shown
_DATA_LINES = 3  # rows shown per JSONL file
_NOT_WRITABLE = frozenset({"task.yaml", "decisions.md", "report.md", "run.json", ".gitignore"})
_SUMMARY = re.compile(r"^\W*summary\W*:\s*(?P<text>.+)$", re.IGNORECASE | re.MULTILINE)

SYSTEM = f"""You repair the files of an AgentJet vibe workspace: a generated RL task (a swarm client, its
reward, its dataset and their tests) that failed a check. Fix the cause of the error with the smallest
change that keeps the contract below; never weaken a test or a check to make it pass, and keep the
reward hard to game.

{CONTRACT}"""


class RepairStopped(VibeError):
    """No more repair: no LLM is configured, or the attempts ran out. The message carries the last error."""

    def __init__(self, message: str, *, node: str, last_error: str) -> None:
        super().__init__(message)
        self.node = node
        self.last_error = last_error


@dataclass(frozen=True)
class RepairResult:
    """What one repair round changed (JSON-able through `to_dict`)."""

    node: str
    attempt: int
    summary: str
    files: list[str]
    commit: str
    problems: list[str] = field(default_factory=list)  # parts of the reply that were not used

    def to_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in ("node", "attempt", "summary", "files", "commit", "problems")}


def _shown_files(root: Path) -> str:
    """The workspace as the LLM sees it: code in full (capped), data files by their first rows."""
    blocks = []
    for path, blob in workspace_files(root).items():
        if path in _NOT_WRITABLE or not path.endswith((".py", ".jsonl", ".txt", ".json")):
            continue
        text = blob.decode("utf-8", errors="replace")
        if path.endswith(".jsonl"):
            rows = text.splitlines()
            head = "\n".join(rows[:_DATA_LINES])
            blocks.append(f"{path} ({len(rows)} rows; the first {min(len(rows), _DATA_LINES)}):\n```json\n{head}\n```")
            continue
        cut = f"\n# ... {len(text) - _FILE_CHARS} more characters not shown" if len(text) > _FILE_CHARS else ""
        language = "python" if path.endswith(".py") else ""
        blocks.append(f"```{language} path={path}\n{text[:_FILE_CHARS].rstrip()}{cut}\n```")
    return "\n\n".join(blocks)


def repair_messages(
    node: str, error: str, logs: str, root: Path, spec: TaskSpec, attempt: int, max_attempts: int
) -> list[dict[str, str]]:
    """The repair prompt: the failure (error + log tail), the spec, the files, and the answer format."""
    spec_yaml = yaml.safe_dump(spec.model_dump(mode="json"), sort_keys=False, allow_unicode=True, width=100)
    tail = logs.strip()[-_LOG_CHARS:] or "(no log output)"
    user = f"""The `{node}` step failed. This is repair attempt {attempt} of {max_attempts}.

Error:
{error.strip()}

Log tail:
```
{tail}
```

Task spec (task.yaml, not yours to change):
```yaml
{spec_yaml.rstrip()}
```

Current files:

{_shown_files(root)}

Answer with a first line `SUMMARY: <what you changed and why, one line>`, then the complete new content
of every file you change, each in its own fenced block opened as ```python path=FILE (```json path=FILE
for data). Files you leave out stay as they are. If you change dataset.py, give the regenerated
data files too, or keep the data compatible."""
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]


def _writable(path: str) -> str | None:
    """Why the reply may not write `path` (None: it may)."""
    pure = PurePosixPath(path)
    if path in _NOT_WRITABLE:
        return f"{path} is not the repair's to change"
    if pure.suffix == ".jsonl" and pure.parts[0] != "data":
        return f"{path}: data files live under data/"
    if pure.suffix not in (".py", ".jsonl"):
        return f"{path}: only .py files and data/*.jsonl can be written"
    return None


def _stop(node: str, error: str, spec: TaskSpec, attempt: int, max_attempts: int, llm: ChatLLM | None) -> None:
    if llm is None:
        bug = (
            f" The {spec.family} template is built in and should pass its checks: this is an AgentJet bug, please"
            " report it with this workspace."
            if not spec.is_generated and node != "launch_and_watch"
            else ""
        )
        raise RepairStopped(
            f"{node} failed and no LLM is configured to repair it: {error.strip()}.{bug}"
            f" To repair automatically, {HOW_TO_CONFIGURE}.",
            node=node,
            last_error=error,
        )
    if attempt > max_attempts:
        raise RepairStopped(
            f"{node} still fails after {max_attempts} repair attempt(s); the last error: {error}",
            node=node,
            last_error=error,
        )


def repair(
    node: str,
    error: str,
    logs: str,
    workspace: Workspace,
    spec: TaskSpec,
    llm: ChatLLM | None,
    attempt: int,
    *,
    max_attempts: int = DEFAULT_MAX_ATTEMPTS,
) -> RepairResult:
    """Attempt number `attempt` (1-based) at fixing `node`'s failure; the fix is committed.

    Raises RepairStopped (no LLM, or `attempt > max_attempts`) and NodeFailed (an unusable reply)."""
    _stop(node, error, spec, attempt, max_attempts, llm)
    assert llm is not None  # _stop raised otherwise
    messages = repair_messages(node, error, logs, workspace.path, spec, attempt, max_attempts)
    try:
        reply = llm.complete(messages)
    except (VibeError, LLMError) as exc:
        raise NodeFailed(f"the repair LLM call failed: {exc}", logs=str(exc)) from exc
    parsed = parse_files(reply)
    problems = list(parsed.problems)
    files: dict[str, str] = {}
    for path, text in parsed.files.items():
        why = _writable(path)
        try:
            workspace.file(path)  # inside the workspace, out of .git
        except VibeError as exc:
            why = str(exc)
        if why:
            problems.append(why)
        else:
            files[path] = text
    broken = syntax_problems(files)
    if broken or not files:
        found = "; ".join(broken or problems) or "no file in the reply"
        raise NodeFailed(f"the repair reply for {node} is unusable: {found}", logs=reply[-_LOG_CHARS:])
    if all(workspace.exists(p) and workspace.read(p) == text for p, text in files.items()):
        raise NodeFailed(f"the repair reply for {node} changes nothing", logs=reply[-_LOG_CHARS:])
    for path, text in files.items():
        workspace.write(path, text)
    summary = _summary(reply, files)
    message = f"repair({node}): {summary}\n\nattempt {attempt} of {max_attempts}; error: {error.strip()[:500]}"
    sha = workspace.commit(message, sorted(files))
    return RepairResult(node, attempt, summary, sorted(files), sha, problems)


def _summary(reply: str, files: Mapping[str, str]) -> str:
    match = _SUMMARY.search(reply)
    text = match.group("text").strip() if match else f"rewrote {', '.join(sorted(files))}"
    return text[:100]
