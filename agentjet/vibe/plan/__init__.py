"""The understand step: a sentence -> a `TaskSpec` (keywords, built-in families, or an LLM planner) and the policy
model it trains.

corrections.py   A sentence that corrects itself ("the seer, no wait, the witch"): the later words are read.
difficulty.py    A sentence's numeric difficulty cues -> a family's difficulty level, with the words that say how.
families.py      What the planner knows about each built-in task family: a summary, levels, the spec's prose, and
                 the words for werewolves' roles.
family_notes.py  What a family only approximates of a sentence, said as assumptions ("adding fractions").
numbers.py       Numbers in a task sentence: number words as digits, and the numeric difficulty cues it states.
planner.py       `plan(sentence)` -> `TaskSpec`: the understand step of a vibe run.
planner_llm.py   The LLM planner: ask for a JSON TaskSpec, validate it, retry once with the validation error.
policy_model.py  Which policy model a vibe run trains: what the sentence asked for ("qwen2.5 0.5B"), if it can
                 run here, else the embedded one.
refusals.py      Requests that are no training (a picture, music, text, software, another skill, a dataset,
                 writing): the reason a plan is refused.
sentence.py      Read a task sentence: which built-in families it names and the parameters it states.
shots.py         The worked examples a sentence asks for ("zero-shot", "2-shot") -> countdown's and arithmetic's
                 `shots`.
spelling.py      Typos of the keywords read as the keywords ("werwolves"; "whitch" where the game is named).
spec.py          `TaskSpec`: what a vibe run will train, as planned from the sentence and saved as `task.yaml`, and
                 as the readable block `agentjet vibe TEXT --dry-run` prints.
train_words.py   Run settings a sentence states in words ("a learning rate of 1e-4", "evaluate on 32 games", "for
                 2 days", "10-15 steps").
train_overrides.py  `agentjet vibe --train KEY=VALUE`: the user's TrainConfig overrides, over the family's
                 measured recipe.
werewolves/      The werewolves part of a deterministic plan: which roles train, on which models (the groups of
                 roles the sentence puts on models), talk and round cap.
"""
