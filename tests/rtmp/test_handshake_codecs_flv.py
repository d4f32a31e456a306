"""Handshake state machine, SPS/ASC parsing on real ffmpeg output, FLV writer, key rules."""

from __future__ import annotations

import os
import struct
import subprocess
from pathlib import Path

import pytest

from rtmp import amf0
from rtmp.codecs import (
    parse_aac_config,
    parse_audio_tag,
    parse_avc_config,
    parse_hevc_config,
    parse_video_tag,
)
from rtmp.errors import CodecError, HandshakeError
from rtmp.flv import FlvRecorder, recording_path
from rtmp.handshake import HANDSHAKE_SIZE, ServerHandshake, client_handshake_bytes
from rtmp.streams import PublishRefused, StreamRegistry, name_problem, split_key
from tests.rtmp.helpers import FFMPEG, decode_errors, hevc_config_record, probe_format


def test_handshake_split_and_leftover() -> None:
    hs = ServerHandshake()
    c0c1 = client_handshake_bytes()
    reply = b"".join(hs.feed(c0c1[i:i + 100]) for i in range(0, len(c0c1), 100))
    assert len(reply) == 1 + 2 * HANDSHAKE_SIZE and reply[0] == 3
    assert reply[1 + HANDSHAKE_SIZE:] == c0c1[1:]  # S2 echoes C1
    assert hs.feed(b"\x00" * HANDSHAKE_SIZE + b"\x02abc") == b""
    assert hs.done and hs.leftover == b"\x02abc"


@pytest.mark.parametrize("first", [0, 6, 0x47, 0xFF])
def test_handshake_wrong_version(first: int) -> None:
    with pytest.raises(HandshakeError):
        ServerHandshake().feed(bytes([first]) + b"\x00" * 10)


def _first_tags(path: Path) -> dict[int, bytes]:
    """First video/audio tag bodies of an FLV file (the sequence headers)."""
    data = path.read_bytes()
    pos, out = 13, {}
    while pos + 11 <= len(data) and len(out) < 2:
        tag, size = data[pos], int.from_bytes(data[pos + 1:pos + 4], "big")
        if tag in (8, 9) and tag not in out:
            out[tag] = data[pos + 11:pos + 11 + size]
        pos += 11 + size + 4
    return out


@pytest.mark.parametrize("size, profile, channels, rate", [
    ("1920x1080", "high", 2, 48000),     # 1088 coded rows, cropped to 1080
    ("854x480", "main", 1, 44100),       # width not a multiple of 16
    ("320x240", "baseline", 6, 22050),
])
def test_sps_and_asc_from_real_encodes(tmp_path: Path, size: str, profile: str, channels: int, rate: int) -> None:
    out = tmp_path / "one.flv"
    subprocess.run([FFMPEG, "-v", "error", "-f", "lavfi", "-i", f"testsrc2=size={size}:rate=25",
                    "-f", "lavfi", "-i", f"sine=sample_rate={rate}", "-t", "0.2", "-c:v", "libx264",
                    "-profile:v", profile, "-preset", "veryfast", "-pix_fmt", "yuv420p", "-c:a", "aac",
                    "-ac", str(channels), "-f", "flv", str(out)], check=True, timeout=60)
    tags = _first_tags(out)
    vt = parse_video_tag(tags[9])
    assert vt.sequence_header and vt.codec == "h264"
    cfg = parse_avc_config(tags[9][vt.payload_offset:])
    w, h = (int(x) for x in size.split("x"))
    assert (cfg.width_px, cfg.height_px) == (w, h)
    assert cfg.profile.lower().endswith(profile)
    at = parse_audio_tag(tags[8])
    acfg = parse_aac_config(tags[8][at.payload_offset:])
    assert (acfg.object_name, acfg.sample_rate_hz, acfg.channels) == ("LC", rate, channels)


