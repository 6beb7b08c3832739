# Two jobs for people: `make demo` (the main job) and `make test`. Each sets up .venv itself.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint browser broker train-deps clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

# One whole game on the simulated tower at a watchable pace (the scoreboard on
# http://localhost:8000); Ctrl-C stops it and the next `make demo` resumes the game.
demo: $(STAMP)
	$(BIN)/dicetower demo --games 1

test: $(STAMP) browser broker
	$(BIN)/ruff check .
	$(BIN)/lint-imports
	$(BIN)/python -m pytest -n auto --dist worksteal

lint: $(STAMP)
	$(BIN)/ruff check .

# PyTorch, to train the face network and to run its training test (which skips
# without it): `make train-deps test`.
train-deps: $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[train]'

# Headless Chromium and its driver for the scoreboard's browser tests (Debian packages).
browser:
	@sh tools/install-browser.sh

# The Mosquitto broker for the league's tests, which start their own on a free port (Debian).
broker:
	@sh tools/install-mosquitto.sh

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .hypothesis
