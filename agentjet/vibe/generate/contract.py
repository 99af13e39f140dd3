"""The generated workspace's contract: which files it holds and what each must do.

Generate writes it, validate and the red team check it, launch runs it, repair rewrites it; this
module is the one place that names the files, so they cannot drift apart. `CONTRACT` is the same
contract in words, as an LLM is told it.
"""

from __future__ import annotations

from collections.abc import Set
from pathlib import Path

from agentjet.sandbox.folder import NEVER_STAGED, SECRET_NAMES, folder_files

__all__ = [
    "CLIENT",
    "CODE_FILES",
    "CONTRACT",
    "DATASET",
    "DATA_FILES",
    "REWARD",
    "REWARD_RANGE",
    "RUN_OUTPUTS",
    "SKIPPED_DIRS",
    "TESTS",
    "workspace_files",
]

CLIENT, REWARD, DATASET, TESTS = "client.py", "reward.py", "dataset.py", "tests/test_task.py"
CODE_FILES = (CLIENT, REWARD, DATASET, TESTS)
DATA_FILES = {"train": "data/train.jsonl", "eval": "data/eval.jsonl"}
REWARD_RANGE = (-1.0, 1.0)  # every reward a generated task gives lies here; 1 = fully solved
SKIPPED_DIRS = NEVER_STAGED | {".vibe", "state", "state.discarded", "logs"}  # never staged: git, caches, run state
RUN_OUTPUTS = frozenset({"report.md", "run.json", "curves.png"})  # written by the report node, not generated

CONTRACT = f"""\
The workspace is a folder with exactly these files (paths relative to it):

- `{CLIENT}`: a swarm client file for `agentjet client run {CLIENT} --server URL`. It defines
  `make_task(**params)` returning a task family object with: `name` (str), `servers` (a tuple of
  server names, `("policy",)` for one trained model), `items(split, *, count, seed)` returning
  `count` `agentjet.tasks.base.TaskItem(task_id: str, seed: int, data: dict)` read from
  `{DATA_FILES["train"]}` / `{DATA_FILES["eval"]}` (split "train" / "eval"; cycle when count exceeds the
  file), and `run(item, llms)` that plays one item and returns
  `agentjet.tasks.base.Outcome.single(reward, **metadata)` (or `Outcome({{server: reward}}, metadata)`).
  `llms[server]` is an `Endpoint(base_url, api_key, model)`: call it with the `openai` SDK
  (`OpenAI(base_url=..., api_key=..., max_retries=0)`, `model=endpoint.model`, `seed=item.seed`). The reward
  comes from `reward.score`. Put a short reply (or the last replies) in the metadata as `reply`.
  Invalid model output is scored low, never raised: an exception means a broken episode.
- `{REWARD}`: `score(item: dict, answer) -> float`, pure (no I/O, clock or randomness). `item` is one
  dataset item's `data`; `answer` is what the agent produced (the reply text, or for a game a dict
  describing the finished game). Rewards lie in [{REWARD_RANGE[0]}, {REWARD_RANGE[1]}]: 1.0 fully right,
  0.0 wrong or no answer. It must not be gameable: empty replies, echoing the prompt, the right format
  with nonsense content, listing every possible answer at once, or very long replies score no more than
  a wrong answer.
- `{DATASET}`: `python3 {DATASET} --out data --train N --eval M --seed S` writes both JSONL files, one
  item per line: `{{"task_id": str, "seed": int, "data": {{...}}}}`. Defaults of the flags are the planned
  sizes, seed and an output folder `data` beside the file. Train and eval never share a task_id;
  the same seed gives the same files. Every item must be solvable, and `data` should keep the reference
  answer the reward compares with.
- `{TESTS}`: plain-assert checks runnable as `python3 {TESTS}` without pytest (functions named `test_*`
  run by a `main()` that prints one line per test and exits with status 1 when any fails): the reward on
  known right, wrong and degenerate answers, the dataset's schema, that `{DATASET}` reproduces the data,
  and that `{CLIENT}` loads and reads the items.

Runtime: Python 3.11 in a sandbox with no network except the policy endpoint, the working directory
holding these files, and only these packages: the standard library, `agentjet` (use `agentjet.tasks.base`;
`agentjet.tasks.answers.find_answer(reply)` reads a robust `Answer: ...` line and
`agentjet.tasks.answers.parse_int_answer(text)` an integer), `openai`, `httpx`, `pydantic`, `PyYAML`.
Find files relative to `__file__` (e.g. `Path(__file__).resolve().parent / "data"`), never the current
directory; load `{REWARD}` by path with `importlib.util.spec_from_file_location`, since the folder is
not on `sys.path`.
"""


def workspace_files(root: Path, *, skip_names: Set[str] = frozenset()) -> dict[str, bytes]:
    """Every file of the workspace that a sandbox needs (run state, git, caches and secrets left out)."""
    return folder_files(root, skip_dirs=SKIPPED_DIRS, skip_names=SECRET_NAMES | skip_names)
