"""`build_backend(settings)`: the inference backend a server's settings ask for, placed and typed.

`transformers` (the embedded default) loads the model in this process at `settings.device` /
`settings.dtype`; `vllm` serves it from a `vllm serve` process of its own venv (started from
`vllm_python`, or attached at `vllm_url`; `vllm_backend.py`).
"""

from __future__ import annotations

from agentjet.core.backends.base import Backend
from agentjet.core.config import ServerSettings
from agentjet.core.errors import ConfigError
from agentjet.core.models import resolve_model
from agentjet.core.placement import resolve_placement

__all__ = ["build_backend", "served_name"]


def served_name(settings: ServerSettings) -> str:
    """The model name clients send: the registered name, or the folder's name for a path."""
    return settings.model if "/" not in settings.model else resolve_model(settings.model).name


def build_backend(settings: ServerSettings) -> Backend:
    """The configured backend, not started (its `start()` loads the model)."""
    path = resolve_model(settings.model)
    placement = resolve_placement(settings.device, settings.dtype)
    if settings.backend == "transformers":
        if settings.vllm_python is not None or settings.vllm_url is not None:
            raise ConfigError("--vllm-python/--vllm-url need --backend vllm")
        from agentjet.core.backends.transformers_backend import TransformersBackend

        return TransformersBackend(
            path,
            name=served_name(settings),
            max_batch_size=settings.max_batch_size,
            device=placement.device,
            dtype=placement.torch_dtype,
        )
    from agentjet.core.backends.vllm_backend import VllmBackend

    return VllmBackend.from_settings(settings, path, placement)
