"""Real ffmpeg publishers into the ingest: recordings equal the source, live figures match the encode."""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path

import aiohttp
import pytest

from rtmp.api import ApiServer
from tests.rtmp.helpers import (
    EncodeSpec,
    by_type,
    decode_errors,
    encode,
    file_size,
    finish,
    packets,
    probe_format,
    publish,
    running_ingest,
)

pytestmark = pytest.mark.timeout(240)


async def _publish_ok(h, src: Path, app: str, key: str) -> dict:  # type: ignore[no-untyped-def]
    """Publish a whole file as fast as possible (timestamps, not wall time, carry the figures)."""
    proc = await publish(h.url(app, key), src, realtime=False)
    rc, err = await finish(proc)
    assert rc == 0, err
    return (await h.wait_for("unpublish", app=app, key=key))[0]


def _assert_recording_equals_source(rec_path: Path, src: Path) -> None:
    assert decode_errors(rec_path) == ""
    rec_pkts, src_pkts = packets(rec_path), packets(src)
    assert len(rec_pkts) == len(src_pkts)
    assert rec_pkts == src_pkts


@pytest.mark.slow
async def test_1080p30_cbr_6000k_aac160k(tmp_path: Path, encode_cache: Path) -> None:
    spec = EncodeSpec(width=1920, height=1080, rate="30", seconds=10, gop=60, video_kbps=6000,
                      audio_kbps=160)
    src = encode(spec, encode_cache)
    async with running_ingest(tmp_path / "rec") as h:
        api = ApiServer(h.server, "127.0.0.1", 0)
        await api.start()
        try:
            proc = await publish(h.url("live", "cam"), src)
            await h.wait_for("publish", key="cam")
            await asyncio.sleep(8.6)  # four complete GOPs on the wire
            async with aiohttp.ClientSession() as http:
                async with http.get(f"http://127.0.0.1:{api.port}/api/streams") as resp:
                    live = (await resp.json())["streams"]
                rc, err = await finish(proc)
                assert rc == 0, err
                unpublish = (await h.wait_for("unpublish", key="cam"))[0]
                async with http.get(f"http://127.0.0.1:{api.port}/api/streams") as resp:
                    after = (await resp.json())["streams"]
                async with http.get(f"http://127.0.0.1:{api.port}/metrics") as resp:
                    metrics = await resp.text()
        finally:
            await api.stop()
    [s] = live
    assert s["state"] == "live" and s["app"] == "live" and s["key"] == "cam"
    v, a = s["video"], s["audio"]
    assert (v["codec"], v["width"], v["height"]) == ("h264", 1920, 1080)
    assert v["fps"] == pytest.approx(30, abs=0.05)
    assert v["bitrate_bps"] == pytest.approx(6_000_000, rel=0.05)
    assert v["keyframe_interval_s"]["last"] == pytest.approx(2.0, abs=0.001)
    assert v["keyframe_interval_s"]["min"] == pytest.approx(2.0, abs=0.001)
    assert v["keyframe_interval_s"]["max"] == pytest.approx(2.0, abs=0.001)
    assert (a["codec"], a["sample_rate_hz"], a["channels"]) == ("aac", 48000, 2)
    assert a["bitrate_bps"] == pytest.approx(160_000, rel=0.10)
    # Ended streams stay listed, with the final figures.
    [e] = after
    assert e["state"] == "ended" and e["recording"] == unpublish["recording"]["path"]
    assert e["duration_s"] == pytest.approx(10, abs=0.1)
    final = unpublish["stats"]["video"]
    # Overall figure = the source's own bytes over its own span (x264's first CBR GOP overshoots,
    # so this is compared with the file, the live GOP figure above with the setting).
    src_video = by_type(packets(src), "video")
    src_bps = sum(p[3] for p in src_video[:-1]) * 8000 / (src_video[-1][1] - src_video[0][1])
    assert final["bitrate_overall_bps"] == pytest.approx(src_bps, rel=0.01)
    assert final["bitrate_overall_bps"] == pytest.approx(6_000_000, rel=0.08)
    assert unpublish["stats"]["claimed"]["width"] == 1920
    assert 'tally_rtmp_publishes_total 1' in metrics
    assert 'tally_rtmp_message_delay_seconds_bucket{le="+Inf"}' in metrics
    rec = Path(unpublish["recording"]["path"])
    assert rec.parent == tmp_path / "rec" / "live" / "cam" and rec.name.endswith("Z.flv")
    _assert_recording_equals_source(rec, src)
    fmt = probe_format(rec)
    assert float(fmt["duration"]) == pytest.approx(10, abs=0.1)
    assert int(fmt["size"]) == file_size(rec)


async def test_silent_aac_type3_timestamps(tmp_path: Path, encode_cache: Path) -> None:
    """anullsrc: constant-size AAC frames → type-3 headers start new messages; timestamps must hold."""
    src = encode(EncodeSpec(seconds=5, audio="silent"), encode_cache)
    async with running_ingest(tmp_path / "rec") as h:
        unp = await _publish_ok(h, src, "live", "quiet")
    rec = Path(unp["recording"]["path"])
    _assert_recording_equals_source(rec, src)
    audio = by_type(packets(rec), "audio")
    assert len({p[3] for p in audio[1:]}) <= 3  # silent AAC really is (nearly) constant-size
    assert unp["stats"]["audio"]["frame_rate_hz"] == pytest.approx(48000 / 1024, rel=0.01)


