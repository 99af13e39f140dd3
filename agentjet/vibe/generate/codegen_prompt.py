"""The prompts that ask an LLM to write (or fix) a workspace: the contract, a worked example, the spec, the failures.

The worked example is the countdown template rendered for a small plan: a real workspace that
passes its own tests and validation, so the LLM copies a shape known to work (how client.py loads
reward.py and its data beside it, what the tests check, how dataset.py is called).
"""

from __future__ import annotations

from collections.abc import Mapping

import yaml

from agentjet.vibe.generate.contract import CODE_FILES, CONTRACT
from agentjet.vibe.generate.render import render_template
from agentjet.vibe.plan.spec import TaskSpec

__all__ = ["Message", "retry_message", "system_message", "task_message"]

Message = dict[str, str]
_EXAMPLE_PLAN = {"name": "countdown", "params": {"difficulty": 1}, "dataset": {"train_items": 64, "eval_items": 16}}
_FILES_CHARS = 12_000  # of each current file shown in a repair prompt


def _blocks(files: Mapping[str, str]) -> str:
    return "\n\n".join(f"```python path={path}\n{text.rstrip()}\n```" for path, text in files.items())


def system_message() -> Message:
    example = _blocks(render_template("countdown", _EXAMPLE_PLAN))
    text = f"""You write the code of a reinforcement-learning task for AgentJet, a platform that trains an LLM \
policy with GRPO through an OpenAI-compatible endpoint. A task is a small workspace of Python files.

{CONTRACT}
Reply with every file as one fenced block whose opening fence names its path, exactly like
```python path=client.py
...
```
and nothing is run on your side: the files are written, then tested in a sandbox. Do not write the
data files: they are made by running dataset.py. Keep each file short and readable.

Here is a complete, working workspace for a different task (countdown puzzles, built on agentjet's
own countdown helpers). Follow its shape; your task will need its own prompt, data and reward:

{example}
"""
    return {"role": "system", "content": text}


def task_message(spec: TaskSpec, *, feedback: str | None = None, files: Mapping[str, str] | None = None) -> Message:
    """The plan to implement; with `feedback` (a failed validation or red team), the files to fix."""
    plan = yaml.safe_dump(spec.model_dump(mode="json"), sort_keys=False, allow_unicode=True, width=100)
    parts = [f"Write the workspace for this task plan (task.yaml):\n\n```yaml\n{plan}```"]
    if files:
        shown = {path: text[:_FILES_CHARS] for path, text in files.items()}
        parts.append(f"The workspace currently holds these files:\n\n{_blocks(shown)}")
    if feedback:
        parts.append(
            "They failed as follows. Find the cause, fix it, and reply with every file you change "
            f"(whole files, fenced as above):\n\n{feedback.strip()}"
        )
    else:
        parts.append(f"Reply with all of {', '.join(CODE_FILES)}.")
    return {"role": "user", "content": "\n\n".join(parts)}


def retry_message(problems: list[str], missing: list[str]) -> Message:
    """What was wrong with the last reply, and what to send again."""
    lines = [f"- {problem}" for problem in problems]
    if missing:
        lines.append(f"- still missing: {', '.join(missing)}")
    return {
        "role": "user",
        "content": "Your reply could not be used:\n"
        + "\n".join(lines)
        + "\nReply again with the missing or fixed files, each as a ```python path=FILE block (whole files).",
    }
