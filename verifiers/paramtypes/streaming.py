"""Params dataclasses of the streaming checks (catalog: verifiers/catalog/streaming.yaml).

One frozen dataclass per check that has params, field names with their unit; registered with
`@params_type(task, check)` and built by the catalog loader, so a wrong key or type in the YAML is a
CatalogError at load. Checks without params get `NoParams` (no declaration needed).
"""

from __future__ import annotations

from dataclasses import dataclass

from verifiers.params import params_type

T01, T05, T17 = "R06.12.01.01-T01", "R06.12.01.01-T05", "R06.12.01.01-T17"


# ---- T01 / T17: Weekly Stream -------------------------------------------------------------------

@params_type(T01, "scenes_sources")
@dataclass(frozen=True)
class ScenesSources:
    scene_count: int
    canvas_px: tuple[int, int]


@params_type(T01, "cam_geometry")
@dataclass(frozen=True)
class CamGeometry:
    bounds_px: tuple[int, int]
    pos_px: tuple[int, int]
    margin_px: int
    tolerance_px: float


@params_type(T01, "transition")
@dataclass(frozen=True)
class Transition:
    transition: str
    duration_ms: int


# ---- T05: stream to the local ingest ------------------------------------------------------------

@params_type(T05, "server_config")
@dataclass(frozen=True)
class ServerConfig:
    server: str
    key: str


@params_type(T05, "encoder_at_ingest")
@dataclass(frozen=True)
class EncoderAtIngest:
    size_px: tuple[int, int]
    fps: float
    bitrate_kbps: float
    bitrate_tolerance_pct: float
    keyframe_interval_s: float


@params_type(T05, "audio")
@dataclass(frozen=True)
class AudioAtIngest:
    codec: str
    bitrate_kbps: float
    sample_rate_hz: int


@params_type(T05, "duration")
@dataclass(frozen=True)
class StreamDuration:
    duration_s: float
    tolerance_s: float


@params_type(T17, "scenes_sources")
@dataclass(frozen=True)
class ScriptedScenes:
    scene_count: int
    canvas_px: tuple[int, int]
    script_requests: tuple[str, ...] = ()


@params_type(T17, "transforms")
@dataclass(frozen=True)
class ScriptedTransforms:
    bounds_px: tuple[int, int]
    pos_px: tuple[int, int]
    tolerance_px: float
    script_requests: tuple[str, ...] = ()


@params_type(T17, "transition")
@dataclass(frozen=True)
class ScriptedTransition:
    transition: str
    duration_ms: int
    script_requests: tuple[str, ...] = ()


# ---- T08: replay buffer -------------------------------------------------------------------------
T08 = "R06.12.01.01-T08"


@params_type(T08, "replay_settings")
@dataclass(frozen=True)
class ReplaySettings:
    max_time_s: int
    max_memory_mb: int
    filename_format: str
    folder: str


@params_type(T08, "hotkey")
@dataclass(frozen=True)
class Hotkey:
    key: str


@params_type(T08, "replay_file")
@dataclass(frozen=True)
class ReplayFile:
    count: int
    duration_s: float
    tolerance_s: float


# ---- T12: browser ticker ------------------------------------------------------------------------
T12 = "R06.12.01.01-T12"


@params_type(T12, "source_settings")
@dataclass(frozen=True)
class TickerSettings:
    width_px: int
    height_px: int
    local_file: str
    css: str
    shutdown: bool


@params_type(T12, "position")
@dataclass(frozen=True)
class TickerPosition:
    pos_y_px: float
    tolerance_px: float


@params_type(T12, "renders_transparent")
@dataclass(frozen=True)
class RendersTransparent:
    #: the ticker's text covers part of its 80 px band; where the page background is transparent the
    #: scene shows through the rest (an opaque background shows none of it)
    min_scene_visible_pct: float


# ---- T10: vMix panel ----------------------------------------------------------------------------
T10 = "R06.12.01.01-T10"


@params_type(T10, "ndi_inputs")
@dataclass(frozen=True)
class NdiInputs:
    sources: tuple[str, ...]


@params_type(T10, "title_fields")
@dataclass(frozen=True)
class TitleFields:
    template: str
    fields: dict


