"""`agentjet chat --terminal`, headless (Textual's pilot) over scripted swarm servers: what the screen shows."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

import pytest
from rich.console import Console
from rich.text import Text
from textual.pilot import Pilot
from textual.widgets import Button, Checkbox, DataTable, Input, Static, TabbedContent
from typer.testing import CliRunner

from agentjet.chat.targets import ChatTarget
from agentjet.chat.terminal import ChatTerminal
from agentjet.chat.terminal_views import TRAINED, token_texts
from agentjet.cli.main import app as cli
from tests.chat.test_inspector import fork_scene, record_episode

SIZE = (180, 60)
MARKUP = "[bold red]x[/] <script>alert(1)</script> [link=http://evil]y[/link]"


def shown(text: Text) -> str:
    """What a terminal would print for `text` (markup would vanish here, literal text stays)."""
    console = Console(record=True, width=400, color_system=None)
    console.print(text)
    return console.export_text()


async def say(pilot: Pilot[None], message: str) -> None:
    box = pilot.app.query_one("#message", Input)
    box.focus()
    box.value = message
    await pilot.press("enter")


async def until(pilot: Pilot[None], ready: Callable[[], bool], timeout_s: float = 20.0) -> None:
    for _ in range(int(timeout_s / 0.05)):
        if ready():
            return
        await pilot.pause(0.05)
    raise AssertionError("the screen never got there")


async def test_replies_stream_side_by_side_into_each_policys_column(
    policies: Callable[..., list[ChatTarget]],
) -> None:
    targets = policies(base="Paris is the capital.", trained="It is Paris, of course!")
    app = ChatTerminal(targets)
    async with app.run_test(size=SIZE) as pilot:
        base, trained = app.columns()
        assert base.display and trained.display  # the first two policies start checked
        streams = app.send("hello")
        assert len(streams) == 2
        partial: set[str] = set()
        while not all(s.done() for s in streams):  # snapshot the column while tokens arrive
            partial.add(base.rendered.plain)
            await asyncio.sleep(0.005)
        await pilot.pause()
        assert len(partial) > 3  # appended token by token, not one block at the end
        assert base.body.content is base.rendered
        assert base.rendered.plain.startswith("user: hello\n\nassistant: Paris is the capital.")
        assert "It is Paris, of course!" in trained.rendered.plain
        assert "Paris is the capital." not in trained.rendered.plain
        assert "[finish: stop]" in base.rendered.plain
        assert app.histories["base"][-1] == {"role": "assistant", "content": "Paris is the capital."}
        await say(pilot, "and then?")  # each column goes on from its own reply
        await app.wait_replies()
        assert app.histories["trained"][:3] == [
            {"role": "user", "content": "hello"},
            {"role": "assistant", "content": "It is Paris, of course!"},
            {"role": "user", "content": "and then?"},
        ]
        await pilot.press("ctrl+n")
        assert base.rendered.plain == "" and app.histories["base"] == []
    assert app.clients._open == {}  # the swarm and HTTP clients were closed on exit


async def test_the_logprob_view_styles_each_token(policies: Callable[..., list[ChatTarget]]) -> None:
    app = ChatTerminal(policies(delay_s=0.0, base="A small reply here."))
    async with app.run_test(size=SIZE) as pilot:
        await say(pilot, "hi")
        await app.wait_replies()
        (column, _) = (*app.columns(), None)
        (reply,) = column.replies()
        assert reply.tokens and reply.finish_reason == "stop"
        plain_spans = len(column.rendered.spans)
        app.set_focus(None)
        await pilot.press("l")
        assert app.show_logprobs
        coloured = [s for s in column.rendered.spans if getattr(s.style, "bgcolor", None) is not None]
        assert len(coloured) == len(reply.tokens) > 1 and len(column.rendered.spans) > plain_spans
        assert "".join(column.rendered.plain[s.start : s.end] for s in coloured) == "A small reply here."
        assert len({str(s.style) for s in coloured}) >= 1
        await pilot.press("l")
        assert not [s for s in column.rendered.spans if getattr(s.style, "bgcolor", None) is not None]
        app.query_one("#message", Input).focus()
        await pilot.press("l")  # typed into the message: a letter, not the toggle
        assert app.query_one("#message", Input).value == "l" and not app.show_logprobs
        await pilot.press("ctrl+l")
        assert app.show_logprobs


async def test_markup_in_a_reply_shows_literally(policies: Callable[..., list[ChatTarget]]) -> None:
    app = ChatTerminal(policies(delay_s=0.0, base=MARKUP))
    async with app.run_test(size=SIZE) as pilot:
        await say(pilot, "[bold]not markup either[/bold]")
        await app.wait_replies()
        column = app.columns()[0]
        for show_logprobs in (False, True):
            column.refresh_text(show_logprobs=show_logprobs)
            assert isinstance(column.body.content, Text)
            printed = shown(column.body.content)
            assert MARKUP in printed and "[bold]not markup either[/bold]" in printed
            assert not any("red" in str(s.style) or "link" in str(s.style) for s in column.rendered.spans)


async def test_the_inspector_lists_and_opens_an_episode_with_its_trained_tokens(
    policies: Callable[..., list[ChatTarget]],
) -> None:
    (target,) = policies(delay_s=0.0, recorded=["First [b]answer[/b].", "Second answer.", "Third."])
    episode_id = record_episode(target, ["one", "two <script>", "three"])
    app = ChatTerminal([target])
    async with app.run_test(size=SIZE) as pilot:
        app.query_one(TabbedContent).active = "inspector"
        app.query_one("#kind", Input).value = "train"
        app.query_one("#min_reward", Input).value = "0.5"
        app.query_one("#list", Button).press()
        table = app.query_one("#episodes", DataTable)
        await until(pilot, lambda: table.row_count == 1)
        assert [str(c) for c in table.get_row_at(0)][1] == episode_id
        table.focus()
        await pilot.press("enter")
        await until(pilot, lambda: len(app.query(".sample")) > 0)
        assert app.episode is not None and app.episode["episode_id"] == episode_id
        calls = [w.query_one(Static).content for w in app.query(".call")]
        assert len(calls) == 3 and isinstance(calls[1], Text)
        assert "two <script>" in shown(calls[1]) and "First [b]answer[/b]." in shown(calls[1])
        samples = [w.content for w in app.query(".sample").results(Static)]
        trained = [s for t in samples if isinstance(t, Text) for s in t.spans if s.style == TRAINED]
        assert len(trained) == sum(len(c["completion_ids"]) for c in app.episode["calls"])
        app.query_one("#min_reward", Input).value = "2"
        await app.load_episodes()
        assert table.row_count == 0
        app.query_one("#min_reward", Input).value = ""
        for name, value, rows in (("task_id", "nope", 0), ("task_id", "inspected-task", 1), ("policy_version", "3", 0)):
            app.query_one(f"#{name}", Input).value = value
            await app.load_episodes()
            assert table.row_count == rows, (name, value)


async def test_fork_at_turn_two_replays_it_against_another_policy(
    policies: Callable[..., list[ChatTarget]],
) -> None:
    recorded, other, episode_id, seen = fork_scene(policies, "question one")
    app = ChatTerminal([recorded, other])
    async with app.run_test(size=SIZE) as pilot:
        app.query_one(TabbedContent).active = "inspector"
        await app.load_episodes()
        await app.open_episode(episode_id)
        app.query_one("#fork-1", Button).press()
        await until(pilot, lambda: app.fork is not None)
        assert app.query_one(TabbedContent).active == "playground" and app.fork and app.fork.turn == 2
        assert "at turn 2" in str(app.query_one("#fork-note", Static).content)
        app.query_one("#use-0", Checkbox).value = False
        await pilot.pause()
        app.set_focus(None)
        await pilot.press("ctrl+r")
        await until(pilot, lambda: bool(app._streams) or bool(seen))
        await app.wait_replies()
        (prompt,) = seen
        assert "question one" in prompt and "First answer." in prompt and "question two" in prompt
        assert "question three" not in prompt and "Second answer." not in prompt
        column = app.column("other")
        assert column.rendered.plain.endswith("The other policy's turn two.  [finish: stop]")
        assert "question two" in column.rendered.plain
        await say(pilot, "and a follow-up")  # the forked conversation goes on
        await app.wait_replies()
        assert "The other policy's turn two." in seen[1] and "and a follow-up" in seen[1]


def test_token_texts_read_byte_level_bpe() -> None:
    assert token_texts(["Hello", "Ġworld", "Ċ", "â", "Ĥ¬"]) == ["Hello", " world", "\n", "", "€"]
    assert token_texts(["▁hi"]) == [" hi"]


def test_terminal_without_a_policy_is_the_web_versions_one_line(tmp_path: Path) -> None:
    login = tmp_path / "login"
    result = CliRunner().invoke(cli, ["chat", "--terminal", "--login-token-file", str(login)])
    assert result.exit_code == 2, result.output
    assert "name at least one policy" in result.output and len(result.output.strip().splitlines()) == 1
    assert not login.exists()


async def test_a_bad_sampling_value_is_one_line_and_sends_nothing(policies: Callable[..., list[ChatTarget]]) -> None:
    app = ChatTerminal(policies(delay_s=0.0, base="never"))
    async with app.run_test(size=SIZE) as pilot:
        app.query_one("#temperature", Input).value = "hot"
        await say(pilot, "hi")
        status = app.query_one("#status", Static).content
        assert "temperature" in str(status) and app.histories["base"] == [] and not app._streams
        app.query_one("#temperature", Input).value = "0.5"
        app.query_one("#top_p", Input).value = "0.9"
        request = app._request([{"role": "user", "content": "hi"}])
        assert (request.temperature, request.top_p) == (0.5, 0.9)


def test_terminal_runs_the_app_over_the_servers_without_a_login_token(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    started: list[list[ChatTarget]] = []
    monkeypatch.setattr(
        "agentjet.chat.terminal.run_terminal", lambda targets, assistant=None: started.append(list(targets))
    )
    monkeypatch.setattr("uvicorn.run", lambda *a, **k: pytest.fail("the web server must not start"))
    login = tmp_path / "login"
    args = ["chat", "--terminal", "--server", "a=http://127.0.0.1:1", "--login-token-file", str(login)]
    result = CliRunner().invoke(cli, args, env={"AGENTJET_TOKEN": "t0k"})
    assert result.exit_code == 0, result.output
    assert started == [[ChatTarget("a", "http://127.0.0.1:1", "t0k")]] and not login.exists()
