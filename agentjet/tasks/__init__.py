"""Task families, client side: the TaskFamily contract, the built-in families, and playing them (play/).

answers.py              Find the final `Answer: ...` of a model's reply, and read an integer answer, robustly and
                        strictly.
arithmetic.py           `Arithmetic`: generated word problems with an integer answer, in any of six agent
                        frameworks.
arithmetic_problems.py  Seeded arithmetic word problems from templates (shopping, sharing, baking, travel, ...).
base.py                 What a task family is: a seeded dataset, agent code that plays one item, and its reward.
countdown.py            `Countdown`: reach a target from given numbers with + - * /, each number at most once.
expressions.py          Evaluate untrusted arithmetic (`(25 - 3) * 4 / 2`) exactly and safely, without `eval`.
folder_data.py          What a task folder's client file needs from its folder: modules and JSONL items beside it.
registry.py             Task names and user client files -> `TaskFamily` instances (for `agentjet client run`).
splits.py               Seeded item streams whose train and eval splits can never share an item.
tool_env.py             The tool environment of `ToolUse`: a calculator, a price lookup table and a notes pad.
tool_use.py             `ToolUse`: a multi-turn shopping task over OpenAI `tools`, rewarded from the final state.
word.py                 `FirstWord`: the one-word task of the learn-check benchmark (`bench learn-check`) as a task
                        family.
frameworks/             One chat call (and a tool-using turn), written in six agent frameworks.
play/                   Playing a task against a swarm server: episode rounds, the `client run` entry point, its
                        report, and sandboxed runs.
werewolves/             Werewolves, the 9-player social deduction game, as a task family (see docs/tasks.md).
"""
