"""Typed evidence contract: what rtmp/ measures is what T05's scorer reads, key for key.

A renamed key in rtmp/stats.py (or in the evidence dataclass) must fail here: the exact
round trip payload -> dataclass -> payload fails on any key the type does not declare, the
scorer's checks stop passing, and the committed JSON Schema stops matching the dataclasses.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from rtmp.stats import StreamStats
from verifiers.evidence import RtmpStats, RtmpUnpublish, StreamSnapshot
from verifiers.evidence.schema import DOC, render, schema
from verifiers.scoring import score_task
from verifiers.tasks.streaming.t05_rtmp_stream import write_profile

T05 = "R06.12.01.01-T05"


def _fed_stats(seconds: int = 61, fps: int = 30, kbps: int = 6000, gop_frames: int = 60) -> StreamStats:
    """A real StreamStats fed as the ingest session feeds it: 1080p30 CBR 6000 kbps, AAC 160 kbps 48 kHz."""
    s = StreamStats()
    s.video_codec, s.audio_codec = "h264", "aac"
    s.video_config = {"profile": "High", "level": 4.0, "width": 1920, "height": 1080}
    s.audio_config = {"object_type": 2, "profile": "AAC-LC", "sample_rate_hz": 48000, "channels": 2, "sbr": False}
    frame_bytes = kbps * 1000 // 8 // fps
    for i in range(seconds * fps):
        s.add_bytes(frame_bytes)
        s.on_video_frame(round(i * 1000 / fps), frame_bytes, i % gop_frames == 0)
    aac_frame_ms = 1024 / 48
    for j in range(int(seconds * 1000 / aac_frame_ms)):
        s.on_audio_frame(round(j * aac_frame_ms), round(160_000 / 8 * aac_frame_ms / 1000))
    return s


def _events(snap: dict[str, Any], key: str = "test_key") -> list[dict[str, Any]]:
    """The bundle events the ingest writes for that stream (payload shapes of rtmp/session.py)."""
    return [{"source": "rtmp", "kind": "stats", "mono_ns": 5_000_000_000,
             "payload": {"app": "live", "key": key, "client": "127.0.0.1:5000", **snap}},
            {"source": "rtmp", "kind": "unpublish", "mono_ns": 61_000_000_000,
             "payload": {"app": "live", "key": key, "client": "127.0.0.1:5000", "reason": "deleteStream",
                         "recording": None, "stats": snap}}]


def _score(tmp_path: Path, events: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    work, gt = tmp_path / "work", tmp_path / "gt"
    gt.mkdir()
    write_profile(work, "rtmp://127.0.0.1/live", "test_key", (1920, 1080), 30, 6000, 2, 160)
    rep = score_task(T05, work, gt, events).to_dict()
    return {c["name"]: c for c in rep["checks"]}


def test_real_stream_stats_round_trip_exactly() -> None:
    snap = _fed_stats().snapshot()
    assert StreamSnapshot.from_payload(snap).to_payload() == snap
    empty = StreamStats().snapshot()  # before any sequence header: the config keys are absent
    assert "width" not in empty["video"] and StreamSnapshot.from_payload(empty).to_payload() == empty


def test_real_stream_stats_through_t05s_scorer(tmp_path: Path) -> None:
    snap = _fed_stats().snapshot()
    by = _score(tmp_path, _events(snap))
    for name in ("server_config", "encoder_at_ingest", "audio", "duration"):
        assert by[name]["status"] == "pass", (name, by[name])
    assert by["encoder_at_ingest"]["evidence"]["bitrate_kbps"] == pytest.approx(6000, rel=0.01)
    assert by["encoder_at_ingest"]["evidence"]["keyframe_interval_s"] == pytest.approx(2.0)


def test_a_renamed_key_fails(tmp_path: Path) -> None:
    """What a rename of `bitrate_gop_bps` in rtmp/stats.py would emit: the round trip and the scorer see it."""
    snap = _fed_stats(kbps=6000).snapshot()
    renamed = json.loads(json.dumps(snap))
    renamed["video"]["gop_bitrate_bps"] = renamed["video"].pop("bitrate_gop_bps")
    assert StreamSnapshot.from_payload(renamed).to_payload() != renamed
    # and the GOP figure the CBR check relies on is no longer read (it falls back to the overall bitrate)
    parsed = RtmpStats.from_event(_events(renamed)[0]).snapshot.video
    assert parsed.bitrate_gop_bps.mean is None


def test_synth_events_are_the_typed_payloads() -> None:
    import tempfile

    from verifiers.synth import load_solution_events, synth_instance
    with tempfile.TemporaryDirectory() as tmp:
        inst = synth_instance(T05, Path(tmp) / "i", seed=1)
        evs = load_solution_events(inst / "oracle")
    ends = [e for e in evs if RtmpUnpublish.matches(e)]
    assert ends and RtmpUnpublish.from_event(ends[0]).to_payload() == ends[0]["payload"]
    real = _fed_stats().snapshot()
    assert set(ends[0]["payload"]["stats"]["video"]) <= set(real["video"])  # synth writes no key the ingest lacks


def test_payloads_validate_against_the_committed_schema() -> None:
    doc = json.loads(DOC.read_text(encoding="utf-8"))
    assert doc == schema(), "docs/evidence.schema.json is stale: python -m verifiers.evidence.schema"
    assert DOC.read_text(encoding="utf-8") == render()
    snap = _fed_stats().snapshot()
    for e in _events(snap):
        sub = {**doc["events"][f"{e['source']}/{e['kind']}"], "$defs": doc["$defs"]}
        jsonschema.validate(e["payload"], sub)


@pytest.mark.slow
async def test_real_ingest_stream_through_t05s_scorer(tmp_path: Path) -> None:
    """ffmpeg publishes 1080p30 CBR 6000 kbps + AAC 160 kbps to the real ingest; T05 reads its events."""
    from tests.rtmp.helpers import EncodeSpec, encode, finish, publish, running_ingest

    spec = EncodeSpec(width=1920, height=1080, rate="30", seconds=6, gop=60, video_kbps=6000, audio_kbps=160)
    src = encode(spec, tmp_path)
    async with running_ingest(None) as h:
        proc = await publish(h.url("live", "test_key"), src, realtime=False)
        rc, err = await finish(proc)
        assert rc == 0, err
        await h.wait_for("unpublish", app="live", key="test_key")
        events = [{"source": "rtmp", "kind": k, "mono_ns": i, "payload": p} for i, (k, p) in enumerate(h.events)]
    end = next(e for e in events if e["kind"] == "unpublish")
    assert StreamSnapshot.from_payload(end["payload"]["stats"]).to_payload() == end["payload"]["stats"]
    by = _score(tmp_path, events)
    assert by["encoder_at_ingest"]["evidence"]["width"] == 1920
    assert by["encoder_at_ingest"]["evidence"]["keyframe_interval_s"] == pytest.approx(2.0, abs=0.05)
    assert by["audio"]["status"] == "pass", by["audio"]
    assert by["duration"]["status"] == "fail" and by["duration"]["evidence"]["stopped"] is True  # 6 s of 60


def test_every_event_class_registers_itself_and_the_schema_covers_exactly_the_registry() -> None:
    """The package imports every evidence module, so no event type can be left out of the schema
    (the list the schema used to keep repeated the package's imports and could drift from them)."""
    import importlib
    import inspect
    import pkgutil

    import verifiers.evidence as pkg
    from verifiers.evidence.base import REGISTRY, EvidenceEvent
    from verifiers.evidence.schema import EVENTS

    before = dict(REGISTRY)
    defined = set()
    for mod in pkgutil.iter_modules(pkg.__path__, prefix="verifiers.evidence."):
        for _name, cls in inspect.getmembers(importlib.import_module(mod.name), inspect.isclass):
            if issubclass(cls, EvidenceEvent) and "SOURCE" in cls.__dict__ and "KIND" in cls.__dict__:
                defined.add(cls)
    assert REGISTRY == before, "a module of verifiers.evidence is not imported by the package"
    assert set(REGISTRY.values()) == defined
    assert set(EVENTS) == defined and len(EVENTS) == len(defined)


def test_two_event_types_cannot_claim_one_source_and_kind() -> None:
    from dataclasses import dataclass
    from typing import ClassVar

    from verifiers.evidence.base import EvidenceEvent

    with pytest.raises(TypeError, match="rtmp/stats is already"):
        @dataclass(frozen=True)
        class Impostor(EvidenceEvent):
            SOURCE: ClassVar[str] = "rtmp"
            KIND: ClassVar[str] = "stats"