@params_type(T10, "program_preview")
@dataclass(frozen=True)
class ProgramPreview:
    program: str
    preview: str


# ---- T03: mic chain -----------------------------------------------------------------------------
T03 = "R06.12.01.01-T03"


@params_type(T03, "filter_order")
@dataclass(frozen=True)
class FilterOrder:
    order: tuple[str, ...]
    suppress_method: str
    limiter_threshold_db: float


@params_type(T03, "compressor_params")
@dataclass(frozen=True)
class CompressorParams:
    ratio: float
    threshold_db: float
    attack_ms: float
    release_ms: float


@params_type(T03, "loudness")
@dataclass(frozen=True)
class MicLoudness:
    target_lufs: float
    tolerance_lu: float
    duration_s: float
    #: the recording is started and stopped by hand in the GUI: up to 2 s short is still "a 30 s recording"
    duration_tolerance_s: float


@params_type(T03, "peak_noise_floor")
@dataclass(frozen=True)
class PeakNoiseFloor:
    max_true_peak_dbtp: float
    max_noise_floor_dbfs: float


# ---- T07: sidechain ducking ---------------------------------------------------------------------
T07 = "R06.12.01.01-T07"


@params_type(T07, "sidechain_configured")
@dataclass(frozen=True)
class Sidechain:
    source: str
    sidechain_source: str


@params_type(T07, "ducking_depth")
@dataclass(frozen=True)
class DuckingDepth:
    target_reduction_db: float
    tolerance_db: float
    window_ms: float


@params_type(T07, "recovery")
@dataclass(frozen=True)
class Recovery:
    max_recovery_ms: float
    recovered_min_gain_db: float


@params_type(T07, "recording")
@dataclass(frozen=True)
class DuckRecording:
    duration_s: float
    #: recording started and stopped by hand against the test feed: 1 s either way (the seed names none)
    tolerance_s: float


# ---- T02: multitrack recording ------------------------------------------------------------------
T02 = "R06.12.01.01-T02"


@params_type(T02, "video_settings")
@dataclass(frozen=True)
class RecordingVideo:
    size_px: tuple[int, int]
    fps: float
    bitrate_kbps: float
    bitrate_tolerance_pct: float
    gop_frames: int
    keyframe_interval_s: float


@params_type(T02, "three_tracks")
@dataclass(frozen=True)
class ThreeTracks:
    audio_streams: int


@params_type(T02, "recording_exists")
@dataclass(frozen=True)
class RecordingExists:
    duration_s: float
    container: str


@params_type(T02, "remuxed_mp4")
@dataclass(frozen=True)
class RemuxedMp4:
    container: str


# ---- T04: green screen --------------------------------------------------------------------------
T04 = "R06.12.01.01-T04"


@params_type(T04, "key_iou")
@dataclass(frozen=True)
class KeyIou:
    min_iou: float


@params_type(T04, "no_residual_green")
@dataclass(frozen=True)
class ResidualGreen:
    max_green_pct: float


@params_type(T04, "recording")
@dataclass(frozen=True)
class KeyRecording:
    duration_s: float
    filters: tuple[str, ...]


# ---- T06: nested overlay and hotkeys ------------------------------------------------------------
T06 = "R06.12.01.01-T06"


@params_type(T06, "nested_overlay")
@dataclass(frozen=True)
class NestedOverlay:
    scenes: tuple[str, ...]


@params_type(T06, "hotkeys_work")
@dataclass(frozen=True)
class HotkeysWork:
    scene_hotkeys: dict
    mute_hotkey: str


# ---- T09: Streamlabs widgets --------------------------------------------------------------------
T09 = "R06.12.01.01-T09"


@params_type(T09, "widget_placement")
@dataclass(frozen=True)
class WidgetPlacement:
    alert_box_px: tuple[int, int]
    chat_box_px: tuple[int, int]
    tolerance_px: float


@params_type(T09, "alert_settings")
@dataclass(frozen=True)
class AlertSettings:
    sound: str
    volume_pct: float
    duration_s: float


@params_type(T09, "chat_box_style")
@dataclass(frozen=True)
class ChatBoxStyle:
    font_size: int


