"""AgentJet: an open platform for agentic reinforcement learning of LLMs."""

from agentjet.core import *  # noqa: F403  (the public API is the core's)
from agentjet.core import __all__  # noqa: F401
