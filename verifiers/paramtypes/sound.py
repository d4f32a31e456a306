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
