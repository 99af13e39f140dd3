"""The nightly schedule: the units parse for systemd-analyze, the cron line survives cron and /bin/sh with
awkward paths, installing is idempotent and keeps the rest of a crontab, and the workflow says what it must."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from agentjet.nightly import schedule as sched
from agentjet.nightly.schedule import Schedule, cron_line, detect_backend, install, parse_at, timer_units, uninstall

# Read at import: the suite's autouse fixture clears AGENTJET_* variables before each test runs.
REQUIRE_CRON = os.environ.get("AGENTJET_REQUIRE_CRON") == "1"
WORKFLOW = Path(__file__).resolve().parents[2] / ".github" / "workflows" / "nightly.yml"
AWKWARD = "we ird %d $HOME 'q' \"dq\" \\%x `id` ;&"  # spaces, both quotes, %, $, backslash, shell syntax
ARGS = ["arg with space", "100%", "$HOME", "${X}", "a'b", 'a"b', "back\\slash", "\\%", "`id`", "*", ";", "&&", ""]


class Recorder:
    """A fake `runner`: records each argv and answers from a queue (default: success)."""

    def __init__(self, *answers: tuple[int, str]) -> None:
        self.calls: list[list[str]] = []
        self.answers = list(answers)

    def __call__(self, argv: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
        self.calls.append(list(argv))
        code, err = self.answers.pop(0) if self.answers else (0, "")
        return subprocess.CompletedProcess(argv, code, "", err)


def _script(path: Path, body: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(body)
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


def _printer(tmp_path: Path, folder: str) -> Path:
    """An executable that prints its argv and working directory as JSON."""
    body = f"#!{sys.executable}\nimport json, os, sys\nprint(json.dumps({{'argv': sys.argv[1:], 'cwd': os.getcwd()}}))"
    return _script(tmp_path / folder / "print args", body)


# ---- parse_at and Schedule ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("02:00", (2, 0)),
        ("2:05", (2, 5)),
        ("23:59", (23, 59)),
        ("00:00", (0, 0)),
        ("9:30", (9, 30)),
        (" 7:15", (7, 15)),
    ],
)
def test_parse_at_accepts_24_hour_times(text: str, expected: tuple[int, int]) -> None:
    assert parse_at(text) == expected


@pytest.mark.parametrize(
    "text",
    ["24:00", "2pm", "02:60", "", " ", "2:5", "002:00", "12:00:00", "-1:00", "ab:cd", "12", ":30", "1:000", "٠٢:٠٠"],
)
def test_parse_at_refuses_everything_else_in_one_sentence(text: str) -> None:
    with pytest.raises(ValueError) as caught:
        parse_at(text)
    message = str(caught.value)
    assert "HH:MM" in message and repr(text) in message and "\n" not in message


def test_schedule_normalises_and_validates(tmp_path: Path) -> None:
    made = Schedule(at="2:05", command=["/bin/true", "x"], workdir=str(tmp_path))  # type: ignore[arg-type]
    assert (made.at, made.hour, made.minute, made.command) == ("02:05", 2, 5, ("/bin/true", "x"))
    assert made.workdir == tmp_path
    with pytest.raises(ValueError, match="HH:MM"):
        Schedule(at="25:00", command=("/bin/true",), workdir=tmp_path)


@pytest.mark.parametrize(
    ("field", "value", "needle"),
    [
        ("workdir", Path("/tmp/a\nb"), "newline"),
        ("workdir", Path("/tmp/a\rb"), "newline"),
        ("workdir", Path("relative/dir"), "absolute"),
        ("workdir", Path("/tmp/trailing "), "whitespace"),
        ("log", Path("/tmp/log\nfile"), "newline"),
        ("log", Path("log.txt"), "absolute"),
        ("command", ("/bin/echo", "two\nlines"), "newline"),
        ("command", ("/bin/echo", "nul\x00"), "newline"),
        ("command", ("/bin/echo", "tab\there"), "control"),
        ("command", (".venv/bin/agentjet", "nightly"), "relative"),
        ("command", (), "empty"),
        ("name", "agentjet nightly", "name"),
        ("name", "../evil", "name"),
        ("name", "", "name"),
    ],
)
def test_schedule_refuses_what_neither_format_can_carry(field: str, value: Any, needle: str) -> None:
    fields: dict[str, Any] = {"at": "02:00", "command": ("/bin/true",), "workdir": Path("/tmp"), field: value}
    with pytest.raises(ValueError, match=needle):
        Schedule(**fields)


# ---- systemd units ----------------------------------------------------------------------------------
def _exec_start_argv(service: str) -> list[str]:
    """ExecStart= read back by systemd's rules: specifiers (%%), quoting, then $$ in the arguments."""
    line = next(line for line in service.splitlines() if line.startswith("ExecStart="))
    words = shlex.split(line.removeprefix("ExecStart=").replace("%%", "%"))
    return [words[0], *(word.replace("$$", "$") for word in words[1:])]


