"""`agentjet chat`: a web page on loopback (or a terminal app) to talk to policies and inspect what servers captured.

assistant.py The research assistant, offline mode: plain commands and common phrasings -> the CLI's own
             tools; every action that changes something is confirmed first.
assistant_llm.py  The assistant with an LLM: a LangGraph tool-calling agent over the same tools; actions
             still wait for the user's yes.
episodes.py  The episode inspector's reads of a server's journal (admin routes, with the token held here);
             episode ids checked so none becomes another path.
guards.py    What is refused before any route: other Host names (DNS rebinding), other origins, large or
             undeclared bodies, login guessing.
launched.py  Policies the chat serves itself: the base model, or a checkpoint step of a state dir (a copy).
security.py  Who may use the chat: one login token, HttpOnly SameSite=Strict cookie sessions, a CSRF
             token per session.
targets.py   The policies the playground talks to (live swarm servers, tokens held here) and one
             streamed reply from one of them, inside an eval episode that never trains.
terminal.py  `--terminal`: the playground and the inspector as a Textual app (same clients, no web
             server, no login), fork included.
terminal_assistant.py  The terminal's Assistant tab: the transcript, Yes/No buttons, jobs' progress
             streamed in a worker.
terminal_views.py  What the terminal shows, as Rich Text (never markup): replies, logprob colours,
             calls, trained tokens.
tools.py     The assistant's tools: `agentjet` CLI commands as child processes; long ones as followed jobs.
web.py       The FastAPI app: login, playground and inspector pages (static/), `/api/session`, `/api/chat`
             (the fan-out of one conversation to several policies as one SSE stream), `/api/episodes/...`,
             `/api/assistant` (+ `/confirm`).
static/      login.html, playground.html + playground.js (replies built with textContent only, forks
             continued), inspector.html + inspector.js (episodes, calls, trained tokens, fork), assistant.html +
             assistant.js, common.js (what the pages share), chat.css.
"""
