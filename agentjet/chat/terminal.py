"""`agentjet chat --terminal`: the playground, the episode inspector and the assistant as a Textual app, no web server.

The same server interactions as the web page: each reply is `PolicyClients.stream_reply` (one eval
episode per message, aborted at the end), the inspector is `list_episodes` / `get_episode`. No login
token: nothing listens, the terminal's user is the one who started it. Model and server text is put
in Rich `Text` only (terminal_views.py, terminal_assistant.py), never parsed as markup.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from pydantic import ValidationError
from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import (
    Button,
    Checkbox,
    DataTable,
    Footer,
    Input,
    Label,
    Select,
    Static,
    TabbedContent,
    TabPane,
)

from agentjet.chat.episodes import InspectorError, get_episode, list_episodes
from agentjet.chat.targets import ChatRequest, ChatTarget, PolicyClients
from agentjet.chat.terminal_assistant import AssistantPane, ChatAssistant, tab_title
from agentjet.chat.terminal_views import Reply, Turn, call_text, fork_messages, sample_text, turns_text

__all__ = ["ChatTerminal", "Fork", "PolicyColumn", "run_terminal"]

_SAMPLING = (
    ("temperature", "1.0", "temperature"),
    ("top_p", "1.0", "top_p"),
    ("max_tokens", "128", "max tokens"),
    ("seed", "", "seed"),
    ("n", "1", "n"),
)


_FILTERS = ("kind", "task_id", "min_reward", "max_reward", "policy_version")  # and status (#filter-status)


@dataclass(frozen=True)
class Fork:
    """An episode's conversation up to turn `turn` (its call's messages), loaded into the playground."""

    episode_id: str
    turn: int
    messages: tuple[dict[str, str], ...]


class PolicyColumn(VerticalScroll):
    """One policy's side of the playground: its own conversation and the replies streaming into it."""

    def __init__(self, target: ChatTarget, index: int) -> None:
        super().__init__(id=f"column-{index}", classes="column")
        self.target = target
        self.turns: list[Turn] = []
        self.body = Static(Text(), classes="turns")
        self.rendered = Text()  # what `body` shows, kept for the tests and for copying

    def compose(self) -> ComposeResult:
        yield Label(Text(f"{self.target.name}  {self.target.url}", "bold"))
        yield self.body

    def refresh_text(self, *, show_logprobs: bool, n: int = 1) -> None:
        self.rendered = turns_text(self.turns, show_logprobs=show_logprobs, n=n)
        self.body.update(self.rendered)
        self.scroll_end(animate=False)

    def replies(self) -> list[Reply]:
        return [t.reply for t in self.turns if t.reply is not None]


