"""Params dataclasses of the sound checks (catalog: verifiers/catalog/sound.yaml); see verifiers/params.py.

One frozen dataclass per converted check that has params, registered with @params_type(task, check).
"""

from __future__ import annotations

from dataclasses import dataclass

from verifiers.params import params_type

T01, T14 = "R06.07.01.03-T01", "R06.07.01.03-T14"


# ---- T01 / T14: hallway effects placed to frames (shared measurement: tasks/sound/_shared/event_sync) ----

@params_type(T01, "sync")
@params_type(T14, "sync")
@dataclass(frozen=True)
class EventSyncParams:
    tolerance_frames: float = 1.0
    pair_window_s: float = 0.5  # an onset further than this from a GT event is not paired with it
    fps: float | None = None  # the seed's frame rate (the GT file's fps is the one used)
    events_count: int | None = None  # the seed's event count (the GT file's events are the ones used)


@params_type(T01, "correct_sound")
@params_type(T14, "correct_sound")
@dataclass(frozen=True)
class CorrectSound:
    min_ncc_ratio: float = 0.6  # normalised cross-correlation for "this library sample is here"


@params_type(T14, "render_spec")
@dataclass(frozen=True)
class RenderRate:
    sample_rate_hz: int


# ---- T02: pass-by pan -------------------------------------------------------------------------------

T02 = "R06.07.01.03-T02"


@params_type(T02, "crossover_timing")
@dataclass(frozen=True)
class CrossoverTiming:
    tolerance_frames: float = 5.0


@params_type(T02, "trajectory")
@dataclass(frozen=True)
class Trajectory:
    min_correlation_ratio: float = 0.85  # Pearson r of the pan estimate against the screen track


@params_type(T02, "extremes")
@dataclass(frozen=True)
class Extremes:
    min_ratio_db: float = 12.0


# ---- T03: fill holes ----------------------------------------------------------------------------------

T03 = "R06.07.01.03-T03"


@params_type(T03, "holes_filled")
@dataclass(frozen=True)
class HolesFilled:
    max_digital_silence_sample_count: int = 100  # a run of this many all-zero samples is a hole left open
    holes_count: int | None = None  # the seed's count (the GT's holes are the ones used)


@params_type(T03, "spectral_match")
@dataclass(frozen=True)
class SpectralMatch:
    max_band_delta_db: float = 2.0


@params_type(T03, "crossfades_rest_intact")
@dataclass(frozen=True)
class CrossfadesRestIntact:
    min_crossfade_frames: float = 8.0
    max_crossfade_frames: float = 12.0
    max_null_dbfs: float = -60.0


# ---- placement tasks with "K of N events in sync" (T04, T11, T12, T13, T19, T20: _shared/placed_events) ----

T04 = "R06.07.01.03-T04"


@params_type(T04, "sync")
@dataclass(frozen=True)
class PlacedSync:
    """The seed's K lives in the check's k_of_n curve (k); `events_count` is the N it is out of."""

    tolerance_frames: float = 1.0
    events_count: int | None = None
    min_in_sync_pct: float | None = None
    fps: float | None = None  # the seed's frame rate (the GT's is used)


@params_type(T04, "surface_switch")
@dataclass(frozen=True)
class SurfaceSwitch:
    max_errors_count: int = 0


@params_type(T04, "level_consistency")
@dataclass(frozen=True)
class LevelConsistency:
    max_peak_cv_pct: float = 25.0


# ---- T05: rising whoosh ----------------------------------------------------------------------------

T05 = "R06.07.01.03-T05"


@params_type(T05, "duration")
@dataclass(frozen=True)
class WhooshDuration:
    duration_s: float = 1.2
    tolerance_s: float = 0.02
    sample_rate_hz: int = 48_000
    bit_depth_count: int = 24  # bits per sample (PCM)


@params_type(T05, "centroid_rise")
@dataclass(frozen=True)
class CentroidRise:
    start_min_hz: float = 600.0
    start_max_hz: float = 1100.0
    end_window_ms: float = 150.0
    end_min_hz: float = 3000.0
    end_max_hz: float = 5000.0
    min_spearman_ratio: float = 0.9


@params_type(T05, "peak_timing")
@dataclass(frozen=True)
class PeakTiming:
    min_peak_s: float = 1.05
    max_peak_s: float = 1.15


@params_type(T05, "hard_end")
@dataclass(frozen=True)
class HardEnd:
    tail_ms: float = 5.0
    max_tail_dbfs: float = -60.0


# ---- T06: spotting list ------------------------------------------------------------------------------

