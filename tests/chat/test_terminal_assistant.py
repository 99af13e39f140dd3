"""The terminal's Assistant tab, headless (Textual's pilot) over the offline assistant and the real CLI."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from rich.text import Text
from textual.pilot import Pilot
from textual.widgets import Button, Input, TabbedContent
from typer.testing import CliRunner

from agentjet.chat.assistant import Assistant
from agentjet.chat.targets import ChatTarget
from agentjet.chat.terminal import ChatTerminal
from agentjet.chat.terminal_assistant import AssistantPane, ChatAssistant
from agentjet.chat.tools import Jobs
from agentjet.cli.main import app as cli
from tests.chat.test_terminal import SIZE, shown, until

TINY = ("--model", "tiny", "--steps", "1", "--eval-items", "2")
REPORT = "# Report\n\naccuracy went [bold]x[/] up <script>alert(1)</script>\n"


@pytest.fixture
def offline(tmp_path: Path) -> Iterator[Callable[..., Assistant]]:
    """`offline(*vibe_args)` -> the offline assistant over tmp_path; its jobs stopped and reaped after."""
    made: list[Assistant] = []

    def make(*vibe_args: str) -> Assistant:
        made.append(Assistant(tmp_path, Jobs(tmp_path / "jobs", tmp_path), vibe_args=vibe_args))
        return made[-1]

    yield make
    for assistant in made:
        assistant.jobs.stop_all()
        for job in assistant.jobs.running.values():
            job.process.wait(timeout=120)


async def ask(pilot: Pilot[None], message: str) -> None:
    box = pilot.app.query_one("#assistant-message", Input)
    box.focus()
    box.value = message
    await pilot.press("enter")


def pane(app: ChatTerminal) -> AssistantPane:
    return app.query_one(AssistantPane)


async def test_help_markup_and_a_declined_run(
    tmp_path: Path, policies: Callable[..., list[ChatTarget]], offline: Callable[..., Assistant]
) -> None:
    run = tmp_path / "vibe-runs" / "r1"
    run.mkdir(parents=True)
    (run / "task.yaml").write_text("family: countdown\n")
    (run / "report.md").write_text(REPORT)
    app = ChatTerminal(policies(delay_s=0.0, base="hi"), offline())
    async with app.run_test(size=SIZE) as pilot:
        app.query_one(TabbedContent).active = "assistant"
        assert "Assistant (offline)" in str(app.query_one(TabbedContent).get_tab("assistant").label)
        chat = pane(app)
        await ask(pilot, "help")
        await until(pilot, lambda: "offline mode" in chat.transcript())
        assert chat.transcript().startswith("you: help\n")

        await ask(pilot, "open report r1")
        await until(pilot, lambda: "accuracy went" in chat.transcript())
        assert "accuracy went [bold]x[/] up <script>alert(1)</script>" in shown(chat.rendered)

        await ask(pilot, "train a small model to solve countdown")
        confirm = app.query_one("#assistant-confirm")
        await until(pilot, lambda: bool(confirm.display), timeout_s=120)
        assert "family         countdown" in chat.transcript()
        assert "Start this run now" in chat.transcript()
        assert str(app.query_one("#assistant-yes", Button).label) == "Yes, do it"
        await pilot.click("#assistant-no")
        await until(pilot, lambda: "nothing was started" in chat.transcript())
        assert not confirm.display and chat.waiting is None
        assert not (tmp_path / "jobs").exists()


async def test_a_run_started_on_yes_streams_its_progress_and_stops(
    policies: Callable[..., list[ChatTarget]], offline: Callable[..., Assistant]
) -> None:
    assistant = offline(*TINY)
    app = ChatTerminal(policies(delay_s=0.0, base="hi"), assistant)
    async with app.run_test(size=SIZE) as pilot:
        app.query_one(TabbedContent).active = "assistant"
        chat = pane(app)
        await ask(pilot, "make the model say the word banana")
        await until(pilot, lambda: chat.waiting is not None, timeout_s=120)
        await pilot.press("y")  # the Yes button has the focus: the key answers
        await until(pilot, lambda: "Started " in chat.transcript(), timeout_s=60)

        def progress() -> bool:
            return any(line.startswith("job-") and "validate" in line for line in chat.transcript().splitlines())

        await until(pilot, progress, timeout_s=120)
        await ask(pilot, "stop the run")
        await until(pilot, lambda: chat.waiting is not None, timeout_s=60)
        app.query_one("#assistant-yes", Button).press()
        await until(pilot, lambda: "ended with exit code" in chat.transcript(), timeout_s=120)
        assert "Stopping " in chat.transcript()


async def test_a_stream_that_outlives_the_log_writes_nothing_and_raises_nothing(
    policies: Callable[..., list[ChatTarget]], offline: Callable[..., Assistant]
) -> None:
    """A job's progress still streaming while the app closes: its log is gone before its worker is cancelled
    (the run_test teardown once failed on `NoMatches('#assistant-log')`)."""
    app = ChatTerminal(policies(delay_s=0.0, base="hi"), offline(*TINY))
    async with app.run_test(size=SIZE) as pilot:
        chat = pane(app)
        await chat.query_one("#assistant-log").remove()  # the order a closing app tears the pane down in
        chat.append(Text("a late progress line"))
        await pilot.pause()
        assert chat.transcript().endswith("a late progress line")  # kept; nothing left to scroll


async def test_without_an_assistant_the_tab_says_none_is_configured(
    policies: Callable[..., list[ChatTarget]],
) -> None:
    app = ChatTerminal(policies(delay_s=0.0, base="hi"))
    async with app.run_test(size=SIZE) as pilot:
        app.query_one(TabbedContent).active = "assistant"
        await pilot.pause()
        assert "No assistant is configured" in pane(app).transcript()
        assert app.query_one("#assistant-message", Input).disabled
        await pilot.press("y")  # no question waits: nothing happens
        assert pane(app).waiting is None


def test_the_cli_hands_the_terminal_an_offline_assistant_and_makes_no_login_token(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    started: list[tuple[list[ChatTarget], ChatAssistant | None]] = []

    def run_terminal(targets: list[ChatTarget], assistant: ChatAssistant | None = None) -> None:
        started.append((list(targets), assistant))

    monkeypatch.setattr("agentjet.chat.terminal.run_terminal", run_terminal)
    monkeypatch.delenv("AGENTJET_VIBE_LLM", raising=False)
    login = tmp_path / "state" / "login"
    args = ["chat", "--terminal", "--server", "a=http://127.0.0.1:1", "--login-token-file", str(login)]
    args += ["--workdir", str(tmp_path)]
    result = CliRunner().invoke(cli, args, env={"AGENTJET_TOKEN": "t0k"})
    assert result.exit_code == 0, result.output
    ((targets, assistant),) = started
    assert [t.name for t in targets] == ["a"] and isinstance(assistant, Assistant) and assistant.offline
    assert assistant.jobs.logs_dir == tmp_path / "state" / "jobs" and assistant.cwd == tmp_path.resolve()
    assert not login.exists() and not (tmp_path / "state").exists()  # the jobs folder comes with a first job