def test_timer_units_say_oneshot_nice_daily_persistent(tmp_path: Path) -> None:
    units = timer_units(Schedule(at="3:07", command=("/usr/bin/env", "true"), workdir=tmp_path, name="nb"))
    assert set(units) == {"nb.service", "nb.timer"}
    service, timer = units["nb.service"].splitlines(), units["nb.timer"].splitlines()
    for line in ("Type=oneshot", "Nice=10", f"WorkingDirectory={tmp_path}", 'ExecStart="/usr/bin/env" "true"'):
        assert line in service
    assert not any(line.startswith("StandardOutput=") for line in service)  # no log: the journal
    for line in ("OnCalendar=*-*-* 03:07:00", "Persistent=true", "RandomizedDelaySec=0", "WantedBy=timers.target"):
        assert line in timer
    assert "Unit=nb.service" in timer


def test_timer_units_quote_awkward_paths(tmp_path: Path) -> None:
    workdir, log = tmp_path / AWKWARD, tmp_path / "log %s $x.txt"
    program = str(tmp_path / "bin 100% $x" / "run")
    units = timer_units(Schedule(at="02:00", command=(program, *ARGS), workdir=workdir, log=log))
    service = units["agentjet-nightly.service"]
    assert _exec_start_argv(service) == [program, *ARGS]
    assert f"WorkingDirectory={str(workdir).replace('%', '%%')}" in service.splitlines()
    assert f"StandardOutput=append:{str(log).replace('%', '%%')}" in service.splitlines()
    assert "%d" not in service.replace("%%", "") and "%s" not in service.replace("%%", "")


@pytest.mark.parametrize("program", ['/opt/a"b/run', "/opt/a'b/run", "/opt/a\\b/run"])
def test_timer_units_refuse_a_program_systemd_refuses(tmp_path: Path, program: str) -> None:
    with pytest.raises(ValueError, match="systemd refuses"):
        timer_units(Schedule(at="02:00", command=(program,), workdir=tmp_path))


def _verify(*units: Path) -> subprocess.CompletedProcess[str]:
    argv = ["systemd-analyze", "verify", "--man=no", *map(str, units)]
    return subprocess.run(argv, capture_output=True, text=True, check=False, timeout=60)


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd-analyze is not installed")
def test_systemd_analyze_verifies_the_units_with_awkward_paths(tmp_path: Path) -> None:
    program = _printer(tmp_path, "bin %n 100% $x")  # verify checks the program exists: quoting must be right
    made = Schedule(at="02:00", command=(str(program), *ARGS), workdir=tmp_path / AWKWARD, log=tmp_path / "l %s.log")
    unit_dir = tmp_path / "units"
    install(made, backend="systemd", unit_dir=unit_dir, user=False, runner=Recorder())
    done = _verify(unit_dir / "agentjet-nightly.service", unit_dir / "agentjet-nightly.timer")
    assert done.returncode == 0, done.stderr
    # the check has teeth: the same unit with `%n` left unescaped names another program (bin broken.service ...)
    broken = unit_dir / "broken.service"
    broken.write_text((unit_dir / "agentjet-nightly.service").read_text().replace("%%n", "%n"))
    assert _verify(broken).returncode != 0