T06 = "R06.07.01.03-T06"


@params_type(T06, "event_f1")
@dataclass(frozen=True)
class EventF1:
    tolerance_frames: float = 2.0
    min_f1_ratio: float = 0.8
    fps: float | None = None  # the seed's frame rate (the GT's is used)


@params_type(T06, "categories")
@dataclass(frozen=True)
class CategoryAccuracy:
    min_accuracy_pct: float = 85.0


# ---- T07: ambience beds ------------------------------------------------------------------------------

T07 = "R06.07.01.03-T07"


@params_type(T07, "correct_beds")
@dataclass(frozen=True)
class CorrectBeds:
    scenes_count: int | None = None  # the seed's count (the GT's scenes are the ones used)


@params_type(T07, "transitions")
@dataclass(frozen=True)
class BedTransitions:
    tolerance_frames: float = 1.0
    min_fade_frames: float = 1.0
    max_fade_frames: float = 3.0


@params_type(T07, "prelap")
@dataclass(frozen=True)
class Prelap:
    prelap_s: float | None = None  # the seed's lead (the GT's lead_s is used)
    tolerance_frames: float = 2.0


@params_type(T07, "levels")
@dataclass(frozen=True)
class BedLevels:
    tolerance_lu: float = 3.0


# ---- T08: layered gunshots ---------------------------------------------------------------------------

T08 = "R06.07.01.03-T08"


@params_type(T08, "sync")
@dataclass(frozen=True)
class ShotSync:
    tolerance_frames: float = 1.0
    shots_count: int | None = None  # the seed's count (the GT's shots are the ones used)


@params_type(T08, "layering")
@dataclass(frozen=True)
class Layering:
    layers_count: int = 3  # transient, body, tail


@params_type(T08, "acoustics")
@dataclass(frozen=True)
class Acoustics:
    rt60_tolerance_pct: float = 15.0
    slapback_ms: float = 186.0  # a building at 32 m: 2 x 32 m / 343 m/s
    slapback_tolerance_ms: float = 10.0


@params_type(T08, "level_consistency")
@dataclass(frozen=True)
class ShotLevels:
    max_peak_cv_pct: float = 15.0


# ---- T09: UI sounds -----------------------------------------------------------------------------------

T09 = "R06.07.01.03-T09"


@params_type(T09, "sync")
@dataclass(frozen=True)
class UISync:
    tolerance_frames: float = 1.0
    fps: float | None = None  # the seed's frame rate (the GT's is used)
    events_count: int | None = None  # the seed's count (the GT's events are the ones used)


# ---- T10: Doppler pass-by -----------------------------------------------------------------------------

T10 = "R06.07.01.03-T10"


@params_type(T10, "doppler_pitch")
@dataclass(frozen=True)
class DopplerPitch:
    speed_m_s: float | None = None  # the seed's speed the two shifts follow from (the GT's speed is used elsewhere)
    approach_pct: float = 7.9
    recede_pct: float = -6.8
    tolerance_pct: float = 1.5


@params_type(T10, "pass_timing")
@params_type(T10, "level_envelope")
@dataclass(frozen=True)
class FrameTolerance:
    tolerance_frames: float = 3.0


@params_type(T10, "air_absorption")
@dataclass(frozen=True)
class AirAbsorption:
    min_correlation_ratio: float = 0.7


# ---- T11: fight contacts ------------------------------------------------------------------------------

T11 = "R06.07.01.03-T11"
params_type(T11, "contact_sync")(PlacedSync)


@params_type(T11, "whoosh_layering")
@dataclass(frozen=True)
class WhooshLayering:
    ramp_frames: int = 6


@params_type(T11, "categories")
@dataclass(frozen=True)
class MinAccuracy:
    """The share of events that must be right; the check's k_of_n curve carries the seed's K."""

    min_accuracy_pct: float = 85.0


# ---- T12: cartoon -------------------------------------------------------------------------------------

T12 = "R06.07.01.03-T12"
params_type(T12, "action_sync")(PlacedSync)


@params_type(T12, "pitch_follows_fall")
@dataclass(frozen=True)
class PitchFollowsFall:
    min_correlation_ratio: float = 0.8


# ---- T13: trailer -------------------------------------------------------------------------------------

T13 = "R06.07.01.03-T13"


@params_type(T13, "hit_sync")
@dataclass(frozen=True)
class HitSync:
    tolerance_frames: float = 1.0
    hits_count: int | None = None  # the seed's count (the GT's cuts are the ones used)


