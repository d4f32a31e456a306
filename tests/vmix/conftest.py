"""Shared helpers for the vMix tests: fixture paths, the public samples (when fetched), free ports."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"
#: Where `fetch github:jensstigaard/vmix-js-utils` puts its mirror (a bare git dir; read with git show).
VMIX_JS_UTILS = Path("/work/.mirror/jensstigaard+vmix-js-utils/repo")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def fixtures() -> Path:
    return FIXTURES
