# Two commands on a fresh machine:  `make demo`  and  `make test`.
VENV   ?= .venv
PYTHON ?= python3
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip
RUN    ?= runs/demo
CORPUS ?= corpora/examiner-handbook

.PHONY: demo test check install install-dev clean

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip

# CPU torch first: an unpinned torch (pulled in by sentence-transformers) would fetch a multi-GB CUDA build.
$(VENV)/.torch: | $(PY)
	$(PY) -c "import torch" 2>/dev/null || $(PIP) install torch==2.13.0
	touch $@

# The `local` extra compiles llama-cpp-python from source the first time (about 7 minutes on 2 cores).
$(VENV)/.installed: pyproject.toml $(VENV)/.torch
	$(PIP) install --quiet -e '.[cpu,local]'
	touch $@

$(VENV)/.installed-dev: $(VENV)/.installed
	$(PIP) install --quiet -e '.[cpu,local,dev,export,documents,ray]'
	touch $@

install: $(VENV)/.installed
install-dev: $(VENV)/.installed-dev

demo: install
	HF_HUB_OFFLINE=1 $(VENV)/bin/examiner doctor
	HF_HUB_OFFLINE=1 $(VENV)/bin/examiner demo --out $(RUN) --corpus $(CORPUS)

# ruff lints first ([tool.ruff] in pyproject.toml); mypy --strict on the typed layers runs inside the suite
# (tests/core/test_static_types.py). One pytest worker per core (pytest-xdist). pytest exits 5 when it collects
# no test; that is not a failure.
test: install-dev
	$(VENV)/bin/ruff check .
	HF_HUB_OFFLINE=1 $(PY) -m pytest -q -ra -n auto; rc=$$?; if [ $$rc -eq 5 ]; then echo "no tests collected"; exit 0; fi; exit $$rc

# The fast loop while changing code: ruff, mypy on the typed layers, and every test except those that drive a
# whole exam, start a server or start examiner in a child process (skipped as they try: tests/helpers/fast_loop.py).
check: install-dev
	$(VENV)/bin/ruff check .
	$(PY) tests/helpers/typecheck.py
	HF_HUB_OFFLINE=1 $(PY) -m pytest -q --fast -n auto; rc=$$?; if [ $$rc -eq 5 ]; then exit 0; fi; exit $$rc

clean:
	rm -rf $(VENV) runs .pytest_cache
