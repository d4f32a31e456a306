"""One consistent-enough picture of OBS state, assembled from read-only requests.

Runs in the requester's thread (a few dozen small requests, ~1 ms each on localhost). Copes with
obs-websocket 5.1 to 5.5: requests missing from `availableRequests` are skipped, uuids are kept
when present (5.4+), and per-input audio requests that OBS refuses (code 604: input has no
audio) leave the field out instead of failing the snapshot.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from monitor.observers.obs_client import ObsRequestFailed, ReadOnlyRequester, scrub

BOUNDS_TYPES = {"OBS_BOUNDS_NONE": 0, "OBS_BOUNDS_STRETCH": 1, "OBS_BOUNDS_SCALE_INNER": 2,
                "OBS_BOUNDS_SCALE_OUTER": 3, "OBS_BOUNDS_SCALE_TO_WIDTH": 4,
                "OBS_BOUNDS_SCALE_TO_HEIGHT": 5, "OBS_BOUNDS_MAX_ONLY": 6}


def _version_tuple(v: str) -> tuple[int, ...]:
    out = []
    for part in v.split(".")[:3]:
        digits = "".join(ch for ch in part if ch.isdigit())
        out.append(int(digits) if digits else 0)
    return tuple(out)


@dataclass(frozen=True)
class Capabilities:
    """What this obs-websocket can do, from GetVersion."""

    obs_version: str
    ws_version: str
    rpc_version: int
    available: frozenset[str] = field(default_factory=frozenset)

    @property
    def ws_version_tuple(self) -> tuple[int, ...]:
        return _version_tuple(self.ws_version)

    @property
    def has_uuids(self) -> bool:
        """5.4 (OBS 30.1) added scene/input/transition uuids to requests and events."""
        return self.ws_version_tuple >= (5, 4)

    @property
    def has_filter_settings_event(self) -> bool:
        """SourceFilterSettingsChanged exists from 5.4 (OBS 30.1); before that filters are polled."""
        return self.ws_version_tuple >= (5, 4)

    def can(self, request: str) -> bool:
        return not self.available or request in self.available

    def as_payload(self) -> dict[str, Any]:
        return {"obs_version": self.obs_version, "ws_version": self.ws_version, "rpc_version": self.rpc_version,
                "has_uuids": self.has_uuids, "has_filter_settings_event": self.has_filter_settings_event}

    @classmethod
    def from_version(cls, v: dict[str, Any]) -> Capabilities:
        return cls(str(v.get("obsVersion", "")), str(v.get("obsWebSocketVersion", "")),
                   int(v.get("rpcVersion", 1)), frozenset(v.get("availableRequests") or ()))


def _opt(req: ReadOnlyRequester, caps: Capabilities, name: str,
         data: dict[str, Any] | None = None) -> dict[str, Any] | None:
    if not caps.can(name):
        return None
    try:
        return req.request(name, data)
    except ObsRequestFailed:
        return None


def take_stats(req: ReadOnlyRequester, caps: Capabilities) -> dict[str, Any]:
    stats = _opt(req, caps, "GetStats") or {}
    out: dict[str, Any] = {"stats": stats}
    for name, key in (("GetStreamStatus", "stream"), ("GetRecordStatus", "record"),
                      ("GetReplayBufferStatus", "replay_buffer"), ("GetVirtualCamStatus", "virtualcam")):
        out[key] = _opt(req, caps, name)
    return out


def take_filters(req: ReadOnlyRequester, caps: Capabilities, source_names: list[str]) -> dict[str, list[dict[str, Any]]]:
    """{source name: [filters top-first with kind, index, enabled, settings]} for sources with filters."""
    out: dict[str, list[dict[str, Any]]] = {}
    for name in source_names:
        resp = _opt(req, caps, "GetSourceFilterList", {"sourceName": name})
        if resp and resp.get("filters"):
            out[name] = scrub(resp["filters"])
    return out


def take_snapshot(req: ReadOnlyRequester, caps: Capabilities) -> dict[str, Any]:
    """Scenes with items (z-order, transforms), inputs (settings, audio), filters, transition,
    outputs and stats. Plain JSON-able dict (the event payload)."""
    scene_list = req.request("GetSceneList")
    scenes_raw = scene_list.get("scenes", [])
    # obs-websocket gives sceneIndex = n-1 to the first scene of the UI list and returns the
    # array reversed: sort by descending index to get the UI (and saved scene_order) order
    ordered = sorted(scenes_raw, key=lambda s: -int(s.get("sceneIndex", 0)))
    scenes = []
    group_names: set[str] = set()
    for s in ordered:
        name = s["sceneName"]
        items_resp = _opt(req, caps, "GetSceneItemList", {"sceneName": name}) or {}
        items = [_item(it) for it in sorted(items_resp.get("sceneItems", []),
                                            key=lambda it: it.get("sceneItemIndex", 0))]
        group_names.update(it["source_name"] for it in items if it.get("is_group"))
        entry: dict[str, Any] = {"name": name, "items": items}
        if s.get("sceneUuid"):
            entry["uuid"] = s["sceneUuid"]
        override = _opt(req, caps, "GetSceneSceneTransitionOverride", {"sceneName": name})
        if override is not None:
            entry["transition_override"] = {"name": override.get("transitionName"),
                                            "duration_ms": override.get("transitionDuration")}
        scenes.append(entry)
    groups = {}
    for g in sorted(group_names):
        resp = _opt(req, caps, "GetGroupSceneItemList", {"sceneName": g}) or {}
        groups[g] = [_item(it) for it in sorted(resp.get("sceneItems", []), key=lambda it: it.get("sceneItemIndex", 0))]

    inputs = {}
    for inp in (req.request("GetInputList").get("inputs", [])):
        name = inp["inputName"]
        info: dict[str, Any] = {"kind": inp.get("inputKind"), "unversioned_kind": inp.get("unversionedInputKind")}
        if inp.get("inputUuid"):
            info["uuid"] = inp["inputUuid"]
        st = _opt(req, caps, "GetInputSettings", {"inputName": name})
        if st is not None:
            info["settings"] = scrub(st.get("inputSettings") or {})
        mute = _opt(req, caps, "GetInputMute", {"inputName": name})
        if mute is not None:  # None: this input has no audio
            info["muted"] = bool(mute.get("inputMuted"))
            vol = _opt(req, caps, "GetInputVolume", {"inputName": name}) or {}
            info["volume_mul"] = vol.get("inputVolumeMul")
            info["volume_db"] = vol.get("inputVolumeDb")
            tracks = _opt(req, caps, "GetInputAudioTracks", {"inputName": name})
            if tracks is not None:
                info["tracks"] = sorted(int(k) for k, on in tracks.get("inputAudioTracks", {}).items() if on)
            sync = _opt(req, caps, "GetInputAudioSyncOffset", {"inputName": name})
            if sync is not None:
                info["sync_offset_ms"] = sync.get("inputAudioSyncOffset")
            mon = _opt(req, caps, "GetInputAudioMonitorType", {"inputName": name})
            if mon is not None:
                info["monitor_type"] = mon.get("monitorType")
            bal = _opt(req, caps, "GetInputAudioBalance", {"inputName": name})
            if bal is not None:
                info["balance"] = bal.get("inputAudioBalance")
        inputs[name] = info

    filters = take_filters(req, caps, [*inputs, *(s["name"] for s in scenes)])
    transition = _opt(req, caps, "GetCurrentSceneTransition") or {}
    transitions = _opt(req, caps, "GetSceneTransitionList") or {}
    video = _opt(req, caps, "GetVideoSettings") or {}
    studio = _opt(req, caps, "GetStudioModeEnabled") or {}
    snap: dict[str, Any] = {
        "current_program_scene": scene_list.get("currentProgramSceneName"),
        "current_preview_scene": scene_list.get("currentPreviewSceneName"),
        "studio_mode": studio.get("studioModeEnabled"),
        "scenes": scenes,
        "groups": groups,
        "inputs": inputs,
        "filters": filters,
        "transition": {"name": transition.get("transitionName"), "kind": transition.get("transitionKind"),
                       "duration_ms": transition.get("transitionDuration"),
                       "settings": scrub(transition.get("transitionSettings") or {})},
        "transitions": [t.get("transitionName") for t in transitions.get("transitions", [])],
        "video": video,
    }
    snap.update(take_stats(req, caps))
    return snap


def _item(it: dict[str, Any]) -> dict[str, Any]:
    tf = it.get("sceneItemTransform") or {}
    out = {
        "id": it.get("sceneItemId"),
        "index": it.get("sceneItemIndex"),
        "source_name": it.get("sourceName"),
        "source_type": it.get("sourceType"),
        "input_kind": it.get("inputKind"),
        "is_group": bool(it.get("isGroup")),
        "visible": bool(it.get("sceneItemEnabled")),
        "locked": bool(it.get("sceneItemLocked")),
        "transform": {
            "pos_x": tf.get("positionX", 0.0), "pos_y": tf.get("positionY", 0.0),
            "scale_x": tf.get("scaleX", 1.0), "scale_y": tf.get("scaleY", 1.0),
            "rot_deg": tf.get("rotation", 0.0), "align": tf.get("alignment", 5),
            "bounds_type": BOUNDS_TYPES.get(str(tf.get("boundsType", "OBS_BOUNDS_NONE")), 0),
            "bounds_x": tf.get("boundsWidth", 0.0), "bounds_y": tf.get("boundsHeight", 0.0),
            "bounds_align": tf.get("boundsAlignment", 0),
            "crop_left": tf.get("cropLeft", 0), "crop_top": tf.get("cropTop", 0),
            "crop_right": tf.get("cropRight", 0), "crop_bottom": tf.get("cropBottom", 0),
        },
        "source_w_px": tf.get("sourceWidth"),
        "source_h_px": tf.get("sourceHeight"),
    }
    if it.get("sourceUuid"):
        out["source_uuid"] = it["sourceUuid"]
    return out