@params_type(T13, "risers")
@dataclass(frozen=True)
class Risers:
    risers_count: int | None = None  # the seed's count (the GT's riser targets are the ones used)
    tolerance_frames: float = 2.0
    min_rise_s: float = 2.0


@params_type(T13, "braam_silence")
@dataclass(frozen=True)
class BraamSilence:
    silence_max_dbfs: float = -50.0
    silence_s: float = 1.0


@params_type(T13, "peaks")
@dataclass(frozen=True)
class TruePeak:
    max_true_peak_dbtp: float = -1.0


# ---- T15: church reverb -------------------------------------------------------------------------------

T15 = "R06.07.01.03-T15"


@params_type(T15, "rt60_match")
@dataclass(frozen=True)
class RT60Match:
    tolerance_pct: float = 15.0


@params_type(T15, "drr_match")
@dataclass(frozen=True)
class DRRMatch:
    tolerance_db: float = 3.0


@params_type(T15, "timing_intact")
@dataclass(frozen=True)
class TimingIntact:
    tolerance_ms: float = 1.0


# ---- T16: creature vocals -----------------------------------------------------------------------------

T16 = "R06.07.01.03-T16"


@params_type(T16, "sync_duration")
@dataclass(frozen=True)
class SyncDuration:
    tolerance_frames: float = 2.0
    duration_tolerance_pct: float = 15.0


@params_type(T16, "layering")
@dataclass(frozen=True)
class VocalLayering:
    min_sources_count: int = 2


# ---- T17: footstep variations -------------------------------------------------------------------------

T17 = "R06.07.01.03-T17"


@params_type(T17, "files_format")
@dataclass(frozen=True)
class FilesFormat:
    count: int = 8
    channels: int = 1
    sample_rate_hz: int = 48_000


@params_type(T17, "trims")
@dataclass(frozen=True)
class Trims:
    max_onset_ms: float = 5.0


@params_type(T17, "loudness")
@dataclass(frozen=True)
class StepLoudness:
    target_lufs: float = -18.0
    tolerance_lu: float = 1.0


@params_type(T17, "distinct_clean")
@dataclass(frozen=True)
class DistinctClean:
    max_pairwise_correlation_ratio: float = 0.9


# ---- T18: forest 5.1 ----------------------------------------------------------------------------------

T18 = "R06.07.01.03-T18"


@params_type(T18, "bird_positions")
@dataclass(frozen=True)
class BirdPositions:
    tolerance_deg: float = 20.0
    birds_count: int | None = None  # the seed's count (the GT's birds are the ones used)


@params_type(T18, "stream")
@dataclass(frozen=True)
class StreamPosition:
    tolerance_deg: float = 20.0


@params_type(T18, "woodpecker")
@dataclass(frozen=True)
class Woodpecker:
    start_deg: float = 135.0
    end_deg: float = 45.0
    duration_s: float = 8.0
    tolerance_s: float = 0.5


@params_type(T18, "center_clear")
@dataclass(frozen=True)
class CenterClear:
    max_center_re_lr_db: float = -30.0


# ---- T19: robot short ---------------------------------------------------------------------------------

T19 = "R06.07.01.03-T19"


@params_type(T19, "foley_sync")
@params_type(T19, "hard_fx")
@dataclass(frozen=True)
class ShareInSync:
    """`min_in_sync_pct` of the GT units in sync (the check's share_of_frames curve: full at that share,
    else the share of units in sync). `extra_onsets_per_unit_ratio`: other onsets on the stem allowed per GT
    unit before each further one counts as a wrong unit (the seed's Foley has servo moves the GT hides;
    an effect may have a second transient)."""

    tolerance_frames: float = 1.0
    min_in_sync_pct: float = 85.0
    extra_onsets_per_unit_ratio: float = 1.0
    footsteps_count: int | None = None  # the seed's N (the GT's events are the ones used)
    events_count: int | None = None


@params_type(T19, "bg_transitions")
@dataclass(frozen=True)
class BGTransitions:
    tolerance_frames: float = 1.0


@params_type(T19, "stems_spec")
@dataclass(frozen=True)
class StemsSpec:
    max_stem_residual_db: float = -50.0
    max_true_peak_dbtp: float = -1.0


# ---- T20: re-conform ----------------------------------------------------------------------------------

T20 = "R06.07.01.03-T20"
params_type(T20, "retained_sync")(PlacedSync)


@params_type(T20, "bg_continuity")
@dataclass(frozen=True)
class BGContinuity:
    max_gap_frames: int = 2
    cut_points_count: int | None = None  # the seed's count (the GT's cuts are the ones used)
