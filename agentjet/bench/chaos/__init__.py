"""`agentjet bench chaos`: attacks and faults against real servers, each with the invariant it must keep.

Abuse cases (`abuse.py`) hit a running server the way one bad client could: huge bodies, huge
rewards, slow and silent connections, a client token on admin routes, an end while a call runs,
a full disk. Crash cases (`crashes.py`) kill -9 servers and clients in rounds and damage the
journal; research cases (`research.py`, `--full`) kill a campaign worker and a vibe run. Every
case reports what it tried, what it measured and whether its invariant held (`ok`).

runner.py    Which chaos cases run, in what order, and the one JSON they report (`agentjet bench chaos --json`).
target.py    The server a chaos case attacks: a subprocess we can watch (RSS, health latency) and kill -9.
"""
