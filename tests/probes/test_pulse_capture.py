"""Tones and silence played into a PulseAudio null sink, measured live through sounddevice from the
sink's monitor: levels within 0.2 dB, tone on/off within 50 ms, 1 kHz at −20 dBFS reads −20 dBFS."""

from __future__ import annotations

import subprocess
import threading
import time
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from probes.audio_probe import AudioProbe
from probes.sources.audio import SoundDeviceSource, SourceError, find_input_device
from probes.types import AudioBlock

SR = 48000


def tone(freq_hz: float, level_dbfs: float, seconds: float) -> np.ndarray:
    t = np.arange(round(seconds * SR)) / SR
    return 10 ** (level_dbfs / 20) * np.sin(2 * np.pi * freq_hz * t)


def programme() -> np.ndarray:
    """0.6 s silence | 1.0 s L 1 kHz −20, R 440 Hz −10 | 1.0 s silence | 0.6 s L 1 kHz −30 | 0.6 s silence."""
    z = lambda s: np.zeros(round(s * SR))  # noqa: E731
    left = np.concatenate([z(0.6), tone(1000, -20, 1.0), z(1.0), tone(1000, -30, 0.6), z(0.6)])
    right = np.concatenate([z(0.6), tone(440, -10, 1.0), z(1.0), z(0.6), z(0.6)])
    return np.stack([left, right], axis=1)


def test_pulse_null_sink_tones_levels_and_timing(pulse: dict[str, str], tmp_path: Path) -> None:
    wav = tmp_path / "programme.wav"
    sf.write(wav, programme(), SR, subtype="FLOAT")
    events: list[tuple[str, dict]] = []
    probe = AudioProbe(lambda s, k, p: events.append((k, p)), SR, 2, tones_hz=[440, 1000])
    source = SoundDeviceSource("pulse", channels=2, sample_rate_hz=SR)
    blocks: list[AudioBlock] = []

    def capture() -> None:
        for block in source:
            blocks.append(block)
            probe.push(block)

    worker = threading.Thread(target=capture)
    worker.start()
    try:
        time.sleep(0.5)
        subprocess.run(["paplay", "-d", "probe_sink", str(wav)], env={**pulse}, check=True, timeout=20)
        time.sleep(0.6)
    finally:
        source.stop()
        worker.join(5)
    assert not worker.is_alive()
    assert sum(b.frames for b in blocks) > 4.0 * SR

    changes = [(k, p) for k, p in events if k in ("tone_on", "tone_off")]
    on_l = [p for k, p in changes if k == "tone_on" and p["channel"] == 0 and p["freq_hz"] == 1000]
    off_l = [p for k, p in changes if k == "tone_off" and p["channel"] == 0 and p["freq_hz"] == 1000]
    on_r = [p for k, p in changes if k == "tone_on" and p["channel"] == 1 and p["freq_hz"] == 440]
    off_r = [p for k, p in changes if k == "tone_off" and p["channel"] == 1 and p["freq_hz"] == 440]
    assert len(on_l) == 2 and len(off_l) == 2, changes
    assert len(on_r) == 1 and len(off_r) == 1, changes
    # no tone reported where none was played (1 kHz on the right, 440 Hz on the left)
    assert not [p for k, p in changes if (p["channel"], p["freq_hz"]) in ((1, 1000.0), (0, 440.0))]

    a = on_l[0]["t_s"]  # everything else relative to the first tone's start
    print("pulse: L on/off", [round(p["t_s"] - a, 4) for p in on_l + off_l], "R on/off",
          [round(p["t_s"] - a, 4) for p in on_r + off_r], "levels", on_l[0]["level_dbfs"], on_r[0]["level_dbfs"],
          on_l[1]["level_dbfs"])
    assert off_l[0]["t_s"] - a == pytest.approx(1.0, abs=0.05)
    assert on_l[1]["t_s"] - a == pytest.approx(2.0, abs=0.05)
    assert off_l[1]["t_s"] - a == pytest.approx(2.6, abs=0.05)
    assert on_r[0]["t_s"] - a == pytest.approx(0.0, abs=0.05)
    assert off_r[0]["t_s"] - a == pytest.approx(1.0, abs=0.05)

    # levels (Goertzel amplitude, peak dBFS)
    assert on_l[0]["level_dbfs"] == pytest.approx(-20.0, abs=0.2)
    assert on_r[0]["level_dbfs"] == pytest.approx(-10.0, abs=0.2)
    assert on_l[1]["level_dbfs"] == pytest.approx(-30.0, abs=0.2)

    # meter frames wholly inside the first tone: sample peak and RMS
    meters = [p for k, p in events if k == "meter"]
    inside = [p for p in meters if a + 0.2 <= p["t_s"] <= a + 0.9]
    assert len(inside) >= 6
    for p in inside:
        assert p["sample_peak_dbfs"][0] == pytest.approx(-20.0, abs=0.2)
        assert p["sample_peak_dbfs"][1] == pytest.approx(-10.0, abs=0.2)
        assert p["rms_dbfs"][0] == pytest.approx(-20.0 - 3.0103, abs=0.2)
        assert p["clipped_samples"] == [0, 0]
    inside2 = [p for p in meters if a + 2.2 <= p["t_s"] <= a + 2.5]
    assert inside2 and all(p["sample_peak_dbfs"][0] == pytest.approx(-30.0, abs=0.2) for p in inside2)

    # silence between the tones, on the left channel
    starts = [p["t_s"] - a for k, p in events if k == "silence_start" and p["channel"] == 0]
    ends = [p["t_s"] - a for k, p in events if k == "silence_end" and p["channel"] == 0]
    assert any(abs(s - 1.0) <= 0.05 for s in starts), starts
    assert any(abs(e - 2.0) <= 0.05 for e in ends), ends


def test_unknown_device_name_is_a_clear_error(pulse: dict[str, str]) -> None:
    with pytest.raises(SourceError, match="no audio input device matching 'no-such-card'"):
        find_input_device("no-such-card")
