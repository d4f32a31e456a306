"""OBS Studio file formats: scene collection, profile, encoder/service JSON (read-only parsers).

    coll = load_collection(".../basic/scenes/Weekly_Stream.json")
    cam = item_rect(coll, "Live", "Cam", canvas_px=(1920, 1080))    # Rect(1416, 786, 480, 270)
    prof = load_profile(".../basic/profiles/Weekly")

Every unreadable file raises ObsFileError (a ValueError) whose message starts with the file path.
"""

from verifiers.apps.obs.collection import (
    MAIN_CANVAS_UUID,
    Canvas,
    Collection,
    Filter,
    Macro,
    Scene,
    SceneItem,
    Source,
    Transform,
    Transition,
    load_collection,
    mask_from_tracks,
    parse_collection,
    tracks_from_mask,
)
from verifiers.apps.obs.defaults import SOURCE_DEFAULTS, with_defaults
from verifiers.apps.obs.errors import ObsFileError
from verifiers.apps.obs.geometry import Rect, image_size_px, item_rect, rendered_rect, source_size_px
from verifiers.apps.obs.hotkeys import decode_binding, decode_bindings, normalize
from verifiers.apps.obs.profile import (
    Profile,
    load_encoder,
    load_profile,
    load_service,
    parse_basic_ini,
    read_ini,
)

__all__ = [
    "MAIN_CANVAS_UUID", "SOURCE_DEFAULTS", "Canvas", "Collection", "Filter", "Macro", "ObsFileError", "Profile", "Rect", "Scene", "SceneItem",
    "Source", "Transform", "Transition", "decode_binding", "decode_bindings", "image_size_px",
    "item_rect", "load_collection", "load_encoder", "load_profile", "load_service", "mask_from_tracks",
    "normalize", "parse_basic_ini", "parse_collection", "read_ini", "rendered_rect", "source_size_px",
    "tracks_from_mask", "with_defaults",
]
