"""The validate and red-team steps: a workspace's tests, data and episodes in a sandbox, and policies that try to
earn reward without solving.

dataset_check.py  The dataset schema check: a workspace's JSONL split files against the contract, read as data only.
degenerate.py     Degenerate policies for the red team: replies that read the prompt but never solve the task.
dry_policy.py     A scripted policy that answers any task's prompt in the format it asks for: the dry runs' fake
                  model.
episode_probe.py  Plays a few episodes of a workspace's client inside a sandbox and reports each one as a JSON line.
model_server.py   A throwaway swarm server for one model: started with the public CLI for a check, stopped after.
redteam.py        The red team: try to earn reward without solving the task, before any training is spent on it.
reference.py      The red team's yardstick: a policy that plays the task properly, from the prompt alone.
validate.py       Validate a generated workspace in a sandbox before any training: its tests, its data, dry and real
                  episodes.
"""
