"""A new game "written by an LLM" for the vibe LLM path: tic-tac-toe, which no built-in family covers.

The policy plays X against a uniformly random legal opponent (O), one chat call per move that shows
the board, the legal moves and the answer format. A game pays 1.0 for a win, 0.5 for a draw, 0.0 for
a loss, and a reply without exactly one legal `MOVE: <cell>` forfeits the game (0.0), so answering
nothing, echoing the prompt or listing every move never beats a random legal player. The board, the
rules and the opponent live in the generated `client.py`; `reward.py` reads a reply (`read_move`) and
scores the finished game (`score`).

`TIC_TAC_TOE` is the first version the scripted LLM writes: its `read_move` unpacks the set of moves a
reply names, which raises on a reply naming several (the LLM's own tests never try one, and neither
the dry run's one-option replies nor a tiny model's noise do): the red team's degenerate policies make
every episode raise. `FIXED_READ_MOVE` and `FIXED_TESTS` are the repair's reply. `reply_with(files)`
wraps files in fenced blocks as the LLM would.
"""

from __future__ import annotations

from tests.vibe.generated_task import reply_with

__all__ = [
    "BUGGY_REWARD",
    "EVAL_ITEMS",
    "FIXED_REWARD",
    "FIXED_TESTS",
    "REWARD_PAYS_FORFEIT",
    "TIC_TAC_TOE",
    "TRAIN_ITEMS",
    "reply_with",
]

TRAIN_ITEMS, EVAL_ITEMS = 16, 8  # the plan's dataset sizes (dataset.py's defaults must match them)

CLIENT = '''"""Tic-tac-toe: the policy plays X against a uniformly random legal opponent (O), one chat call per move.

Run it with `agentjet client run client.py --server URL`. The board, the rules and the opponent live
here; reward.py reads each reply (`read_move`) and scores the finished game (`score`). Items come from
data/*.jsonl beside this file: who moves first, and the seed that drives the opponent.
"""

import importlib.util
import json
import random
from pathlib import Path

from openai import OpenAI

from agentjet.tasks.base import Outcome, TaskItem

HERE = Path(__file__).resolve().parent
LINES = ((0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6))
MAX_TOKENS = 16  # "MOVE: 5" is a few tokens; room for a short thought before it


def _load_reward():
    spec = importlib.util.spec_from_file_location("tic_tac_toe_reward", HERE / "reward.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


reward = _load_reward()


def winner(board):
    """"X" or "O" when that mark holds a line, else None."""
    for a, b, c in LINES:
        if board[a] != " " and board[a] == board[b] == board[c]:
            return board[a]
    return None


def legal_moves(board):
    """The free cells, numbered 1-9."""
    return [i + 1 for i, cell in enumerate(board) if cell == " "]


def render(board):
    cells = [cell if cell != " " else str(i + 1) for i, cell in enumerate(board)]
    return "\\n---+---+---\\n".join(" " + " | ".join(cells[r * 3 : r * 3 + 3]) for r in range(3))


def prompt(board):
    """What the policy sees on its turn: the board, the legal moves, the answer format."""
    legal = legal_moves(board)
    return (
        "You are X in a game of tic-tac-toe against O. Cells are numbered 1-9, left to right, top to "
        "bottom; a number on the board is a free cell.\\n\\n"
        f"{render(board)}\\n\\n"
        f"Legal moves: {', '.join(str(c) for c in legal)}\\n"
        "Reply with exactly one move, written `MOVE: <cell>`; a reply without exactly one legal move loses.\\n"
        f"Options: {' | '.join(f'MOVE: {c}' for c in legal)}"
    )


def play_game(first, seed, ask):
    """One game; `ask(prompt) -> reply` is the policy. Returns the record reward.score reads."""
    rng = random.Random(seed)
    board = [" "] * 9
    replies = []
    turn = first
    while True:
        if turn == "X":
            reply = ask(prompt(board))
            replies.append(reply)
            cell = reward.read_move(reply, legal_moves(board))
            if cell is None:  # unreadable or illegal: the game is lost
                return {"result": "forfeit", "board": "".join(board), "replies": replies}
            board[cell - 1] = "X"
        else:
            board[rng.choice(legal_moves(board)) - 1] = "O"
        won = winner(board)
        if won is not None or not legal_moves(board):
            result = "draw" if won is None else ("win" if won == "X" else "loss")
            return {"result": result, "board": "".join(board), "replies": replies}
        turn = "O" if turn == "X" else "X"


class TicTacToe:
    name = "tic-tac-toe-x"
    servers = ("policy",)

    def items(self, split, *, count, seed):
        lines = (HERE / "data" / f"{split}.jsonl").read_text().splitlines()
        rows = [json.loads(line) for line in lines if line.strip()]
        picked = [rows[(seed + i) % len(rows)] for i in range(count)]
        return [TaskItem(r["task_id"], r["seed"], r["data"]) for r in picked]

    def run(self, item, llms):
        endpoint = llms["policy"]
        client = OpenAI(base_url=endpoint.base_url, api_key=endpoint.api_key, max_retries=0)
        calls = []

        def ask(text):
            reply = client.chat.completions.create(
                model=endpoint.model,
                messages=[{"role": "user", "content": text}],
                max_tokens=MAX_TOKENS,
                seed=item.seed + len(calls),
            )
            calls.append(text)
            return reply.choices[0].message.content or ""

        game = play_game(item.data["first"], item.seed, ask)
        value = reward.score(item.data, game)
        return Outcome.single(
            value, reply=game["replies"][-1], result=game["result"], board=game["board"], moves=len(game["replies"])
        )


def make_task(**params):
    return TicTacToe()
'''

