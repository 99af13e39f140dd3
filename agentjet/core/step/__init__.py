"""One GRPO/LoRA training step, in one process or data-parallel over torch.distributed ranks: pack, forward, loss,
backward, step.

distributed_trainer.py  Training across processes: each update runs data-parallel over N torch.distributed ranks.
losses.py               Per-token pieces of the policy loss: logprobs under a model, PPO-clip, TIS weights, k3 KL.
packing.py              Pack training samples into right-padded micro-batches under a token budget.
policy_model.py         The policy network a trainer optimises: the base model with a float32 LoRA adapter, or alone
                        under full fine-tuning.
prefix_sharing.py       Group prefix sharing: the samples of a GRPO group start with the same prompt, so run it
                        once.
rank_trainer.py         One rank of a data-parallel training group: a `Trainer` that runs its share of each step.
stages.py               Work that pauses: a generator whose every `yield` is a point where its thread may run something
                        else.
step_plan.py            What one training step runs: its indivisible work units, in the order one process runs them.
step_stats.py           What one training step measured: `StepStats` out, and the sums it keeps on the device until
                        the step ends.
step_trainer.py         What the training loop needs of a trainer (`trainer.Trainer`; a fake in unit tests), and the
                        real one's factory.
train_worker.py         A training rank > 0: `python -m agentjet.core.step.train_worker` (spawned by
                        `DistributedTrainer`, or torchrun).
trainer.py              The training step, in one straight line: pack -> forward -> loss -> backward -> clip ->
                        step.
worker_processes.py     The worker processes of a training group (ranks 1..N-1): how rank 0 starts them, meets them,
                        and ends them.
"""
