"""Build Streamlabs Desktop save nodes the way the app writes them (for T09's collection, T15's .overlay).

Streamlabs Desktop serialises every node as `{"schemaVersion": n, "nodeType": "<ClassName>", ...data}`
(app/services/scene-collections/nodes/node.ts `toJSON`) and an array node's data is `{"items": [...]}`
(array-node.ts). The schema numbers below are the ones the app's save code declares and the real
collections in tests/fixtures/real/ carry (root 4, SourcesNode 4, ScenesNode 1, SceneItemsNode 1,
HotkeysNode 2, TransitionsNode 2; overlays: RootNode 2, ScenesNode 2, SlotsNode 1, content nodes
1, SceneSourceNode/GameCaptureNode 2). verifiers.apps.streamlabs reads both files.
"""

from __future__ import annotations

from typing import Any


def node(node_type: str, schema_version: int, **data: Any) -> dict[str, Any]:
    """One saved node: the annotation first, then its data (the key order toJSON produces)."""
    return {"schemaVersion": schema_version, "nodeType": node_type, **data}


def array_node(node_type: str, schema_version: int, items: list[Any]) -> dict[str, Any]:
    return node(node_type, schema_version, items=list(items))


def no_hotkeys() -> dict[str, Any]:
    return array_node("HotkeysNode", 2, [])