BUGGY_REWARD = '''"""Tic-tac-toe reward: read the policy's move from a reply, score the finished game.

`read_move(reply, legal)` is the cell of the reply's `MOVE: <cell>` when it is legal, else None (the
client then forfeits the game). `score(item, game)` pays 1.0 for a win, 0.5 for a draw, 0.0 for a loss
and 0.0 for a forfeit. Pure: no I/O, clock or randomness.
"""

import re

MOVE = re.compile(r"MOVE:\\s*(\\d+)", re.IGNORECASE)
PAYS = {"win": 1.0, "draw": 0.5, "loss": 0.0, "forfeit": 0.0}


def read_move(reply, legal):
    found = MOVE.findall(reply or "")
    if not found:
        return None  # no move: the game is forfeited
    (cell,) = set(found)  # one move per reply
    cell = int(cell)
    return cell if cell in legal else None


def score(item, game):
    return PAYS.get(game.get("result"), 0.0)
'''

FIXED_REWARD = '''"""Tic-tac-toe reward: read the policy's move from a reply, score the finished game.

`read_move(reply, legal)` is the cell of the reply's one `MOVE: <cell>` when it is legal, else None (the
client then forfeits the game): a reply naming no move, several moves (hedging, listing every move,
echoing the prompt) or an occupied cell is no move. `score(item, game)` pays 1.0 for a win, 0.5 for a
draw, 0.0 for a loss and 0.0 for a forfeit. Pure: no I/O, clock or randomness.
"""

import re

MOVE = re.compile(r"MOVE\\s*:\\s*(\\d*)", re.IGNORECASE)  # every `MOVE:` marker, with its cell if any
PAYS = {"win": 1.0, "draw": 0.5, "loss": 0.0, "forfeit": 0.0}


def read_move(reply, legal):
    found = MOVE.findall(reply or "")
    if len(found) != 1 or not found[0]:
        return None  # no move, or several: the game is forfeited
    cell = int(found[0])
    return cell if cell in legal else None


def score(item, game):
    return PAYS.get(game.get("result"), 0.0)
'''

REWARD_PAYS_FORFEIT = FIXED_REWARD.replace(  # a reward that scores a forfeited game as a win: the red team's case
    """def score(item, game):
    return PAYS.get(game.get("result"), 0.0)
""",
    """def score(item, game):
    if game.get("result") == "loss":
        return 0.0
    return 0.5 if game.get("result") == "draw" else 1.0
""",
)

DATASET = f'''"""Makes data/train.jsonl and data/eval.jsonl: tic-tac-toe games, one item per line.

    python3 dataset.py --out data --train {TRAIN_ITEMS} --eval {EVAL_ITEMS} --seed 0

A line is `{{"task_id": "ttt-<seed>", "seed": int, "data": {{"first": "X" | "O"}}}}`: who moves first,
and the seed that drives the random opponent. Train and eval never share a seed.
"""

import argparse
import json
import random
from pathlib import Path

HERE = Path(__file__).resolve().parent
TRAIN_ITEMS, EVAL_ITEMS, SEED = {TRAIN_ITEMS}, {EVAL_ITEMS}, 0


def build(train, eval_items, seed):
    rng = random.Random(seed)
    seeds = rng.sample(range(1, 2**31), train + eval_items)
    rows = [{{"task_id": f"ttt-{{s}}", "seed": s, "data": {{"first": rng.choice("XO")}}}} for s in seeds]
    return {{"train": rows[:train], "eval": rows[train:]}}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path, default=HERE / "data")
    parser.add_argument("--train", type=int, default=TRAIN_ITEMS)
    parser.add_argument("--eval", type=int, default=EVAL_ITEMS)
    parser.add_argument("--seed", type=int, default=SEED)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    for split, rows in build(args.train, args.eval, args.seed).items():
        (args.out / f"{{split}}.jsonl").write_text("".join(json.dumps(r, sort_keys=True) + "\\n" for r in rows))


if __name__ == "__main__":
    main()
'''

