# The two set-up commands of the README: `make run` and `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test browser bench docs clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e .
	@# the kernels a first session takes compile on one core (numba caches them) while the optional extras
	@# install on the other: the first `make run` and Rashomon set then start at once, not after 20-50 s
	$(BIN)/optrules compile --first > $(VENV)/compile.log 2>&1 & compiling=$$!; \
	$(BIN)/python -m pip install --quiet -e '.[web,test,plot,docs]'; installed=$$?; \
	wait $$compiling || { cat $(VENV)/compile.log; exit 1; }; exit $$installed
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/optrules fit --dataset compas --regularization 0.005

# The browser test needs Debian's chromium and chromedriver: installed here where apt-get can run (as
# root); elsewhere that one test is skipped and says why.
browser:
	@if command -v chromium >/dev/null 2>&1 && command -v chromedriver >/dev/null 2>&1; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	  echo "installing chromium and chromium-driver for the browser test"; \
	  export DEBIAN_FRONTEND=noninteractive; \
	  apt-get install -y -q chromium chromium-driver >/dev/null 2>&1 || \
	  { apt-get update -q >/dev/null 2>&1 && apt-get install -y -q chromium chromium-driver >/dev/null 2>&1; } || \
	  echo "could not install chromium: the browser test will be skipped"; \
	else echo "no chromium and no root apt-get: the browser test will be skipped"; fi

test: $(STAMP) browser
	$(BIN)/python -m pytest -q

docs: $(STAMP)
	$(BIN)/mkdocs build --strict

bench: $(STAMP)
	$(BIN)/python benchmarks/corels_compas.py

clean:
	rm -rf $(VENV) build site src/*.egg-info
