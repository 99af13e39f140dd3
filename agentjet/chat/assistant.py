"""The research assistant, offline mode: plain commands and common phrasings -> the CLI's own tools.

With no LLM configured this deterministic reader is the assistant, and it says so. It knows: train
(any sentence vibe reads: shows the spec `agentjet vibe --dry-run` prints, then asks before it
starts the run and streams its progress), how the vibe run is doing, stop it; campaign status,
stop, resume and report; open a report; compare two vibe runs; list runs; help. Every action that
changes something is a `confirm` event first and runs only once the same session approves it;
the tools are the CLI's commands (`tools.py`), so the run's git repo records what they did.
"""

from __future__ import annotations

import json
import re
import secrets
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentjet.chat.tools import Jobs, run_command

__all__ = ["Assistant", "Intent", "read_intent"]

Event = dict[str, Any]
OFFLINE = "offline mode (no LLM configured): I read plain commands and common phrasings."
HELP = (
    "I can: plan and start a vibe run ('train a small model to solve countdown'), say how it is going "
    "('how is the run doing?'), stop it; show a campaign's trials ('how is the lr campaign doing?'), stop, "
    "resume or report it ('stop the lr campaign', 'campaign report lr'); open a report ('open report <run>'); "
    "compare two vibe runs ('compare <run> and <run>'); list runs ('list runs')."
)
_TRAIN = re.compile(r"\b(train|teach|make|improve|fine-?tune|vibe|get\s+\w+\s+better)\b", re.I)
_NAME = r"([\w.@:-]+)"
_RUN_LINE = re.compile(r"^\[vibe\s+[\d.]+s\] run (\S+)$")  # the first progress line of `agentjet vibe`


@dataclass(frozen=True)
class Intent:
    tool: str  # help, vibe_plan, vibe_status, vibe_stop, campaign_status|stop|resume|report, show_report, ...
    args: dict[str, str] = field(default_factory=dict)


def read_intent(message: str) -> Intent | None:
    """The tool a message asks for, or None when the offline reader cannot tell."""
    text = " ".join(message.split())
    low = text.lower()
    if re.fullmatch(r"(help|\?|what can you do\??|commands)", low):
        return Intent("help")
    if "campaign" in low:
        name = _campaign_name(low)
        for verb, tool in (("stop", "campaign_stop"), ("resume", "campaign_resume"), ("report", "campaign_report")):
            if re.search(rf"\b{verb}\b", low):
                return Intent(tool, {"name": name})
        if re.search(r"\b(how|status|doing|progress|going|trials|show)\b", low):
            return Intent("campaign_status", {"name": name})
    if m := re.search(rf"\bcompare\s+(?:runs?\s+)?{_NAME}\s+(?:and|with|vs\.?|to)\s+{_NAME}", text, re.I):
        return Intent("compare_runs", {"a": m.group(1), "b": m.group(2)})
    if m := re.search(rf"\b(?:open|show|read)\b.*?\breport\b(?:\s+(?:of|for))?(?:\s+{_NAME})?", text, re.I):
        return Intent("show_report", {"name": m.group(1) or ""})
    if re.search(r"\b(list|show)\b.*\bruns\b", low) or low in {"runs", "list"}:
        return Intent("list_runs")
    if re.search(r"\bstop\b.*\b(vibe|run|training)\b", low):
        return Intent("vibe_stop")
    if re.search(r"\b(how|status|progress|going)\b.*\b(vibe|run|training)\b", low):
        return Intent("vibe_status")
    if _TRAIN.search(low):
        return Intent("vibe_plan", {"sentence": text})
    return None


_NOT_NAMES = {
    "the", "my", "this", "a", "of", "for", "is", "are", "how", "stop", "resume", "report", "status", "show",
    "doing", "going", "trials", "progress", "please", "now", "write", "campaigns", "me", "all",
}  # fmt: skip


def _campaign_name(low: str) -> str:
    """`the lr campaign`, `campaign status lr-x-rank` -> the name to look for ("" = the newest)."""
    words: list[str] = re.findall(r"[\w.@:-]+", low)
    at = next(i for i, w in enumerate(words) if w.startswith("campaign"))
    if at > 0 and words[at - 1] not in _NOT_NAMES:
        return words[at - 1]
    return next((w for w in words[at + 1 :] if w not in _NOT_NAMES), "")


@dataclass
class _Pending:
    session: str
    question: str
    args: tuple[str, ...]


