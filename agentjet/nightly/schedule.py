"""Run the nightly suite every night on this machine: a systemd timer where systemd runs, else a cron line.

A regression history is only worth something when it is measured on the same machine at the same
quiet hour, night after night. This module writes that schedule for the machine it runs on and takes
it away again, without a person hand-writing units or crontab lines: `timer_units` and `cron_line`
render the text (pure, tested against the real `systemd-analyze` and `crontab`), `install` and
`uninstall` put it in place through an injectable `runner`, so the calls to `systemctl` and `crontab`
can be recorded in tests. Paths with spaces, quotes, `%` and `$` are quoted for each format; a
newline or other control character in a path or argument is refused, as neither format can carry it.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

__all__ = [
    "Installed",
    "Schedule",
    "SchedulerBackend",
    "cron_line",
    "detect_backend",
    "install",
    "parse_at",
    "timer_units",
    "uninstall",
]

SchedulerBackend = Literal["systemd", "cron"]
Runner = Callable[..., subprocess.CompletedProcess[str]]

_AT = re.compile(r"([0-9]{1,2}):([0-9]{2})")  # not \d: it matches other scripts' digits
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_SYSTEMD_RUNTIME = Path("/run/systemd/system")  # exists only while systemd is PID 1 (sd_booted)
_SYSTEM_UNIT_DIR = Path("/etc/systemd/system")


def parse_at(text: str) -> tuple[int, int]:
    """`"02:00"`, `"2:05"`, `"23:59"` -> (hour, minute) on a 24 h clock; anything else is a ValueError."""
    match = _AT.fullmatch(text.strip())
    if match is None or int(match[1]) > 23 or int(match[2]) > 59:
        raise ValueError(f"the time must be HH:MM on a 24-hour clock (00:00 to 23:59), got {text!r}")
    return int(match[1]), int(match[2])


def _check_text(what: str, value: str) -> None:
    if _CONTROL.search(value):
        raise ValueError(
            f"{what} {value!r} contains a newline or another control character, which neither "
            "a systemd unit nor a crontab line can carry"
        )


def _check_path(what: str, path: Path) -> None:
    _check_text(what, str(path))
    if not path.is_absolute():
        raise ValueError(f"{what} must be an absolute path, got {str(path)!r}")
    if str(path) != str(path).rstrip() or str(path).endswith("\\"):
        raise ValueError(f"{what} {str(path)!r} ends with whitespace or a backslash, which a unit file would drop")


@dataclass(frozen=True)
class Schedule:
    """Run `command` (an argv) in `workdir` every day at `at` (HH:MM, local time, normalised to two digits).

    `log`: where cron appends the output (default `~/.cache/agentjet/nightly/NAME.log`); systemd
    appends there too when it is given, else the output goes to the journal (`journalctl -u NAME`).
    `command[0]` should be an absolute path: cron's PATH is /usr/bin:/bin and systemd's is fixed too."""

    at: str
    command: tuple[str, ...]
    workdir: Path
    name: str = "agentjet-nightly"
    log: Path | None = None

    def __post_init__(self) -> None:
        hour, minute = parse_at(self.at)
        object.__setattr__(self, "at", f"{hour:02d}:{minute:02d}")
        object.__setattr__(self, "command", tuple(self.command))
        object.__setattr__(self, "workdir", Path(self.workdir))
        if not _NAME.fullmatch(self.name):
            raise ValueError(f"the schedule's name must be letters, digits, '-' and '_', got {self.name!r}")
        if not self.command or not self.command[0]:
            raise ValueError("the schedule's command is empty: give the argv to run, e.g. (agentjet, nightly, run)")
        for arg in self.command:
            _check_text("the command argument", arg)
        if "/" in self.command[0] and not self.command[0].startswith("/"):
            raise ValueError(
                f"the program {self.command[0]!r} is a relative path: give it absolute, as neither "
                "systemd nor cron resolves it against the working directory"
            )
        _check_path("the working directory", self.workdir)
        if self.log is not None:
            object.__setattr__(self, "log", Path(self.log))
            _check_path("the log file", Path(self.log))

    @property
    def hour(self) -> int:
        return int(self.at[:2])

    @property
    def minute(self) -> int:
        return int(self.at[3:])

    @property
    def cron_log(self) -> Path:
        """Where the cron line appends stdout and stderr."""
        default = Path.home() / ".cache" / "agentjet" / "nightly" / f"{self.name}.log"
        return self.log if self.log is not None else default


# ---- systemd --------------------------------------------------------------------------------------
def _systemd_path(path: Path) -> str:
    """A path as a unit setting's value (WorkingDirectory=, append:): no unquoting there, only specifiers."""
    return str(path).replace("%", "%%")