def test_enhanced_rtmp_fourcc_and_cts() -> None:
    vt = parse_video_tag(bytes([0x90]) + b"hvc1" + b"\x01\x02\x03")  # keyframe, SequenceStart
    assert (vt.codec, vt.keyframe, vt.sequence_header, vt.enhanced) == ("hevc", True, True, True)
    vt = parse_video_tag(bytes([0xA1]) + b"hvc1" + b"\xff\xff\xdf" + b"data")  # inter, CodedFrames, cts -33
    assert (vt.keyframe, vt.cts_ms, vt.payload_offset) == (False, -33, 8)
    assert parse_video_tag(bytes([0x93]) + b"av01").codec == "av1"
    assert parse_video_tag(bytes([0x27, 1, 0xFF, 0xFF, 0xEF])).cts_ms == -17  # legacy AVC signed 24-bit
    assert parse_audio_tag(bytes([0x90]) + b"Opus").codec == "opus"


@pytest.mark.parametrize("size", ["1920x1080", "854x480", "320x240"])
def test_hevc_sps_from_real_encodes(tmp_path: Path, size: str) -> None:
    cfg = parse_hevc_config(hevc_config_record(tmp_path, size))
    assert (cfg.width_px, cfg.height_px) == tuple(int(x) for x in size.split("x"))
    assert cfg.profile == "Main" and cfg.chroma_format_idc == 1
    with pytest.raises(CodecError):
        parse_hevc_config(b"\x01" * 30)