class ChatTerminal(App[None]):
    """Talk to `targets` side by side and inspect what their servers captured, in the terminal."""

    TITLE = "agentjet chat"
    CSS = """
    #policies, #sampling, #filters { height: auto; }
    #sampling Input, #filters Input { width: 1fr; }
    #sampling Label { width: auto; padding: 1 0 0 1; }
    #columns { height: 1fr; }
    .column { width: 1fr; border: round $primary; }
    #fork-note { color: $warning; height: auto; }
    #status, #inspector-status { color: $error; height: auto; }
    #episodes { height: 12; }
    #episode { height: 1fr; }
    .call, .sample { border: round $secondary; height: auto; }
    .call Button { margin: 0 1; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+n", "new_conversation", "New conversation"),
        Binding("l", "toggle_logprobs", "Logprob colours"),
        Binding("ctrl+l", "toggle_logprobs", "Logprob colours", show=False),
        Binding("ctrl+r", "replay", "Reply to the forked turn"),
        Binding("ctrl+q", "quit", "Quit"),
    ]

    def __init__(self, targets: Sequence[ChatTarget], assistant: ChatAssistant | None = None) -> None:
        super().__init__()
        self.targets = list(targets)
        self.assistant = assistant
        self.clients = PolicyClients()
        self.histories: dict[str, list[dict[str, str]]] = {t.name: [] for t in self.targets}
        self.fork: Fork | None = None
        self.show_logprobs = False
        self.episode: dict[str, Any] | None = None
        self._streams: set[asyncio.Task[None]] = set()
        self._n = 1

    def compose(self) -> ComposeResult:
        with TabbedContent(initial="playground"):
            with TabPane("Playground", id="playground"):
                with Horizontal(id="policies"):
                    for i, target in enumerate(self.targets):
                        yield Checkbox(Text(target.name), i < 2, id=f"use-{i}")
                with Horizontal(id="sampling"):
                    for name, value, label in _SAMPLING:
                        yield Label(label)
                        yield Input(value, placeholder=label, id=name)
                yield Static(Text(), id="fork-note")
                yield Button("Reply to the forked turn (ctrl+r)", id="replay")
                with Horizontal(id="columns"):
                    for i, target in enumerate(self.targets):
                        yield PolicyColumn(target, i)
                yield Static(Text(), id="status")
                yield Input(placeholder="message (Enter sends)", id="message")
            with TabPane("Inspector", id="inspector"):
                with Horizontal(id="filters"):
                    options = [(Text(t.name), i) for i, t in enumerate(self.targets)]
                    yield Select(options, value=0, allow_blank=False, id="target")
                    yield Input(placeholder="kind", id="kind")
                    yield Input(placeholder="status", id="filter-status")
                    yield Input(placeholder="task", id="task_id")
                    yield Input(placeholder="min reward", id="min_reward")
                    yield Input(placeholder="max reward", id="max_reward")
                    yield Input(placeholder="policy version", id="policy_version")
                    yield Button("List", id="list")
                yield Static(Text(), id="inspector-status")
                yield DataTable(id="episodes", cursor_type="row")
                yield VerticalScroll(id="episode")
            with TabPane(tab_title(self.assistant), id="assistant"):
                yield AssistantPane(self.assistant)
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one("#episodes", DataTable)
        table.add_columns("seq", "episode", "task", "kind", "status", "reward", "calls", "versions")
        self.query_one("#replay", Button).display = False
        self._show_checked()

    async def on_unmount(self) -> None:
        for task in list(self._streams):
            task.cancel()
        await asyncio.gather(*self._streams, return_exceptions=True)
        await self.clients.aclose()

    # -- playground ---------------------------------------------------------------------------

    def columns(self) -> list[PolicyColumn]:
        return list(self.query(PolicyColumn))

    def column(self, name: str) -> PolicyColumn:
        return next(c for c in self.columns() if c.target.name == name)

    def checked(self) -> list[ChatTarget]:
        return [t for i, t in enumerate(self.targets) if self.query_one(f"#use-{i}", Checkbox).value]

    def _show_checked(self) -> None:
        chosen = {t.name for t in self.checked()}
        for column in self.columns():
            column.display = column.target.name in chosen

    def on_checkbox_changed(self, _: Checkbox.Changed) -> None:
        self._show_checked()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id == "message":
            text = event.value.strip()
            if text:
                event.input.value = ""
                self.send(text)
        elif event.input.id in _FILTERS or event.input.id == "filter-status":
            self.run_worker(self.load_episodes(), group="inspector", exclusive=True)

    def _request(self, messages: list[dict[str, str]]) -> ChatRequest:
        """The sampling Inputs as the web's ChatRequest (a bad value raises pydantic's ValidationError)."""
        seed = self.query_one("#seed", Input).value.strip()
        return ChatRequest.model_validate(
            {
                "targets": ["-"],
                "messages": messages,
                "temperature": self.query_one("#temperature", Input).value.strip() or "1.0",
                "top_p": self.query_one("#top_p", Input).value.strip() or "1.0",
                "max_tokens": self.query_one("#max_tokens", Input).value.strip() or "128",
                "seed": seed or None,
                "n": self.query_one("#n", Input).value.strip() or "1",
            }
        )

    def send(self, text: str | None) -> list[asyncio.Task[None]]:
        """`text` after each checked policy's own conversation (None: reply to it as it stands, a fork's
        turn); one streamed reply per policy, side by side. Returns the streams, for tests to await."""
        status = self.query_one("#status", Static)
        chosen = self.checked()
        if not chosen:
            status.update(Text("check a policy first"))
            return []
        requests: dict[str, ChatRequest] = {}
        try:
            for target in chosen:
                history = self.histories[target.name]
                messages = history + ([{"role": "user", "content": text}] if text is not None else [])
                requests[target.name] = self._request(messages)
        except ValidationError as exc:
            errors = (f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors())
            status.update(Text("sampling: " + "; ".join(errors)))
            return []
        status.update(Text())
        tasks = []
        for target in chosen:
            if text is not None:
                self.histories[target.name].append({"role": "user", "content": text})
                self.column(target.name).turns.append(Turn("user", text))
            task = asyncio.create_task(self._stream(target, requests[target.name]))
            self._streams.add(task)
            task.add_done_callback(self._streams.discard)
            tasks.append(task)
        return tasks

    async def wait_replies(self) -> None:
        """Until every reply in flight has ended (the tests' handle on the streams)."""
        while self._streams:
            await asyncio.gather(*list(self._streams), return_exceptions=True)

    async def _stream(self, target: ChatTarget, request: ChatRequest) -> None:
        column = self.column(target.name)
        replies: dict[int, Reply] = {}
        self._n = request.n
        column.refresh_text(show_logprobs=self.show_logprobs, n=request.n)
        async for event in self.clients.stream_reply(target, request.body()):
            if event["type"] == "error":
                column.turns.append(Turn("error", str(event["message"])))
            else:
                choice = int(event.get("choice", 0))
                if choice not in replies:
                    replies[choice] = Reply(choice)
                    column.turns.append(Turn("assistant", reply=replies[choice]))
                reply = replies[choice]
                if event["type"] == "token":
                    reply.streamed += str(event["text"])
                elif event["type"] == "logprobs":
                    reply.tokens = list(event["tokens"])
                elif event["type"] == "done":
                    reply.finish_reason = str(event["finish_reason"])
                    if choice == 0:
                        self.histories[target.name].append({"role": "assistant", "content": reply.streamed})
            column.refresh_text(show_logprobs=self.show_logprobs, n=request.n)

    def _refresh_columns(self) -> None:
        for column in self.columns():
            column.refresh_text(show_logprobs=self.show_logprobs, n=self._n)

    def action_toggle_logprobs(self) -> None:
        """`l` (a focused Input keeps it as a letter) or `ctrl+l` (from anywhere)."""
        self.show_logprobs = not self.show_logprobs
        self._refresh_columns()

    def action_new_conversation(self) -> None:
        self._load_conversation(None)

    def _load_conversation(self, fork: Fork | None) -> None:
        """Every column starts over: empty, or from the fork's conversation."""
        self.fork = fork
        messages = list(fork.messages) if fork else []
        for column in self.columns():
            self.histories[column.target.name] = [dict(m) for m in messages]
            column.turns = [Turn(m["role"], m["content"]) for m in messages]
        note = Text()
        if fork is not None:
            note.append(f"Forked from episode {fork.episode_id} at turn {fork.turn}: ")
            note.append("its conversation up to that turn is below; reply to it with the checked policies, then go on.")
        self.query_one("#fork-note", Static).update(note)
        self.query_one("#replay", Button).display = fork is not None
        self._refresh_columns()

    def action_replay(self) -> None:
        if self.fork is not None:
            self.query_one("#replay", Button).display = False
            self.send(None)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        button = event.button.id or ""
        if button == "replay":
            self.action_replay()
        elif button == "list":
            self.run_worker(self.load_episodes(), group="inspector", exclusive=True)
        elif button.startswith("fork-"):
            self.fork_at(int(button.removeprefix("fork-")))

    # -- inspector ----------------------------------------------------------------------------

    def inspected(self) -> ChatTarget:
        value = self.query_one("#target", Select).value
        return self.targets[value if isinstance(value, int) else 0]

    def on_select_changed(self, _: Select.Changed) -> None:
        self.run_worker(self.load_episodes(), group="inspector", exclusive=True)

    async def load_episodes(self) -> None:
        """The chosen server's closed episodes, filtered, into the table (newest first)."""
        filters = {
            "kind": self.query_one("#kind", Input).value.strip(),
            "status": self.query_one("#filter-status", Input).value.strip(),
            **{name: self.query_one(f"#{name}", Input).value.strip() for name in _FILTERS if name != "kind"},
        }
        status = self.query_one("#inspector-status", Static)
        table = self.query_one("#episodes", DataTable)
        try:
            page = await list_episodes(self.inspected(), filters)
        except InspectorError as exc:
            status.update(Text(str(exc)))
            return
        table.clear()
        for e in page["episodes"]:
            cells = [e["seq"], e["episode_id"], e["task_id"], e["kind"], e["status"], e.get("reward"), e["calls"]]
            cells.append(", ".join(str(v) for v in e.get("policy_versions", [])))
            table.add_row(*(Text("-" if c is None else str(c)) for c in cells), key=str(e["episode_id"]))
        status.update(Text("" if page["episodes"] else "No episodes match."))

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        if event.row_key.value is not None:  # a worker: a slow server never freezes the keys
            self.run_worker(self.open_episode(event.row_key.value), group="episode", exclusive=True)

    async def open_episode(self, episode_id: str) -> None:
        """Each call (messages, completion, a fork button) and each merged sample's tokens, trained ones lit."""
        status = self.query_one("#inspector-status", Static)
        try:
            episode = await get_episode(self.inspected(), episode_id)
        except InspectorError as exc:
            status.update(Text(str(exc)))
            return
        self.episode = episode
        box = self.query_one("#episode", VerticalScroll)
        await box.remove_children()
        title = f"{episode['episode_id']} · {episode['task_id']} · {episode['kind']} · {episode['status']}"
        widgets: list[Static | Vertical] = [Static(Text(f"{title} · reward {episode.get('reward', '-')}", "bold"))]
        for position, call in enumerate(episode["calls"]):
            button = Button(f"Fork at turn {call['call_index'] + 1}", id=f"fork-{position}")
            widgets.append(Vertical(Static(call_text(call)), button, classes="call"))
        merge = episode.get("merge")
        if not merge:
            note = f"Not trained: a {episode['status']} {episode['kind']} episode has no samples."
            widgets.append(Static(Text(note, "italic")))
        else:
            widgets.append(Static(Text(f"{merge['calls']} calls -> {merge['samples']} samples ({merge['match']})")))
            for i, (sample, start) in enumerate(zip(merge["sample_tokens"], merge["sample_starts"], strict=True)):
                head = Text(f"Sample {i + 1}: from turn {start['call_index'] + 1}, ", "bold")
                head.append(f"{start['calls']} calls, {start['trainable_tokens']} trained tokens", "bold")
                if start.get("reason"):
                    head.append(f" · new sample because: {start['reason']} ({start['shared_tokens']} tokens shared)")
                widgets.append(Static(head + Text("\n") + sample_text(sample), classes="sample"))
        await box.mount_all(widgets)
        status.update(Text())

    def fork_at(self, position: int) -> None:
        """The conversation the episode's call `position` was sent, into the playground, ready to replay."""
        if self.episode is None:
            return
        call = self.episode["calls"][position]
        fork = Fork(str(self.episode["episode_id"]), int(call["call_index"]) + 1, tuple(fork_messages(call)))
        self._load_conversation(fork)
        self.query_one(TabbedContent).active = "playground"


def run_terminal(targets: Sequence[ChatTarget], assistant: ChatAssistant | None = None) -> None:
    """Run the app in this terminal until the user quits (ctrl+q); the assistant's jobs outlive it."""
    ChatTerminal(targets, assistant).run()
