"""The nightly dashboard: what the history says about each metric, as a static page, markdown and JSON.

A regression is only useful when someone sees it; the page shows every metric's samples along the
commits with the detector's verdicts, the markdown is short enough for a CI summary or a chat message,
and the JSON carries the same figures for other tools. The page is plain HTML and PNG files (no
JavaScript, nothing fetched), so it opens from `file://` and can be published as is. Commit subjects,
errors, metric names and notes are untrusted: all of them are escaped, and metric names never become
paths outside the output folder.
"""

from __future__ import annotations

import html
import json
import math
import re
import statistics
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urlsplit

from agentjet.nightly.dashboard_plot import plot_metric
from agentjet.nightly.detect import Analysis, Verdict, analyse, flagged
from agentjet.nightly.metrics import Metric, RunRecord

if TYPE_CHECKING:
    from agentjet.nightly.history import History

__all__ = ["analyse_history", "markdown_summary", "safe_name", "summary_json", "write_dashboard"]

BAND_SIGMAS = 2.5  # the shaded band: baseline median ± BAND_SIGMAS × noise × median (rank metrics)
# A commit with several verdicts (re-runs) shows the most telling one.
_PRIORITY = ("regression", "improvement", "unstable", "ok", "baseline", "missing", "infra_failure")


def analyse_history(
    history: History, *, machine: str | None = None, suite: str | None = None, alpha: float = 0.01
) -> tuple[list[RunRecord], list[Analysis]]:
    """The runs of one machine (default: the one with the most runs) and one `Analysis` per metric they declare."""
    if machine is None:
        counts = Counter(run.machine for run in history.runs(suite=suite))
        if not counts:
            return [], []
        machine = min(counts, key=lambda m: (-counts[m], m))
    runs = list(history.runs(machine=machine, suite=suite))
    declared: dict[str, Metric] = {}
    for run in runs:  # commit order: the latest declaration wins
        declared.update(run.metrics)
    return runs, [analyse(declared[name], runs, alpha=alpha) for name in sorted(declared)]


def safe_name(name: str) -> str:
    """`name` as a file name: only [A-Za-z0-9._-], never hidden, never `..`."""
    return re.sub(r"[^A-Za-z0-9._-]", "_", name).lstrip(".") or "metric"


