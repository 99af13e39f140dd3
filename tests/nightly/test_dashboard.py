"""The nightly dashboard: the analysis of a real history, its JSON and markdown, and a static page that
escapes everything untrusted and stays inside its output folder."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import pytest

from agentjet.nightly.dashboard import (
    analyse_history,
    markdown_summary,
    safe_name,
    summary_json,
    write_dashboard,
)
from agentjet.nightly.history import History
from agentjet.nightly.metrics import Metric, RunRecord

LATENCY = Metric("server.latency_ratio", "x", "lower", repeats=7)
LOSS = Metric("train.loss", "nats", "lower", repeats=1, test="exact", min_effect=0.01)
XSS_SCRIPT = "<script>alert(1)</script>"
XSS_ATTR = '"><img src=x onerror=alert(1)>'
STEP_AT = 9  # the commit (0-based) where the latency jumps by 30 %
STEP_SUBJECT = XSS_ATTR + " | `tick` *bold*"


def sha(i: int) -> str:
    return f"{i:02d}" + "abcdef0123456789" * 2 + "abcdef"[: 40 - 34]


def record(
    i: int,
    samples: dict[str, list[float]] | None = None,
    *,
    metrics: tuple[Metric, ...] = (LATENCY, LOSS),
    machine: str = "m-main",
    status: str = "ok",
    error: str | None = None,
    subject: str | None = None,
) -> RunRecord:
    return RunRecord(
        commit=sha(i),
        commit_order=100 + i,
        subject=subject if subject is not None else f"commit number {i}",
        date=f"2025-01-{i + 1:02d}T03:00:00+00:00",
        machine=machine,
        machine_info={"cpu": "Test CPU", "cores": 2},
        packages={"torch": "2.5.0"},
        suite="quick",
        status=status,  # type: ignore[arg-type]
        error=error,
        samples=samples or {},
        metrics={m.name: m for m in metrics},
    )


def latency(i: int, rng: random.Random) -> list[float]:
    level = 1.3 if i >= STEP_AT else 1.0
    return [level * (1 + rng.gauss(0, 0.01)) for _ in range(LATENCY.repeats)]


@pytest.fixture
def history(tmp_path: Path) -> History:
    """12 commits: a 30 % latency regression at STEP_AT, an infra failure with a hostile error at commit 5,
    hostile subjects at commits 3 and STEP_AT."""
    h, rng = History(tmp_path / "h.db"), random.Random(7)
    subjects = {3: XSS_SCRIPT, STEP_AT: STEP_SUBJECT}
    for i in range(12):
        if i == 5:
            h.append(record(i, status="infra_failure", error="build broke: <b>boom</b>", subject="broken | `build`"))
            continue
        h.append(record(i, {LATENCY.name: latency(i, rng), LOSS.name: [2.0]}, subject=subjects.get(i)))
    return h


def test_analyse_history_takes_the_busiest_machine_and_one_analysis_per_metric(tmp_path: Path) -> None:
    h, rng = History(tmp_path / "h.db"), random.Random(1)
    for i in range(3):
        h.append(record(i, {LATENCY.name: latency(i, rng)}, metrics=(LATENCY,), machine="m-small"))
    for i in range(5):
        h.append(record(i, {LATENCY.name: latency(i, rng), LOSS.name: [1.0]}, machine="m-big"))
    runs, analyses = analyse_history(h)
    assert {r.machine for r in runs} == {"m-big"} and len(runs) == 5
    assert [a.metric.name for a in analyses] == ["server.latency_ratio", "train.loss"]
    assert [r.commit_order for r in runs] == sorted(r.commit_order for r in runs)
    runs, analyses = analyse_history(h, machine="m-small")
    assert len(runs) == 3 and [a.metric.name for a in analyses] == ["server.latency_ratio"]
    assert analyse_history(h, suite="no-such-suite") == ([], [])


def test_summary_json_is_json_safe_and_reports_the_regression_and_the_infra_failure(history: History) -> None:
    runs, analyses = analyse_history(history)
    summary = summary_json(runs, analyses, notes=[{"kind": "machine", "text": "new <cpu>", "commit": sha(4)}])
    json.dumps(summary, allow_nan=False)  # strict JSON: no NaN / Infinity anywhere
    assert summary["machine"] == "m-main" and summary["suite"] == "quick"
    assert [c["sha"] for c in summary["commits"]] == [sha(i) for i in range(12)]
    assert [c["order"] for c in summary["commits"]] == list(range(100, 112))
    broken = summary["commits"][5]
    assert broken["status"] == "infra_failure" and broken["error"] == "build broke: <b>boom</b>"
    assert summary["commits"][0]["status"] == "ok" and summary["commits"][0]["error"] is None

    lat = summary["metrics"][LATENCY.name]
    assert lat["declaration"] == LATENCY.to_dict() and lat["unstable"] is False
    first = next(c for c in lat["commits"] if c["sha"] == sha(0))
    raw = next(r for r in runs if r.commit == sha(0)).samples[LATENCY.name]
    assert first["n"] == 7 and first["min"] == min(raw) and first["max"] == max(raw)
    assert first["median"] == sorted(raw)[3]
    step = next(c for c in lat["commits"] if c["sha"] == sha(STEP_AT))
    assert step["status"] == "regression" and step["effect"] == pytest.approx(0.3, abs=0.05)
    assert step["p_value"] is not None and step["p_value"] < 0.01
    assert [(s["commit"], s["kind"]) for s in lat["steps"]] == [(sha(STEP_AT), "regression")]

    regressions = summary["regressions"]
    assert {(r["metric"], r["commit"]) for r in regressions} >= {(LATENCY.name, sha(STEP_AT))}
    assert all(r["metric"] == LATENCY.name for r in regressions)  # the exact loss never moved
    assert next(r for r in regressions if r["commit"] == sha(STEP_AT))["subject"] == STEP_SUBJECT
    assert [f["commit"] for f in summary["infra_failures"]] == [sha(5)]
    assert summary["notes"] == [{"kind": "machine", "text": "new <cpu>", "commit": sha(4), "date": None}]
    loss = summary["metrics"][LOSS.name]
    assert all(c["status"] != "regression" for c in loss["commits"])


def test_the_band_is_the_baseline_median_plus_minus_noise(history: History) -> None:
    runs, analyses = analyse_history(history)
    summary = summary_json(runs, analyses)
    by_name = {a.metric.name: a for a in analyses}
    for name in (LATENCY.name, LOSS.name):
        verdicts = {v.commit: v for v in by_name[name].verdicts}
        rows = [c for c in summary["metrics"][name]["commits"] if c["band"] is not None]
        assert rows, f"{name}: no commit has a baseline band"
        for row in rows:
            low, high = row["band"]
            base = row["baseline_median"]
            assert low <= base <= high
            if name == LOSS.name:
                assert (low, high) == pytest.approx((1.99, 2.01))
            else:
                v = verdicts[row["sha"]]
                noise = v.noise if v.noise is not None else by_name[name].noise
                assert noise is not None
                assert high - base == pytest.approx(2.5 * noise * base)
                assert set(v.baseline) <= {sha(i) for i in range(12)}


def test_markdown_summary_headline_table_and_escaping(history: History) -> None:
    runs, analyses = analyse_history(history)
    md = markdown_summary(runs, analyses)
    n = len(summary_json(runs, analyses)["regressions"])
    assert n >= 1
    assert f"{n} regression{'s' if n != 1 else ''} over 12 commits on machine m-main" in md
    table = [line for line in md.splitlines() if line.startswith("| server.latency")]
    step_line = next(line for line in table if sha(STEP_AT)[:10] in line)
    assert "+30" in step_line or "+29" in step_line or "+31" in step_line
    assert len(re.findall(r"(?<!\\)\|", step_line)) == 5  # the subject's specials do not add cells
    assert "\\<img src=x onerror=alert\\(1\\)\\> \\| \\`tick\\` \\*bold\\*" in step_line
    assert "<img" not in md.replace("\\<img", "")
    assert "## Infrastructure failures" in md and "broken \\| \\`build\\`: build broke: \\<b\\>boom\\</b\\>" in md
    assert "## Noise" in md and "train.loss" in md
    md_pipes = markdown_summary(
        runs, analyses, notes=[{"kind": "release", "text": "fix `a | b`", "commit": sha(7), "date": None}]
    )
    assert "fix \\`a \\| b\\`" in md_pipes


def test_markdown_lists_unstable_metrics_with_their_noise(tmp_path: Path) -> None:
    h, rng = History(tmp_path / "h.db"), random.Random(3)
    for i in range(12):  # ±40 % noise: no alarm can be trusted
        h.append(record(i, {LATENCY.name: [rng.uniform(0.6, 1.4) for _ in range(7)]}, metrics=(LATENCY,)))
    runs, analyses = analyse_history(h)
    if not analyses[0].unstable:
        pytest.skip("the detector does not call ±40 % noise unstable")
    md = markdown_summary(runs, analyses)
    section = md.split("## Unstable metrics", 1)[1].split("##", 1)[0]
    assert "server.latency\\_ratio" in section and "%" in section


def test_write_dashboard_writes_an_offline_page_plots_and_summaries(history: History, tmp_path: Path) -> None:
    history.add_note("rerecord", "re-recorded <i>the curve</i>", commit=sha(2), date="2025-01-03T00:00:00+00:00")
    out = tmp_path / "site"
    index = write_dashboard(history, out)
    assert index == out / "index.html"
    assert sorted(p.name for p in out.iterdir()) == [
        "index.html",
        "metric-00-server.latency_ratio.png",
        "metric-01-train.loss.png",
        "summary.json",
        "summary.md",
    ]
    for png in out.glob("*.png"):
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 5000
    page = index.read_text()
    assert "<script" not in page.lower()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "&quot;&gt;&lt;img src=x onerror=alert(1)&gt;" in page
    assert "<img src=x" not in page and "<b>boom" not in page
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", page)  # nothing fetched from outside
    for src in re.findall(r'<img src="([^"]+)"', page):
        assert (out / src).is_file()
    assert "lower is better" in page and "m-main" in page and "quick" in page
    assert "Test CPU" in page
    assert "re-recorded &lt;i&gt;the curve&lt;/i&gt;" in page and "<i>the" not in page
    assert "tr.regression{background" in page
    regressed = re.findall(r'<tr class="regression">(.*?)</tr>', page, flags=re.S)
    assert any(sha(STEP_AT)[:10] in row for row in regressed)
    assert not any(sha(0)[:10] in row for row in regressed)
    assert json.loads((out / "summary.json").read_text())["commits"][STEP_AT]["sha"] == sha(STEP_AT)
    assert "regression" in (out / "summary.md").read_text()


def test_commit_links_follow_the_template_and_bad_templates_are_refused(history: History, tmp_path: Path) -> None:
    page = write_dashboard(history, tmp_path / "a", commit_url="https://github.com/org/repo/commit/{sha}").read_text()
    assert f'href="https://github.com/org/repo/commit/{sha(STEP_AT)}"' in page
    for bad in ("javascript:alert(1)//{sha}", "https://github.com/org/repo/commit/", "ftp://host/{sha}", "/c/{sha}"):
        with pytest.raises(ValueError, match="commit_url"):
            write_dashboard(history, tmp_path / "bad", commit_url=bad)
    assert not (tmp_path / "bad").exists()


def test_metric_names_cannot_escape_the_output_folder(tmp_path: Path) -> None:
    hostile = Metric("../../x", "s", "higher", repeats=3)
    dollars = Metric("<b>$cost$", "$", "lower", repeats=3)  # `$` would be mathtext in the plot title
    h = History(tmp_path / "h.db")
    for i in range(3):
        h.append(record(i, {hostile.name: [1.0, 1.1, 0.9], dollars.name: [2.0, 2.0, 2.1]}, metrics=(hostile, dollars)))
    out = tmp_path / "deep" / "er" / "out"
    write_dashboard(h, out)
    outside = {p for p in tmp_path.rglob("*") if not p.name.startswith("h.db") and p != out and out not in p.parents}
    assert outside == {tmp_path / "deep", tmp_path / "deep" / "er"}
    pngs = sorted(p.name for p in out.glob("*.png"))
    assert len(pngs) == 2 and all(re.fullmatch(r"[A-Za-z0-9._-]+", name) for name in pngs)
    assert safe_name("../../x") == "_.._x" and safe_name("..") == "metric" and safe_name("a/b c") == "a_b_c"
    page = (out / "index.html").read_text()
    assert "&lt;b&gt;$cost$" in page and "<b>$cost" not in page


def test_an_empty_history_gives_a_page_saying_so(tmp_path: Path) -> None:
    h = History(tmp_path / "h.db")
    assert analyse_history(h) == ([], [])
    index = write_dashboard(h, tmp_path / "out")
    assert "no runs yet" in index.read_text().lower()
    assert not list((tmp_path / "out").glob("*.png"))
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["commits"] == [] and summary["regressions"] == [] and summary["metrics"] == {}
    assert "No runs yet" in (tmp_path / "out" / "summary.md").read_text()


def test_a_metric_with_a_single_run(tmp_path: Path) -> None:
    h = History(tmp_path / "h.db")
    h.append(record(0, {LATENCY.name: [1.0, 1.2, 1.1, 1.3, 0.9, 1.0, 1.05]}, metrics=(LATENCY,)))
    index = write_dashboard(h, tmp_path / "out")
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    (row,) = summary["metrics"][LATENCY.name]["commits"]
    assert row["n"] == 7 and row["median"] == pytest.approx(1.05) and row["status"] != "regression"
    assert summary["regressions"] == []
    assert "0 regressions over 1 commit on machine m-main" in index.read_text()
    assert len(list((tmp_path / "out").glob("*.png"))) == 1


def test_only_infra_failures(tmp_path: Path) -> None:
    h = History(tmp_path / "h.db")
    for i in range(3):
        h.append(record(i, status="infra_failure", error=f"server {i} did not start & <died>", metrics=(LATENCY,)))
    index = write_dashboard(h, tmp_path / "out")
    page = index.read_text()
    assert "0 regressions over 3 commits" in page
    assert "server 1 did not start &amp; &lt;died&gt;" in page and "<died>" not in page
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert [f["commit"] for f in summary["infra_failures"]] == [sha(0), sha(1), sha(2)]
    assert all(c["status"] == "infra_failure" for c in summary["commits"])
    for row in summary["metrics"].get(LATENCY.name, {"commits": []})["commits"]:
        assert row["n"] == 0 and row["median"] is None and row["status"] != "regression"
    assert "Infrastructure failures" in (tmp_path / "out" / "summary.md").read_text()
