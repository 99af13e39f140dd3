"""One trial: fresh adapter, train rounds and evals on one pool member, its records and curve (or the synthetic
stand-in).

curve.py      One trial's learning curve as a small PNG (`trials/<n>/curve.png` in the campaign repo).
records.py    What a campaign writes on each Optuna trial (user attrs) and how a trial reads as a JSON record.
runner.py     One trial on one pool member: a fresh adapter, train rounds and evals through `SwarmClient`, a curve
              and a value.
synthetic.py  The synthetic trial: no model, a known noisy learning curve of the params, for the scheduler bench and
              tests.
trial_row.py  `TrialRow`: one trial as the analysis, the confirmation and the report see it (plain data).
"""
