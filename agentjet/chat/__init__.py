"""`agentjet chat`: a web page on loopback to talk to policies (DESIGN's chat interface).

security.py  Who may use the chat: one login token, HttpOnly SameSite=Strict cookie sessions, a CSRF
             token per session.
targets.py   The policies the playground talks to (live swarm servers, tokens held here) and one
             streamed reply from one of them, inside an eval episode that never trains.
web.py       The FastAPI app: login and playground pages (static/), `/api/session`, `/api/chat` (the
             fan-out of one conversation to several policies as one SSE stream).
static/      login.html, playground.html, playground.js (replies built with textContent only), chat.css.
"""
