"""The terminal app's Assistant tab: the web page's research assistant, as a transcript and an Input.

A message goes to `assistant.answer`, a Yes/No to `assistant.confirm`; both stream their events in a
Textual worker, so a vibe run's progress lines arrive while the keys stay live. Every event is put
in Rich `Text` (never parsed as markup): a tool's output is the CLI's, a report is whatever a run
wrote. Closing the app cancels only the following of a job, never the job (as on the web).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any, ClassVar, Protocol

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Button, Input, Static

__all__ = ["SESSION", "AssistantPane", "ChatAssistant", "tab_title"]

SESSION = "terminal"  # one user per terminal app: one assistant session
Event = dict[str, Any]
NONE_CONFIGURED = "No assistant is configured for this chat (`agentjet chat --terminal` gives it one)."


class ChatAssistant(Protocol):
    """What the tab needs of an assistant: the offline `Assistant` and `LLMAssistant` both are one."""

    @property
    def offline(self) -> bool: ...

    def answer(self, session: str, message: str) -> AsyncIterator[Event]: ...

    def confirm(self, session: str, action_id: str, approve: bool) -> AsyncIterator[Event]: ...


def tab_title(assistant: ChatAssistant | None) -> str:
    """The tab says up front when no LLM reads the messages."""
    return "Assistant (offline)" if assistant is not None and assistant.offline else "Assistant"


def event_text(event: Event) -> Text:
    """One event as the transcript shows it; its text literal whatever brackets it holds."""
    kind, text = str(event.get("type", "")), str(event.get("text", ""))
    if kind == "block":
        return Text(text, style="dim")
    if kind == "line":
        return Text(f"{event.get('job', 'job')}: {text}", style="dim")
    if kind == "confirm":
        return Text(str(event.get("question", "")), style="bold yellow")
    if kind == "figure":
        return Text(f"figure: {event.get('path', '')} (open it in an image viewer)", style="italic")
    return Text(text)


class AssistantPane(Vertical):
    """The transcript, the question waiting for a yes (with its buttons) and the message Input."""

    DEFAULT_CSS = """
    AssistantPane #assistant-log { height: 1fr; border: round $primary; }
    AssistantPane #assistant-confirm { height: auto; }
    AssistantPane #assistant-confirm Button { margin: 0 1; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "answer(True)", "Yes", show=False),
        Binding("n", "answer(False)", "No", show=False),
    ]

    def __init__(self, assistant: ChatAssistant | None, *, session: str = SESSION) -> None:
        super().__init__(id="assistant-pane")
        self.assistant, self.session = assistant, session
        self.rendered = Text()  # what the transcript shows, kept for the tests
        self.body = Static(self.rendered, id="assistant-transcript")
        self.waiting: str | None = None  # the action id the buttons answer (the newest question)

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="assistant-log"):
            yield self.body
        with Horizontal(id="assistant-confirm"):
            yield Button("Yes, do it", id="assistant-yes", variant="success")
            yield Button("No", id="assistant-no", variant="error")
        yield Input(placeholder="ask the assistant (Enter sends; 'help')", id="assistant-message")

    def on_mount(self) -> None:
        self.query_one("#assistant-confirm").display = False
        if self.assistant is None:
            self.query_one("#assistant-message", Input).disabled = True
            self.append(Text(NONE_CONFIGURED, style="italic"))

    def transcript(self) -> str:
        return self.rendered.plain

    def append(self, text: Text) -> None:
        if self.rendered:
            self.rendered.append("\n")
        self.rendered.append_text(text)
        self.body.update(self.rendered)
        for log in self.query("#assistant-log").results(VerticalScroll):  # none once the app is closing
            log.scroll_end(animate=False)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id != "assistant-message":
            return
        event.stop()
        text = event.value.strip()
        if text and self.assistant is not None:
            event.input.value = ""
            self.append(Text.assemble(("you: ", "bold"), text))
            self.run_worker(self._follow(self.assistant.answer(self.session, text)), group="assistant")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id in ("assistant-yes", "assistant-no"):
            event.stop()
            self.action_answer(event.button.id == "assistant-yes")

    def action_answer(self, approve: bool) -> None:
        """Yes or No to the waiting question (the keys do nothing while none waits)."""
        if self.waiting is None or self.assistant is None:
            return
        action_id, self.waiting = self.waiting, None
        self.query_one("#assistant-confirm").display = False
        self.append(Text.assemble(("you: ", "bold"), "yes" if approve else "no"))
        self.query_one("#assistant-message", Input).focus()
        self.run_worker(self._follow(self.assistant.confirm(self.session, action_id, approve)), group="assistant")

    async def _follow(self, events: AsyncIterator[Event]) -> None:
        """Each event into the transcript as it comes; a confirm shows the buttons (focused: y/n work)."""
        try:
            async for event in events:
                if not self.is_attached:  # the app closed under a job's stream: nothing left to write to
                    return
                self.append(event_text(event))
                if event.get("type") == "confirm":
                    self.waiting = str(event["action_id"])
                    self.query_one("#assistant-confirm").display = True
                    self.query_one("#assistant-yes", Button).focus()
        except (OSError, RuntimeError, ValueError) as exc:  # a tool that failed: said, the app stays up
            self.append(Text(f"The assistant failed: {exc}", style="red"))
