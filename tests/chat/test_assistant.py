"""The research assistant, offline mode: what it reads, what it asks, and what it runs (the real CLI)."""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from agentjet.chat.assistant import _RUN_LINE, Assistant, read_intent
from agentjet.chat.security import CSRF_HEADER, Sessions
from agentjet.chat.tools import Jobs
from agentjet.chat.web import create_chat_app
from agentjet.core.testing import serve_in_thread
from tests.chat.conftest import LOGIN
from tests.chat.test_chat_browser import log_in

DOCS = Path(__file__).resolve().parents[2] / "docs"


@pytest.mark.parametrize(
    ("message", "tool", "args"),
    [
        ("help", "help", {}),
        ("What can you do?", "help", {}),
        ("train a small model to solve countdown", "vibe_plan", {"sentence": "train a small model to solve countdown"}),
        ("Teach the model grade-school arithmetic", "vibe_plan", {}),
        ("make the wolves better at werewolves", "vibe_plan", {}),
        ("please fine-tune a 7B on tool use", "vibe_plan", {}),
        ("improve the seer", "vibe_plan", {}),
        ("vibe: say the word banana", "vibe_plan", {}),
        ("how is the run doing?", "vibe_status", {}),
        ("status of the vibe run", "vibe_status", {}),
        ("how is the training going", "vibe_status", {}),
        ("stop the run", "vibe_stop", {}),
        ("please stop the training", "vibe_stop", {}),
        ("how is the lr campaign doing?", "campaign_status", {"name": "lr"}),
        ("campaign status lr-x-rank", "campaign_status", {"name": "lr-x-rank"}),
        ("show the campaign trials", "campaign_status", {"name": ""}),
        ("how are my campaigns going", "campaign_status", {"name": ""}),
        ("stop the lr campaign", "campaign_stop", {"name": "lr"}),
        ("stop campaign quick-tiny", "campaign_stop", {"name": "quick-tiny"}),
        ("resume the lr-x-rank campaign", "campaign_resume", {"name": "lr-x-rank"}),
        ("campaign report lr", "campaign_report", {"name": "lr"}),
        ("write the report of the lr campaign", "campaign_report", {"name": "lr"}),
        ("compare arith-1 and arith-2", "compare_runs", {"a": "arith-1", "b": "arith-2"}),
        ("compare runs a1 with b2", "compare_runs", {"a": "a1", "b": "b2"}),
        ("Compare word-run vs arith-run", "compare_runs", {"a": "word-run", "b": "arith-run"}),
        ("open report arith-1", "show_report", {"name": "arith-1"}),
        ("show me the report", "show_report", {"name": ""}),
        ("open the report for word-2", "show_report", {"name": "word-2"}),
        ("list runs", "list_runs", {}),
        ("show all runs", "list_runs", {}),
    ],
)
def test_the_offline_reader(message: str, tool: str, args: dict[str, str]) -> None:
    intent = read_intent(message)
    assert intent is not None and intent.tool == tool
    for key, value in args.items():
        assert intent.args[key] == value


@pytest.mark.parametrize("message", ["hello there", "what is the weather", "42", "<script>alert(1)</script>"])
def test_what_it_cannot_read_is_none(message: str) -> None:
    assert read_intent(message) is None


@pytest.fixture
def assistant_app(tmp_path: Path) -> Iterator[Callable[..., str]]:
    started: list[Any] = []
    apps: list[Assistant] = []

    def start(*vibe_args: str) -> str:
        assistant = Assistant(tmp_path, Jobs(tmp_path / "jobs", tmp_path), vibe_args=vibe_args)
        apps.append(assistant)
        cm = serve_in_thread(create_chat_app([], Sessions(LOGIN), assistant=assistant))
        started.append(cm)
        return str(cm.__enter__().url)

    yield start
    for assistant in apps:
        assistant.jobs.stop_all()
        for job in assistant.jobs.running.values():
            job.process.wait(timeout=120)
    for cm in started:
        cm.__exit__(None, None, None)


