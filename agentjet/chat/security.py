"""Who may use the chat: one login token, cookie sessions, and a CSRF token per session.

The login token lives in a 0600 file on this machine (never in a URL, a page or a log line);
logging in with it sets an HttpOnly, SameSite=Strict session cookie. Every request that changes
something (or starts sampling) must also carry the session's CSRF token in `X-CSRF-Token`,
which the page reads from `/api/session`; a page of another origin can neither read it nor
send the cookie. Sessions are held in memory: restarting the chat logs everyone out.
"""

from __future__ import annotations

import hmac
import secrets
import time
from dataclasses import dataclass, field

__all__ = ["CSRF_HEADER", "SESSION_COOKIE", "Session", "Sessions"]

SESSION_COOKIE = "agentjet_chat_session"
CSRF_HEADER = "X-CSRF-Token"


@dataclass(frozen=True)
class Session:
    session_id: str = field(repr=False)
    csrf: str = field(repr=False)
    started_at: float


class Sessions:
    """The login check and the live sessions (at most `limit`, the oldest dropped first)."""

    def __init__(self, login_token: str, *, ttl_s: float = 12 * 3600, limit: int = 256) -> None:
        if len(login_token) < 16:
            raise ValueError("the chat's login token must be at least 16 characters")
        self._login_token = login_token
        self._ttl_s, self._limit = ttl_s, limit
        self._by_id: dict[str, Session] = {}

    def login(self, offered: str) -> Session | None:
        """A new session when `offered` is the login token (compared in constant time), else None."""
        if not hmac.compare_digest(offered.strip().encode(), self._login_token.encode()):
            return None
        session = Session(secrets.token_urlsafe(32), secrets.token_urlsafe(32), time.time())
        self._by_id[session.session_id] = session
        while len(self._by_id) > self._limit:
            self._by_id.pop(next(iter(self._by_id)))
        return session

    def find(self, session_id: str | None) -> Session | None:
        session = self._by_id.get(session_id or "")
        if session is None:
            return None
        if time.time() - session.started_at > self._ttl_s:
            self._by_id.pop(session.session_id, None)
            return None
        return session

    def logout(self, session_id: str | None) -> None:
        self._by_id.pop(session_id or "", None)

    @staticmethod
    def csrf_ok(session: Session, offered: str | None) -> bool:
        return offered is not None and hmac.compare_digest(offered.encode(), session.csrf.encode())
