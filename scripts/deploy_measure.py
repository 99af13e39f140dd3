"""Measure the deployment: the server image build (or reuse), and the compose example up to its first training step.

Run as root from the checkout with the private engine up (`sandboxes/engine.sh start`, then export the
AGENTJET_DOCKER_HOST it prints): `.venv/bin/python scripts/deploy_measure.py [--clients N] [--episodes E]`.
Prints JSON; the figures are in docs/deploy.md.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from agentjet.deploy.compose import ComposeSettings, write_compose  # noqa: E402
from agentjet.deploy.image import build_server_image  # noqa: E402
from agentjet.sandbox.docker.engine import connect, engine_host  # noqa: E402

STATUS = (
    "import httpx, json; t = open('/var/lib/agentjet/state/token').read().strip();"
    " c = httpx.Client(transport=httpx.HTTPTransport(uds='/run/agentjet/swarm.sock'), base_url='http://server');"
    " print(json.dumps(c.get('/swarm/status', headers={'Authorization': 'Bearer ' + t}).json()))"
)


def _compose(folder: Path, project: str, *args: str) -> str:
    env = {**os.environ, "DOCKER_HOST": engine_host()}
    done = subprocess.run(["docker-compose", "-p", project, *args], cwd=folder, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"docker-compose {' '.join(args)}: {done.stderr[-2000:]}")
    return done.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--clients", type=int, default=2)
    parser.add_argument("--episodes", type=int, default=8)
    options = parser.parse_args()
    result: dict[str, Any] = {}
    started = time.monotonic()
    image = build_server_image(progress=lambda line: print(line, file=sys.stderr))
    result["image"] = {"tag": image.content_tag, "built": image.built, "seconds": round(time.monotonic() - started, 1)}
    result["image"]["size_gb"] = round(connect().images.get(image.content_tag).attrs["Size"] / 1e9, 2)
    with tempfile.TemporaryDirectory(prefix="agentjet-deploy-measure-") as tmp:
        folder = Path(tmp)
        write_compose(
            folder, ComposeSettings(image=image.content_tag, clients=options.clients, episodes=options.episodes)
        )
        project = f"ajmeasure{os.getpid()}"
        docker = connect()
        try:
            up = time.monotonic()
            _compose(folder, project, "up", "-d")
            result["compose_up_returned_s"] = round(time.monotonic() - up, 1)
            while (
                docker.containers.get(f"{project}_server_1").attrs["State"].get("Health", {}).get("Status") != "healthy"
            ):
                time.sleep(0.5)
            result["server_healthy_s"] = round(time.monotonic() - up, 1)
            while True:
                status = json.loads(_compose(folder, project, "exec", "-T", "server", "python3", "-c", STATUS))
                if status["step"] >= 1 and "first_step_s" not in result:
                    result["first_step_s"] = round(time.monotonic() - up, 1)
                clients = [
                    docker.containers.get(f"{project}_client_{i}").attrs["State"] for i in range(1, options.clients + 1)
                ]
                if all(state["Status"] == "exited" for state in clients):
                    break
                time.sleep(1)
            result["clients_done_s"] = round(time.monotonic() - up, 1)
            result["client_exit_codes"] = [state["ExitCode"] for state in clients]
            result["steps"] = status["step"]
            result["episodes_finished"] = status["episodes"]["finished"]
        finally:
            _compose(folder, project, "down", "-v", "--timeout", "30")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