def session(url: str) -> tuple[httpx.Client, str]:
    client = httpx.Client(base_url=url, timeout=600)
    client.post("/login", data={"token": LOGIN})
    return client, client.get("/api/session").json()["csrf"]


def converse(
    client: httpx.Client, csrf: str, path: str, body: dict[str, Any], *, until: str | None = None
) -> list[dict[str, Any]]:
    """The events of one assistant turn; with `until`, stop reading at the first progress line holding it."""
    events: list[dict[str, Any]] = []
    with client.stream("POST", path, json=body, headers={CSRF_HEADER: csrf}) as reply:
        assert reply.status_code == 200, reply.read()
        for line in reply.iter_lines():
            if line.startswith("data: "):
                events.append(json.loads(line[6:]))
                if until is not None and events[-1]["type"] == "line" and until in events[-1]["text"]:
                    break
    return events


def test_help_and_nonsense_say_it_is_offline(assistant_app: Callable[..., str]) -> None:
    client, csrf = session(assistant_app())
    for message in ("help", "what is the weather"):
        (said, done) = converse(client, csrf, "/api/assistant", {"message": message})
        assert said["type"] == "say" and "offline mode" in said["text"] and done == {"type": "all_done"}


def test_a_train_sentence_shows_the_spec_and_declining_starts_nothing(
    assistant_app: Callable[..., str], tmp_path: Path
) -> None:
    client, csrf = session(assistant_app("--model", "tiny"))
    events = converse(client, csrf, "/api/assistant", {"message": "train a small model to solve countdown"})
    block = next(e for e in events if e["type"] == "block")["text"]
    assert "family         countdown" in block and "model          tiny" in block
    (confirm,) = [e for e in events if e["type"] == "confirm"]
    assert "Start this run now" in confirm["question"]
    other, other_csrf = session(str(client.base_url))  # another session cannot answer this session's question
    assert (
        "no such question"
        in converse(other, other_csrf, "/api/assistant/confirm", {"action_id": confirm["action_id"], "approve": True})[
            0
        ]["text"]
    )
    no = converse(client, csrf, "/api/assistant/confirm", {"action_id": confirm["action_id"], "approve": False})
    assert "nothing was started" in no[0]["text"]
    assert not (tmp_path / "vibe-runs").exists() and not (tmp_path / "jobs").exists()
    again = converse(client, csrf, "/api/assistant/confirm", {"action_id": confirm["action_id"], "approve": True})
    assert "no such question" in again[0]["text"]  # one answer per question


def test_a_confirmed_run_starts_streams_its_progress_and_stops_resumable(
    assistant_app: Callable[..., str], tmp_path: Path
) -> None:
    url = assistant_app("--model", "tiny", "--steps", "1", "--eval-items", "2")
    client, csrf = session(url)
    events = converse(client, csrf, "/api/assistant", {"message": "make the model say the word banana"})
    (confirm,) = [e for e in events if e["type"] == "confirm"]
    confirmed = {"action_id": confirm["action_id"], "approve": True}
    started = converse(client, csrf, "/api/assistant/confirm", confirmed, until="validate")
    assert started[0]["type"] == "say" and "Started agentjet vibe" in started[0]["text"]
    lines = [e["text"] for e in started if e["type"] == "line"]
    assert lines[0].startswith("[vibe") and "run make-the-model-say" in lines[0]  # the run's own progress lines
    assert (found := _RUN_LINE.search(lines[0])) is not None and found.group(1).startswith("make-the-model-say")
    status = converse(client, csrf, "/api/assistant", {"message": "how is the run doing?"})
    assert "agentjet vibe" in status[0]["text"] and status[1]["type"] == "block"
    stop = converse(client, csrf, "/api/assistant", {"message": "stop the run"})
    asked = [e for e in stop if e["type"] == "confirm"]
    if asked:  # still running: stop it the way Ctrl-C does
        ended = converse(client, csrf, "/api/assistant/confirm", {"action_id": asked[0]["action_id"], "approve": True})
        assert "ended with exit code" in ended[-2]["text"]
        assert any("resume with agentjet vibe --resume" in e.get("text", "") for e in ended)
    runs = list((tmp_path / "vibe-runs").glob("*/task.yaml"))
    assert len(runs) == 1  # the CLI made its run folder (a git repo) where `agentjet vibe` always does
    assert (runs[0].parent / ".git").is_dir()