def test_aac_he_and_escape() -> None:
    # HE-AAC explicit: object 5, core 24 kHz (idx 6), stereo, extension 48 kHz (idx 3), then LC.
    bits = "00101" + "0110" + "0010" + "0011" + "00010" + "00"
    asc = int(bits, 2).to_bytes(len(bits) // 8, "big")
    cfg = parse_aac_config(asc)
    assert (cfg.sbr, cfg.sample_rate_hz, cfg.object_type, cfg.channels) == (True, 48000, 2, 2)
    with pytest.raises(CodecError):
        parse_aac_config(b"\x17")


@pytest.mark.parametrize("bad", [b"", b"\x01\x64\x00", b"\x01\x64\x00\x28\xff\xe1\x00\x19\x67"])
def test_avc_config_truncated(bad: bytes) -> None:
    with pytest.raises(CodecError):
        parse_avc_config(bad)


def test_flv_recorder_patches_duration_and_size(tmp_path: Path) -> None:
    rec = FlvRecorder(tmp_path / "x.flv")
    rec.write_metadata({"width": 2.0, "duration": 99.0, "encoder": "test"})
    for i in range(5):
        rec.write_media(8, 1000 + 500 * i, b"\xaf\x01" + b"\x00" * 10)
    info = rec.close()
    data = (tmp_path / "x.flv").read_bytes()
    assert info["bytes"] == len(data)
    meta = amf0.decode_all(data[13 + 11:13 + 11 + int.from_bytes(data[14:17], "big")])
    assert meta[0] == "onMetaData"
    assert meta[1]["duration"] == 2.0 and meta[1]["filesize"] == float(len(data)) and meta[1]["width"] == 2.0
    assert rec.close() == info  # idempotent


def test_flv_recorder_without_metadata_is_playable(tmp_path: Path) -> None:
    src = tmp_path / "src.flv"
    subprocess.run([FFMPEG, "-v", "error", "-f", "lavfi", "-i", "testsrc2=size=160x120:rate=10", "-t", "1",
                    "-c:v", "libx264", "-pix_fmt", "yuv420p", "-f", "flv", str(src)], check=True, timeout=60)
    data = src.read_bytes()
    rec = FlvRecorder(tmp_path / "out.flv")
    pos = 13
    while pos + 11 <= len(data):
        tag, size = data[pos], int.from_bytes(data[pos + 1:pos + 4], "big")
        ts = int.from_bytes(data[pos + 4:pos + 7], "big") | (data[pos + 7] << 24)
        if tag == 9:
            rec.write_media(9, ts, data[pos + 11:pos + 11 + size])
        pos += 11 + size + 4
    rec.close()
    assert decode_errors(tmp_path / "out.flv") == ""
    assert float(probe_format(tmp_path / "out.flv")["duration"]) == pytest.approx(1.0, abs=0.15)


@pytest.mark.parametrize("name, bad", [
    ("key", False), ("k-1_ä", False), ("..", True), ("a..b", True), ("a/b", True), ("a\\b", True),
    ("a\x00b", True), ("a\nb", True), ("", True), ("k" * 128, False), ("k" * 129, True), ("é" * 65, True),
])
def test_name_rules(name: str, bad: bool) -> None:
    assert (name_problem(name) is not None) == bad


def test_registry_allow_list_and_query() -> None:
    reg = StreamRegistry({"secret"})
    assert reg.check("live", "secret?token=abc") == "secret"
    with pytest.raises(PublishRefused) as exc:
        reg.check("live", "other")
    assert exc.value.code == "NetStream.Publish.BadName"
    assert split_key("a?b?c") == "a"


def test_recording_path_refuses_traversal(tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        recording_path(tmp_path, "..", "k")
    p = recording_path(tmp_path, "live", "k", when_s=0.0)
    assert p == tmp_path / "live" / "k" / "19700101T000000.000Z.flv"
    p.write_bytes(b"")
    assert recording_path(tmp_path, "live", "k", when_s=0.0).name == "19700101T000000.000Z-1.flv"


def test_short_control_fields() -> None:
    assert struct.calcsize(">I") == 4


def test_flv_writev_short_writes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The kernel may write less than asked: every byte still lands, in order."""
    import os

    from rtmp import flv

    real = os.writev

    def stingy(fd: int, pieces: list[bytes]) -> int:
        first = bytes(pieces[0])
        return real(fd, [first[: max(1, len(first) // 3)]])

    monkeypatch.setattr(flv.os, "writev", stingy)
    rec = FlvRecorder(tmp_path / "s.flv", buffer_bytes=64)
    bodies = [bytes([i]) * (i * 7 + 1) for i in range(30)]
    for i, body in enumerate(bodies):
        rec.write_media(9, i * 40, body)
    rec.close()
    monkeypatch.undo()
    from tests.rtmp.helpers import flv_tags

    assert [b for t, _, b in flv_tags(tmp_path / "s.flv") if t == 9] == bodies


def _flush_points(rec: FlvRecorder, tags: list[tuple[int, int, bytes]]) -> list[int]:
    """Write tags; the media time of each tag after which the file on disk grew."""
    points, size = [], os.path.getsize(rec.path)
    for tag_type, ts_ms, body in tags:
        rec.write_media(tag_type, ts_ms, body)
        if os.path.getsize(rec.path) != size:
            points.append(ts_ms)
            size = os.path.getsize(rec.path)
    return points


def test_flv_recorder_flushes_low_bitrate_within_its_media_time_bound(tmp_path: Path) -> None:
    """A 64 kb/s audio-only stream (one 184-byte AAC frame per 23 ms): with the 256 KiB buffer
    alone the file would stay empty for ~32 s of media; the 250 ms bound flushes it every
    ~250 ms. Audio stamped a few ms behind video does not flush on every tag."""
    aac = [(8, i * 23, b"\xaf\x01" + b"\x00" * 182) for i in range(44)]          # ~1 s of media
    rec = FlvRecorder(tmp_path / "low.flv", max_delay_ms=250)
    points = _flush_points(rec, aac)
    assert len(points) == 3 and all(250 <= b - a <= 276 for a, b in zip([0, *points], points, strict=False)), points
    unbounded = FlvRecorder(tmp_path / "big.flv", max_delay_ms=None)
    assert _flush_points(unbounded, aac) == []                                      # the old behaviour
    av = [t for i in range(25) for t in ((9, i * 40, b"\x17\x01" + b"\x00" * 50), (8, i * 40 - 5, b"\xaf\x01"))]
    jitter = FlvRecorder(tmp_path / "j.flv", max_delay_ms=250)
    assert len(_flush_points(jitter, av)) == 3                                      # 1 s: not 50
    for r in (rec, unbounded, jitter):
        r.close()
    from tests.rtmp.helpers import flv_tags

    assert [t for t, _, _ in flv_tags(tmp_path / "low.flv")].count(8) == 44