def _num(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and math.isfinite(value) else None


def _short(sha: str) -> str:
    return sha[:10]


def _commits(runs: Sequence[RunRecord]) -> list[dict[str, Any]]:
    """One entry per commit in order: ok when any of its runs is, else the (last) infrastructure error."""
    by_sha: dict[str, dict[str, Any]] = {}
    for run in runs:
        entry = by_sha.setdefault(
            run.commit, {"sha": run.commit, "subject": run.subject, "order": run.commit_order, "runs": []}
        )
        entry["runs"].append(run)
    for entry in by_sha.values():
        ok = any(run.status == "ok" for run in entry["runs"])
        errors = [run.error for run in entry["runs"] if run.status != "ok" and run.error]
        entry["status"] = "ok" if ok else "infra_failure"
        entry["error"] = None if ok else (errors[-1] if errors else None)
    return sorted(by_sha.values(), key=lambda e: e["order"])


def _finite(run: RunRecord, name: str) -> list[float]:
    return [float(v) for v in run.samples.get(name, []) if _num(v) is not None]


def _verdicts(analysis: Analysis) -> dict[str, Verdict]:
    best: dict[str, Verdict] = {}
    rank = {status: i for i, status in enumerate(_PRIORITY)}
    for verdict in analysis.verdicts:
        old = best.get(verdict.commit)
        if old is None or rank.get(verdict.status, 99) <= rank.get(old.status, 99):
            best[verdict.commit] = verdict
    return best


def _rows(commits: list[dict[str, Any]], analysis: Analysis) -> list[dict[str, Any]]:
    """Per commit of one metric: x position, sample statistics, verdict and the baseline band."""
    metric, verdicts = analysis.metric, _verdicts(analysis)
    samples_of = {
        c["sha"]: [v for r in c["runs"] if r.status == "ok" for v in _finite(r, metric.name)] for c in commits
    }
    rows = []
    for x, commit in enumerate(commits):
        samples, verdict = samples_of[commit["sha"]], verdicts.get(commit["sha"])
        if not samples and verdict is None and commit["status"] == "ok":
            continue
        pooled = [v for sha in (verdict.baseline if verdict else ()) for v in samples_of.get(sha, [])]
        base = statistics.median(pooled) if pooled else None
        noise = _num(verdict.noise if verdict and verdict.noise is not None else analysis.noise)
        half = None
        if base is not None:
            half = metric.min_effect if metric.test == "exact" else (BAND_SIGMAS * noise * abs(base) if noise else None)
        rows.append(
            {
                "x": x,
                "sha": commit["sha"],
                "subject": commit["subject"],
                "samples": samples,
                "median": statistics.median(samples) if samples else None,
                "min": min(samples) if samples else None,
                "max": max(samples) if samples else None,
                "n": len(samples),
                "status": verdict.status if verdict else ("infra_failure" if commit["status"] != "ok" else "missing"),
                "effect": _num(verdict.effect) if verdict else None,
                "p_value": _num(verdict.p_value) if verdict else None,
                "reason": verdict.reason if verdict else (commit["error"] or ""),
                "baseline_median": base,
                "band": None if base is None or half is None else [base - half, base + half],
            }
        )
    return rows


def _note(note: Any) -> dict[str, Any]:
    def get(key: str) -> Any:
        return note.get(key) if isinstance(note, dict) else getattr(note, key, None)

    return {key: None if get(key) is None else str(get(key)) for key in ("kind", "text", "commit", "date")}


def _label(values: Iterable[str]) -> str | None:
    distinct = sorted(set(values))
    return ", ".join(distinct) if distinct else None


def summary_json(
    runs: Sequence[RunRecord], analyses: Sequence[Analysis], *, notes: Iterable[Any] = ()
) -> dict[str, Any]:
    """Everything the page shows, as JSON-safe data (non-finite numbers become null)."""
    commits = _commits(runs)
    metrics: dict[str, Any] = {}
    for analysis in analyses:
        rows = _rows(commits, analysis)
        metrics[analysis.metric.name] = {
            "declaration": analysis.metric.to_dict(),
            "noise": _num(analysis.noise),
            "unstable": bool(analysis.unstable),
            "commits": [{k: v for k, v in row.items() if k not in ("x", "samples")} for row in rows],
            "steps": [
                {
                    "commit": s.commit,
                    "index": s.index,
                    "kind": s.kind,
                    "effect": _num(s.effect),
                    "p_value": _num(s.p_value),
                }
                for s in analysis.steps
            ],
        }
    subjects = {c["sha"]: c["subject"] for c in commits}
    regressions = [
        {
            "metric": v.metric,
            "commit": v.commit,
            "subject": v.subject or subjects.get(v.commit, ""),
            "effect": _num(v.effect),
            "p_value": _num(v.p_value),
            "reason": v.reason,
        }
        for v in flagged(list(analyses))
        if v.status == "regression"
    ]
    infra = [
        {"commit": r.commit, "subject": r.subject, "run_id": r.run_id, "date": r.date, "error": r.error}
        for r in runs
        if r.status == "infra_failure"
    ]
    last = runs[-1] if runs else None
    summary = {
        "machine": _label(r.machine for r in runs),
        "machine_info": dict(last.machine_info) if last else {},
        "suite": _label(r.suite for r in runs),
        "commits": [{k: c[k] for k in ("sha", "subject", "order", "status", "error")} for c in commits],
        "metrics": metrics,
        "regressions": regressions,
        "infra_failures": infra,
        "notes": [_note(n) for n in notes],
    }
    safe: dict[str, Any] = json.loads(
        json.dumps(summary, default=str)
    )  # JSON-safe all the way down (machine_info may hold anything)
    return safe


def _fmt(value: float | None) -> str:
    return "–" if value is None else f"{value:.4g}"


def _effect(value: float | None, metric: Metric | None) -> str:
    if value is None:
        return "–"
    if metric is not None and metric.test == "exact":
        return f"{value:+.4g} {metric.unit}".strip()
    return f"{value * 100:+.1f} %"


def _noise(value: float | None, metric: Metric) -> str:
    if value is None:
        return "–"
    return f"{value:.4g} {metric.unit}".strip() if metric.test == "exact" else f"{value * 100:.2f} %"


def _headline(summary: dict[str, Any]) -> str:
    n, m = len(summary["regressions"]), len(summary["commits"])
    return (
        f"{n} regression{'s' * (n != 1)} over {m} commit{'s' * (m != 1)} on machine {summary['machine'] or '–'}"
        f" (suite {summary['suite'] or '–'})"
    )


_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]<>()#+!|~])")


