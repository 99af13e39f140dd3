"""The run's own server and its training, started during validation, so nothing waits for them twice.

Validation's real episodes need a server of the run's model, and so does training. Before, validation
started a throwaway one (~5 s on 2 cores) and the launch another; now the validate node starts the run's
own (its train.yaml written, state in the workspace's `state/`, as `launch` would) on a thread while
the tests and the dry run go on, plays the real episodes on it as `kind="eval"` (never trained, and
not among the held-out rounds, which count only their own episode ids), and `launch` takes it over.

`PendingServer` holds that start until someone takes the handle (`take`: the launch) or the run ends
(`close`: a run that fails or stops before training stops it). A process killed meanwhile leaves the
server running on its state dir, recorded in `state/launch.json`, and a resumed run adopts it, as it
adopts one a killed training left.

Training beside the checks: the real episodes (~45 s on 2 cores) and the red team (~25 s) used to run before
the first training game. `start_beside_checks` now launches training on that server as soon as the dry run has
passed, with `collect.hold` set on every server, so the first round's games play beside the checks while no
update can start; the launch node lets it go (`BesideChecks.release`) once the red team has passed. A failed
check stops that training (`BesideChecks.stop`), and nothing it played is trained on: launch.json records the
workspace commit the held training began at, and `discard_stale`, run as each validation begins, moves a state
dir whose held training began at another commit (a repair changed a file since) aside to `state.discarded/`,
stopping what still runs on it. A held training of the same files (a resumed process) is kept, and the launch
releases it.
"""

from __future__ import annotations

import logging
import shutil
import threading
import time
from collections.abc import Callable
from pathlib import Path

from agentjet.sandbox import SwarmAccess
from agentjet.vibe.errors import VibeError
from agentjet.vibe.run.launch import (
    HELD_FOR_CHECKS,
    TrainingRun,
    launch,
    release_checks_hold,
    stop,
    stop_stray_clients,
    write_config,
)
from agentjet.vibe.run.launch_options import LaunchOptions
from agentjet.vibe.run.swarm_server import (
    STATE_DIR,
    Progress,
    ServerHandle,
    ensure_server,
    read_launch_file,
    stop_recorded_servers,
    stop_server,
    write_launch_file,
)
from agentjet.vibe.workspace import Workspace

__all__ = ["DISCARDED_DIR", "BesideChecks", "PendingServer", "discard_stale", "start_beside_checks", "start_early"]

log = logging.getLogger(__name__)


class PendingServer:
    """A server start running on a thread: wait for its access, take its handle, or stop it."""

    def __init__(self, start: Callable[[], ServerHandle], workspace: Path) -> None:
        self.workspace = workspace
        self._handle: ServerHandle | None = None
        self._error: BaseException | None = None
        self._taken = False
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, args=(start,), name="vibe-early-server", daemon=True)
        self._thread.start()

    def _run(self, start: Callable[[], ServerHandle]) -> None:
        try:
            self._handle = start()
        except BaseException as exc:  # kept for whoever waits: they say what failed
            self._error = exc

    def _wait(self) -> ServerHandle:
        self._thread.join()
        if self._handle is None:
            raise VibeError(f"the run's server did not start: {self._error}")
        return self._handle

    def access(self) -> SwarmAccess:
        """URL and token once it rolls (blocks until then); VibeError when it did not start or was taken."""
        handle = self._wait()
        if self._taken:
            raise VibeError("the run's server was already handed to the launch")
        return SwarmAccess(handle.url, handle.token)

    def take(self) -> ServerHandle | None:
        """The handle, now the caller's to stop; None when it did not start or has died since (the caller
        starts or adopts one itself)."""
        with self._lock:
            if self._taken:
                return None
            self._taken = True
        try:
            handle = self._wait()
        except VibeError as exc:
            log.warning("%s: the launch starts one", exc)
            return None
        return handle if handle.is_alive() else None

    def close(self) -> None:
        """Stop the server unless the launch took it (a run that ended before training)."""
        with self._lock:
            if self._taken:
                return
            self._taken = True
        try:
            handle = self._wait()
        except VibeError:
            return
        stop_server(handle)
        write_launch_file(self.workspace, server_pid=None)


def start_early(workspace: Workspace, options: LaunchOptions, progress: Progress) -> PendingServer:
    """Write the run's train.yaml and start (or adopt) its first server on a thread."""
    config_path = write_config(workspace, options)
    return PendingServer(
        lambda: ensure_server(
            workspace.path,
            model=options.model,
            config_path=config_path,
            progress=progress,
            ready_timeout_s=options.ready_timeout_s,
        ),
        workspace.path,
    )


DISCARDED_DIR = "state.discarded"  # a held training's state after its checks failed (kept to read, never trained)


class BesideChecks:
    """A training launched beside the checks, held still until `release`."""

    def __init__(self, run: TrainingRun) -> None:
        self.run = run

    def access(self) -> SwarmAccess:
        """The run's (first) server, for validation's real episodes."""
        return SwarmAccess(self.run.server.url, self.run.server.token)

    def release(self) -> TrainingRun:
        """The checks passed: every server may train; the launch node watches the run from here."""
        release_checks_hold(self.run.workspace, self.run.all_servers())
        self.run.progress("checks passed: the held training may update now")
        return self.run

    def stop(self) -> None:
        """A check failed or the run ended before training: stop the client and the servers (what they played
        is discarded as the next validation begins, if a repair changed the files)."""
        stop(self.run)


def start_beside_checks(
    workspace: Workspace, options: LaunchOptions, pending: PendingServer, *, started_at: float, progress: Progress
) -> BesideChecks | None:
    """Launch training on the server validation started, every server held; None where it cannot (a server
    reused by URL, or one that did not start: the launch after the checks starts training as before)."""
    if options.server_url is not None:
        return None
    try:
        pending.access()  # started and rolling, or VibeError
    except VibeError:
        return None
    server = pending.take()
    if server is None:
        return None
    began = time.monotonic()
    run = launch(workspace, options=options, started_at=started_at, progress=progress, server=server, hold=True)
    progress(
        f"training started beside the real episodes and the red team ({time.monotonic() - began:.1f} s): "
        "every server is held still, so no update starts before they pass"
    )
    return BesideChecks(run)


def discard_stale(workspace: Workspace, progress: Progress) -> bool:
    """Move aside a state dir whose training was held beside checks of other files (a repair changed one since):
    its episodes were played by a client that did not pass. True when something was discarded."""
    root = workspace.path
    record = read_launch_file(root)
    began = record.get(HELD_FOR_CHECKS)
    if not began or began == workspace.head():
        return False
    stop_stray_clients(root, record)
    stop_recorded_servers(root)  # answering or not (a loaded machine may keep a health check waiting)
    aside = root / DISCARDED_DIR
    shutil.rmtree(aside, ignore_errors=True)
    (root / STATE_DIR).rename(aside)
    progress(
        f"the training held beside checks that failed is discarded: none of its episodes is trained on "
        f"(its state is in {Path(DISCARDED_DIR)}/)"
    )
    log.info("discarded held training state of %s (began at %s)", root, began)
    return True
