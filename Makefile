# PyTorch in Practice: the two commands are `make lab` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: lab lab-zh instructor test test-oldest setup sandbox browser lint format release verify book corpus bench clean

# The stamp is rebuilt whenever pyproject.toml changes; otherwise setup does nothing.
$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[course,book,dev]'
	touch $(STAMP)

setup: $(STAMP)

# The oldest PyTorch we test: a second environment for the companion's tests. The torch 2.13.0
# CPU wheel has no matching torchvision on PyPI, so the tests that need torchvision are skipped
# there (marker requires_torchvision) and run in the main environment. The torchrun tests run in
# both (on torch 2.13 they caught a hang at the end of a 2-rank gloo run: see DistContext.close).
TORCH_OLDEST := 2.13.0
OLDEST := .venv-torch$(TORCH_OLDEST)
OLDEST_STAMP := $(OLDEST)/.installed

$(OLDEST_STAMP): pyproject.toml $(STAMP)
	test -x $(OLDEST)/bin/python || $(PYTHON) -m venv $(OLDEST)
	$(OLDEST)/bin/python -m pip install --quiet --upgrade pip
	$(OLDEST)/bin/python -m pip install --quiet "torch==$(TORCH_OLDEST)" \
	  $$($(BIN)/python .ci/requirements.py --extra dev --extra onnx --extra plots --extra widgets --without torch torchvision playwright)
	$(OLDEST)/bin/python -m pip install --quiet --no-deps -e .
	touch $(OLDEST_STAMP)

# JupyterLab refuses to run as root unless told; containers often are root.
ROOT_FLAG := $(if $(filter 0,$(shell id -u)),--allow-root)

# Jupyter settings of the two labs, in lab/ (each file says why): the learner's lab has nbgrader's
# Validate only, configured for the course; the instructor's opens course/ with all of nbgrader.
# tests/browser/ starts the learner's lab with the same folders.
LEARNER_CONFIG := $(CURDIR)/lab/learner:$(CURDIR)/lab/shared
INSTRUCTOR_CONFIG := $(CURDIR)/lab/instructor:$(CURDIR)/lab/shared
# A JUPYTER_CONFIG_PATH of your own is kept, after the course's.
CONFIG_PATH = JUPYTER_CONFIG_PATH="$(1)$${JUPYTER_CONFIG_PATH:+:$$JUPYTER_CONFIG_PATH}"

# The edition: `make lab` opens the English course, `make lab LANG=zh` (or `make lab-zh`) the
# Chinese one, released from the same source into notebooks-zh/ (docs/translating.md). Only a
# LANG given on make's command line picks the edition, not your locale's; the lab then runs
# with a UTF-8 locale of its own.
ifeq ($(origin LANG),command line)
EDITION := $(LANG)
override LANG := C.UTF-8
export LANG
endif
EDITION ?= en
EDITION_NOTEBOOKS = $(if $(filter en,$(EDITION)),notebooks,notebooks-$(EDITION))

lab: setup
	$(BIN)/python -m autograder release --quiet --trust --lang $(EDITION)
	@if [ "$(EDITION)" != en ] && command -v fc-list >/dev/null 2>&1 && \
	  [ -z "$$(fc-list :lang=$(EDITION) 2>/dev/null)" ]; then \
	  echo "note: no font with $(EDITION) glyphs is installed: figure labels will show boxes;" \
	    "install one (Debian/Ubuntu: sudo apt-get install fonts-noto-cjk)"; fi
	$(call CONFIG_PATH,$(LEARNER_CONFIG)) PATH="$(CURDIR)/$(BIN):$$PATH" \
	  $(BIN)/jupyter lab --ServerApp.root_dir=$(EDITION_NOTEBOOKS) $(ROOT_FLAG)

lab-zh:
	@$(MAKE) --no-print-directory lab EDITION=zh

# The course source (course/source/) with nbgrader's formgrader, Create Assignment and course
# tools; started from course/, where nbgrader finds nbgrader_config.py.
instructor: setup
	mkdir -p course/exchange
	cd course && $(call CONFIG_PATH,$(INSTRUCTOR_CONFIG)) PATH="$(CURDIR)/$(BIN):$$PATH" \
	  $(CURDIR)/$(BIN)/jupyter lab $(ROOT_FLAG)