def test_compare_and_report_read_the_runs_on_disk(assistant_app: Callable[..., str], tmp_path: Path) -> None:
    for name in ("arith-a", "arith-b"):
        run = tmp_path / "vibe-runs" / name
        run.mkdir(parents=True)
        for file in ("task.yaml", "run.json", "report.md"):
            shutil.copy(DOCS / "vibe-arithmetic" / file, run / file)
    client, csrf = session(assistant_app())
    table = converse(client, csrf, "/api/assistant", {"message": "compare arith-a and arith-b"})[0]["text"]
    assert (
        table.count("24/64") == 2
        and table.count("39/64") == 2
        and "+23.4 (+6.1..+38.9)" in table
        and "improved" in table
    )
    report = converse(client, csrf, "/api/assistant", {"message": "open report arith-b"})[0]
    assert report["type"] == "block" and report["text"] == (DOCS / "vibe-arithmetic" / "report.md").read_text()[:20_000]
    missing = converse(client, csrf, "/api/assistant", {"message": "compare arith-a and nope"})[0]["text"]
    assert "No finished vibe run matches 'nope'" in missing
    listed = converse(client, csrf, "/api/assistant", {"message": "list runs"})[0]["text"]
    assert "arith-a, arith-b" in listed


def test_campaigns_it_cannot_find_are_one_sentence(assistant_app: Callable[..., str], tmp_path: Path) -> None:
    client, csrf = session(assistant_app())
    said = converse(client, csrf, "/api/assistant", {"message": "how is the lr campaign doing?"})[0]["text"]
    assert said == f"No campaign named 'lr' under {tmp_path / 'campaigns' / 'runs'}."


def test_the_assistant_needs_login_and_the_csrf_token(assistant_app: Callable[..., str]) -> None:
    url = assistant_app()
    assert httpx.post(f"{url}/api/assistant", json={"message": "help"}).status_code == 401
    client, _ = session(url)
    assert client.post("/api/assistant", json={"message": "help"}).status_code == 403
    assert client.post("/api/assistant/confirm", json={"action_id": "x", "approve": True}).status_code == 403


def test_the_assistant_page_shows_tool_output_as_text(
    page: Any, assistant_app: Callable[..., str], tmp_path: Path
) -> None:
    run = tmp_path / "vibe-runs" / "xss-run"
    run.mkdir(parents=True)
    (run / "task.yaml").write_text("family: word\n")
    (run / "report.md").write_text('# Report <script>window.__xss = 1</script><img src=x onerror="window.__xss = 2">')
    url = assistant_app("--model", "tiny")
    log_in(page, url)
    page.goto(f"{url}/assistant")
    page.fill("#question", "open report xss-run")
    page.press("#question", "Enter")
    page.locator(".turn.block").first.wait_for()
    assert "<script>" in page.locator(".turn.block").first.text_content()
    assert page.evaluate("window.__xss") is None and page.locator("#transcript img, #transcript script").count() == 0
    page.fill("#question", "train a small model to solve countdown")
    page.press("#question", "Enter")
    page.locator(".turn.confirm button.no").wait_for(timeout=120_000)
    assert "family         countdown" in page.locator(".turn.block").nth(1).text_content()
    page.click(".turn.confirm button.no")
    page.locator("text=nothing was started").wait_for()
    time.sleep(0.2)
    assert not (tmp_path / "jobs").exists()


