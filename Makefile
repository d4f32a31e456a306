# Two commands for a fresh Debian machine (run as root, or with sudo available):
#   make demo   install what is missing, then run the demo on embedded defaults
#   make test   install what is missing, then run lint and the test suite
# Both are idempotent: apt packages are installed only when missing, the virtualenv is
# rebuilt only when pyproject.toml changes.

SHELL := /bin/bash
# obs-plugins (obs-websocket, x264, RTMP output) is only a Recommends of obs-studio, and
# libasound2-plugins (PortAudio's route into PulseAudio) only a Recommends of pulseaudio:
# both are named here, and Recommends are installed, so a fresh machine matches this one.
APT_PACKAGES := ffmpeg xvfb obs-studio obs-plugins mosquitto pulseaudio pulseaudio-utils \
	libasound2-plugins openbox x11-utils xdotool nginx libnginx-mod-rtmp libportaudio2 libsndfile1 \
	chromium python3-venv python3-pip libgl1 libglib2.0-0 fonts-dejavu-core fonts-droid-fallback
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
STAMP := $(VENV)/.installed
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
PYTEST_ARGS ?=

.PHONY: demo test deps apt venv lint bench clean

demo: deps
	$(VENV)/bin/tally demo

test: deps lint
	$(VENV)/bin/pytest -q -p no:cacheprovider --durations=15 $(PYTEST_ARGS)

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

$(STAMP): pyproject.toml
	@[ -x $(VENV)/bin/python ] || $(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install -q --upgrade pip
	@# an older venv may hold opencv-python-headless, which would shadow opencv-python's cv2
	@$(VENV)/bin/pip uninstall -y -q opencv-python-headless 2>/dev/null || true
	$(VENV)/bin/pip install -q -e '.[test]'
	@touch $(STAMP)

lint: deps
	$(VENV)/bin/ruff check .

bench: deps
	@for b in bench/*.py; do echo "== $$b"; $(VENV)/bin/python $$b || exit 1; done

clean:
	rm -rf $(VENV) build *.egg-info