TESTS = '''"""Tic-tac-toe workspace checks: python3 tests/test_task.py (plain asserts, no pytest)."""

import importlib.util
import json
import random
import subprocess
import sys
import tempfile
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def load(name):
    spec = importlib.util.spec_from_file_location(f"ttt_test_{name}", ROOT / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def rows(split):
    return [json.loads(line) for line in (ROOT / "data" / f"{split}.jsonl").read_text().splitlines() if line]


reward, client = load("reward"), load("client")


def test_reward_pays_the_result():
    assert reward.score({}, {"result": "win"}) == 1.0
    assert reward.score({}, {"result": "draw"}) == 0.5
    assert reward.score({}, {"result": "loss"}) == 0.0
    assert reward.score({}, {"result": "forfeit"}) == 0.0


def test_read_move_takes_one_legal_move():
    assert reward.read_move("MOVE: 5", [1, 5, 9]) == 5
    assert reward.read_move("I take the centre.\\nmove: 5", [5]) == 5
    assert reward.read_move("MOVE: 2", [1, 5, 9]) is None  # an occupied cell
    assert reward.read_move("MOVE: 12", [1, 5, 9]) is None
    assert reward.read_move("", [1, 5, 9]) is None
    assert reward.read_move("the centre", [1, 5, 9]) is None
#EXTRA_READ_MOVE_TESTS#


def test_rules():
    assert client.winner(list("XXXOO    ")) == "X"
    assert client.winner(list("O X O X O")) == "O"
    assert client.winner(list("XOXXOOOXX")) is None
    assert client.legal_moves(list("X   O    ")) == [2, 3, 4, 6, 7, 8, 9]


def test_games_end_and_the_opponent_plays_legally():
    for seed in range(30):
        def first_legal(text):
            return text.rsplit("Options: ", 1)[1].split(" | ")[0]
        game = client.play_game(random.Random(seed).choice("XO"), seed, first_legal)
        assert game["result"] in ("win", "draw", "loss"), game
        assert len(game["board"]) == 9 and abs(game["board"].count("X") - game["board"].count("O")) <= 1, game
        assert len(game["replies"]) == game["board"].count("X")  # one chat call per move of X
    game = client.play_game("X", 0, lambda text: "")
    assert game["result"] == "forfeit" and len(game["replies"]) == 1


def test_dataset_schema():
    train, evals = rows("train"), rows("eval")
    assert train and evals
    for row in train + evals:
        assert set(row) == {"task_id", "seed", "data"} and isinstance(row["seed"], int)
        assert row["data"]["first"] in ("X", "O")
    assert not {r["task_id"] for r in train} & {r["task_id"] for r in evals}


def test_dataset_py_reproduces_the_data():
    with tempfile.TemporaryDirectory() as out:
        subprocess.run([sys.executable, str(ROOT / "dataset.py"), "--out", out], check=True)
        for split in ("train", "eval"):
            assert (Path(out) / f"{split}.jsonl").read_text() == (ROOT / "data" / f"{split}.jsonl").read_text()


def test_client_loads_and_reads_the_items():
    task = client.make_task()
    assert tuple(task.servers) == ("policy",) and task.name
    assert [i.task_id for i in task.items("eval", count=2, seed=0)] == [r["task_id"] for r in rows("eval")[:2]]


def main():
    failed = 0
    tests = [(name, fn) for name, fn in globals().items() if name.startswith("test_")]
    for name, fn in tests:
        try:
            fn()
            print("ok  ", name, flush=True)
        except Exception:
            failed += 1
            print("FAIL", name, traceback.format_exc(), flush=True)
    print(f"{len(tests) - failed} passed, {failed} failed", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
'''

_EXTRA = """    assert reward.read_move("MOVE: 1 MOVE: 9", [1, 5, 9]) is None  # hedging between moves
    assert reward.read_move("MOVE: 5\\nMOVE: 5", [5]) is None
    assert reward.read_move("MOVE: 1\\nMOVE:", [1, 5]) is None  # a list cut short by max_tokens
    assert reward.read_move("The best move is MOVE: 5", [5]) == 5
    listing = client.prompt(list("    X    "))
    assert reward.read_move(listing, client.legal_moves(list("    X    "))) is None  # echoing the prompt
"""
FIRST_TESTS = TESTS.replace("#EXTRA_READ_MOVE_TESTS#\n", "")
FIXED_TESTS = TESTS.replace("#EXTRA_READ_MOVE_TESTS#\n", _EXTRA)

TIC_TAC_TOE = {"client.py": CLIENT, "reward.py": BUGGY_REWARD, "dataset.py": DATASET, "tests/test_task.py": FIRST_TESTS}
