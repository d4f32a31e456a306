"""Params dataclasses of the grading checks (catalog: verifiers/catalog/grading.yaml); see verifiers/params.py.

One frozen dataclass per kind of check, registered with @params_type(task, check) for every check of
that kind. Units: `_de2000` CIEDE2000 colour difference; `_lab` CIELAB L*/a*/b* units; `_stops`
exposure in log2 linear-light luminance; `_x` a scale factor. A seed's "on ≥ N % of frames" is not a
param: it is the check's curve (`share_of_frames`, `full_at_pct`).
"""

from __future__ import annotations

from dataclasses import dataclass

from verifiers.params import params_type

T = {k: f"R06.04.02.02-T{k:02d}" for k in range(1, 21)}


def _on(*pairs: tuple[int, str]):
    """Register one dataclass for several (task number, check name) pairs."""
    def deco(cls):
        for k, name in pairs:
            params_type(T[k], name)(cls)
        return cls
    return deco


@_on((3, "cliffs_sea_unchanged"), (4, "mean_skin"), (4, "lips_eyes"), (5, "skin_untouched"), (5, "clean_edges"),
     (7, "sky_glass_untouched"), (8, "skin_dress_untouched"), (10, "skater_untouched"), (11, "road_car_unchanged"),
     (12, "skin_pitch_untouched"), (13, "actors_untouched"), (14, "crowd_unchanged"), (16, "screen_corrected"),
     (16, "surroundings_untouched"), (17, "foreground_unchanged"), (19, "neon_untouched"), (20, "untouched_regions"))
@dataclass(frozen=True)
class MaxDeltaE:
    max_de2000: float  # per-frame mean (or per-shot) CIEDE2000, above the export floor where one applies


@_on(*((12, f"shot_{k}") for k in range(1, 7)))
@dataclass(frozen=True)
class BrandShot:
    target_lab: tuple[float, float, float]  # the brand colour, CIELAB
    max_de2000: float  # median CIEDE2000 of the shot's jersey pixels to it


@_on((2, "face_gain"), (9, "eye_gain"), (18, "face_gain"))
@dataclass(frozen=True)
class GainRange:
    min_gain_stops: float
    max_gain_stops: float


@_on((2, "background_unchanged"), (9, "skin_unchanged"), (18, "background_untouched"))
@dataclass(frozen=True)
class GainOutsideBox:
    bbox_scale_x: float  # the region's bounding box scaled about its centre: judged outside it
    max_gain_stops: float  # p95 |gain| above the export's own


@_on((2, "tracking"), (18, "no_drift"))
@dataclass(frozen=True)
class FaceOffset:
    max_offset_face_width_pct: float  # gain centroid to the GT face centre, in face widths


@_on((2, "no_halo"))
@dataclass(frozen=True)
class Halo:
    max_gradient_ratio: float = 1.2  # gain-map gradient over the source's median log2-Y gradient


@_on((1, "umbrella_saturation"))
@dataclass(frozen=True)
class ChromaKept:
    min_chroma_ratio: float


@_on((1, "background_desaturated"))
@dataclass(frozen=True)
class ChromaReduced:
    min_chroma_reduction_pct: float


@_on((1, "mask_iou"), (7, "mask_stability"))
@dataclass(frozen=True)
class MaskIou:
    min_iou: float


@_on((3, "sky_hue"))
@dataclass(frozen=True)
class HueShift:
    min_hue_shift_deg: float
    max_hue_shift_deg: float


@_on((3, "sky_luminance"))
@dataclass(frozen=True)
class LDropRange:
    min_l_drop_lab: float
    max_l_drop_lab: float


@_on((3, "window_tracks_horizon"))
@dataclass(frozen=True)
class HorizonBand:
    max_band_distance_px: float  # at REFERENCE_HEIGHT_PX lines, scaled to the shot


@_on((4, "hue_variance"))
@dataclass(frozen=True)
class HueSpread:
    min_reduction_pct: float


@_on((5, "wall_neutral"), (16, "whites_neutral"))
@dataclass(frozen=True)
class Neutral:
    max_abs_a_lab: float
    max_abs_b_lab: float


@_on((6, "outside_darkened"))
@dataclass(frozen=True)
class VignetteOutside:
    bbox_scale_x: float
    min_gain_stops: float
    max_gain_stops: float


@_on((6, "subject_protected"))
@dataclass(frozen=True)
class SubjectProtected:
    min_subject_gain_stops: float  # median gain over the subject
    protected_gain_stops: float  # a subject pixel is protected at or above this gain
    min_protected_pixels_pct: float


@_on((7, "paint_recolored"))
@dataclass(frozen=True)
class PaintRecolor:
    min_hue_deg: float
    max_hue_deg: float
    min_chroma_ratio: float


@_on((7, "reflections_preserved"))
@dataclass(frozen=True)
class Reflections:
    min_correlation_ratio: float  # Pearson r of the paint's L*, source vs render


@_on((8, "grass_change"))
@dataclass(frozen=True)
class GrassChange:
    target_hue_deg: float
    min_hue_shift_deg: float
    max_hue_shift_deg: float
    min_chroma_gain_pct: float
    max_chroma_gain_pct: float


@_on((9, "tracking"))
@dataclass(frozen=True)
class EyeOffset:
    max_offset_px: float  # at REFERENCE_HEIGHT_PX lines, scaled to the shot


@_on((10, "mask_quality"))
@dataclass(frozen=True)
class ImpliedMask:
    implied_mask_max_de2000: float  # a pixel is "unchanged" below this ΔE2000 (above the export's own)
    min_iou: float


@_on((10, "background_grade"))
@dataclass(frozen=True)
class BackgroundGrade:
    min_chroma_change_pct: float
    max_chroma_change_pct: float
    min_b_shift_lab: float
    max_b_shift_lab: float


@_on((11, "highlights_lowered"))
@dataclass(frozen=True)
class HighlightsLowered:
    min_p99_drop_pct: float


@_on((11, "cloud_detail"))
@dataclass(frozen=True)
class CloudDetail:
    min_std_gain_pct: float


@_on((13, "sign_toned_down"))
@dataclass(frozen=True)
class SignToned:
    min_luma_change_pct: float
    max_luma_change_pct: float
    min_chroma_change_pct: float
    max_chroma_change_pct: float


@_on((14, "lead_skin_warmed"))
@dataclass(frozen=True)
class LeadWarmed:
    min_b_shift_lab: float
    max_b_shift_lab: float
    max_l_change_lab: float


@_on((15, "luminance_falloff"))
@dataclass(frozen=True)
class Falloff:
    min_l_drop_lab: float  # L* fall across the frame, left to right


@_on((15, "warm_highlights_cool_shadows"))
@dataclass(frozen=True)
class WarmCool:
    min_highlight_b_lab: float
    max_shadow_b_lab: float


@_on((15, "subject_rim"))
@dataclass(frozen=True)
class Rim:
    min_rim_l_delta_lab: float


@_on((16, "window_tracking"))
@dataclass(frozen=True)
class CornerError:
    max_corner_error_px: float  # at REFERENCE_HEIGHT_PX lines, scaled to the shot


@_on((17, "far_shadows_cooled"))
@dataclass(frozen=True)
class BShift:
    min_b_shift_lab: float
    max_b_shift_lab: float


@_on((18, "occlusion_frames"))
@dataclass(frozen=True)
class HandGain:
    max_hand_gain_stops: float


@_on((19, "spill_removed"))
@dataclass(frozen=True)
class SpillRemoved:
    min_hue_deg: float
    max_hue_deg: float
    max_l_change_lab: float
