"""The real-file corpus: files that real apps saved, found in public repositories (issue 22).

The files themselves are not committed (most of their repositories carry no licence, and fetched
content stays out of this repository either way). `tests/fixtures/real/manifest.json` names each
one: repository, commit, path, licence, size and sha256. A test gets the bytes from

1. `$TALLY_REAL_CORPUS/<file>` (a directory laid out as the manifest's `file` names), else
2. the fetched mirror `/work/.mirror/<owner>+<name>/repo` (`git show <commit>:<path>`, then the
   zip member when the entry names one),

checks the sha256, and skips with a reason when neither has it (fetch the repository to run it).
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

MANIFEST = Path(__file__).resolve().parents[1] / "fixtures" / "real" / "manifest.json"
MIRRORS = Path("/work/.mirror")


@dataclass(frozen=True)
class RealFile:
    file: str        # <app>/<version>/<name>
    app: str
    version: str
    repo: str
    path: str
    commit: str
    licence: str
    sha256: str
    note: str = ""
    member: str = ""   # a file inside a zip stored at `path` (e.g. a zipped SceneCollections dir)

    @property
    def name(self) -> str:
        return self.file.rsplit("/", 1)[-1]

    def data(self) -> bytes:
        """The file's bytes (sha256 checked); pytest.skip when it is not on this machine."""
        got = _read(self)
        if got is None:
            pytest.skip(f"{self.file} not on this machine (fetch github:{self.repo} or set TALLY_REAL_CORPUS)")
        if hashlib.sha256(got).hexdigest() != self.sha256:
            pytest.fail(f"{self.file}: sha256 differs from the manifest (wrong commit or a changed copy)")
        return got

    def text(self) -> str:
        return self.data().decode("utf-8", errors="replace")

    def json(self) -> object:
        return json.loads(self.data())

    def to_path(self, tmp_dir: Path) -> Path:
        """Write the bytes under tmp_dir (for readers that take a path) and return that path."""
        p = tmp_dir / self.app / self.version / self.name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(self.data())
        return p


def _read(f: RealFile) -> bytes | None:
    root = os.environ.get("TALLY_REAL_CORPUS")
    if root and (Path(root) / f.file).is_file():
        return (Path(root) / f.file).read_bytes()
    git_dir = MIRRORS / f.repo.replace("/", "+") / "repo"
    if not git_dir.is_dir():
        return None
    r = subprocess.run(["git", "-C", str(git_dir), "show", f"{f.commit}:{f.path}"], capture_output=True,
                       timeout=60, check=False)
    if r.returncode != 0:
        return None
    if f.member:
        import io
        import zipfile
        with zipfile.ZipFile(io.BytesIO(r.stdout)) as z:
            return z.read(f.member)
    return r.stdout


@cache
def manifest() -> tuple[RealFile, ...]:
    entries = json.loads(MANIFEST.read_text(encoding="utf-8"))
    return tuple(RealFile(**{k: e[k] for k in RealFile.__dataclass_fields__ if k in e}) for e in entries)


def files(app: str) -> list[RealFile]:
    """Every manifest entry of one app ("obs", "obs-profile", "reaper", "edl", ...), in file order."""
    return [f for f in manifest() if f.app == app]


def params(app: str) -> list[object]:
    """pytest parameters (ids = file names) for one app's files."""
    return [pytest.param(f, id=f.file) for f in files(app)]
