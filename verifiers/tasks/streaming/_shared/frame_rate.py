"""Nominal frame rates: when a measured rate is the "30 fps" / "60 fps" a seed asks for.

One rule for every streaming task that judges a frame rate (at the RTMP ingest or in a recording):
a nominal integer rate N is met by N itself or by its NTSC rate N x 1000/1001 (29.97 for 30, 59.94
for 60), each within FPS_TOL. No seed of this family names the fractional rate apart: the
instructions say "30 fps", "60 fps", "1080p30"; OBS's common-FPS list offers 29.97 and 59.94 beside
30 and 60, and platforms take either for the same ingest tier. A seed that wants the integer rate
exactly would have to say so (none does); then it is a param, not this rule.
"""

from __future__ import annotations

from fractions import Fraction

#: 1000/1001: the NTSC fractional rate of a nominal integer rate (29.97 = 30 x 1000/1001)
NTSC_FACTOR = Fraction(1000, 1001)
#: how far a measured rate may sit from N or N x 1000/1001. A measured rate reads a few tenths low
#: when OBS drops or lags frames (notes/rtmp.md: report them, don't hide them); the nearest other
#: settings a user picks (29 / 31 custom, 25, 48, 50) are >= 1 fps away, so 0.5 keeps them apart.
#: 29.4 fails "30 fps" (0.57 from 29.97), 59.4 fails "60 fps" (0.54 from 59.94).
FPS_TOL = 0.5


def nominal_rates(nominal_fps: float) -> tuple[float, float]:
    """The rates that meet a nominal rate: itself and its NTSC rate (N x 1000/1001)."""
    return float(nominal_fps), float(Fraction(nominal_fps) * NTSC_FACTOR)


def fps_ok(fps: float | None, nominal_fps: float) -> bool:
    """The measured rate is the nominal one: within FPS_TOL of N or of N x 1000/1001."""
    return fps is not None and min(abs(fps - r) for r in nominal_rates(nominal_fps)) <= FPS_TOL
