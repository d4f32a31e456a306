"""Params dataclasses of the shortform checks (catalog: verifiers/catalog/shortform.yaml); see verifiers/params.py.

One frozen dataclass per converted check that has params, registered with @params_type(task, check).
"""

from __future__ import annotations

from dataclasses import dataclass

from verifiers.params import params_type

T = {n: f"R06.04.01.04-T{n:02d}" for n in range(1, 21)}


@dataclass(frozen=True)
class ShortSide:
    """An "export 1080p" check: the short side in px (times the instance scale)."""

    height_px: int


@dataclass(frozen=True)
class SizePx:
    """An export frame size (w, h) in px (times the instance scale)."""

    size_px: tuple[int, int]


@dataclass(frozen=True)
class SyncFrames:
    """A timing tolerance in frames (of the export)."""

    tolerance_frames: float


@dataclass(frozen=True)
class MaxCer:
    """OCR character error rate against the reference text."""

    max_cer_pct: float


@dataclass(frozen=True)
class MinFramesPct:
    """A share of sampled frames that must pass."""

    min_frames_pct: float


@dataclass(frozen=True)
class MaxWer:
    """Caption word error rate against the transcript."""

    max_wer_pct: float


# ---- T01 -------------------------------------------------------------------------------------

@params_type(T[1], "format_duration")
@dataclass(frozen=True)
class FormatDuration:
    size_px: tuple[int, int]
    min_duration_s: float
    max_duration_s: float


params_type(T[1], "subject_in_frame")(MinFramesPct)
params_type(T[1], "captions")(MaxWer)


# ---- T02 -------------------------------------------------------------------------------------

@params_type(T[2], "clips_in_order")
@dataclass(frozen=True)
class SlotCount:
    slot_count: int


params_type(T[2], "export_spec")(ShortSide)


# ---- T03 -------------------------------------------------------------------------------------

params_type(T[3], "caption_text")(MaxCer)


@params_type(T[3], "timing")
@dataclass(frozen=True)
class Timing:
    min_overlap_pct: float


@params_type(T[3], "style_position")
@dataclass(frozen=True)
class StylePosition:
    font_px: float
    glyph_height_pct: tuple[float, float]
    baseline_pct: float
    baseline_tolerance_pct: float
    centre_tolerance_pct: float
    min_stroke_ratio: float
    max_stroke_luma_levels: float  # 8-bit code values


@params_type(T[3], "line_length")
@dataclass(frozen=True)
class LineLength:
    max_chars_per_line_count: int


# ---- T04 -------------------------------------------------------------------------------------

@params_type(T[4], "photos_in_order")
@dataclass(frozen=True)
class PhotosInOrder:
    photo_count: int


@params_type(T[4], "changes_on_beats")
@dataclass(frozen=True)
class ChangesOnBeats:
    tolerance_frames: int
    beats_per_photo_count: int


@params_type(T[4], "zoom")
@dataclass(frozen=True)
class Zoom:
    min_scale_gain_pct: float
    max_scale_gain_pct: float


@params_type(T[4], "audio_format")
@dataclass(frozen=True)
class AudioFormat:
    audio_s: float
    size_px: tuple[int, int]


# ---- T05 -------------------------------------------------------------------------------------

@params_type(T[5], "key_quality")
@dataclass(frozen=True)
class KeyQuality:
    min_iou: float


@params_type(T[5], "spill")
@dataclass(frozen=True)
class Spill:
    max_spill: float  # mean G - max(R, B) on the edge band, 0..1


@params_type(T[5], "placement")
@dataclass(frozen=True)
class Placement:
    min_height_pct: float
    max_height_pct: float
    anchor_tolerance_px: float


params_type(T[5], "export_spec")(SizePx)


# ---- T13 -------------------------------------------------------------------------------------

params_type(T[13], "english_unchanged")(MaxCer)
params_type(T[13], "spanish")(MaxCer)


@params_type(T[13], "japanese")
@dataclass(frozen=True)
class Japanese:
    max_cer_pct: float
    safe_area_pct: float


