"""`python tests/a3r/campaign_process.py [--local] start PLAN REPO | resume REPO`: a campaign in its own process.

Synthetic trials on server-less pool members by default, so a test can `kill -9` the campaign
mid-trial without leaving servers behind; `--local` runs the plan's own pool of real local servers
(they end within a second of the campaign's death, see `agentjet.core.launch.parent_watch`).
"""

from __future__ import annotations

import sys
from pathlib import Path

from agentjet.a3r.plan.campaign_plan import load_plan
from agentjet.a3r.session.campaign import EngineOptions, resume_campaign, start_campaign

OPTIONS = EngineOptions(synthetic_members=True, heartbeat_s=0.1, pool_heartbeat_s=0.05)
LOCAL_OPTIONS = EngineOptions(heartbeat_s=0.1, pool_heartbeat_s=0.2)


def main(argv: list[str]) -> None:
    options = OPTIONS
    if argv[0] == "--local":
        options, argv = LOCAL_OPTIONS, argv[1:]
    if argv[0] == "start":
        start_campaign(load_plan(argv[1]), Path(argv[2]), options=options)
    else:
        resume_campaign(Path(argv[1]), options=options)


if __name__ == "__main__":
    main(sys.argv[1:])
