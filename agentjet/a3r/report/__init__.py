"""The campaign report: figures and `report.md` from the analysis, committed to the campaign repo.

figures.py      The campaign report's plots (`figures/*.png`): importance, learning curves, effects, confirmation.
report_text.py  The text of a campaign's report.md, from its analysis: pure, no I/O (figures are passed in by name).
writer.py       The campaign report: analyse the study, draw `figures/`, write `report.md`, commit them to the repo.
"""
