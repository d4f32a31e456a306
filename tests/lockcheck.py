"""The committed lock (requirements.lock) against pyproject's dependency lists.

Why: the lock is what every machine installs (make deps), so it must say exactly what pyproject
asks for. ``make lock`` writes the lock with uv and stamps it with the sha256 of pyproject's
dependency lists; ``python -m tests.lockcheck`` (run by ``make lint``) fails when the stamp or any
pinned version no longer matches, naming the requirement.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LOCK = ROOT / "requirements.lock"
EXTRAS_LOCKED = ("test", "ray")
STAMP_PREFIX = "# pyproject-dependencies-sha256: "


def declared_requirements(pyproject: Path = ROOT / "pyproject.toml") -> list[str]:
    """Base dependencies plus the extras the lock covers, in pyproject's order."""
    project = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
    reqs = list(project.get("dependencies", []))
    for extra in EXTRAS_LOCKED:
        reqs += project.get("optional-dependencies", {}).get(extra, [])
    return reqs


def dependencies_sha256(reqs: list[str]) -> str:
    return hashlib.sha256(json.dumps(reqs).encode()).hexdigest()


def locked_versions(text: str) -> dict[str, str]:
    from packaging.utils import canonicalize_name  # packaging is locked (pytest needs it)

    pins: dict[str, str] = {}
    for line in text.splitlines():
        m = re.match(r"^([A-Za-z0-9_.\-]+)(?:\[[^\]]*\])?==([^\s;\\]+)", line)
        if m:
            pins[canonicalize_name(m.group(1))] = m.group(2)
    return pins


def problems(lock_text: str, reqs: list[str]) -> list[str]:
    """Every way the lock disagrees with pyproject (empty when they agree)."""
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    found: list[str] = []
    stamp = next((ln[len(STAMP_PREFIX):].strip() for ln in lock_text.splitlines()
                  if ln.startswith(STAMP_PREFIX)), None)
    if stamp != dependencies_sha256(reqs):
        found.append("pyproject's dependency lists changed since the lock was written: run `make lock`")
    pins = locked_versions(lock_text)
    for raw in reqs:
        req = Requirement(raw)
        name = canonicalize_name(req.name)
        if name not in pins:
            found.append(f"{req.name}: declared in pyproject, missing from requirements.lock")
        elif req.specifier and not req.specifier.contains(pins[name], prereleases=True):
            found.append(f"{req.name}: lock pins {pins[name]}, pyproject asks {req.specifier}")
    return found


def stamp(lock: Path = LOCK) -> None:
    """Put the dependency stamp at the top of a freshly compiled lock (make lock)."""
    body = "\n".join(ln for ln in lock.read_text(encoding="utf-8").splitlines()
                     if not ln.startswith(STAMP_PREFIX))
    lock.write_text(f"{STAMP_PREFIX}{dependencies_sha256(declared_requirements())}\n{body}\n",
                    encoding="utf-8")


def main(argv: list[str]) -> int:
    if argv[1:] == ["--stamp"]:
        stamp()
        return 0
    if not LOCK.exists():
        print("requirements.lock is missing: run `make lock`", file=sys.stderr)
        return 1
    found = problems(LOCK.read_text(encoding="utf-8"), declared_requirements())
    for p in found:
        print(f"lock: {p}", file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