def _md(text: Any) -> str:
    """`text` safe inside a markdown table cell: specials backslash-escaped, one line."""
    return _MD_SPECIAL.sub(r"\\\1", " ".join(str(text).split()))


def markdown_summary(runs: Sequence[RunRecord], analyses: Sequence[Analysis], *, notes: Iterable[Any] = ()) -> str:
    """A short report for a CI summary: headline, regressions, unstable metrics, infra failures, noise."""
    summary = summary_json(runs, analyses, notes=notes)
    declared = {a.metric.name: a.metric for a in analyses}
    lines = ["# Nightly regressions", "", f"**{_md(_headline(summary))}**", ""]
    if not runs:
        return "\n".join([*lines, "No runs yet.", ""])
    if summary["regressions"]:
        lines += ["## Regressions", "", "| metric | commit | effect | p |", "|---|---|---|---|"]
        for r in summary["regressions"]:
            commit = f"{_md(_short(r['commit']))} {_md(r['subject'])}"
            effect = _effect(r["effect"], declared.get(r["metric"]))
            lines.append(f"| {_md(r['metric'])} | {commit} | {effect} | {_fmt(r['p_value'])} |")
        lines.append("")
    unstable = [a for a in analyses if a.unstable]
    if unstable:
        lines += ["## Unstable metrics", ""]
        lines += [f"- {_md(a.metric.name)}: noise {_noise(_num(a.noise), a.metric)}" for a in unstable] + [""]
    if summary["infra_failures"]:
        lines += ["## Infrastructure failures", ""]
        for f in summary["infra_failures"]:
            lines.append(f"- {_md(_short(f['commit']))} {_md(f['subject'])}: {_md(f['error'] or 'no error recorded')}")
        lines.append("")
    if analyses:
        lines += ["## Noise", "", "| metric | noise |", "|---|---|"]
        lines += [f"| {_md(a.metric.name)} | {_noise(_num(a.noise), a.metric)} |" for a in analyses] + [""]
    if summary["notes"]:
        lines += ["## Notes", ""]
        lines += [
            f"- {_md(n['kind'] or '')} {_md(n['commit'] or '')[:10]}: {_md(n['text'] or '')}" for n in summary["notes"]
        ]
        lines.append("")
    return "\n".join(lines)


def _commit_link(template: str | None, sha: str) -> str:
    text = html.escape(_short(sha))
    if template is None:
        return f"<code>{text}</code>"
    return f'<a href="{html.escape(template.replace("{sha}", quote(sha, safe="")))}"><code>{text}</code></a>'


def _check_template(commit_url: str | None) -> None:
    parts = urlsplit(commit_url or "")
    if commit_url is not None and (
        parts.scheme not in ("http", "https") or not parts.netloc or "{sha}" not in commit_url
    ):
        raise ValueError(f"commit_url must be an http(s) URL template containing {{sha}}, got {commit_url!r}")


_CSS = """body{font-family:system-ui,sans-serif;margin:2em;max-width:80em;color:#222}
table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:.2em .5em;text-align:left}
tr.regression{background:#fdd}tr.improvement{background:#dfd}tr.infra_failure{color:#888}
.headline{font-size:1.2em;font-weight:bold}img{max-width:100%}section{margin-top:2em}"""


def _table(head: Sequence[str], rows: Sequence[Sequence[str]], classes: Sequence[str] = ()) -> str:
    """An HTML table; `head` and the cells must already be escaped."""
    out = ["<table><tr>" + "".join(f"<th>{h}</th>" for h in head) + "</tr>"]
    for row, cls in zip(rows, list(classes) or [""] * len(rows), strict=True):
        attr = f' class="{html.escape(cls)}"' if cls else ""
        out.append(f"<tr{attr}>" + "".join(f"<td>{cell}</td>" for cell in row) + "</tr>")
    return "\n".join(out) + "</table>"


