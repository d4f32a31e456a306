"""The frame-rate rule (docs/catalog.md): N fps is met by N or N x 1000/1001, each within 0.5 fps."""

from __future__ import annotations

import pytest

from verifiers.tasks.streaming._shared.frame_rate import fps_ok, nominal_rates


@pytest.mark.parametrize(("measured", "nominal", "ok"), [
    (30.0, 30, True), (29.97, 30, True), (30000 / 1001, 30, True), (29.4, 30, False), (30.6, 30, False),
    (25.0, 30, False), (60.0, 60, True), (59.946, 60, True), (59.4, 60, False), (50.0, 60, False),
    (None, 30, False)])
def test_nominal_rate(measured: float | None, nominal: int, ok: bool) -> None:
    assert fps_ok(measured, nominal) is ok


def test_ntsc_rates() -> None:
    assert nominal_rates(60) == (60.0, pytest.approx(59.94006, abs=1e-5))
