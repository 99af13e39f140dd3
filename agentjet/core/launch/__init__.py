"""The processes the core starts for isolation: a swarm server for the layers above, and the pieces a `vllm serve`
child shares with it.

allocator.py       The server's malloc: tcmalloc preloaded where the machine has it (CPU updates ~25% faster).
child_process.py   A child process in its own process group: whether it still runs, what it runs, its stop, its
                   log's tail.
interrupts.py      How a process that owns children stops: SIGTERM like Ctrl-C, and a second signal cannot cut
                   its cleanup short.
parent_watch.py    `python -m agentjet.core.launch.parent_watch --parent-pid PID -- ARGS...`: `python -m agentjet
                   ARGS` that dies with its parent.
ports.py           Loopback ports for the processes we start: a free one now, and whether a start lost its port to
                   another.
server_process.py  One `agentjet server start` child on a free loopback port: its token file, log, readiness wait
                   and stop.
"""
