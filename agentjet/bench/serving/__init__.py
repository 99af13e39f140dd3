"""`agentjet bench serve`: what the swarm server costs per call and how generation scales, each server in its own
process.

serve.py          `agentjet bench serve`: what the swarm server costs per call, and how generation scales with
                  episodes.
serve_process.py  The servers of `agentjet bench serve` as child processes: start one, wait until it rolls, stop it.
serve_worker.py   `python -m agentjet.bench.serving.serve_worker KIND`: one server for `agentjet bench serve`, in
                  its own process.
"""
