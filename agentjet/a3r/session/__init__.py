"""One campaign process: the session (lock, resume, study, repo) and the scheduler that runs trials on the pool.

campaign.py      A campaign session: an Optuna study whose trials run in parallel on a pool of swarm servers, opened
                 and closed.
decisions.py     What a campaign session writes to decisions.md: the setup it starts with, the best trial, the
                 summary.
lock.py          One live campaign process per repo: a lock file, a heartbeat file, and a stop request file.
prefetch.py      Ask ahead: one background thread prepares the next trial while every server is busy.
resume.py        Resume: make the study and the repo agree again after a campaign process died, whatever the moment.
scheduler.py     The campaign scheduler: runs a session's trials on the pool until the plan's budget is spent, then
                 confirms the best.
study.py         The campaign's Optuna study: where it is stored, and the plan's sampler and pruner.
study_mutex.py   A lock over one study shared by campaign workers in several processes (or on several machines).
timing.py        What a campaign session measured: where each trial's time went, pool utilisation, overhead per
                 trial.
trial_worker.py  The thread of one campaign trial: run it on its server, report each eval, tell the outcome, commit
                 it.
"""