def _systemd_word(arg: str, *, program: bool) -> str:
    """One ExecStart= word: double-quoted with C escapes, `%` -> `%%` (specifiers), and `$` -> `$$` in
    the arguments (environment expansion; systemd does not expand the program's path, so it keeps `$`)."""
    word = arg.replace("\\", "\\\\").replace('"', '\\"').replace("%", "%%")
    return f'"{word if program else word.replace("$", "$$")}"'


def timer_units(schedule: Schedule) -> dict[str, str]:
    """The oneshot service and its daily timer, by file name (`NAME.service`, `NAME.timer`)."""
    program = schedule.command[0]
    if set(program) & set("\"'\\"):
        raise ValueError(f"systemd refuses a program path with quotes or backslashes, got {program!r}")
    exec_start = " ".join(_systemd_word(arg, program=i == 0) for i, arg in enumerate(schedule.command))
    service = [
        "[Unit]",
        f"Description=AgentJet nightly benchmarks ({schedule.name})",
        "",
        "[Service]",
        "Type=oneshot",
        f"WorkingDirectory={_systemd_path(schedule.workdir)}",
        f"ExecStart={exec_start}",
        "Nice=10",
    ]
    if schedule.log is not None:
        service.append(f"StandardOutput=append:{_systemd_path(schedule.log)}")  # stderr follows stdout
    timer = [
        "[Unit]",
        f"Description=Run {schedule.name} every day at {schedule.at}",
        "",
        "[Timer]",
        f"OnCalendar=*-*-* {schedule.at}:00",
        "Persistent=true",  # a night missed while the machine was off runs at the next boot
        "RandomizedDelaySec=0",
        f"Unit={schedule.name}.service",
        "",
        "[Install]",
        "WantedBy=timers.target",
    ]
    return {f"{schedule.name}.service": "\n".join(service) + "\n", f"{schedule.name}.timer": "\n".join(timer) + "\n"}


# ---- cron -----------------------------------------------------------------------------------------
def _cron_word(arg: str) -> str:
    """shlex-quoted for cron's /bin/sh, then `%` -> `\\%` (cron turns a bare `%` into a newline). Cron
    keeps a backslash that precedes anything but `%`, so a `\\` right before a `%` is parted from it
    by `''` (an empty single-quoted string: shlex quotes any word holding a backslash)."""
    return shlex.quote(arg).replace("\\%", "\\''%").replace("%", "\\%")


def _marker(name: str) -> str:
    return f"# {name}"


def cron_line(schedule: Schedule) -> str:
    """`MM HH * * * cd WORKDIR && ARGV >> LOG 2>&1 # NAME`: the crontab line, marked with its name."""
    argv = " ".join(_cron_word(arg) for arg in schedule.command)
    return (
        f"{schedule.minute} {schedule.hour} * * * cd {_cron_word(str(schedule.workdir))} && {argv} "
        f">> {_cron_word(str(schedule.cron_log))} 2>&1 {_marker(schedule.name)}"
    )


# ---- installing -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Installed:
    """What `install` put in place: the unit files (none for cron), whether it is enabled, how to undo it."""

    backend: SchedulerBackend
    files: tuple[Path, ...]
    enabled: bool
    how_to_remove: str


def detect_backend() -> SchedulerBackend | None:
    """systemd when `systemctl` is on PATH and systemd is PID 1; else cron when `crontab` is; else None."""
    if shutil.which("systemctl") and _SYSTEMD_RUNTIME.is_dir():
        return "systemd"
    if shutil.which("crontab"):
        return "cron"
    return None


def _resolve(backend: Literal["auto", "systemd", "cron"]) -> SchedulerBackend:
    if backend in ("systemd", "cron"):
        return backend
    if backend != "auto":
        raise ValueError(f"backend must be 'auto', 'systemd' or 'cron', got {backend!r}")
    found = detect_backend()
    if found is None:
        raise RuntimeError(
            "neither systemd nor cron is available on this machine: install cron (Debian/Ubuntu `apt-get install "
            "cron`, Fedora/RHEL `dnf install cronie`) and start its daemon, or run on a host booted with systemd"
        )
    return found


