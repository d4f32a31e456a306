from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.probes.pulse import pulse_daemon


@pytest.fixture(scope="module")
def pulse(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """A running private PulseAudio with a null sink; PULSE_SERVER etc. set for this process."""
    root = Path(tmp_path_factory.mktemp("pulse"))
    with pulse_daemon(root) as env:
        saved = {k: os.environ.get(k) for k in env}
        os.environ.update(env)
        try:
            yield env
        finally:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
