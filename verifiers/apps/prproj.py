"""Premiere Pro projects (.prproj): gzip-compressed XML, read with the decompression capped.

Why here and not in the task: the project is the agent's file, and a 1 MB gzip inflates to 1 GiB
(2.1 GB RSS once); every reader of a .prproj should take this one. T08's scorer still has its own
`read_prproj` (verifiers/tasks is being restructured); the scorer's pre-flight refuses a bomb
for it meanwhile (verifiers/scoring.py).
"""

from __future__ import annotations

from pathlib import Path

from verifiers.measure import safe_io

#: A real project is a few MB to some tens of MB of XML.
MAX_PRPROJ_XML_BYTES = 256 << 20


def read_prproj(root: Path, rel: str, max_xml_bytes: int = MAX_PRPROJ_XML_BYTES) -> str:
    """The project at `root/rel` as text: gzip inflated when it starts with the gzip magic, else
    plain XML. Raises safe_io.UnsafeFile (a MediaError) for a link, special file or bomb."""
    data = safe_io.read_bytes(root, rel, "project")
    if safe_io.is_gzip(data):
        data = safe_io.gunzip(data, rel, max_xml_bytes)
    return data.decode("utf-8", errors="replace")
