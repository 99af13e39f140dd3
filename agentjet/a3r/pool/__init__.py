"""The server pool: local `agentjet server start` members and remote URLs, their health, and proof that a trial
starts fresh.

freshness.py     Proof that a trial trains a fresh adapter: its server is untouched before, and its step 1 comes
                 first.
local_server.py  A local pool member: an `agentjet server start` subprocess the campaign starts, restarts and stops.
members.py       Pool members: one swarm server each, with its health, and how a trial gets a fresh adapter on it.
servers.py       The server pool a campaign schedules trials on: starts local servers, watches every member, hands
                 them out.
"""