params_type(T[13], "timing_identical")(SyncFrames)


# ---- T14 -------------------------------------------------------------------------------------

@params_type(T[14], "label_present")
@dataclass(frozen=True)
class LabelText:
    text: str


@params_type(T[14], "tracking")
@dataclass(frozen=True)
class Tracking:
    max_dx_px: float
    min_above_px: float
    max_above_px: float
    min_frames_pct: float


# ---- T15 -------------------------------------------------------------------------------------

@params_type(T[15], "neutrals")
@dataclass(frozen=True)
class Neutrals:
    max_abs_a_lab: float  # |a*| of the neutral patch, CIELAB units
    max_abs_b_lab: float
    clip_count: int


@dataclass(frozen=True)
class MaxDeltaE:
    max_de2000: float  # CIEDE2000 colour difference


params_type(T[15], "skin_match")(MaxDeltaE)
params_type(T[15], "consistency")(MaxDeltaE)


@params_type(T[15], "sky_hue")
@dataclass(frozen=True)
class SkyHue:
    max_hue_delta_deg: float


# ---- T16 -------------------------------------------------------------------------------------

@params_type(T[16], "pip_geometry")
@dataclass(frozen=True)
class PipGeometry:
    width_px: float
    width_tolerance_px: float
    margin_px: float
    margin_tolerance_px: float


params_type(T[16], "sync")(SyncFrames)


@params_type(T[16], "ducking")
@dataclass(frozen=True)
class Ducking:
    duck_db: float
    tolerance_db: float


# ---- T17 -------------------------------------------------------------------------------------

@params_type(T[17], "split_layout")
@dataclass(frozen=True)
class SplitLayout:
    size_px: tuple[int, int]
    max_black_rows_pct: float


params_type(T[17], "sync_on_clap")(SyncFrames)


# ---- T06 -------------------------------------------------------------------------------------

@params_type(T[6], "structure_brand")
@dataclass(frozen=True)
class StructureBrand:
    duration_s: float
    duration_tolerance_s: float
    hook_window_s: tuple[float, float]
    feature_count: int
    max_de2000: float  # caption fill to the nearest brand colour, CIEDE2000


@params_type(T[6], "safe_zones")
@dataclass(frozen=True)
class SafeZones:
    unsafe_bottom_pct: float
    unsafe_right_pct: float


@params_type(T[6], "end_card_logo")
@dataclass(frozen=True)
class EndCardLogo:
    end_card_s: float


@params_type(T[6], "audio_ducking")
@dataclass(frozen=True)
class AudioDucking:
    min_duck_db: float


# ---- T07 -------------------------------------------------------------------------------------

@params_type(T[7], "three_zooms")
@dataclass(frozen=True)
class ThreeZooms:
    zoom_count: int
    min_peak_pct: float
    max_peak_pct: float
    rest_scale_pct: float
    rest_tolerance_pct: float


@params_type(T[7], "ramp_lengths")
@dataclass(frozen=True)
class RampLengths:
    min_ramp_frames: int
    max_ramp_frames: int


@params_type(T[7], "keyword_pops")
@dataclass(frozen=True)
class KeywordPops:
    keyword_count: int
    tolerance_frames: int


# ---- T08 -------------------------------------------------------------------------------------

@params_type(T[8], "silences_removed")
@dataclass(frozen=True)
class SilencesRemoved:
    max_pause_s: float


@params_type(T[8], "no_words_lost")
@dataclass(frozen=True)
class NoWordsLost:
    min_word_recall_ratio: float  # words found in the export / GT words


@dataclass(frozen=True)
class Broll:
    """broll_<k>: the k-th keyword's B-roll, from its onset for duration_s, full frame."""

    tolerance_frames: float
    duration_s: float
    duration_tolerance_s: float


for _k in range(1, 5):
    params_type(T[8], f"broll_{_k}")(Broll)


# ---- T09 -------------------------------------------------------------------------------------

