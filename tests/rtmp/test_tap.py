"""The per-stream tag tap: FLV bytes straight from the session, decodable by the probes' AvSource,
bounded, ended with the stream; late taps start with metadata and sequence headers."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

import pytest

from probes.sources.av import AvSource
from probes.types import AudioBlock, VideoFrame
from rtmp.tap import FLV_HEADER, TagTap, flv_tag
from tests.rtmp.helpers import EncodeSpec, encode, finish, flv_tags, publish, running_ingest

pytestmark = pytest.mark.timeout(120)


def test_short_reads_bounded_and_ended() -> None:
    tap = TagTap(b"", max_pending_bytes=4096)
    buf = bytearray(32768)
    assert tap.readinto(buf) == len(FLV_HEADER)  # what is there, not 32 KiB
    tap.push(8, 21, b"\xaf\x01" + bytes(10))
    assert bytes(buf[:tap.readinto(buf)]) == flv_tag(8, 21, b"\xaf\x01" + bytes(10))
    for i in range(1000):  # nobody reads: the tap ends itself instead of growing
        tap.push(9, i, bytes(100))
    assert tap.overrun and tap.ended
    while tap.readinto(buf):
        pass
    assert tap.readinto(buf) == 0  # end of file


def test_reader_blocks_until_data_or_end() -> None:
    tap = TagTap()
    buf = bytearray(64)
    tap.readinto(buf)
    got: list[int] = []
    t = threading.Thread(target=lambda: got.append(tap.readinto(buf)))
    t.start()
    t.join(0.2)
    assert t.is_alive()  # waiting, not returning 0 (which FFmpeg would take as the end)
    tap.end()
    t.join(2)
    assert got == [0]


async def test_tap_decodes_like_the_recording(tmp_path: Path, encode_cache: Path) -> None:
    """A real ffmpeg publish: the tap (opened at publish) and a late tap (opened 1 s in) decode
    with AvSource; the early one gives the recording's audio and video timestamps exactly."""
    src = encode(EncodeSpec(seconds=3, video_kbps=400, audio_kbps=96), encode_cache)
    decoded: dict[str, list[tuple[str, float]]] = {}
    threads: list[threading.Thread] = []

    def consume(name: str, tap: TagTap) -> None:
        rows = decoded.setdefault(name, [])
        for item in AvSource(tap, container_format="flv"):
            if isinstance(item, AudioBlock):
                rows.append(("a", round(item.t_s, 3)))
            elif isinstance(item, VideoFrame):
                rows.append(("v", round(item.t_s, 3)))

    def start(name: str, tap: TagTap | None) -> None:
        assert tap is not None
        t = threading.Thread(target=consume, args=(name, tap), daemon=True)
        t.start()
        threads.append(t)

    async with running_ingest(tmp_path) as h:
        def on_event(kind: str, payload: dict[str, Any]) -> None:
            h.events.append((kind, payload))
            if kind == "publish":
                start("early", h.server.open_tap("live", "tap"))

        h.server._on_event = on_event
        proc = await publish(h.url("live", "tap"), src)
        await asyncio.sleep(1.0)
        start("late", h.server.open_tap("live", "tap"))
        rc, err = await finish(proc)
        assert rc == 0, err
        [unp] = await h.wait_for("unpublish")
    for t in threads:
        await asyncio.to_thread(t.join, 20)
    recorded = flv_tags(Path(unp["recording"]["path"]))
    audio_ts = [ts for tag, ts, body in recorded if tag == 8 and body[1:2] == b"\x01"]
    video_ts = [ts for tag, ts, body in recorded if tag == 9 and body[1:2] == b"\x01"]
    early_a = [t for k, t in decoded["early"] if k == "a"]
    early_v = [t for k, t in decoded["early"] if k == "v"]
    assert [round(t * 1000) for t in early_a] == audio_ts
    assert len(early_v) == len(video_ts)
    late_a = [t for k, t in decoded["late"] if k == "a"]
    assert late_a and late_a[0] > early_a[0] + 0.2 and round(late_a[-1] * 1000) == audio_ts[-1]  # joined mid-stream
    assert h.server.open_tap("live", "tap") is None  # not live any more
