"""T16's window corners are read edge by edge over the edge's length, not as a pixelwise box.

A lossy export's block speckle that touches the window on a few rows must not move a corner (seed 13,
H.264 CRF 23 moved the bounding box 7.1 px); a window drawn too big along a whole edge must.
"""

from __future__ import annotations

import numpy as np

from verifiers.tasks.grading.t16_phone_screen import edge_corner_error_px

X0_PX, Y0_PX, W_PX, H_PX = 20, 10, 40, 72
CORNERS = np.array([[X0_PX, Y0_PX], [X0_PX + W_PX, Y0_PX], [X0_PX + W_PX, Y0_PX + H_PX], [X0_PX, Y0_PX + H_PX]], float)


def window(grow_right_px: int = 0) -> np.ndarray:
    changed = np.zeros((100, 120), dtype=bool)
    changed[Y0_PX: Y0_PX + H_PX, X0_PX: X0_PX + W_PX + grow_right_px] = True
    return changed


def test_exact_window_reads_zero() -> None:
    assert edge_corner_error_px(window(), CORNERS) == 0.0


def test_speckle_on_a_few_rows_does_not_move_the_edge() -> None:
    changed = window()
    changed[30:38, X0_PX - 6: X0_PX] = True  # 8 rows of speckle, 6 px out of the left edge
    changed[Y0_PX - 5: Y0_PX, 50:55] = True  # 5 columns, 5 px above the top edge
    box_err_px = np.hypot(6, 5)
    assert edge_corner_error_px(changed, CORNERS) < 1.0 < box_err_px


def test_window_too_big_along_an_edge_moves_it() -> None:
    assert edge_corner_error_px(window(grow_right_px=3), CORNERS) == 3.0


def test_nothing_changed_is_infinitely_off() -> None:
    assert edge_corner_error_px(np.zeros((100, 120), dtype=bool), CORNERS) == np.inf