async def test_2997_with_bframes(tmp_path: Path, encode_cache: Path) -> None:
    src = encode(EncodeSpec(seconds=6, rate="30000/1001", gop=60, bframes=2, cbr=False), encode_cache)
    assert any(p[2] != p[1] for p in by_type(packets(src), "video")), "source must have B-frames"
    async with running_ingest(tmp_path / "rec") as h:
        unp = await _publish_ok(h, src, "live", "ntsc")
    _assert_recording_equals_source(Path(unp["recording"]["path"]), src)
    v = unp["stats"]["video"]
    assert v["fps"] == pytest.approx(29.97, abs=0.02)
    assert v["keyframe_interval_s"]["mean"] == pytest.approx(2.002, abs=0.002)


async def test_timestamps_past_2_pow_24_ms(tmp_path: Path, encode_cache: Path) -> None:
    """Extended timestamps: the stream starts at 16 780 s, above the 24-bit field's 16 777.215 s."""
    src = encode(EncodeSpec(seconds=4, ts_offset_s=16780.0), encode_cache)
    first = packets(src)[0]
    assert first[1] > 0xFFFFFF
    async with running_ingest(tmp_path / "rec") as h:
        unp = await _publish_ok(h, src, "live", "ext")
    _assert_recording_equals_source(Path(unp["recording"]["path"]), src)
    assert unp["stats"]["video"]["first_ts_ms"] > 0xFFFFFF


async def test_two_apps_same_key_at_once(tmp_path: Path, encode_cache: Path) -> None:
    src = encode(EncodeSpec(seconds=5), encode_cache)
    async with running_ingest(tmp_path / "rec") as h:
        pa = await publish(h.url("a", "same"), src)
        pb = await publish(h.url("b", "same"), src)
        await h.wait_for("publish", 2)
        await asyncio.sleep(1.5)
        live = {(r.app, r.key) for r in h.server.registry.live.values()}
        assert live == {("a", "same"), ("b", "same")}
        for p in (pa, pb):
            rc, err = await finish(p)
            assert rc == 0, err
        unps = await h.wait_for("unpublish", 2)
    paths = {Path(u["recording"]["path"]) for u in unps}
    assert {p.parent for p in paths} == {tmp_path / "rec" / "a" / "same", tmp_path / "rec" / "b" / "same"}
    for p in paths:
        _assert_recording_equals_source(p, src)
    assert not h.of("publish_replaced")


async def test_duplicate_publish_replaces_stale(tmp_path: Path, encode_cache: Path) -> None:
    src = encode(EncodeSpec(seconds=5), encode_cache)
    async with running_ingest(tmp_path / "rec") as h:
        first = await publish(h.url("live", "dup"), src)
        await h.wait_for("publish", 1)
        await asyncio.sleep(1.5)
        second = await publish(h.url("live", "dup"), src)
        await h.wait_for("publish", 2)
        rc1, _ = await finish(first)
        rc2, err2 = await finish(second)
        assert rc2 == 0, err2
        unps = await h.wait_for("unpublish", 2)
    assert rc1 != 0  # the stale publisher was cut off
    [replaced] = h.of("publish_replaced")
    assert replaced["key"] == "dup" and replaced["old_client"] != replaced["new_client"]
    reasons = sorted(u["reason"] for u in unps)
    assert reasons[1] == "replaced" and reasons[0] in ("FCUnpublish", "deleteStream")
    stale = next(u for u in unps if u["reason"] == "replaced")
    assert decode_errors(Path(stale["recording"]["path"])) == ""
    winner = next(u for u in unps if u["reason"] != "replaced")
    _assert_recording_equals_source(Path(winner["recording"]["path"]), src)


async def test_sigkill_mid_stream(tmp_path: Path, encode_cache: Path) -> None:
    src = encode(EncodeSpec(seconds=6), encode_cache)
    async with running_ingest(tmp_path / "rec") as h:
        proc = await publish(h.url("live", "killed"), src)
        await h.wait_for("publish")
        await asyncio.sleep(3)
        os.kill(proc.pid, signal.SIGKILL)
        await proc.wait()
        [unp] = await h.wait_for("unpublish")
        await asyncio.sleep(1.2)  # a stats tick later: still exactly one unpublish
        assert len(h.of("unpublish")) == 1
    assert unp["reason"] in ("closed", "reset")
    rec = Path(unp["recording"]["path"])
    assert decode_errors(rec) == ""
    rec_pkts = packets(rec)
    src_pkts = packets(src)
    assert 2.0 < float(probe_format(rec)["duration"]) < 4.5
    # What was recorded is exactly the source's beginning, packet for packet.
    assert rec_pkts == src_pkts[:len(rec_pkts)]


@pytest.mark.slow
async def test_twenty_concurrent_publishers(tmp_path: Path, encode_cache: Path) -> None:
    src = encode(EncodeSpec(width=320, height=180, seconds=5, video_kbps=300, audio_kbps=64), encode_cache)
    async with running_ingest(tmp_path / "rec") as h:
        procs = [await publish(h.url("live", f"k{i}"), src) for i in range(20)]
        results = await asyncio.gather(*(finish(p, 120) for p in procs))
        assert all(rc == 0 for rc, _ in results), [e for _, e in results if e]
        unps = await h.wait_for("unpublish", 20, timeout_s=30)
    assert sorted(u["key"] for u in unps) == sorted(f"k{i}" for i in range(20))
    src_pkts = packets(src)
    for u in unps:
        rec = Path(u["recording"]["path"])
        assert decode_errors(rec) == ""
        assert packets(rec) == src_pkts
        assert (u["stats"]["video"]["width"], u["stats"]["video"]["height"]) == (320, 180)