# ---- T11: vertical canvas -----------------------------------------------------------------------
T11 = "R06.12.01.01-T11"


@params_type(T11, "vertical_canvas_config")
@dataclass(frozen=True)
class VerticalCanvasConfig:
    canvas_px: tuple[int, int]
    scene: str
    record_path: str


@params_type(T11, "layout_in_frames")
@dataclass(frozen=True)
class LayoutInFrames:
    min_ssim: float
    top_region_px: tuple[int, int]


@params_type(T11, "both_recordings")
@dataclass(frozen=True)
class BothRecordings:
    sizes_px: tuple[tuple[int, int], ...]
    duration_s: float


# ---- T13: window-only tutorial ------------------------------------------------------------------
T13 = "R06.12.01.01-T13"


@params_type(T13, "canvas_duration")
@dataclass(frozen=True)
class CanvasDuration:
    size_px: tuple[int, int]
    min_duration_s: float
    max_duration_s: float


@params_type(T13, "action_recorded")
@dataclass(frozen=True)
class ActionRecorded:
    expected_text: str


# ---- T14: A/V offset ----------------------------------------------------------------------------
T14 = "R06.12.01.01-T14"


@params_type(T14, "offset_set")
@dataclass(frozen=True)
class OffsetSet:
    injected_delay_ms: float
    tolerance_ms: float


@params_type(T14, "residual_offset")
@dataclass(frozen=True)
class ResidualOffset:
    max_mean_offset_ms: float
    claps: int


# ---- T15: Streamlabs migration ------------------------------------------------------------------
T15 = "R06.12.01.01-T15"


@params_type(T15, "import")
@dataclass(frozen=True)
class Import:
    collection: str
    scene_count: int


@params_type(T15, "transforms_preserved")
@dataclass(frozen=True)
class TransformsPreserved:
    tolerance_px: float


# ---- T16: stinger with track matte --------------------------------------------------------------
T16 = "R06.12.01.01-T16"


@params_type(T16, "stinger_config")
@dataclass(frozen=True)
class StingerConfig:
    path: str
    transition_point_ms: int


@params_type(T16, "track_matte")
@dataclass(frozen=True)
class TrackMatte:
    matte_path: str
    layout: str


@params_type(T16, "timing_in_recording")
@dataclass(frozen=True)
class StingerTiming:
    switch_ms: float
    tolerance_ms: float


# ---- T18: vMix dual stream ----------------------------------------------------------------------
T18 = "R06.12.01.01-T18"


@params_type(T18, "dual_streaming")
@dataclass(frozen=True)
class DualStreaming:
    endpoints: tuple[str, ...]
    size_px: tuple[int, int]
    fps: float
    bitrate_kbps: float
    #: T18's seed names no tolerance; T05's seed names 10 % for the same 6000 kbps CBR at the same ingest
    bitrate_tolerance_pct: float


@params_type(T18, "program_recording")
@dataclass(frozen=True)
class ProgramRecording:
    cuts_s: tuple[float, ...]
    tolerance_s: float


@params_type(T18, "iso_files")
@dataclass(frozen=True)
class IsoFiles:
    count: int
    min_duration_s: float


@params_type(T18, "settings")
@dataclass(frozen=True)
class VmixSettings:
    run_s: float


# ---- T19: producer brief ------------------------------------------------------------------------
T19 = "R06.12.01.01-T19"


@params_type(T19, "scenes_layout")
@dataclass(frozen=True)
class ScenesLayout:
    scene_count: int
    source_count: int
    tolerance_px: float


@params_type(T19, "vod_track_countdown")
@dataclass(frozen=True)
class VodTrackCountdown:
    max_music_correlation: float


# ---- T20: privacy switch ------------------------------------------------------------------------
T20 = "R06.12.01.01-T20"


@params_type(T20, "switch_on_match")
@dataclass(frozen=True)
class SwitchOnMatch:
    max_latency_ms: float
    title_terms: tuple[str, ...]


@params_type(T20, "return_previous")
@dataclass(frozen=True)
class ReturnPrevious:
    return_delay_s: float
    tolerance_s: float
