"""The run's own server, started on a thread when validation begins, so nothing waits for it twice.

Validation's real episodes need a server of the run's model, and so does training. Before, validation
started a throwaway one (~5 s on 2 cores) and the launch another; now the validate node starts the run's
own (its train.yaml written, state in the workspace's `state/`, as `launch` would) on a thread while
the tests and the dry run go on, plays the real episodes on it as `kind="eval"` (never trained, and
not among the held-out rounds, which count only their own episode ids), and `launch` takes it over.

`PendingServer` holds that start until someone takes the handle (`take`: the launch) or the run ends
(`close`: a run that fails or stops before training stops it). A process killed meanwhile leaves the
server running on its state dir, recorded in `state/launch.json`, and a resumed run adopts it, as it
adopts one a killed training left.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from pathlib import Path

from agentjet.sandbox import SwarmAccess
from agentjet.vibe.errors import VibeError
from agentjet.vibe.run.launch import write_config
from agentjet.vibe.run.launch_options import LaunchOptions
from agentjet.vibe.run.swarm_server import Progress, ServerHandle, ensure_server, stop_server, write_launch_file
from agentjet.vibe.workspace import Workspace

__all__ = ["PendingServer", "start_early"]

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