class Assistant:
    """The offline assistant of one chat: reads messages, proposes actions, runs approved ones."""

    def __init__(self, cwd: Path, jobs: Jobs, *, vibe_args: tuple[str, ...] = ()) -> None:
        self.cwd, self.jobs, self.vibe_args = cwd, jobs, vibe_args
        self._pending: dict[str, _Pending] = {}

    offline = True

    async def answer(self, session: str, message: str) -> AsyncIterator[Event]:
        intent = read_intent(message)
        if intent is None:
            yield _say(f"I did not understand that. {OFFLINE} {HELP}")
            return
        async for event in self.answer_intent(session, intent):
            yield event

    async def answer_intent(self, session: str, intent: Intent) -> AsyncIterator[Event]:
        """Run one tool: its say/block events, and a `confirm` event for anything that changes something."""
        if intent.tool == "help":
            yield _say(f"{OFFLINE} {HELP}")
        elif intent.tool == "vibe_plan":
            async for event in self._plan(session, intent.args["sentence"]):
                yield event
        elif intent.tool in {"vibe_status", "vibe_stop"}:
            async for event in self._vibe_job(session, stop=intent.tool == "vibe_stop"):
                yield event
        elif intent.tool.startswith("campaign_"):
            async for event in self._campaign(session, intent.tool.removeprefix("campaign_"), intent.args["name"]):
                yield event
        elif intent.tool == "show_report":
            for event in self._report(intent.args["name"]):
                yield event
        elif intent.tool == "compare_runs":
            yield self._compare(intent.args["a"], intent.args["b"])
        elif intent.tool == "list_runs":
            yield self._list()

    async def confirm(self, session: str, action_id: str, approve: bool) -> AsyncIterator[Event]:
        pending = self._pending.get(action_id)
        if pending is None or pending.session != session:
            yield _say("There is no such question waiting for an answer.")
            return
        del self._pending[action_id]
        if not approve:
            yield _say("Not done: nothing was started or changed.")
            return
        if pending.args[:1] == ("stop-job",):
            job = self.jobs.running[pending.args[1]]
            job.stop()
            yield _say(f"Stopping {job.title} (as Ctrl-C: it stays resumable).")
            async for line in job.follow():
                yield {"type": "line", "job": job.job_id, "text": line}
            yield _say(f"{job.job_id} ended with exit code {job.exit_code()}.")
            return
        if pending.args[0] == "vibe" or pending.args[:2] == ("campaign", "resume"):  # long: a job to follow
            job = self.jobs.start(pending.args)
            yield _say(f"Started {job.title} ({job.job_id}); its progress follows.")
            run_id = None
            async for line in job.follow():
                run_id = run_id or (m.group(1) if (m := _RUN_LINE.search(line)) else None)
                yield {"type": "line", "job": job.job_id, "text": line}
            yield _say(f"{job.job_id} ended with exit code {job.exit_code()}.")
            for event in self._outcome(run_id):
                yield event
            return
        code, output = await run_command(pending.args, cwd=self.cwd)
        yield {"type": "block", "text": output.strip() or f"exit code {code}"}

    def _ask(self, session: str, question: str, args: tuple[str, ...]) -> Event:
        action_id = secrets.token_urlsafe(16)
        self._pending[action_id] = _Pending(session, question, args)
        return {"type": "confirm", "action_id": action_id, "question": question}

    async def _plan(self, session: str, sentence: str) -> AsyncIterator[Event]:
        yield _say("This is the run vibe would start for that sentence:")
        code, output = await run_command(["vibe", sentence, "--dry-run", *self.vibe_args], cwd=self.cwd)
        yield {"type": "block", "text": output.strip()}
        if code != 0:
            yield _say("vibe cannot run that sentence as it stands; say it another way.")
            return
        args = ("vibe", sentence, *self.vibe_args)
        yield self._ask(session, f"Start this run now (agentjet vibe {json.dumps(sentence)})?", args)

    async def _vibe_job(self, session: str, *, stop: bool) -> AsyncIterator[Event]:
        job = self.jobs.latest("vibe")
        if job is None:
            yield _say("No vibe run was started from this chat; its runs on disk: say 'list runs'.")
            return
        state = "running" if job.exit_code() is None else f"ended (exit code {job.exit_code()})"
        yield _say(f"{job.title}: {state}. Its latest output:")
        yield {"type": "block", "text": job.tail()}
        if stop and job.exit_code() is None:
            yield self._ask(session, f"Stop {job.job_id} ({job.title})?", ("stop-job", job.job_id))

    async def _campaign(self, session: str, verb: str, name: str) -> AsyncIterator[Event]:
        repo = self._campaign_repo(name)
        if repo is None:
            where = self.cwd / "campaigns" / "runs"
            yield _say(f"No campaign {'named ' + repr(name) + ' ' if name else ''}under {where}.")
            return
        if verb == "status":
            code, output = await run_command(["campaign", "status", "--repo", str(repo), "--once"], cwd=self.cwd)
            yield {"type": "block", "text": output.strip()}
            for figure in sorted((repo / "figures").glob("*.png")):  # drawn by `campaign report`
                yield self._figure(figure)
            return
        yield self._ask(
            session, f"{verb.capitalize()} the campaign in {repo}?", ("campaign", verb, "--repo", str(repo))
        )

    def _campaign_repo(self, name: str) -> Path | None:
        found = sorted(
            (p for p in (self.cwd / "campaigns" / "runs").glob("*") if (p / "plan.md").is_file()),
            key=lambda p: p.stat().st_mtime,
        )
        found = [p for p in found if name in p.name] if name else found
        return found[-1] if found else None

    def _runs(self) -> list[Path]:
        return sorted(p for p in (self.cwd / "vibe-runs").glob("*") if (p / "task.yaml").is_file())

    def _run(self, name: str) -> Path | None:
        matches = [p for p in self._runs() if name and name in p.name]
        return matches[-1] if matches else None

    def _report(self, name: str) -> Iterator[Event]:
        runs = self._runs()
        run = self._run(name) if name else (runs[-1] if runs else None)
        report = run / "report.md" if run is not None else None
        if report is None or not report.is_file():
            yield _say(f"No report for {name or 'the newest run'} yet (runs: say 'list runs').")
            return
        yield {"type": "block", "text": report.read_text(errors="replace")[:20_000]}
        if (report.parent / "curves.png").is_file():
            yield self._figure(report.parent / "curves.png")

    def _outcome(self, run_id: str | None) -> Iterator[Event]:
        """A finished vibe run's one-line outcome (before -> after, interval, verdict) and its curve."""
        run = self.cwd / "vibe-runs" / run_id if run_id else None
        if run is None or not (run / "run.json").is_file():
            return
        line = json.loads((run / "run.json").read_text()).get("outcome_line")
        if line:
            yield _say(str(line))
        if (run / "curves.png").is_file():
            yield self._figure(run / "curves.png")

    def _figure(self, path: Path) -> Event:
        return {"type": "figure", "path": str(path.relative_to(self.cwd)), "caption": path.name}

    def figure(self, relative: str) -> Path | None:
        """The PNG a `figure` event named, only if it is one: a campaign's figures/*.png or a run's curves.png
        under this assistant's folder (never another path of the machine)."""
        path = (self.cwd / relative).resolve()
        if not path.is_file() or path.suffix != ".png" or not path.is_relative_to(self.cwd):
            return None
        parts = path.relative_to(self.cwd).parts
        campaign = len(parts) == 5 and parts[:2] == ("campaigns", "runs") and parts[3] == "figures"
        run = len(parts) == 3 and parts[0] == "vibe-runs" and parts[2] == "curves.png"
        return path if campaign or run else None

    def _compare(self, a: str, b: str) -> Event:
        rows = []
        for name in (a, b):
            run = self._run(name)
            if run is None or not (run / "run.json").is_file():
                return _say(f"No finished vibe run matches {name!r} (runs: say 'list runs').")
            rows.append((run.name, json.loads((run / "run.json").read_text())))
        lines = [f"{'run':<40} {'before':>10} {'after':>10} {'change (95% CI)':>24}  verdict"]
        for name, data in rows:
            outcome = data.get("outcome") or {}
            lines.append(
                f"{name:<40} {_rate(outcome.get('before')):>10} {_rate(outcome.get('after')):>10} "
                f"{_points(outcome.get('change'), outcome.get('ci95')):>24}  {outcome.get('verdict', '-')}"
            )
        return {"type": "block", "text": "\n".join(lines)}

    def _list(self) -> Event:
        runs = [p.name for p in self._runs()]
        campaigns = sorted(p.name for p in (self.cwd / "campaigns" / "runs").glob("*") if (p / "plan.md").is_file())
        return {
            "type": "block",
            "text": "vibe runs: " + (", ".join(runs) or "none") + "\ncampaigns: " + (", ".join(campaigns) or "none"),
        }


def _say(text: str) -> Event:
    return {"type": "say", "text": text}


def _rate(value: Any) -> str:
    """`{"successes": 24, "episodes": 64, "rate": 0.375}` -> `24/64`."""
    if isinstance(value, dict) and "successes" in value:
        return f"{value['successes']}/{value['episodes']}"
    return "-"


def _points(change: Any, ci95: Any) -> str:
    if not isinstance(change, int | float):
        return "-"
    interval = f" ({100 * ci95[0]:+.1f}..{100 * ci95[1]:+.1f})" if isinstance(ci95, list) and len(ci95) == 2 else ""
    return f"{100 * change:+.1f}{interval}"
