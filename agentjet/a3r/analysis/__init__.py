"""What a campaign found: best configuration, parameter importance, effects with intervals, confirmation, and the
research questions.

confirmation.py  Is the best configuration a finding? Its confirmation re-runs against the baseline, with intervals.
findings.py      What a campaign found: best configuration, parameter importance, effects with intervals,
                 confirmation.
importance.py    Which searched params mattered: Optuna's importance over a campaign's completed search trials.
questions.py     The plan's research questions, and what the campaign's data says about each, in plain words.
stats.py         Confidence intervals for campaign results: a mean, and the difference of two means. Pure, no I/O.
"""