@params_type(T[9], "length_clips")
@dataclass(frozen=True)
class LengthClips:
    duration_s: float
    segment_count: int


params_type(T[9], "cuts_on_beats")(SyncFrames)


@params_type(T[9], "text_timing")
@dataclass(frozen=True)
class TextTiming:
    text: str
    start_s: float
    end_s: float


# ---- T10 -------------------------------------------------------------------------------------

@params_type(T[10], "clips_trimmed_ordered")
@dataclass(frozen=True)
class ClipsTrimmed:
    segment_count: int
    segment_s: float
    duration_s: float
    tolerance_frames: float


@params_type(T[10], "title")
@dataclass(frozen=True)
class Title:
    text: str


@params_type(T[10], "color_preset")
@dataclass(frozen=True)
class ColorPreset:
    min_b_gain_lab: float  # mean b* of the export over the source's, CIELAB units


params_type(T[10], "export_spec")(ShortSide)


# ---- T11 -------------------------------------------------------------------------------------

@params_type(T[11], "peak_slowmo")
@dataclass(frozen=True)
class PeakSlowmo:
    peak_frames: tuple[int, int]  # source frame indices of the peak window
    speed_x: float
    tolerance_x: float


@params_type(T[11], "fast_sections")
@dataclass(frozen=True)
class SpeedTolerance:
    speed_x: float
    tolerance_x: float


@params_type(T[11], "smooth_curve")
@dataclass(frozen=True)
class SmoothCurve:
    max_speed_jump_x: float  # between neighbouring output frames


@params_type(T[11], "framing_duration")
@dataclass(frozen=True)
class FramingDuration:
    min_duration_s: float
    max_duration_s: float
    size_px: tuple[int, int]
    center_band_pct: float
    min_frames_pct: float


# ---- T12 -------------------------------------------------------------------------------------

@params_type(T[12], "media_slots")
@dataclass(frozen=True)
class MediaSlots:
    slot_count: int


@params_type(T[12], "text_fields")
@dataclass(frozen=True)
class TextFields:
    field_count: int


# ---- T18 -------------------------------------------------------------------------------------

@params_type(T[18], "duration_transitions")
@dataclass(frozen=True)
class DurationTransitions:
    min_duration_s: float
    max_duration_s: float
    boundary_tolerance_s: float


@params_type(T[18], "scene_visuals")
@dataclass(frozen=True)
class SceneVisuals:
    scene_count: int


params_type(T[18], "captions")(MaxWer)


@params_type(T[18], "audio_cta")
@dataclass(frozen=True)
class AudioCta:
    music_lufs: float
    tolerance_lu: float
    min_duck_db: float
    cta_window_s: float


# ---- T19 -------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Hook:
    """hook_<k>: the hook's length (the first hook_s seconds of out/ad_hook<k>.mp4)."""

    hook_s: float


for _k in range(1, 6):
    params_type(T[19], f"hook_{_k}")(Hook)


@params_type(T[19], "body_identical")
@dataclass(frozen=True)
class BodyIdentical:
    body_s: float


@params_type(T[19], "export_spec_naming")
@dataclass(frozen=True)
class ExportSpecNaming:
    file_count: int
    duration_s: float
    fps: float
    size_px: tuple[int, int]


# ---- T20 -------------------------------------------------------------------------------------

@params_type(T[20], "format_subtitles")
@dataclass(frozen=True)
class FormatSubtitles:
    size_px: tuple[int, int]
    fps: float
    duration_s: float
    max_cer_pct: float


@params_type(T[20], "price_sticker")
@dataclass(frozen=True)
class PriceSticker:
    text: str
    tolerance_frames: int


@params_type(T[20], "callout_arrows")
@dataclass(frozen=True)
class CalloutArrows:
    arrow_count: int
    max_tip_error_px: float


@params_type(T[20], "loudness")
@dataclass(frozen=True)
class Loudness20:
    target_lufs: float
    tolerance_lu: float
    max_true_peak_dbtp: float
