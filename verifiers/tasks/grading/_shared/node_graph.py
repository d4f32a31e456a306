"""Node graphs and grade files: the DRX the harness exports from the app, and who wrote grade files.

Which programs may write grade files (LUT/DRX/CDL/BLG/FCPXML/prproj) is catalog data (`app_files`,
`app_writers` in verifiers/catalog/grading.yaml), judged by the one writer-attribution rule of
verifiers/provenance.py.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from verifiers.base import AgentOutputError, ScoreContext
from verifiers.checks import Result
from verifiers.curves import Curve
from verifiers.provenance import outside_app_writes


def drx_nodes(path: Path) -> list[dict[str, str]]:
    """Every element of a DRX export as {tag, attrs…}, lower-cased, for token searches.

    The DRX layout is not public; this reads any XML and lets a check look for node kinds by
    token (e.g. 'qualifier', 'magicmask', 'depthmap', 'custom') in tags or attribute values.
    """
    try:
        root = ET.parse(path).getroot()
    except (ET.ParseError, OSError) as exc:
        raise AgentOutputError(f"{path.name}: not a readable node-graph export ({exc})") from None
    return [{"tag": el.tag.lower(), **{k.lower(): str(v).lower() for k, v in el.attrib.items()}}
            for el in root.iter()]


def node_present(ctx: ScoreContext, rel: str, tokens: tuple[str, ...], what: str) -> tuple[bool, dict, str]:
    """(the harness-exported node graph holds a node matching any token and no grade file was written
    outside the app (audit), evidence, message); the audit part is skipped (and said) without a run."""
    path = ctx.workdir / rel
    if not path.exists():
        return False, {"file": rel}, f"{rel} missing: no node graph to inspect"
    nodes = drx_nodes(path)
    hits = [n for n in nodes if any(t in " ".join(n.values()).replace(" ", "").replace("_", "") for t in tokens)]
    ev: dict = {"file": rel, "nodes": len(nodes), "matching_nodes": len(hits),
                "audit": "not recorded" if ctx.events is None else "checked"}
    bad = outside_app_writes(ctx)
    if bad:
        ev["outside_writes"] = bad
        return False, ev, f"grade file written outside the app: {bad[0]} (audit)"
    return bool(hits), ev, "" if hits else f"no {what} node in {rel}"


def node_check(ctx: ScoreContext, rel: str, tokens: tuple[str, ...], what: str, curve: Curve) -> Result:
    """A node-graph check: `node_present` through the check's threshold curve."""
    ok, ev, msg = node_present(ctx, rel, tokens, what)
    return Result(curve.passes(ok), ev, msg)
