"""Task names and client files -> families; --param and --server parsing, with errors that say what is available."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentjet.core import ConfigError
from agentjet.tasks.play.client_run import resolve_servers
from agentjet.tasks.registry import FAMILIES, load_family, parse_params
from agentjet.tasks.word import FirstWord

_FAMILY_SOURCE = """
from agentjet.tasks.base import Outcome, TaskItem

class Mine:
    name = "mine"
    servers = ("policy",)

    def __init__(self, level: int = 1) -> None:
        self.level = level

    def items(self, split, *, count, seed):
        return [TaskItem(f"{split}-{i}", seed + i, {"level": self.level}) for i in range(count)]

    def run(self, item, llms):
        return Outcome.single(1.0)
"""


def test_registered_name_builds_the_family_with_params() -> None:
    family = load_family("word", {"max_tokens": 3})
    assert isinstance(family, FirstWord) and family.max_tokens == 3 and family.servers == ("policy",)


def test_every_agreed_family_is_registered_by_its_import_path() -> None:
    assert FAMILIES["word"] == "agentjet.tasks.word:FirstWord"
    assert FAMILIES["werewolves"] == "agentjet.tasks.werewolves:Werewolves"
    assert {"countdown", "arithmetic", "tool_use"} <= FAMILIES.keys()


def test_unknown_name_lists_the_registered_tasks() -> None:
    with pytest.raises(ConfigError, match="unknown task 'chess'.*arithmetic, countdown, tool_use, werewolves, word"):
        load_family("chess")


def test_bad_params_list_the_accepted_ones() -> None:
    with pytest.raises(ConfigError, match=r"bad params \['colour'\].*accepted: max_tokens=6, temperature=1.0"):
        load_family("word", {"colour": "red"})
    with pytest.raises(ConfigError, match="max_tokens must be >= 1"):
        load_family("word", {"max_tokens": 0})


def test_client_file_with_make_task_gets_the_params(tmp_path: Path) -> None:
    path = tmp_path / "my_task.py"
    path.write_text(_FAMILY_SOURCE + "\ndef make_task(level: int = 1):\n    return Mine(level)\n")
    family = load_family(str(path), {"level": 3})
    assert family.name == "mine" and family.items("train", count=1, seed=0)[0].data == {"level": 3}
    with pytest.raises(ConfigError, match=r"bad params \['depth'\].*accepted: level=1"):
        load_family(str(path), {"depth": 2})


def test_client_file_with_task_instance(tmp_path: Path) -> None:
    path = tmp_path / "task.py"
    path.write_text(_FAMILY_SOURCE + "\nTASK = Mine(level=2)\n")
    assert load_family(str(path)).items("eval", count=2, seed=5)[1].seed == 6
    with pytest.raises(ConfigError, match="defines TASK, which takes no --param; define make_task"):
        load_family(str(path), {"level": 1})


@pytest.mark.parametrize(
    "source, message",
    [
        ("X = 1\n", "defines neither TASK .* nor make_task"),
        ("TASK = 42\n", "gave int, not a task family"),
        ("import no_such_module_here\n", "failed to import: ModuleNotFoundError"),
        ("def make_task():\n    raise ValueError('no data')\n", "ValueError: no data"),
        (
            "class F:\n    name = 'f'\n    servers = 'policy'\n"
            "    def items(self): ...\n    def run(self): ...\nTASK = F()\n",
            "not a task family",
        ),
    ],
)
def test_broken_client_files_get_clear_errors(tmp_path: Path, source: str, message: str) -> None:
    path = tmp_path / "client.py"
    path.write_text(source)
    with pytest.raises(ConfigError, match=message):
        load_family(str(path))


def test_missing_file_says_so(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist .*registered tasks: arithmetic"):
        load_family(str(tmp_path / "nope.py"))


def test_parse_params_reads_json_values_else_strings() -> None:
    assert parse_params(["difficulty=3", "framework=langchain", "on=true", "x=1.5", "names=[1, 2]", 's="7"']) == {
        "difficulty": 3,
        "framework": "langchain",
        "on": True,
        "x": 1.5,
        "names": [1, 2],
        "s": "7",
    }
    for bad in ("difficulty", "=3", "a b=1"):
        with pytest.raises(ConfigError, match="key=value"):
            parse_params([bad])


def test_one_url_is_the_single_server_and_names_map_several() -> None:
    assert resolve_servers(("policy",), ["http://127.0.0.1:1"]) == {"policy": "http://127.0.0.1:1"}
    assert resolve_servers(("policy",), ["policy=http://h:1/?a=b"]) == {"policy": "http://h:1/?a=b"}
    both = resolve_servers(("wolves", "village"), ["village=http://h:2", "wolves=http://h:1"])
    assert both == {"wolves": "http://h:1", "village": "http://h:2"}


@pytest.mark.parametrize(
    "specs, message",
    [
        (["http://h:1"], "needs servers wolves, village .* got"),
        (["wolves=http://h:1"], "missing village"),
        (["wolves=http://h:1", "village=http://h:2", "hunter=http://h:3"], "unknown hunter"),
        ([], "give --server URL .*wolves, village"),
    ],
)
def test_server_errors_name_what_the_family_needs(specs: list[str], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        resolve_servers(("wolves", "village"), specs)
