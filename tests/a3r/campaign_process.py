"""`python tests/a3r/campaign_process.py start PLAN REPO | resume REPO`: a campaign in its own process.

Synthetic trials on server-less pool members, so a test can `kill -9` the campaign mid-trial
without leaving servers behind.
"""

from __future__ import annotations

import sys
from pathlib import Path

from agentjet.a3r.engine import EngineOptions, resume_campaign, start_campaign
from agentjet.a3r.plan import load_plan

OPTIONS = EngineOptions(synthetic_members=True, heartbeat_s=0.1, pool_heartbeat_s=0.05)


def main(argv: list[str]) -> None:
    if argv[0] == "start":
        start_campaign(load_plan(argv[1]), Path(argv[2]), options=OPTIONS)
    else:
        resume_campaign(Path(argv[1]), options=OPTIONS)


if __name__ == "__main__":
    main(sys.argv[1:])
