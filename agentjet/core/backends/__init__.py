"""Inference backends behind one protocol: the in-process transformers decode loop, vLLM in its own process, a fake.

base.py                  The inference backend seam: what the server needs from anything that samples tokens.
decode_loop.py           The single generation loop: one worker thread that owns a causal LM and batches every
                         request.
factory.py               `build_backend(settings)`: the inference backend a server's settings ask for, placed and
                         typed.
fakes.py                 Backends that stand in for a model where one cannot or need not run.
kv_batch.py              The KV cache of a running decode batch: rows join (merge) and leave (select) between steps.
lora_layers.py           LoRA layers whose adapter runs in the activations' dtype: a bf16 model copies no
                         activation to fp32 (the trainer's and the server's forward alike); a per-row switch
                         serves the base beside the adapter in one batch.
loop_jobs.py             Work the decode loop runs on its own thread between decode steps: a queue of paused jobs.
outbox.py                Deltas of one decode step, handed to their sequences' event loops with one callback
                         per loop.
prefill_gather.py        When the decode loop prefills newcomers (at once, or a few steps later in a batch: busy CPU),
                         and in how many forwards (a CPU batch split by suffix length: less padding).
prefix_cache.py          Prefix KV reuse: finished sequences' KV rows, kept so that a prompt extending them skips
                         their prefill.
sampling.py              Per-row token sampling for a decode batch: greedy, temperature and top-p, seeded per row.
textstream.py            Incremental detokenisation with stop strings for one sampled sequence.
transformers_backend.py  The embedded inference backend: a transformers causal LM served by one continuous-batching
                         loop.
validation.py            What every backend shares around sampling: the checks before a sequence is admitted (so all
                         refuse the same requests alike) and the set of token ids that end a sequence.
vllm/                    The vLLM backend: the `Backend` contract over a `vllm serve` process of its own venv, on
                         loopback.
"""