def _metric_section(analysis: Analysis, rows: list[dict[str, Any]], image: str, commit_url: str | None) -> str:
    m, e = analysis.metric, html.escape
    min_effect = f"{m.min_effect:g} {m.unit}".strip() if m.test == "exact" else f"{m.min_effect * 100:g} %"
    facts = [
        f"unit: {e(m.unit)}",
        f"{e(m.direction)} is better",
        f"test: {e(m.test)}",
        f"min effect: {e(min_effect)}",
        f"noise: {e(_noise(_num(analysis.noise), m))}",
    ]
    if analysis.unstable:
        facts.append("<strong>unstable</strong>")
    cells = [
        [_commit_link(commit_url, r["sha"]), e(r["subject"]), e(_fmt(r["median"])), str(r["n"])]
        + [e(r["status"]), e(_effect(r["effect"], m)), e(_fmt(r["p_value"]))]
        for r in rows
    ]
    table = _table(["commit", "subject", "median", "n", "verdict", "effect", "p"], cells, [r["status"] for r in rows])
    return (
        f'<section id="{e(safe_name(m.name))}"><h2>{e(m.name)}</h2>\n<p>{" · ".join(facts)}</p>\n'
        + (f"<p>{e(m.description)}</p>\n" if m.description else "")
        + f'<img src="{e(quote(image))}" alt="{e(m.name)} along the commits">\n{table}</section>'
    )


def write_dashboard(
    history: History,
    out_dir: Path,
    *,
    machine: str | None = None,
    suite: str | None = None,
    commit_url: str | None = None,
    alpha: float = 0.01,
) -> Path:
    """Write index.html, one PNG per metric, summary.md and summary.json into `out_dir`; return index.html."""
    _check_template(commit_url)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    runs, analyses = analyse_history(history, machine=machine, suite=suite, alpha=alpha)
    notes = list(history.notes())
    summary = summary_json(runs, analyses, notes=notes)
    (out_dir / "summary.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    (out_dir / "summary.md").write_text(markdown_summary(runs, analyses, notes=notes), encoding="utf-8")
    e, declared = html.escape, {a.metric.name: a.metric for a in analyses}
    title = f"AgentJet nightly: {summary['suite'] or 'no suite'} on {summary['machine'] or 'no machine'}"
    body = [f"<h1>{e(title)}</h1>", f'<p class="headline">{e(_headline(summary))}</p>']
    if not runs:
        body.append("<p>There are no runs yet: run a nightly suite to fill the history.</p>")
    else:
        info = summary["machine_info"]
        if info:
            body.append(
                "<h2>Machine</h2>" + _table(["key", "value"], [[e(str(k)), e(str(v))] for k, v in info.items()])
            )
        if summary["regressions"]:
            rows = [
                [e(r["metric"]), _commit_link(commit_url, r["commit"]) + " " + e(r["subject"])]
                + [e(_effect(r["effect"], declared.get(r["metric"])))]
                + [e(_fmt(r["p_value"])), e(r["reason"])]
                for r in summary["regressions"]
            ]
            body.append("<h2>Regressions</h2>" + _table(["metric", "commit", "effect", "p", "reason"], rows))
        if summary["infra_failures"]:
            rows = [
                [_commit_link(commit_url, f["commit"]), e(f["subject"]), e(f["date"] or ""), e(f["error"] or "")]
                for f in summary["infra_failures"]
            ]
            body.append("<h2>Infrastructure failures</h2>" + _table(["commit", "subject", "date", "error"], rows))
        if summary["notes"]:
            rows = [
                [e(n["kind"] or ""), e(_short(n["commit"] or "")), e(n["date"] or ""), e(n["text"] or "")]
                for n in summary["notes"]
            ]
            body.append("<h2>Notes</h2>" + _table(["kind", "commit", "date", "text"], rows))
    commits = _commits(runs)
    labels = [_short(c["sha"]) for c in commits]
    positions = {c["sha"]: x for x, c in enumerate(commits)}
    for i, analysis in enumerate(analyses):
        image = f"metric-{i:02d}-{safe_name(analysis.metric.name)}.png"  # the index keeps sanitised names apart
        per_commit = _rows(commits, analysis)
        steps = [(positions[s.commit], s.kind) for s in analysis.steps if s.commit in positions]
        plot_metric(out_dir / image, analysis.metric, labels, per_commit, steps)
        body.append(_metric_section(analysis, per_commit, image, commit_url))
    page = (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{e(title)}</title><style>{_CSS}</style></head>\n<body>\n" + "\n".join(body) + "\n</body></html>\n"
    )
    index = out_dir / "index.html"
    index.write_text(page, encoding="utf-8")
    return index
