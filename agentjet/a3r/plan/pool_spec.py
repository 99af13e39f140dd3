"""Which servers a campaign trains on: `local:N` processes it starts, and/or remote URLs.

Written in a plan as `pool: local:2`, `pool: [local:1, http://gpu-a:8710]`, or members with
their token's env var (`{url: ..., token_env: GPU_A_TOKEN}`); on the CLI as `--pool local:4` or
`--pool http://a:8710,http://b:8710`. Remote tokens come from the environment, never the plan.
"""

from __future__ import annotations

import os
import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from agentjet.a3r.errors import PlanError

__all__ = ["DEFAULT_TOKEN_ENV", "PoolServer", "PoolSpec", "parse_pool"]

DEFAULT_TOKEN_ENV = "AGENTJET_TOKEN"
_LOCAL = re.compile(r"^local:(\d+)$")


class PoolServer(BaseModel):
    """A remote swarm server the campaign does not start; its token is read from `token_env`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    url: str = Field(description="base URL of the server, http(s)://host:port")
    token_env: str = Field(DEFAULT_TOKEN_ENV, description="env var holding the server token")

    @model_validator(mode="before")
    @classmethod
    def _from_string(cls, data: Any) -> Any:
        return {"url": data} if isinstance(data, str) else data

    @field_validator("url")
    @classmethod
    def _check_url(cls, url: str) -> str:
        if not re.match(r"^https?://[^\s/]+", url):
            raise ValueError(f"{url!r} is not a server URL: write http://host:port (or local:N for local servers)")
        return url.rstrip("/")

    @field_validator("token_env")
    @classmethod
    def _check_env(cls, name: str) -> str:
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
            raise ValueError(f"token_env {name!r} is not an environment variable name")
        return name

    def token(self) -> str | None:
        """The token from the environment now (None when the variable is unset or empty)."""
        return os.environ.get(self.token_env) or None


class PoolSpec(BaseModel):
    """`local` servers started by the campaign plus `servers` given by URL; at least one in all."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    local: int = Field(0, ge=0, le=256, description="servers the campaign starts on this machine")
    servers: tuple[PoolServer, ...] = Field((), description="remote servers, used as given")

    @model_validator(mode="before")
    @classmethod
    def _normalise(cls, data: Any) -> Any:
        if isinstance(data, str):
            data = [part.strip() for part in data.split(",") if part.strip()]
        if not isinstance(data, list | tuple):
            return data
        local, servers = 0, []
        for member in data:
            match = _LOCAL.match(member.strip()) if isinstance(member, str) else None
            if match:
                local += int(match.group(1))
            elif isinstance(member, str) and member.strip().startswith("local"):
                raise ValueError(f"{member!r}: write local:N with N a whole number, e.g. local:2")
            else:
                servers.append(member)
        return {"local": local, "servers": servers}

    @model_validator(mode="after")
    def _not_empty(self) -> PoolSpec:
        if self.size == 0:
            raise ValueError("the pool is empty: give local:N (N >= 1) or at least one server URL")
        return self

    @property
    def size(self) -> int:
        return self.local + len(self.servers)

    def to_plan_value(self) -> str | list[Any]:
        """The shortest form a plan file writes: `local:2`, or a list of members."""
        if not self.servers:
            return f"local:{self.local}"
        members: list[Any] = [f"local:{self.local}"] if self.local else []
        for s in self.servers:
            members.append(s.url if s.token_env == DEFAULT_TOKEN_ENV else s.model_dump())
        return members


def parse_pool(spec: str | list[Any] | dict[str, Any]) -> PoolSpec:
    """A `--pool` value or a plan's `pool:` -> PoolSpec; PlanError naming the accepted forms."""
    try:
        return PoolSpec.model_validate(spec)
    except ValidationError as exc:
        detail = "; ".join(str(e["msg"]).removeprefix("Value error, ") for e in exc.errors())
        raise PlanError(f"bad pool {spec!r}: {detail} (forms: local:N, URL, URL,URL, or a list of them)") from exc
