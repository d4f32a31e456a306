"""Helpers behind the short-form seed-sweep fixes (docs/shortform.md, "Seed sweep (short21g)"):
pure functions on made-up inputs, no media encoded."""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from verifiers.measure.streams import StreamProbe
from verifiers.tasks.shortform.t16_reaction_pip import _rounded


def test_exact_rate_is_the_exact_rate_of_the_timestamps() -> None:
    v = StreamProbe(index=0, type="video", codec="h264", time_base=Fraction(1, 30000), start_s=0.0,
                    avg_fps=29.97, pts=np.arange(0, 1001 * 10, 1001)[[0, 2, 1, 3, 4, 6, 5, 7, 8, 9]])
    assert v.exact_rate == Fraction(30000, 1001)
    v24 = StreamProbe(index=0, type="video", codec="h264", time_base=Fraction(1, 12288), start_s=0.0,
                      pts=np.arange(0, 512 * 5, 512))
    assert v24.exact_rate == 24
    one = StreamProbe(index=0, type="video", codec="h264", time_base=Fraction(1, 90000), start_s=0.0,
                      avg_fps=25.0, pts=np.zeros(1, np.int64))
    assert one.exact_rate == 25


def _pip(radius: int, top_row_lost: bool) -> tuple[np.ndarray, int, int, int, int]:
    import cv2

    w, h = 40, 24
    m = np.zeros((h + 8, w + 8), np.uint8)
    x, y = 4, 4
    if radius:
        cv2.rectangle(m, (x + radius, y), (x + w - 1 - radius, y + h - 1), 1, -1)
        cv2.rectangle(m, (x, y + radius), (x + w - 1, y + h - 1 - radius), 1, -1)
        for cx, cy in ((x + radius, y + radius), (x + w - 1 - radius, y + radius),
                       (x + radius, y + h - 1 - radius), (x + w - 1 - radius, y + h - 1 - radius)):
            cv2.circle(m, (cx, cy), radius, 1, -1)
    else:
        m[y:y + h, x:x + w] = 1
    if top_row_lost:  # isoluminant top edge: only a few pixels of the first row survive
        m[y, x + 1:x + w - 1] = 0
        m[y, x + w // 2] = 1
    return m > 0, x, y, w, h


def test_corners_are_judged_on_the_pip_solid_box() -> None:
    for lost in (False, True):
        assert _rounded(*_pip(6, lost))
        assert not _rounded(*_pip(0, lost))


def test_a_ramp_ends_at_the_hold_not_at_a_drifting_maximum() -> None:
    from verifiers.tasks.shortform.t07_punch_zooms import hold_level

    up = [103.4, 106.6, 110.1, 114.6, 117.4, 119.9]
    hold = [119.9, 119.4, 119.7, 119.9, 119.9, 120.1, 120.2, 120.9, 121.1, 121.5]  # measured drift
    down = [120.3, 117.4, 110.3, 106.7, 103.4]
    event = np.array(up + hold + down)
    assert int(np.nonzero(event >= hold_level(event) - 1.0)[0][0]) + 1 == 6
    ten = np.array([100 + 2 * (i + 1) for i in range(1, 10)] + [120.0] * 10 + [120 - 2 * (i + 1) for i in range(8)])
    assert int(np.nonzero(ten >= hold_level(ten) - 1.0)[0][0]) + 1 == 9  # a 10-frame ramp still measures 9
