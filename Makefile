# Two commands for a fresh Debian machine (run as root, or with sudo available):
#   make demo   install what is missing, then run the demo on embedded defaults
#   make test   install what is missing, then run lint and the test suite
# Both are idempotent: apt packages are installed only when missing, the virtualenv is
# installed from the committed lock (requirements.lock) and only again when the lock changes.
#   make lock   refresh requirements.lock to today's releases (uv pip compile), nothing else

SHELL := /bin/bash
# obs-plugins (obs-websocket, x264, RTMP output) is only a Recommends of obs-studio, and
# libasound2-plugins (PortAudio's route into PulseAudio) only a Recommends of pulseaudio:
# both are named here, and Recommends are installed, so a fresh machine matches this one.
APT_PACKAGES := ffmpeg xvfb obs-studio obs-plugins mosquitto pulseaudio pulseaudio-utils \
	libasound2-plugins openbox x11-utils xdotool nginx libnginx-mod-rtmp libportaudio2 libsndfile1 \
	chromium python3-venv python3-pip libgl1 libglib2.0-0 fonts-dejavu-core fonts-droid-fallback \
	stress-ng strace
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
STAMP := $(VENV)/.installed
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
PYTEST_ARGS ?=
LOCK := requirements.lock
# The lock is for CPython 3.11 on Linux x86-64 (manylinux wheels), with the test and ray extras.
LOCK_FLAGS := --extra test --extra ray --python-version 3.11 --python-platform x86_64-manylinux_2_28 \
	--generate-hashes --custom-compile-command "make lock"

.PHONY: demo test test-realapp deps apt venv lint lock bench clean

demo: deps
	$(VENV)/bin/tally demo

# Two phases. First everything that only needs CPU, on two xdist workers (the machine has 2 cores;
# --dist loadgroup is served by tests/conftest.py's scheduler: tests go out one by one, longest modules
# first, except that a module whose tests share a module fixture goes to one worker whole, so the
# fixture is built once; xdist 3.8's own loadgroup does not group under pytest 9.2). Then the
# tests of real apps that must keep real time (marker obs: OBS under Xvfb; realtime: ffmpeg -re
# publishers), one at a time, so a test's app never competes with another test for the cores.
# Exit code 5 (nothing selected, e.g. a PYTEST_ARGS subset) is not a failure of either phase.
# REALAPP_SPLIT=1 runs the real-app phase as two serial processes at once: the `app_heavy` modules
# (tests/conftest.py: OBS encoding 1080p, real-time publishers, T14's sub-frame claps) one at a time
# in one, the mostly-waiting real-app modules (observers, scenarios, vMix, launcher) in the other, whose
# output is printed after the first's. Off by default until a CI run on 2 idle cores shows both green
# (the phase was ~5.9 min serial, the heavy modules ~3 min of it). Not proven yet (speed16f, 2026-12-03,
# machine at load 9-15 from other work): runs 1 and 2 green (416 s, 384 s), run 3 under stress-ng --cpu 2
# failed tests/scenarios/test_obs_scenarios.py::test_t06_keys_switch_scenes_and_toggle_mute_via_cli
# (the light half; no retry-with-reason there), so the default stays 0.
REALAPP_SPLIT ?= 0
PYTEST := $(VENV)/bin/pytest -q -p no:cacheprovider
test: deps lint
	$(PYTEST) -n 2 --dist loadgroup -m "not obs and not realtime" --durations=25 $(PYTEST_ARGS) || [ $$? = 5 ]
	$(MAKE) --no-print-directory test-realapp

test-realapp: deps
ifeq ($(REALAPP_SPLIT),1)
	@log=$$(mktemp); heavy=0; light=0; \
	$(PYTEST) -m "(obs or realtime) and not app_heavy" --durations=10 $(PYTEST_ARGS) > $$log 2>&1 & pid=$$!; \
	$(PYTEST) -m "(obs or realtime) and app_heavy" --durations=10 $(PYTEST_ARGS) || heavy=$$?; \
	wait $$pid || light=$$?; cat $$log; rm -f $$log; \
	for rc in $$heavy $$light; do [ $$rc = 0 ] || [ $$rc = 5 ] || exit 1; done
else
	$(PYTEST) -m "obs or realtime" --durations=10 $(PYTEST_ARGS) || [ $$? = 5 ]
endif

deps: apt $(STAMP)

apt:
	@missing=""; for p in $(APT_PACKAGES); do \
		dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
		echo "installing apt packages:$$missing"; \
		$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
		$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	fi

# Exactly the locked releases, hash-checked, then tally itself without resolving anything again.
$(STAMP): $(LOCK) pyproject.toml
	@[ -x $(VENV)/bin/python ] || $(PYTHON) -m venv $(VENV)
	@# an older venv may hold opencv-python-headless, which would shadow opencv-python's cv2
	@$(VENV)/bin/pip uninstall -y -q opencv-python-headless 2>/dev/null || true
	$(VENV)/bin/pip install -q --require-hashes --no-deps -r $(LOCK)
	$(VENV)/bin/pip install -q --no-deps -e .
	@touch $(STAMP)

lint: deps
	$(VENV)/bin/ruff check .
	$(VENV)/bin/python -m tests.lockcheck
	@if [ -f .importlinter ]; then $(VENV)/bin/lint-imports; fi

# Refresh the lock to today's releases; of the tracked files only requirements.lock changes (the
# venv follows on the next make demo/test). uv is one of the locked test tools.
lock: $(STAMP)
	$(VENV)/bin/uv pip compile pyproject.toml $(LOCK_FLAGS) --upgrade -q -o $(LOCK)
	$(VENV)/bin/python -m tests.lockcheck --stamp

bench: deps
	@for b in bench/*.py; do echo "== $$b"; $(VENV)/bin/python $$b || exit 1; done

clean:
	rm -rf $(VENV) build *.egg-info
