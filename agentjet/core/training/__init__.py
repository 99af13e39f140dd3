"""The training loop around the step: when the pool makes a batch (C1-C5), advantages, checkpoints, metrics,
health, quarantine.

advantages.py    GRPO advantages: each episode's reward relative to the other episodes of its task group (pure).
batches.py       A batch of ended episodes as the trainer takes it: merged samples, each with its episode's
                 advantage (pure).
checkpoints.py   Checkpoints on disk: what a restart needs to continue training exactly where it stopped.
clients.py       Which swarm clients are active, and which of them asked for an update (C4/C5 bookkeeping).
collect.py       Collection strategies C1-C5: when the pool of finished episodes makes a training batch (pure).
health.py        Training health: whether this server is still training, and if not, why (for `/swarm/status`).
lazy_trainer.py  The training loop's trainer, built on the first update in a worker thread: loading a model never
                 stalls serving.
loop.py          The training loop: turns ended train episodes into GRPO updates of the served policy.
metrics.py       Training metrics as values: one step's numbers, an episode's merge report, TensorBoard tags (pure).
metrics_log.py   Where metric lines go: `<state_dir>/metrics.jsonl`, then each tracker of `TrainConfig.report_to`.
pool.py          The pool: ended train episodes waiting for a step, by journal seq, and the seqs already consumed.
quarantine.py    Episodes refused for training, for good, with the reason: so nothing a client sent poisons the
                 policy.
seam.py          What the engine needs of the training loop attached to it (`loop.TrainingLoop`; a fake in tests).
step_runner.py   Where an update runs: between the decode loop's steps on a CPU, in a worker thread elsewhere.
"""
