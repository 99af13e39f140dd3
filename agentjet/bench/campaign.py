"""`agentjet bench campaign`: the campaign engine's overhead per trial and pool utilisation.

Trials are the model-free synthetic kind (`agentjet.a3r.trial.synthetic`: each step sleeps `step_s`),
so the time outside the sleeps is the campaign's: `study.ask`, the report/prune writes at each
eval, `study.tell`, the gap before a freed server gets its next trial, and (after the server is
released) the trial's files and git commit. Pool members are four real `agentjet server start`
processes serving `tiny` by default, started before the clock starts: a synthetic trial only
watches its server's health, as the pool's heartbeats do. `--members synthetic` uses server-less
members instead (no process, no health HTTP): the quick mode and the tests use it. There is no
confirmation phase (its barrier idles servers by design, which is not scheduler overhead).

Figures (`agentjet.a3r.session.timing.CampaignResult`): `utilization` = server time held by trials /
server time available from the first launch to the last trial's end (target >= 0.9);
`work_utilization` counts only the trials' own work (held time minus their report writes);
`overhead_per_trial_s` = ask + report + tell + launch gap per trial; `record_per_trial_s` = files,
curve.png, study.json and the commit per trial (off the server's path).
"""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path
from typing import Any, Literal

from agentjet.a3r.plan.campaign_plan import parse_plan
from agentjet.a3r.pool.servers import ServerPool
from agentjet.a3r.session.campaign import EngineOptions, start_campaign
from agentjet.a3r.session.timing import launch_gaps
from agentjet.bench.output import print_result

__all__ = ["TARGET_UTILIZATION", "main", "run_campaign_bench"]

TARGET_UTILIZATION = 0.9
Members = Literal["local", "synthetic"]
_PLAN = """---
name: bench-campaign
task: {{family: synthetic, params: {{step_s: {step_s}, noise: 0.02}}}}
search_space:
  lr: {{low: 1.0e-5, high: 1.0e-2, log: true}}
  lora_rank: {{choices: [4, 8, 16, 32]}}
  group_size: {{low: 2, high: 8, step: 2}}
sampler: {{name: tpe, seed: 0}}
pruner: {{name: median, warmup_steps: 2, startup_trials: 4}}
budget: {{trials: {trials}, steps_per_trial: {steps}, eval_every: 1, eval_items: 1}}
pool: local:{servers}
seeds: {{base: 0, confirm: 0}}
storage: {storage}
---
"""


def run_campaign_bench(
    *,
    quick: bool = False,
    servers: int = 4,
    trials: int = 40,
    steps: int = 5,
    step_s: float = 0.2,
    members: Members = "local",
    storage: str = "sqlite",
    model: str = "tiny",
    out: Path | None = None,
) -> dict[str, Any]:
    """Run one synthetic campaign on `servers` members and measure it (quick: 8 short trials, synthetic members)."""
    if quick:
        trials, steps, step_s, members = 8, 3, 0.05, "synthetic"
    plan = parse_plan(_PLAN.format(step_s=step_s, trials=trials, steps=steps, servers=servers, storage=storage))
    with tempfile.TemporaryDirectory(prefix="agentjet-bench-campaign-") as tmp:
        root = out if out is not None else Path(tmp)
        started = time.perf_counter()
        if members == "synthetic":
            pool = ServerPool.synthetic(servers)
        else:
            pool = ServerPool.from_spec(f"local:{servers}", root / "pool-runtime", model=model, progress=lambda _: None)
        pool_start_s = time.perf_counter() - started
        with pool:
            result = start_campaign(plan, root / "repo", options=EngineOptions(heartbeat_s=1.0), pool=pool)
    timings = result.timings
    gaps = launch_gaps(timings)
    window = max(t.ended_at for t in timings) - min(t.launched_at for t in timings)
    utilization = result.utilization or 0.0
    return {
        "overhead_per_trial_s": _round(result.overhead_per_trial_s),
        "utilization": round(utilization, 4),
        "work_utilization": _round(result.work_utilization),
        "target_utilization": TARGET_UTILIZATION,
        "meets_target": utilization >= TARGET_UTILIZATION,
        "record_per_trial_s": _round(result.record_per_trial_s),
        "ask_s": _round(statistics.fmean(t.ask_s for t in timings)),
        "report_s": _round(statistics.fmean(t.report_s for t in timings)),
        "tell_s": _round(statistics.fmean(t.tell_s for t in timings)),
        "launch_gap_s": _round(statistics.fmean(gaps) if gaps else 0.0),
        "trial_work_s": round(steps * step_s, 4),
        "trials": len(timings),
        "states": result.states,
        "servers": servers,
        "members": members,
        "storage": storage,
        "window_s": round(window, 3),
        "wall_s": round(result.wall_s, 3),
        "pool_start_s": round(pool_start_s, 3),
    }


def _round(value: float | None) -> float | None:
    return round(value, 4) if value is not None else None


def main(*, as_json: bool, **options: Any) -> dict[str, Any]:
    """Run the bench and print its figures (JSON with `as_json`)."""
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    result = run_campaign_bench(**options)
    print_result(result, as_json=as_json)
    return result
