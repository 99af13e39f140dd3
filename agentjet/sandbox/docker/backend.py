"""The Docker backend: each run is a fresh container with no network, a read-only root and hard limits.

The container: `network_mode=none` (only `lo`), read-only image root, private tmpfs `/work` and
`/tmp` owned by uid 65534, the staged files read-only at `/input` (copied into `/work` by the entry
step), the host's `agentjet/` read-only at `/opt/agentjet/agentjet`, user 65534:65534, every
capability dropped, no-new-privileges, memory (+swap = same), pids and CPU bandwidth through the
container's cgroup, RLIMIT_CPU/FSIZE/NOFILE/CORE, tini as PID 1 (reaps orphans), no logging driver
(output goes only to us) and no host env. Output streams through the attach API into capped
buffers; the host kills the container on the wall clock or when output passes its cap. The
container is always removed, even on Ctrl-C; if this process is killed outright, the command is
killed from inside 30 s after its wall limit and the next backend here removes the container.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from agentjet.sandbox.capture import CappedOutput
from agentjet.sandbox.docker.accounting import Accounting
from agentjet.sandbox.docker.image import ImageRef
from agentjet.sandbox.errors import SandboxError, SandboxUnavailable
from agentjet.sandbox.limits import Limits
from agentjet.sandbox.result import RunResult, StopReason
from agentjet.sandbox.runspec import (
    INPUT_DIR,
    SANDBOX_GID,
    SANDBOX_UID,
    SOURCE_MOUNT,
    SWARM_MOUNT,
    WORK_DIR,
    Bridge,
    agentjet_source,
    entry_command,
    sandbox_env,
    split_big_file,
    tree_bytes,
)
from agentjet.sandbox.verdict import Evidence, decide, human_size

__all__ = ["DockerBackend"]

_BUILD_FIX = "build it with `agentjet sandbox build` (or set AGENTJET_SANDBOX_IMAGE to a built tag)"
_NOFILE = 1024
_HELPER_PIDS = 8  # tini, the entry shell, timeout, the swarm forwarder and its threads: not the command's
_DEADLINE_GRACE_S = 30.0  # the in-container kill, should this process die before it could kill the container
_LABEL = "agentjet.sandbox.run"
_DEADLINE_LABEL = "agentjet.sandbox.deadline"  # epoch seconds after which the container is an orphan
_log = logging.getLogger(__name__)


class DockerBackend:
    """Runs commands in containers of the local engine. Thread-safe: concurrent runs share one client."""

    name = "docker"

    def __init__(self, image: ImageRef | None = None) -> None:
        self._image = image
        self._client: Any = None
        self._accounting: Accounting | None = None
        self._tag: str | None = None  # the image tag found in the engine by the last check
        self._lock = threading.Lock()

    def check(self) -> None:
        """Raise SandboxUnavailable (with the fix) unless the engine answers and has the image."""
        self._image_tag(self._connect())

    def run(
        self,
        command: Sequence[str],
        *,
        workdir: Path | None,
        limits: Limits,
        env: Mapping[str, str],
        swarm: Bridge | None,
    ) -> RunResult:
        """Run `command` to the end or to the first limit; `workdir`'s files are copied into /work first."""
        if not command:
            raise SandboxError("the command is empty")
        if workdir is not None and (size := tree_bytes(workdir)) > limits.workdir_bytes:
            raise SandboxError(
                f"the work dir {workdir} holds {human_size(size)}, over the {human_size(limits.workdir_bytes)}"
                " work-dir limit (Limits.workdir_bytes)"
            )
        client = self._connect()
        tag = self._tag or self._image_tag(client)
        accounting = self._accounting_for(client)
        run_id = uuid.uuid4().hex[:16]
        spec = _container_spec(tag, command, workdir, limits, env, swarm, accounting.parent(run_id))
        container = None
        try:
            deadline = time.time() + limits.timeout_s + 2 * _DEADLINE_GRACE_S
            labels = {_LABEL: run_id, _DEADLINE_LABEL: str(int(deadline))}
            container = client.containers.create(**spec, labels=labels)
            return _Execution(container, limits, accounting, run_id).run()
        except _image_not_found() as exc:  # removed from the engine since the check
            self._tag = None
            raise SandboxUnavailable(f"the engine has no image {tag}.", _BUILD_FIX) from exc
        except _docker_error() as exc:
            return _error_result(f"the engine refused the run: {exc}")
        finally:
            if container is not None:
                _remove(container)
            accounting.remove(run_id)

    def _connect(self) -> Any:
        with self._lock:
            if self._client is None:
                from agentjet.sandbox.docker.engine import connect

                client = connect()
                self._client = client
                _sweep_orphans(client, self._accounting_unlocked(client))
            return self._client

    def _image_tag(self, client: Any) -> str:
        from docker.errors import ImageNotFound

        from agentjet.sandbox.docker.image import find

        ref = self._image or find()
        if ref is None:
            raise SandboxUnavailable("no sandbox image is built.", _BUILD_FIX)
        try:
            client.images.get(ref.tag)
        except ImageNotFound as exc:
            raise SandboxUnavailable(f"the engine has no image {ref.tag}.", _BUILD_FIX) from exc
        self._tag = ref.tag
        return ref.tag

    def _accounting_for(self, client: Any) -> Accounting:
        with self._lock:
            return self._accounting_unlocked(client)

    def _accounting_unlocked(self, client: Any) -> Accounting:
        if self._accounting is None:
            from agentjet.sandbox.docker.engine import engine_host

            driver = str(client.info().get("CgroupDriver", ""))
            self._accounting = Accounting(engine_host=engine_host(), cgroup_driver=driver)
        return self._accounting


