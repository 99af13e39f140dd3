"""One chat call to an LLM through litellm (a provider model name or an OpenAI-compatible URL): used by vibe and
A3R alike.

chat.py  One chat call to an LLM through litellm, configured by `--llm` or `AGENTJET_VIBE_LLM`.
"""