def test_from_the_page_a_confirmed_run_streams_its_progress_and_stops(
    page: Any, assistant_app: Callable[..., str], tmp_path: Path
) -> None:
    url = assistant_app("--model", "tiny", "--steps", "1", "--eval-items", "2")
    log_in(page, url)
    page.goto(f"{url}/assistant")
    page.fill("#question", "make the model say the word banana")
    page.press("#question", "Enter")
    page.locator(".turn.confirm button.yes").wait_for(timeout=120_000)
    page.click(".turn.confirm button.yes")
    page.locator(".turn.progress", has_text="validate").wait_for(timeout=120_000)  # the run's own lines arrive
    assert "run make-the-model-say" in page.locator(".turn.progress").first.text_content()
    page.fill("#question", "stop the run")
    page.press("#question", "Enter")
    page.locator(".turn.confirm button.yes").nth(1).wait_for(timeout=60_000)
    page.locator(".turn.confirm button.yes").nth(1).click()
    page.locator(".turn", has_text="ended with exit code").first.wait_for(timeout=180_000)
    assert len(list((tmp_path / "vibe-runs").glob("*/task.yaml"))) == 1


def test_a_reports_figure_is_served_and_nothing_else_is(assistant_app: Callable[..., str], tmp_path: Path) -> None:
    run = tmp_path / "vibe-runs" / "arith-a"
    run.mkdir(parents=True)
    for file in ("task.yaml", "run.json", "report.md", "curves.png"):
        shutil.copy(DOCS / "vibe-arithmetic" / file, run / file)
    (tmp_path / "campaigns" / "runs" / "c1" / "figures").mkdir(parents=True)
    (tmp_path / "campaigns" / "runs" / "c1" / "figures" / "curves.png").write_bytes(b"\x89PNG fake")
    (tmp_path / "secret.png").write_bytes(b"\x89PNG secret")
    (tmp_path / "vibe-runs" / "evil").mkdir()
    (tmp_path / "vibe-runs" / "evil" / "curves.png").symlink_to(tmp_path.parent)
    client, csrf = session(assistant_app())
    events = converse(client, csrf, "/api/assistant", {"message": "open report arith-a"})
    assert [e["type"] for e in events] == ["block", "figure", "all_done"]
    served = client.get("/api/assistant/figure", params={"path": events[1]["path"]})
    assert served.status_code == 200 and served.content == (DOCS / "vibe-arithmetic" / "curves.png").read_bytes()
    assert (
        client.get("/api/assistant/figure", params={"path": "campaigns/runs/c1/figures/curves.png"}).status_code == 200
    )
    for path in (
        "secret.png",
        "vibe-runs/arith-a/report.md",
        "vibe-runs/arith-a/../../secret.png",
        str(tmp_path / "secret.png"),
        "/etc/passwd",
        "vibe-runs/evil/curves.png",
        "campaigns/runs/c1/curves.png",
    ):
        assert client.get("/api/assistant/figure", params={"path": path}).status_code == 404, path
    assert httpx.get(f"{client.base_url}/api/assistant/figure", params={"path": events[1]["path"]}).status_code == 401


def test_a_finished_run_ends_the_turn_with_its_outcome_and_curve(tmp_path: Path) -> None:
    run = tmp_path / "vibe-runs" / "arith-20261202"
    run.mkdir(parents=True)
    for file in ("run.json", "curves.png"):
        shutil.copy(DOCS / "vibe-arithmetic" / file, run / file)
    assistant = Assistant(tmp_path, Jobs(tmp_path / "jobs", tmp_path))
    said, figure = list(assistant._outcome("arith-20261202"))
    assert said["text"] == "accuracy 24/64 (37.5%) -> 39/64 (60.9%), +23.4 points (95% CI +6.1 to +38.9): improved"
    assert figure == {"type": "figure", "path": "vibe-runs/arith-20261202/curves.png", "caption": "curves.png"}
    assert assistant.figure(figure["path"]) == run / "curves.png"
    assert list(assistant._outcome(None)) == [] and list(assistant._outcome("not-there")) == []