# ---- installing with systemd --------------------------------------------------------------------------
@pytest.mark.parametrize(("user", "prefix"), [(True, ["systemctl", "--user"]), (False, ["systemctl"])])
def test_install_systemd_writes_units_then_reloads_and_enables(tmp_path: Path, user: bool, prefix: list[str]) -> None:
    made = Schedule(at="02:00", command=("/bin/true",), workdir=tmp_path)
    runner = Recorder()
    done = install(made, backend="systemd", unit_dir=tmp_path / "u", user=user, runner=runner)
    assert runner.calls == [[*prefix, "daemon-reload"], [*prefix, "enable", "--now", "agentjet-nightly.timer"]]
    assert done.backend == "systemd" and done.enabled
    assert done.files == (tmp_path / "u" / "agentjet-nightly.service", tmp_path / "u" / "agentjet-nightly.timer")
    assert {p.name: p.read_text() for p in done.files} == timer_units(made)
    assert f"{' '.join(prefix)} disable --now agentjet-nightly.timer" in done.how_to_remove

    later = Schedule(at="04:30", command=("/bin/true",), workdir=tmp_path)
    again = install(later, backend="systemd", unit_dir=tmp_path / "u", user=user, runner=runner)
    assert again.files == done.files and sorted(p.name for p in (tmp_path / "u").iterdir()) == sorted(
        p.name for p in done.files
    )  # rewritten in place: no duplicate, no leftover part file
    assert "OnCalendar=*-*-* 04:30:00" in again.files[1].read_text()


