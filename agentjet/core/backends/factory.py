"""`build_backend(settings)`: the inference backend a server's settings ask for, placed and typed.

`transformers` (the embedded default) loads the model in this process at `settings.device` /
`settings.dtype`; `vllm` serves it from a `vllm serve` process of its own venv (started from
`vllm_python`, or attached at `vllm_url`; `vllm/backend.py`).
"""

from __future__ import annotations

from agentjet.core.backends.base import Backend
from agentjet.core.config import ServerSettings
from agentjet.core.errors import ConfigError
from agentjet.core.models import resolve_model
from agentjet.core.placement import resolve_placement

__all__ = ["build_backend", "check_backend_settings", "served_name"]


def served_name(settings: ServerSettings) -> str:
    """The model name clients send: the registered name, or the folder's name for a path."""
    return settings.model if "/" not in settings.model else resolve_model(settings.model).name


def check_backend_settings(settings: ServerSettings) -> None:
    """One ConfigError sentence for backend flags that cannot work together (checked before a start)."""
    vllm_given = settings.vllm_python is not None or settings.vllm_url is not None
    if settings.backend == "transformers":
        if vllm_given or settings.vllm_args:
            raise ConfigError("--vllm-python, --vllm-url and --vllm-arg need --backend vllm")
        return
    if settings.vllm_python is not None and settings.vllm_url is not None:
        raise ConfigError("give --vllm-python (start vLLM) or --vllm-url (attach to one), not both")
    if not vllm_given:
        raise ConfigError(
            "--backend vllm needs --vllm-python PATH (the python of a vLLM venv, e.g. .venv-vllm/bin/python "
            "from `make vllm-venv`) or --vllm-url URL of a running `vllm serve`"
        )
    if settings.vllm_python is not None and not settings.vllm_python.is_file():
        raise ConfigError(f"--vllm-python {settings.vllm_python} does not exist (`make vllm-venv` creates .venv-vllm)")
    if settings.vllm_url is not None and not settings.vllm_url.startswith(("http://", "https://")):
        raise ConfigError(f"--vllm-url {settings.vllm_url!r} must be an http:// or https:// URL")


def build_backend(settings: ServerSettings) -> Backend:
    """The configured backend, not started (its `start()` loads the model)."""
    check_backend_settings(settings)
    path = resolve_model(settings.model)
    placement = resolve_placement(settings.device, settings.dtype)
    if settings.backend == "transformers":
        from agentjet.core.backends.transformers_backend import TransformersBackend

        return TransformersBackend(
            path,
            name=served_name(settings),
            max_batch_size=settings.max_batch_size,
            device=placement.device,
            dtype=placement.torch_dtype,
        )
    from agentjet.core.backends.vllm.backend import VllmBackend

    return VllmBackend.from_settings(settings, path, placement, name=served_name(settings))
