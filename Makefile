# `make app` sets up and runs the app; `make test` sets up and runs every test (README's two commands, and CI's);
# `make test-fast`, the edit-test loop's tier (tests/conftest.py says what it holds; ~50 s, 2-4 min on a busy machine).
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
# One thread a BLAS or OpenMP pool in the tests: the processes share 2 cores (tests/conftest.py sets it too)
THREADS := OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1

.PHONY: app test test-fast setup setup-test browser nginx redis bench classroom perf

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

setup: $(BIN)/python
	$(BIN)/pip install -q -r requirements.txt

setup-test: $(BIN)/python
	$(BIN)/pip install -q -r requirements-dev.txt

# Debian's Chromium for the browser tests, and CJK fonts so Chinese is visible in screenshots.
browser:
	@command -v chromium >/dev/null && fc-list | grep -qi "noto sans cjk" || \
		{ apt-get update -qq && apt-get install -y -qq chromium fonts-noto-cjk; }

app: setup
	$(BIN)/streamlit run app.py --server.port 8501

# nginx: the classroom tests (tests/test_deploy.py) run two processes behind it; redis: the Redis stores' tests
# (tests/test_rooms.py, tests/test_weights.py) start a redis-server of their own
# Four processes (pytest-xdist), each taking the next test as it finishes one: on 2 cores, because the browser and
# server tests mostly wait for other processes (Chromium, Streamlit), whose time the others then use.
test: setup-test browser nginx redis
	$(THREADS) $(BIN)/python -m pytest -n 4 --dist worksteal --durations=15

test-fast: setup-test
	$(THREADS) $(BIN)/python -m pytest -m fast --hypothesis-profile=fast

bench: setup-test
	$(BIN)/python bench/engine_bench.py $(if $(AGAINST),--against $(AGAINST))

# The whole performance harness, each figure a ratio to a reference of the same run (bench/pages_bench.py): the
# engine vs PyTorch, every page's server CPU per rerun (also with the paper preset) and browser edit-to-update vs
# a trivial page; LOAD=1 adds the classroom load (bench/load.py, ~6 min). Replaces the "Per page" section of
# docs/PERFORMANCE.md, after comparing each page's ratios with those recorded there (bench/perf_guard.py): it prints
# old -> new, writes the new figures anyway, and fails (exit status 1) if a case is more than 20 % worse.
perf: setup-test browser
	$(BIN)/python bench/pages_bench.py --engine --paper $(if $(LOAD),--load) --write docs/PERFORMANCE.md

# A class larger than one process can serve: PROCESSES Streamlit processes behind nginx on PORT, which keeps each
# browser on one process (deploy/classroom.py, deploy/nginx.conf.template); Ctrl-C stops them all.
PROCESSES ?= 2
PORT ?= 8501
classroom: setup nginx
	$(BIN)/python deploy/classroom.py --processes $(PROCESSES) --port $(PORT)

nginx:
	@command -v nginx >/dev/null || test -x /usr/sbin/nginx || \
		{ apt-get update -qq && apt-get install -y -qq nginx; }

# Debian's Redis server, for the stores shared by machines (TRANSFORMER_REDIS_URL; ui/stores/rooms.py, ui/stores/weights.py).
redis:
	@command -v redis-server >/dev/null || test -x /usr/bin/redis-server || \
		{ apt-get update -qq && apt-get install -y -qq redis-server; }