def _container_spec(
    tag: str,
    command: Sequence[str],
    workdir: Path | None,
    limits: Limits,
    env: Mapping[str, str],
    swarm: Bridge | None,
    cgroup_parent: str | None,
) -> dict[str, Any]:
    """`containers.create` arguments: every isolation and limit of the module docstring."""
    from docker.types import LogConfig, Mount, Ulimit

    mounts = [Mount(SOURCE_MOUNT, str(agentjet_source()), type="bind", read_only=True)]
    if workdir is not None:
        mounts.append(Mount(INPUT_DIR, str(workdir.resolve()), type="bind", read_only=True))
    if swarm is not None:
        mounts.append(Mount(SWARM_MOUNT, str(swarm.socket_dir), type="bind", read_only=True))
    owner = f"uid={SANDBOX_UID},gid={SANDBOX_GID}"
    ulimits = [
        Ulimit(name="fsize", soft=limits.file_size_bytes, hard=limits.file_size_bytes),
        Ulimit(name="nofile", soft=_NOFILE, hard=_NOFILE),
        Ulimit(name="core", soft=0, hard=0),  # no core dumps: a host core_pattern helper must never run
    ]
    if limits.cpu_seconds is not None:  # SIGXCPU at the soft limit, SIGKILL one second later
        ulimits.append(Ulimit(name="cpu", soft=limits.cpu_seconds, hard=limits.cpu_seconds + 1))
    spec: dict[str, Any] = {
        "image": tag,
        "command": entry_command(
            command,
            copy_input=workdir is not None,
            swarm=swarm,
            file_size_bytes=limits.file_size_bytes,
            deadline_s=limits.timeout_s + _DEADLINE_GRACE_S,
        ),
        "environment": sandbox_env(env, swarm),
        "working_dir": WORK_DIR,
        "user": f"{SANDBOX_UID}:{SANDBOX_GID}",
        "hostname": "sandbox",
        "network_mode": "none",
        "dns": ["127.0.0.1"],  # a lookup goes to the sandbox's own loopback and fails there
        "read_only": True,
        "tmpfs": {
            WORK_DIR: f"rw,exec,nosuid,nodev,size={limits.workdir_bytes},mode=0755,{owner}",
            "/tmp": f"rw,exec,nosuid,nodev,size={limits.tmp_bytes},mode=1777",
        },
        "shm_size": limits.tmp_bytes,
        "mounts": mounts,
        "cap_drop": ["ALL"],
        "security_opt": ["no-new-privileges"],
        "mem_limit": limits.memory_bytes,
        "memswap_limit": limits.memory_bytes,
        "pids_limit": limits.pids + _HELPER_PIDS,
        "nano_cpus": int(limits.cpus * 1e9),
        "ulimits": ulimits,
        "init": True,
        "log_config": LogConfig(type="none"),
    }
    if cgroup_parent is not None:
        spec["cgroup_parent"] = cgroup_parent
    return spec


