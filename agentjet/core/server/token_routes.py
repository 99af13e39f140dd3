"""`/swarm/tokens`: the admin issues, lists and revokes client tokens (`tokens.py`)."""

from __future__ import annotations

import asyncio
from typing import Annotated

from fastapi import APIRouter, Path, Request
from pydantic import BaseModel, ConfigDict, Field

from agentjet.core.access.tokens import TOKEN_NAME_PATTERN
from agentjet.core.server.deps import AdminDep, get_runtime
from agentjet.core.server.wire import Utf8Body

__all__ = ["router"]

router = APIRouter(prefix="/swarm/tokens", tags=["tokens"])


class CreateTokenIn(Utf8Body):
    model_config = ConfigDict(extra="forbid")
    name: str = Field(pattern=TOKEN_NAME_PATTERN, description="who holds it (a laptop, a sandbox, a run)")


class TokenOut(BaseModel):
    token_id: str
    name: str
    hint: str
    created_at: float
    revoked_at: float | None
    revoked: bool


class CreatedTokenOut(TokenOut):
    token: str  # the secret: shown once, never stored


class TokenListOut(BaseModel):
    tokens: list[TokenOut]


@router.post("", response_model=CreatedTokenOut)
async def create_token(body: CreateTokenIn, request: Request, principal: AdminDep) -> CreatedTokenOut:
    token, secret = await asyncio.to_thread(get_runtime(request).tokens.create, body.name)
    return CreatedTokenOut(**token.view(), token=secret)


@router.get("", response_model=TokenListOut)
async def list_tokens(request: Request, principal: AdminDep) -> TokenListOut:
    tokens = await asyncio.to_thread(get_runtime(request).tokens.tokens)
    return TokenListOut(tokens=[TokenOut(**t.view()) for t in tokens])


@router.delete("/{which}", response_model=TokenListOut)
async def revoke_token(
    which: Annotated[str, Path(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$", description="token id or name")],
    request: Request,
    principal: AdminDep,
) -> TokenListOut:
    """Revoke by id, or every live token of a name; the revoked tokens' episode keys stop working too."""
    revoked = await asyncio.to_thread(get_runtime(request).tokens.revoke, which)
    return TokenListOut(tokens=[TokenOut(**t.view()) for t in revoked])
