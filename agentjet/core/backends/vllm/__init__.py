"""The vLLM backend: the `Backend` contract over a `vllm serve` process of its own venv, on loopback.

backend.py  The vLLM backend: the `Backend` contract over a `vllm serve` process on loopback.
process.py  Start and stop a `vllm serve` process from its own venv, on loopback, for one swarm server.
"""
