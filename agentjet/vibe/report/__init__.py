"""The report step: `report.md`, `run.json` and `curves.png` from what happened in a run.

outcome_text.py  The report's answer to "did the agent get better?": before -> after on the held-out split, the
                 interval, the verdict.
report_input.py  `ReportInput`: what happened in one vibe run, as the report and its text renderer read it.
report_text.py   The text of `report.md`: one section per part of the run, tables for the checks, plain words for
                 the rest.
writer.py        The end of a vibe run: `report.md` for a person, `run.json` for a program, `curves.png` from the
                 metrics.
"""
