from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def encode_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Source encodes are shared by all RTMP tests of one run (encoding is the slow part)."""
    return Path(tmp_path_factory.mktemp("rtmp-sources"))