def _run(runner: Runner, argv: Sequence[str], *, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    try:
        return runner(list(argv), input=stdin, capture_output=True, text=True, check=False)
    except OSError as exc:
        raise RuntimeError(f"could not run `{shlex.join(argv)}`: {exc}") from exc


def _first_line(text: str | None) -> str:
    return next((line.strip() for line in (text or "").splitlines() if line.strip()), "no message")


def _systemctl(runner: Runner, user: bool, *args: str) -> None:
    argv = ["systemctl", *(["--user"] if user else []), *args]
    done = _run(runner, argv)
    if done.returncode != 0:
        raise RuntimeError(f"`{shlex.join(argv)}` failed with exit code {done.returncode}: {_first_line(done.stderr)}")


def _systemd_place(unit_dir: Path | None, user: bool | None) -> tuple[Path, bool]:
    as_user = os.geteuid() != 0 if user is None else user
    if unit_dir is None:
        unit_dir = Path.home() / ".config" / "systemd" / "user" if as_user else _SYSTEM_UNIT_DIR
    return unit_dir, as_user


def _write(path: Path, text: str) -> None:
    """Replace `path` whole (a half-written unit must never be loaded)."""
    part = path.with_name(f".{path.name}.part")
    part.write_text(text)
    os.replace(part, path)


def _install_systemd(schedule: Schedule, unit_dir: Path | None, user: bool | None, runner: Runner) -> Installed:
    units = timer_units(schedule)
    unit_dir, as_user = _systemd_place(unit_dir, user)
    try:
        unit_dir.mkdir(parents=True, exist_ok=True)
        if schedule.log is not None:
            schedule.log.parent.mkdir(parents=True, exist_ok=True)
        files = tuple(unit_dir / name for name in units)
        for path in files:
            _write(path, units[path.name])
    except PermissionError as exc:
        raise RuntimeError(f"cannot write to {unit_dir} ({exc.strerror}): run as root, or with user=True") from exc
    _systemctl(runner, as_user, "daemon-reload")
    _systemctl(runner, as_user, "enable", "--now", f"{schedule.name}.timer")
    ctl = "systemctl --user" if as_user else "systemctl"
    rm = shlex.join(["rm", *map(str, files)])
    how = f"Remove it with `{ctl} disable --now {schedule.name}.timer && {rm} && {ctl} daemon-reload`."
    return Installed("systemd", files, True, how)


def _read_crontab(runner: Runner) -> list[str]:
    done = _run(runner, ["crontab", "-l"])
    if done.returncode != 0:
        if "no crontab for" in (done.stderr or ""):
            return []
        raise RuntimeError(f"`crontab -l` failed with exit code {done.returncode}: {_first_line(done.stderr)}")
    lines = (done.stdout or "").split("\n")
    return lines[:-1] if lines and lines[-1] == "" else lines


def _write_crontab(runner: Runner, lines: list[str]) -> None:
    done = _run(runner, ["crontab", "-"], stdin="".join(f"{line}\n" for line in lines))
    if done.returncode != 0:
        raise RuntimeError(f"`crontab -` failed with exit code {done.returncode}: {_first_line(done.stderr)}")


def _ours(line: str, name: str) -> bool:
    return line.rstrip().endswith(f" {_marker(name)}")


def _install_cron(schedule: Schedule, runner: Runner) -> Installed:
    line = cron_line(schedule)
    schedule.cron_log.parent.mkdir(parents=True, exist_ok=True)
    kept = [old for old in _read_crontab(runner) if not _ours(old, schedule.name)]
    _write_crontab(runner, [*kept, line])
    marker = shlex.quote(f" {_marker(schedule.name)}$")
    return Installed("cron", (), True, f"Remove it with `crontab -l | grep -v {marker} | crontab -`.")


def install(
    schedule: Schedule,
    *,
    backend: Literal["auto", "systemd", "cron"] = "auto",
    unit_dir: Path | None = None,
    user: bool | None = None,
    runner: Runner = subprocess.run,
) -> Installed:
    """Put `schedule` in place and enable it; installing again replaces it (no duplicate line or unit).

    systemd: both units go to `unit_dir` (default /etc/systemd/system as root, ~/.config/systemd/user
    otherwise: `user` None means "not root"), then `systemctl [--user] daemon-reload` and `enable --now`.
    A user timer runs while its owner is logged in unless `loginctl enable-linger` was run for them.
    cron: the crontab's line marked `# NAME` is replaced; every other line is kept as it was."""
    chosen = _resolve(backend)
    if chosen == "systemd":
        return _install_systemd(schedule, unit_dir, user, runner)
    return _install_cron(schedule, runner)


def uninstall(
    name: str = "agentjet-nightly",
    *,
    backend: Literal["auto", "systemd", "cron"] = "auto",
    unit_dir: Path | None = None,
    user: bool | None = None,
    runner: Runner = subprocess.run,
) -> list[Path]:
    """Take schedule `name` away; returns the unit files removed (none for cron, which edits its table).
    Nothing installed is not an error: nothing is run and [] comes back."""
    if not _NAME.fullmatch(name):
        raise ValueError(f"the schedule's name must be letters, digits, '-' and '_', got {name!r}")
    if _resolve(backend) == "cron":
        lines = _read_crontab(runner)
        kept = [line for line in lines if not _ours(line, name)]
        if kept != lines:
            _write_crontab(runner, kept)
        return []
    unit_dir, as_user = _systemd_place(unit_dir, user)
    files = [unit_dir / f"{name}.{kind}" for kind in ("timer", "service")]
    present = [path for path in files if path.exists()]
    if not present:
        return []
    if files[0].exists():
        _systemctl(runner, as_user, "disable", "--now", f"{name}.timer")
    for path in present:
        path.unlink()
    _systemctl(runner, as_user, "daemon-reload")
    return present
