"""verifiers.measure.ocr's engine is RapidOCR made cheaper without changing a reading: its onnxruntime
sessions keep their memory arena (activation buffers kept between frames instead of mapped afresh)
and the detector's normalize is a 256-entry table. The same frames read by an engine built as
RapidOCR builds it give equal boxes, texts and confidences, in the one-pass and the two-pass reader."""

from __future__ import annotations

import numpy as np
import pytest

from verifiers.measure import ocr

cv2 = pytest.importorskip("cv2")
pytest.importorskip("rapidocr_onnxruntime")


def _sessions(engine) -> list:
    return [engine.text_det.infer.session, engine.text_cls.infer.session, engine.text_rec.session.session]


def _frames() -> list[np.ndarray]:
    rng = np.random.default_rng(5)
    out = []
    for size, scale in (((180, 320), 0.6), ((1080, 720), 1.6)):  # one-pass, then two-pass (short side > 540)
        f = cv2.GaussianBlur(rng.integers(0, 255, (*size, 3), dtype=np.uint8), (15, 15), 0)
        cv2.putText(f, "Stir gently 42", (10, size[0] * 3 // 4), cv2.FONT_HERSHEY_SIMPLEX, scale,
                    (255, 255, 255), 2)
        out.append(f)
    return out


def test_the_cheaper_engine_changes_no_reading(monkeypatch):
    engine = ocr._engine()
    assert all(s.get_session_options().enable_cpu_mem_arena for s in _sessions(engine))
    with_arena = [ocr._read_text(f, 0.5, ocr.DET_MAX_SHORT_SIDE_PX) for f in _frames()]

    from rapidocr_onnxruntime import RapidOCR

    plain = RapidOCR(det_limit_side_len=ocr.DET_MIN_SIDE_PX, det_limit_type="min", intra_op_num_threads=1,
                     inter_op_num_threads=1)
    assert not any(s.get_session_options().enable_cpu_mem_arena for s in _sessions(plain))
    monkeypatch.setattr(ocr, "_engine", lambda: plain)
    without = [ocr._read_text(f, 0.5, ocr.DET_MAX_SHORT_SIDE_PX) for f in _frames()]
    assert with_arena == without
    assert all(boxes and boxes[0].text for boxes in with_arena)  # each frame does hold text


def test_the_tabled_normalize_equals_rapidocrs():
    from rapidocr_onnxruntime.ch_ppocr_det.utils import DetPreProcess

    plain = DetPreProcess(ocr.DET_MIN_SIDE_PX, "min", [0.5, 0.5, 0.5], [0.5, 0.5, 0.5])
    tabled = ocr._tabled(DetPreProcess(ocr.DET_MIN_SIDE_PX, "min", [0.5, 0.5, 0.5], [0.5, 0.5, 0.5]))
    every = np.arange(256, dtype=np.uint8).reshape(16, 16, 1).repeat(3, axis=2)
    noise = np.random.default_rng(3).integers(0, 256, (64, 96, 3), dtype=np.uint8)
    for img in (every, noise):
        assert np.array_equal(tabled.normalize(img), plain.normalize(img).astype(np.float32))
    assert tabled.normalize is not plain.normalize
    assert ocr._engine().text_det.get_preprocess(320).normalize.__qualname__.startswith("_tabled")
    odd = ocr._tabled(DetPreProcess(ocr.DET_MIN_SIDE_PX, "min", [0.4, 0.5, 0.6], [0.5, 0.5, 0.5]))
    assert np.array_equal(odd.normalize(noise), DetPreProcess(480, "min", [0.4, 0.5, 0.6], [0.5] * 3).normalize(noise))