class _Execution:
    """One container from start to exit: pump its output, enforce the wall clock and the output cap."""

    def __init__(self, container: Any, limits: Limits, accounting: Accounting, run_id: str) -> None:
        self.container = container
        self.limits = limits
        self.accounting = accounting
        self.run_id = run_id
        self.stdout = CappedOutput(limits.output_bytes)
        self.stderr = CappedOutput(limits.output_bytes)
        self.wake = threading.Event()  # set when the output is over its cap or the stream ended
        self.killed_for: StopReason | None = None

    def run(self) -> RunResult:
        stream = self.container.attach(stdout=True, stderr=True, stream=True, logs=False, demux=True)
        pump = threading.Thread(target=self._pump, args=(stream,), name="sandbox-output", daemon=True)
        try:
            started = time.monotonic()
            self.container.start()
            pump.start()
            deadline = started + self.limits.timeout_s
            self._watch(deadline)
            status = self._wait(deadline)
            wall_s = time.monotonic() - started
            pump.join(timeout=10.0)
        finally:
            stream.close()
        return self._result(status, wall_s)

    def _pump(self, stream: Any) -> None:
        try:
            for out, err in stream:
                if out:
                    self.stdout.feed(out)
                if err:
                    self.stderr.feed(err)
                if self.stdout.over or self.stderr.over:
                    self.wake.set()  # keep draining (and dropping) until the kill ends the stream
        except Exception:  # a stream closed under us ends the pump; the exit status says the rest
            pass
        finally:
            self.wake.set()

    def _watch(self, deadline: float) -> None:
        """Until the output stream ends: kill on the wall clock or on too much output."""
        if not self.wake.wait(timeout=max(0.0, deadline - time.monotonic())):
            self._kill(StopReason.TIMEOUT)
        elif self.stdout.over or self.stderr.over:
            self._kill(StopReason.OUTPUT)

    def _wait(self, deadline: float) -> int | None:
        """The exit status; a container that closed its output but keeps running is killed at the deadline."""
        from requests.exceptions import ConnectionError, ReadTimeout

        for _ in range(2):
            timeout = max(1.0, deadline - time.monotonic() + 1.0) if self.killed_for is None else 30.0
            try:
                return int(self.container.wait(timeout=timeout)["StatusCode"])
            except (ReadTimeout, ConnectionError):
                self._kill(StopReason.TIMEOUT)
        return None

    def _kill(self, reason: StopReason) -> None:
        if self.killed_for is None:
            self.killed_for = reason
        try:
            self.container.kill()
        except _docker_error():
            pass  # already exited

    def _result(self, status: int | None, wall_s: float) -> RunResult:
        state = self.container.client.api.inspect_container(self.container.id)["State"]
        usage = self.accounting.usage(self.run_id, self.limits.pids + _HELPER_PIDS)
        stderr, big_file = split_big_file(self.stderr.text())
        evidence = Evidence(
            status=status,
            killed_for=self.killed_for,
            oom_killed=bool(state.get("OOMKilled")) or usage.oom_killed,
            pids_limit_hit=usage.pids_limit_hit,
            cpu_s=usage.cpu_s,
            stderr=stderr,
            big_file=big_file,
        )
        verdict = decide(evidence, self.limits)
        return RunResult(
            backend="docker",
            exit_code=verdict.exit_code,
            stopped_by=verdict.stopped_by,
            stdout=self.stdout.text(),
            stderr=evidence.stderr,
            stdout_truncated=self.stdout.over,
            stderr_truncated=self.stderr.over,
            wall_s=wall_s,
            cpu_s=usage.cpu_s,
            peak_memory_bytes=usage.peak_memory_bytes,
            detail=verdict.detail,
        )


def _docker_error() -> type[Exception]:
    from docker.errors import DockerException

    error: type[Exception] = DockerException
    return error


def _sweep_orphans(client: Any, accounting: Accounting) -> None:
    """Remove sandbox containers (and their cgroup parents) past their deadline label: a host process
    killed mid-run (kill -9) could not remove them. Their command was already killed from inside."""
    now = time.time()
    try:  # the plain list call: no inspect per container, which races with runs removing theirs
        rows = client.api.containers(all=True, filters={"label": _DEADLINE_LABEL})
    except _docker_error() as exc:
        _log.warning("could not list sandbox containers: %s", exc)
        return
    for row in rows:
        labels = row.get("Labels") or {}
        try:
            overdue = int(labels.get(_DEADLINE_LABEL, "0")) < now
        except ValueError:
            overdue = True
        if overdue:
            _log.warning("removing sandbox container %s left by an interrupted run", row["Id"][:12])
            _remove(client.containers.prepare_model({"Id": row["Id"]}))
            accounting.remove(labels.get(_LABEL, "missing"))


def _image_not_found() -> type[Exception]:
    from docker.errors import ImageNotFound

    error: type[Exception] = ImageNotFound
    return error


def _remove(container: Any) -> None:
    """Force-remove (kills it if still running); retried once, since this is the only cleanup there is."""
    for attempt in range(2):
        try:
            container.remove(force=True)
            return
        except _docker_error() as exc:
            if "No such container" in str(exc):
                return
            if attempt:
                _log.warning("could not remove sandbox container %s: %s", container.id, exc)
                return
            time.sleep(0.2)


def _error_result(detail: str) -> RunResult:
    return RunResult(
        backend="docker",
        exit_code=None,
        stopped_by=StopReason.ERROR,
        stdout="",
        stderr="",
        stdout_truncated=False,
        stderr_truncated=False,
        wall_s=0.0,
        cpu_s=None,
        peak_memory_bytes=None,
        detail=detail,
    )
