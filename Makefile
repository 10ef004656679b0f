# `make app` sets up and runs the app; `make test` sets up and runs every test (README's two commands).
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin

.PHONY: app test setup setup-test browser bench

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

test: setup-test browser
	$(BIN)/python -m pytest

bench: setup-test
	$(BIN)/python bench/engine_bench.py