def test_install_systemd_default_places(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    made = Schedule(at="02:00", command=("/bin/true",), workdir=tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setattr(sched.os, "geteuid", lambda: 1000)
    runner = Recorder()
    done = install(made, backend="systemd", runner=runner)
    assert done.files[0].parent == tmp_path / "home" / ".config" / "systemd" / "user"
    assert runner.calls[0] == ["systemctl", "--user", "daemon-reload"]
    monkeypatch.setattr(sched.os, "geteuid", lambda: 0)
    monkeypatch.setattr(sched, "_SYSTEM_UNIT_DIR", tmp_path / "etc")
    runner = Recorder()
    assert install(made, backend="systemd", runner=runner).files[0].parent == tmp_path / "etc"
    assert runner.calls[0] == ["systemctl", "daemon-reload"]


def test_install_systemd_failure_names_systemctl_and_its_first_line(tmp_path: Path) -> None:
    made = Schedule(at="02:00", command=("/bin/true",), workdir=tmp_path)
    runner = Recorder((0, ""), (1, "Failed to connect to bus: No medium found\nsecond line"))
    with pytest.raises(RuntimeError) as caught:
        install(made, backend="systemd", unit_dir=tmp_path / "u", user=True, runner=runner)
    message = str(caught.value)
    assert "systemctl --user enable --now agentjet-nightly.timer" in message
    assert "Failed to connect to bus: No medium found" in message and "second line" not in message

    def missing(argv: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
        raise FileNotFoundError(2, "No such file or directory", argv[0])

    with pytest.raises(RuntimeError, match="could not run `systemctl daemon-reload`"):
        install(made, backend="systemd", unit_dir=tmp_path / "u", user=False, runner=missing)


def test_uninstall_systemd_disables_then_removes(tmp_path: Path) -> None:
    made = Schedule(at="02:00", command=("/bin/true",), workdir=tmp_path)
    install(made, backend="systemd", unit_dir=tmp_path / "u", user=True, runner=Recorder())
    (tmp_path / "u" / "other.timer").write_text("[Timer]\n")
    runner = Recorder()
    removed = uninstall(backend="systemd", unit_dir=tmp_path / "u", user=True, runner=runner)
    assert sorted(removed) == sorted(tmp_path / "u" / f"agentjet-nightly.{k}" for k in ("service", "timer"))
    assert runner.calls == [
        ["systemctl", "--user", "disable", "--now", "agentjet-nightly.timer"],
        ["systemctl", "--user", "daemon-reload"],
    ]
    assert [p.name for p in (tmp_path / "u").iterdir()] == ["other.timer"]
    runner = Recorder()
    assert uninstall(backend="systemd", unit_dir=tmp_path / "u", user=True, runner=runner) == [] and not runner.calls


# ---- choosing the backend ----------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("tools", "booted", "expected"),
    [
        ({"systemctl", "crontab"}, True, "systemd"),
        ({"systemctl"}, True, "systemd"),
        ({"systemctl", "crontab"}, False, "cron"),  # systemctl installed, systemd not PID 1 (a container)
        ({"crontab"}, True, "cron"),
        ({"systemctl"}, False, None),
        (set(), False, None),
    ],
)
def test_detect_backend(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tools: set[str], booted: bool, expected: Any
) -> None:
    monkeypatch.setattr(sched.shutil, "which", lambda name: f"/usr/bin/{name}" if name in tools else None)
    runtime = tmp_path / "run-systemd"
    if booted:
        runtime.mkdir()
    monkeypatch.setattr(sched, "_SYSTEMD_RUNTIME", runtime)
    assert detect_backend() == expected


def test_no_backend_says_what_to_install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sched, "detect_backend", lambda: None)
    made = Schedule(at="02:00", command=("/bin/true",), workdir=tmp_path)
    with pytest.raises(RuntimeError, match="neither systemd nor cron is available on this machine: install cron"):
        install(made, runner=Recorder())
    with pytest.raises(RuntimeError, match="neither systemd nor cron"):
        uninstall(runner=Recorder())


# ---- cron ---------------------------------------------------------------------------------------------
def _as_cron_runs_it(line: str) -> str:
    """The command cron hands to /bin/sh: the sixth field on, `\\%` -> `%` (a backslash before anything
    else stays), and a bare `%` ends the command (the rest becomes stdin) - which we never want."""
    command, escaped = line.split(" ", 5)[5], False
    out: list[str] = []
    for ch in command:
        if escaped:
            escaped = False
            if ch == "%":
                out[-1] = "%"
                continue
        elif ch == "\\":
            escaped = True
        elif ch == "%":
            raise AssertionError(f"a bare % would cut the command short: {line}")
        out.append(ch)
    return "".join(out)


def test_cron_line_shape(tmp_path: Path) -> None:
    made = Schedule(at="2:05", command=("/usr/bin/env", "true"), workdir=tmp_path, log=tmp_path / "n.log")
    expected = f"5 2 * * * cd {tmp_path} && /usr/bin/env true >> {tmp_path}/n.log 2>&1 # agentjet-nightly"
    assert cron_line(made) == expected


def test_cron_line_default_log_is_under_the_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    line = cron_line(Schedule(at="02:00", command=("/bin/true",), workdir=tmp_path, name="nb"))
    assert f">> {tmp_path}/.cache/agentjet/nightly/nb.log 2>&1 # nb" in line


def test_cron_line_survives_cron_and_sh_with_awkward_paths(tmp_path: Path) -> None:
    program, workdir, log = _printer(tmp_path, "bin 100% $x"), tmp_path / AWKWARD, tmp_path / "log %s $x \\%.txt"
    workdir.mkdir()
    line = cron_line(Schedule(at="02:00", command=(str(program), *ARGS), workdir=workdir, log=log))
    assert "\n" not in line and line.endswith(" # agentjet-nightly")
    subprocess.run(["/bin/sh", "-c", _as_cron_runs_it(line)], check=True, timeout=30, env={"PATH": "/usr/bin:/bin"})
    assert json.loads(log.read_text()) == {"argv": ARGS, "cwd": str(workdir)}


FAKE_CRONTAB = """#!/bin/sh
# crontab -l / crontab - , keeping the table in $FAKE_CRONTAB_TABLE (absent: no crontab yet)
case "$1" in
  -l) [ -f "$FAKE_CRONTAB_TABLE" ] || { echo "no crontab for $(id -un)" >&2; exit 1; }; cat "$FAKE_CRONTAB_TABLE" ;;
  -) cat > "$FAKE_CRONTAB_TABLE.new" && mv "$FAKE_CRONTAB_TABLE.new" "$FAKE_CRONTAB_TABLE"
     echo "$1" >> "$FAKE_CRONTAB_TABLE.writes" ;;
  *) echo "usage: crontab [-l | -]" >&2; exit 2 ;;
esac
"""
OTHERS = [
    "# m h dom mon dow command",
    "MAILTO=ops@example.com",
    "",
    "*/5 * * * * /usr/local/bin/backup --fast   ",
    "0 3 * * * /opt/job # agentjet-nightly-2",
    "0 4 * * * /opt/other-agentjet-nightly",
]


@pytest.fixture
def fake_crontab(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    _script(tmp_path / "fakebin" / "crontab", FAKE_CRONTAB)
    monkeypatch.setenv("PATH", f"{tmp_path / 'fakebin'}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_CRONTAB_TABLE", str(tmp_path / "table"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    return tmp_path / "table"


def test_cron_install_on_an_empty_crontab(tmp_path: Path, fake_crontab: Path) -> None:
    made = Schedule(at="02:00", command=("/bin/true",), workdir=tmp_path)
    done = install(made, backend="cron")
    assert fake_crontab.read_text() == cron_line(made) + "\n"
    assert (done.backend, done.files, done.enabled) == ("cron", (), True)
    assert (tmp_path / "home" / ".cache" / "agentjet" / "nightly").is_dir()  # the default log's folder


def test_cron_install_is_idempotent_and_keeps_other_lines(tmp_path: Path, fake_crontab: Path) -> None:
    fake_crontab.write_text("\n".join(OTHERS) + "\n")
    install(Schedule(at="02:00", command=("/bin/true",), workdir=tmp_path), backend="cron")
    later = Schedule(at="05:45", command=("/bin/false",), workdir=tmp_path)
    install(later, backend="cron")
    assert fake_crontab.read_text() == "\n".join([*OTHERS, cron_line(later)]) + "\n"

    other = Schedule(at="01:00", command=("/bin/true",), workdir=tmp_path, name="agentjet-nightly-full")
    install(other, backend="cron")
    assert uninstall(backend="cron") == []
    assert fake_crontab.read_text() == "\n".join([*OTHERS, cron_line(other)]) + "\n"  # only ours went
    writes = (tmp_path / "table.writes").read_text().count("\n")
    uninstall(backend="cron")  # nothing of ours left: the table is not rewritten
    assert (tmp_path / "table.writes").read_text().count("\n") == writes


def test_cron_how_to_remove_works(tmp_path: Path, fake_crontab: Path) -> None:
    fake_crontab.write_text("\n".join(OTHERS) + "\n")
    done = install(Schedule(at="02:00", command=("/bin/true",), workdir=tmp_path), backend="cron")
    command = done.how_to_remove.split("`")[1]
    subprocess.run(["/bin/sh", "-c", command], check=True, timeout=30)
    assert fake_crontab.read_text() == "\n".join(OTHERS) + "\n"


def test_cron_errors_are_runtime_errors(tmp_path: Path) -> None:
    made = Schedule(at="02:00", command=("/bin/true",), workdir=tmp_path, log=tmp_path / "n.log")
    with pytest.raises(RuntimeError, match="`crontab -l` failed with exit code 1: You \\(bob\\) are not allowed"):
        install(made, backend="cron", runner=Recorder((1, "You (bob) are not allowed to use this program\n")))
    with pytest.raises(RuntimeError, match="`crontab -` failed with exit code 1: errors in crontab file"):
        install(made, backend="cron", runner=Recorder((0, ""), (1, "errors in crontab file, can't install.")))


def _real_crontab_usable() -> bool:
    if shutil.which("crontab") is None:
        return False
    done = subprocess.run(["crontab", "-l"], capture_output=True, text=True, check=False, timeout=30)
    return done.returncode == 0 or "no crontab for" in done.stderr


@pytest.mark.skipif(not REQUIRE_CRON and not _real_crontab_usable(), reason="no usable crontab, AGENTJET_REQUIRE_CRON")
def test_real_crontab_accepts_the_line_and_keeps_the_table(tmp_path: Path) -> None:
    """Against the real crontab (it checks the time fields): this user's table is edited and put back."""
    assert _real_crontab_usable(), "AGENTJET_REQUIRE_CRON=1 but crontab is missing or unusable (apt-get install cron)"
    before = subprocess.run(["crontab", "-l"], capture_output=True, text=True, check=False, timeout=30)
    name = f"agentjet-nightly-test-{os.getpid()}"
    program = _printer(tmp_path, "bin 100% $x")
    made = Schedule(
        at="23:59", command=(str(program), *ARGS), workdir=tmp_path / AWKWARD, name=name, log=tmp_path / "a"
    )
    try:
        install(made, backend="cron")
        install(made, backend="cron")
        listed = subprocess.run(["crontab", "-l"], capture_output=True, text=True, check=True, timeout=30).stdout
        assert listed.splitlines().count(cron_line(made)) == 1
        assert listed.startswith(before.stdout) if before.returncode == 0 else True
        uninstall(name, backend="cron")
        after = subprocess.run(["crontab", "-l"], capture_output=True, text=True, check=False, timeout=30)
        assert after.stdout == before.stdout
    finally:
        if before.returncode == 0:
            subprocess.run(["crontab", "-"], input=before.stdout, text=True, check=True, timeout=30)
        else:
            subprocess.run(["crontab", "-r"], capture_output=True, check=False, timeout=30)


# ---- the GitHub workflow --------------------------------------------------------------------------------
def _workflow() -> dict[Any, Any]:
    data = yaml.safe_load(WORKFLOW.read_text())
    assert isinstance(data, dict)
    return data


def test_workflow_schedule_inputs_and_runner() -> None:
    data = _workflow()
    triggers: dict[str, Any] = data["on"] if "on" in data else data[True]  # YAML 1.1 reads a bare `on` as true
    assert triggers["schedule"] == [{"cron": "0 2 * * *"}]
    inputs = triggers["workflow_dispatch"]["inputs"]
    assert inputs["suite"]["options"] == ["quick", "full"] and inputs["suite"]["default"] == "quick"
    assert inputs["rev"]["default"] == "HEAD"
    (job,) = data["jobs"].values()
    assert job["runs-on"] == ["self-hosted", "agentjet-nightly"]
    checkout = next(step for step in job["steps"] if step.get("uses", "").startswith("actions/checkout@"))
    assert checkout["with"]["fetch-depth"] == 0
    runs = [step.get("run", "") for step in job["steps"]]
    assert "make setup" in runs
    assert any(".venv/bin/agentjet nightly run --suite" in run and "--rev" in run and "--store" in run for run in runs)
    assert any(".venv/bin/agentjet nightly report" in run and "--out nightly-report" in run for run in runs)
    upload = next(step for step in job["steps"] if step.get("uses", "").startswith("actions/upload-artifact@"))
    assert upload["with"]["path"] == "nightly-report" and "!cancelled()" in upload["if"]


@pytest.mark.parametrize(("code", "fails"), [(0, False), (1, True), (2, True)])
def test_workflow_run_step_fails_the_job_on_regression(tmp_path: Path, code: int, fails: bool) -> None:
    (step,) = [step for step in _workflow()["jobs"]["nightly"]["steps"] if step.get("id") == "run"]
    assert step["env"] == {"SUITE": "${{ inputs.suite || 'quick' }}", "REV": "${{ inputs.rev || 'HEAD' }}"}
    _script(tmp_path / ".venv" / "bin" / "agentjet", f'#!/bin/sh\necho "$@" > called\nexit {code}\n')
    env = {"PATH": "/usr/bin:/bin", "HOME": "/home/ci", "SUITE": "full", "REV": "abc $(id) 123"}
    done = subprocess.run(["bash", "-e", "-c", step["run"]], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert (done.returncode != 0) is fails and done.returncode == code
    called = (tmp_path / "called").read_text()
    store = "/home/ci/.cache/agentjet/nightly/history.db"
    assert called == f"nightly run --suite full --rev abc $(id) 123 --store {store}\n"
    assert ("::error title=Regression::" in done.stdout) is (code == 1)
