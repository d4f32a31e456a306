"""The one error type for unreadable OBS files: it always names the file.

Verifiers turn it into a check status of `error` (or an agent-output failure) with a one-line
message; nobody should ever see a JSONDecodeError traceback from a truncated collection.
"""

from __future__ import annotations

from pathlib import Path


class ObsFileError(ValueError):
    """An OBS file (collection JSON, basic.ini, encoder JSON, service.json) that cannot be read.

    `path` is the file (or a label such as "<collection dict>"), `reason` what is wrong with it.
    """

    def __init__(self, path: str | Path, reason: str) -> None:
        self.path = str(path)
        self.reason = reason
        super().__init__(f"{self.path}: {reason}")
