"""The swarm server over HTTP: the FastAPI app, its routes, auth dependencies, request and connection limits.

app.py             `create_app(settings, backend=None)`: the swarm server as a FastAPI app, built in `lifespan`.
client_routes.py   `/swarm/clients/{client_id}/*`: a swarm client asks for an update (C4/C5) or says it is alive.
connections.py     Connection limits uvicorn lacks: a cap on open connections and timeouts for slow or silent peers.
deps.py            FastAPI dependencies: the runtime objects built in `lifespan`, and who is calling.
engine_routes.py   `/swarm/status`, `/swarm/config` and `/swarm/engine/*`: the engine's control surface.
episode_routes.py  `/swarm/episodes`: begin, end, abort and inspect episodes (admin token: any; client token: its
                   own).
errors.py          The one place where errors become HTTP: a status table and OpenAI-style error bodies.
http_server.py     The uvicorn settings of a swarm server: connection limits, timeouts, TLS. One place for the CLI
                   and tests.
limits.py          The request-size limit, applied before routing and authentication (pure ASGI middleware).
openai_models.py   Pydantic models of the OpenAI Chat Completions wire format (request in, response out).
openai_routes.py   `/v1/models` and `/v1/chat/completions`: the OpenAI-compatible surface agents talk to.
openai_shapes.py   Shape core results into OpenAI Chat Completions JSON: whole responses and stream chunks.
run.py             Starting a swarm server in this process: the checks that can refuse it, one sentence each, then
                   uvicorn.
token_routes.py    `/swarm/tokens`: the admin issues, lists and revokes client tokens (`tokens.py`).
wire.py            Checks every wire body needs before its fields are read.
"""
