"""`agentjet chat`: a web page on loopback to talk to policies and inspect what servers captured.

episodes.py  The episode inspector's reads of a server's journal (admin routes, with the token held here);
             episode ids checked so none becomes another path.
security.py  Who may use the chat: one login token, HttpOnly SameSite=Strict cookie sessions, a CSRF
             token per session.
targets.py   The policies the playground talks to (live swarm servers, tokens held here) and one
             streamed reply from one of them, inside an eval episode that never trains.
web.py       The FastAPI app: login, playground and inspector pages (static/), `/api/session`, `/api/chat`
             (the fan-out of one conversation to several policies as one SSE stream), `/api/episodes/...`.
static/      login.html, playground.html + playground.js (replies built with textContent only, forks
             continued), inspector.html + inspector.js (episodes, calls, trained tokens, fork), chat.css.
"""
