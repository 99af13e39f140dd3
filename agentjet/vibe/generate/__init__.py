"""The generate step: a `TaskSpec` -> workspace files, from a built-in template or written by an LLM under the
workspace contract.

codegen_prompt.py  The prompts that ask an LLM to write (or fix) a workspace: the contract, a worked example, the
                   spec, the failures.
contract.py        The generated workspace's contract: which files it holds and what each must do.
fenced.py          Files out of an LLM reply: fenced blocks that name their path, checked before anything is
                   written.
generator.py       Generate a workspace from a task spec: a built-in family's template, or files an LLM writes.
render.py          Built-in task templates -> workspace files, filled in from the task spec.
templates/         the built-in task families' workspace templates: whole files, _shared/ skeletons and
                   per-family pieces (package data)
"""
