"""The client SDK (`SwarmClient`, `AsyncSwarmClient`): sans-IO plans and reply readers under two thin I/O twins,
and the status view.

client.py          Python SDK for a swarm server: begin and end episodes, read status, steer the engine.
client_core.py     What both SDK twins share: settings, headers, the retry policy, and an episode's client-side
                   state (no I/O).
client_plans.py    The SDK's sans-IO plans: what each operation sends and how it reads the replies (no I/O here).
client_replies.py  Read swarm server replies: JSON bodies, and OpenAI-style errors mapped to the typed error tree.
status_view.py     Terminal view of one swarm server's GET /swarm/status, polled live for `agentjet server status`.
"""