# Debian packages the tests use: bubblewrap (the grading sandbox) and Chromium with its fonts
# (the browser tests, tests/browser/). Both are installed the same way: as root where apt-get
# exists (CI, a container), here; otherwise the tests that need them are skipped, say why, and
# this says how to install them. $(1): the packages, $(2): what they are for (no commas).
DEBIAN_PACKAGES = if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	  export DEBIAN_FRONTEND=noninteractive; \
	  { apt-get install -y -q $(1) >/dev/null 2>&1 || \
	    { apt-get update -q >/dev/null && apt-get install -y -q $(1) >/dev/null; }; } && \
	  echo "installed $(1) ($(2))" || \
	  echo "note: apt-get could not install $(1); $(2) are skipped"; \
	else \
	  echo "note: $(1) missing: $(2) are skipped; install with: sudo apt-get install $(1)"; \
	fi

sandbox:
	@command -v bwrap >/dev/null 2>&1 || { \
	  $(call DEBIAN_PACKAGES,bubblewrap,the grading-sandbox tests); }

# fonts-noto-cjk: the Chinese edition's text in the browser, and its figure labels (matplotlib).
browser:
	@{ command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1; } && \
	  { ! command -v dpkg >/dev/null 2>&1 || \
	    dpkg -s fonts-liberation fonts-noto-cjk >/dev/null 2>&1; } || { \
	  $(call DEBIAN_PACKAGES,chromium fonts-liberation fonts-noto-cjk,the browser tests); }

# Each stage is timed, and a table of the times ends the output (.ci/stages.py). The first stage
# that fails stops the run, as make would. The stages call make through SUBMAKE, not $(MAKE)
# itself, so that `make -n test` prints the command instead of running the whole suite.
SUBMAKE = $(MAKE) --no-print-directory
test:
	@$(PYTHON) .ci/stages.py \
	  setup "$(SUBMAKE) setup sandbox browser" \
	  ruff "$(BIN)/ruff check companion autograder tests benchmarks examples" \
	  book "$(BIN)/python -m autograder book --out build/book" \
	  pytest "BOOK_HTML=build/book/html $(BIN)/python -m pytest -n 2 --dist loadscope --durations 15 tests" \
	  verify "$(BIN)/python -m autograder verify" \
	  verify-zh "$(BIN)/python -m autograder verify --lang zh" \
	  setup-oldest "$(SUBMAKE) $(OLDEST_STAMP)" \
	  test-oldest "$(SUBMAKE) test-oldest"

test-oldest: $(OLDEST_STAMP)
	@echo "companion tests on torch $(TORCH_OLDEST) ($(OLDEST)):"
	REQUIRE_BROWSER_TESTS= $(OLDEST)/bin/python -m pytest -n 2 --dist loadscope -q tests/companion

# Every file of every chapter's submission corpus (about 350 gradings: 70 to 100 minutes on 2
# cores), then every exercise of every file checked with `autograder check`, which must give the
# points grading gives (about 1,750 checks: about 2 hours on 2 cores); `make test` grades each
# chapter's sample and checks the last exercise of each base. Run it after changing the grader,
# and COURSE_CORPUS=NN for one chapter after changing it.
corpus: setup
	COURSE_CORPUS=all $(BIN)/python -m pytest -n 0 -q -rf tests/course/test_submissions.py
	COURSE_CORPUS=all $(BIN)/python -m pytest -n 0 -q -rf tests/course/test_check_matches_grade.py

lint: setup
	$(BIN)/ruff check companion autograder tests benchmarks examples
	$(BIN)/ruff format --check companion autograder tests benchmarks examples

format: setup
	$(BIN)/ruff format companion autograder tests benchmarks examples
	$(BIN)/ruff check --fix companion autograder tests benchmarks examples

release: setup
	$(BIN)/python -m autograder release
	$(BIN)/python -m autograder release --lang zh

verify: setup
	$(BIN)/python -m autograder verify
	$(BIN)/python -m autograder verify --lang zh

# The course as a static HTML site in build/book/html (open index.html, or serve the folder from
# any static host): every learner notebook run on the CPU, and companion's API reference.
book: setup
	$(BIN)/python -m autograder release --quiet
	$(BIN)/python -m autograder book --out build/book

bench: setup
	$(BIN)/python benchmarks/loop_overhead.py
	$(BIN)/python benchmarks/resume.py
	$(BIN)/python benchmarks/data_loading.py
	$(BIN)/python benchmarks/inference.py
	$(BIN)/python benchmarks/grading.py
	$(BIN)/python benchmarks/course.py

clean:
	rm -rf $(VENV) $(OLDEST) .pytest_cache
