"""Shared helpers for the RTMP tests: ffmpeg encodes/publishers, ffprobe packet lists, a raw client."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import shutil
import socket
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rtmp import amf0
from rtmp import messages as m
from rtmp.chunk import ChunkReader, ChunkWriter, RawMessage
from rtmp.handshake import HANDSHAKE_SIZE, client_handshake_bytes
from rtmp.server import IngestConfig, IngestServer

FFMPEG = shutil.which("ffmpeg") or "ffmpeg"
FFPROBE = shutil.which("ffprobe") or "ffprobe"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass(frozen=True)
class EncodeSpec:
    """What a source encode is made of; the same spec always gives the same cached file."""

    width: int = 640
    height: int = 360
    rate: str = "30"
    seconds: float = 6.0
    gop: int = 60
    video_kbps: int = 1000
    cbr: bool = True
    bframes: int = 0
    audio: str = "sine"          # sine | silent
    audio_kbps: int = 128
    ts_offset_s: float = 0.0
    audio_rate_hz: int = 48000
    channels: int = 2
    #: VBR with bursts: CRF 30 capped at 6 Mbit/s, and every 5th second of the picture is noise
    #: (x264 spends ~3× the mean bitrate on it, up to the cap); `cbr` and `video_kbps` are ignored
    vbr_bursts: bool = False

    def key(self) -> str:
        return hashlib.sha1(repr(self).encode()).hexdigest()[:12]


def encode(spec: EncodeSpec, cache_dir: Path) -> Path:
    """Encode lavfi testsrc2 + sine/anullsrc to an FLV file (cached per spec)."""
    out = cache_dir / f"src-{spec.key()}.flv"
    if out.exists():
        return out
    audio_src = "sine=f=440:sample_rate=48000" if spec.audio == "sine" else "anullsrc=r=48000:cl=stereo"
    video_src = f"testsrc2=size={spec.width}x{spec.height}:rate={spec.rate}"
    rc = ["-b:v", f"{spec.video_kbps}k"]
    if spec.vbr_bursts:
        video_src += ",noise=alls=80:allf=t:enable='lt(mod(t\\,5)\\,1)'"
        rc = ["-crf", "30", "-maxrate", "6000k", "-bufsize", "6000k"]
    elif spec.cbr:
        rc += ["-minrate", f"{spec.video_kbps}k", "-maxrate", f"{spec.video_kbps}k",
               "-bufsize", f"{spec.video_kbps}k", "-x264-params", "nal-hrd=cbr:force-cfr=1"]
    cmd = [FFMPEG, "-v", "error", "-y",
           "-f", "lavfi", "-i", video_src,
           "-f", "lavfi", "-i", audio_src, "-t", str(spec.seconds),
           "-c:v", "libx264", "-preset", "ultrafast" if not spec.bframes else "veryfast",
           *rc, "-g", str(spec.gop), "-keyint_min", str(spec.gop), "-sc_threshold", "0",
           "-bf", str(spec.bframes), "-pix_fmt", "yuv420p",
           "-c:a", "aac", "-b:a", f"{spec.audio_kbps}k", "-ar", str(spec.audio_rate_hz), "-ac", str(spec.channels)]
    if spec.ts_offset_s:
        cmd += ["-output_ts_offset", str(spec.ts_offset_s)]
    tmp = out.with_suffix(".part.flv")
    subprocess.run([*cmd, "-f", "flv", str(tmp)], check=True, timeout=180)
    tmp.rename(out)
    return out


async def publish(url: str, src: Path, *extra: str, realtime: bool = True) -> asyncio.subprocess.Process:
    """ffmpeg [-re] -copyts -c copy: the source's own timestamps go on the wire unchanged.

    `realtime=False` pushes as fast as the socket allows: same bytes and timestamps, for tests
    about protocol and recording correctness that do not need wall-clock pacing.
    """
    return await asyncio.create_subprocess_exec(
        FFMPEG, "-v", "error", "-nostdin", *(["-re"] if realtime else []), "-copyts", "-i", str(src),
        "-c", "copy", *extra,
        "-f", "flv", url, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE)


async def finish(proc: asyncio.subprocess.Process, timeout_s: float = 60) -> tuple[int, str]:
    _out, err = await asyncio.wait_for(proc.communicate(), timeout_s)
    return int(proc.returncode or 0), err.decode(errors="replace")


def packets(path: Path) -> list[tuple[str, int, int, int, str]]:
    """(codec_type, dts, pts, size, flags) for every packet, as ffprobe sees the file."""
    res = subprocess.run([FFPROBE, "-v", "error", "-show_entries", "packet=codec_type,dts,pts,size,flags",
                          "-of", "json", str(path)], capture_output=True, text=True, check=True, timeout=60)
    return [(p["codec_type"], int(p["dts"]), int(p["pts"]), int(p["size"]), p["flags"])
            for p in json.loads(res.stdout)["packets"]]


def decode_errors(path: Path) -> str:
    """What `ffmpeg -v error -i file -f null -` prints (empty = a clean file)."""
    res = subprocess.run([FFMPEG, "-v", "error", "-i", str(path), "-f", "null", "-"],
                         capture_output=True, text=True, timeout=120)
    return (res.stderr + ("" if res.returncode == 0 else f"\nexit {res.returncode}")).strip()


def probe_format(path: Path) -> dict[str, Any]:
    res = subprocess.run([FFPROBE, "-v", "error", "-show_entries", "format=duration,size:format_tags",
                          "-of", "json", str(path)], capture_output=True, text=True, check=True, timeout=60)
    return dict(json.loads(res.stdout)["format"])


def by_type(pkts: list[tuple[str, int, int, int, str]], kind: str) -> list[tuple[str, int, int, int, str]]:
    return [p for p in pkts if p[0] == kind]


@dataclass
class Harness:
    """A running IngestServer plus the events it reported."""

    server: IngestServer
    events: list[tuple[str, dict[str, Any]]] = field(default_factory=list)

    @property
    def port(self) -> int:
        assert self.server.port is not None
        return self.server.port

    def url(self, app: str, key: str) -> str:
        return f"rtmp://127.0.0.1:{self.port}/{app}/{key}"

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [p for k, p in self.events if k == kind]

    async def wait_for(self, kind: str, count: int = 1, timeout_s: float = 30, **match: Any) -> list[dict[str, Any]]:
        deadline = asyncio.get_running_loop().time() + timeout_s
        while True:
            found = [p for p in self.of(kind) if all(p.get(k) == v for k, v in match.items())]
            if len(found) >= count:
                return found
            if asyncio.get_running_loop().time() > deadline:
                raise AssertionError(f"waited {timeout_s} s for {count} {kind} {match}; got {len(found)}: "
                                     f"{[k for k, _ in self.events][-20:]}")
            await asyncio.sleep(0.05)


@contextlib.asynccontextmanager
async def running_ingest(record_dir: Path | None, **overrides: Any):  # type: ignore[no-untyped-def]
    cfg = IngestConfig(host="127.0.0.1", port=0, record_dir=record_dir,
                       allow_any=overrides.pop("allow_any", True), **overrides)
    events: list[tuple[str, dict[str, Any]]] = []
    server = IngestServer(cfg, lambda k, p: events.append((k, p)))
    await server.start()
    try:
        yield Harness(server, events)
    finally:
        await server.stop()


class RawClient:
    """A hand-driven RTMP publisher, to produce what ffmpeg never sends."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, chunk_size: int = 128,
                 ext_on_continuation: bool = True) -> None:
        self.r = reader
        self.w = writer
        self.cw = ChunkWriter(chunk_size, ext_on_continuation)
        self.cr = ChunkReader()
        self.inbox: list[RawMessage] = []

    @classmethod
    async def connect(cls, port: int, **kw: Any) -> RawClient:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        client = cls(reader, writer, **kw)
        writer.write(client_handshake_bytes())
        s0s1s2 = await asyncio.wait_for(reader.readexactly(1 + 2 * HANDSHAKE_SIZE), 5)
        writer.write(s0s1s2[1:1 + HANDSHAKE_SIZE])  # C2 = S1
        return client

    def send(self, msg: RawMessage, fmt: int | None = None) -> None:
        self.w.write(self.cw.write(msg, fmt))

    def send_raw(self, data: bytes) -> None:
        self.w.write(data)

    def set_chunk_size(self, size: int) -> None:
        self.send(RawMessage(2, m.SET_CHUNK_SIZE, 0, 0, size.to_bytes(4, "big")))
        self.cw.chunk_size = size

    def command(self, name: str, tid: float, obj: Any, *args: Any, stream_id: int = 0, amf3: bool = False) -> None:
        body = amf0.encode(name, float(tid), obj, *args)
        if amf3:
            self.send(RawMessage(3, m.COMMAND_AMF3, stream_id, 0, b"\x00" + body))
        else:
            self.send(RawMessage(3, m.COMMAND_AMF0, stream_id, 0, body))

    async def expect(self, predicate: Any, timeout_s: float = 5) -> RawMessage:
        """Read until a message matching predicate arrives (kept messages go to inbox)."""
        async def loop() -> RawMessage:
            while True:
                for i, msg in enumerate(self.inbox):
                    if predicate(msg):
                        return self.inbox.pop(i)
                data = await self.r.read(65536)
                if not data:
                    raise ConnectionError("server closed the connection")
                self.inbox.extend(self.cr.feed(data))
        return await asyncio.wait_for(loop(), timeout_s)

    async def expect_command(self, name: str, timeout_s: float = 5) -> m.Command:
        msg = await self.expect(lambda x: x.type_id == m.COMMAND_AMF0 and m.decode_command(x).name == name,
                                timeout_s)
        return m.decode_command(msg)

    async def start_publishing(self, app: str = "live", key: str = "raw", amf3: bool = False) -> m.Command:
        self.command("connect", 1, {"app": app, "type": "nonprivate", "flashVer": "FMLE/3.0",
                                    "tcUrl": f"rtmp://127.0.0.1/{app}"}, amf3=amf3)
        await self.expect_command("_result")
        self.command("releaseStream", 2, None, key, amf3=amf3)
        self.command("FCPublish", 3, None, key, amf3=amf3)
        self.command("createStream", 4, None, amf3=amf3)
        await self.expect_command("_result")  # releaseStream
        await self.expect_command("_result")  # FCPublish
        created = await self.expect_command("_result")
        self.command("publish", 5, None, key, "live", stream_id=int(created.args[0]), amf3=amf3)
        return await self.expect_command("onStatus")

    async def close(self) -> None:
        self.w.close()
        with contextlib.suppress(Exception):
            await self.w.wait_closed()


def file_size(path: Path) -> int:
    return path.stat().st_size


def flv_tags(path: Path) -> list[tuple[int, int, bytes]]:
    """(tag type, timestamp ms, body) of every tag of an FLV file, in order."""
    data = path.read_bytes()
    pos, out = 13, []
    while pos + 11 <= len(data):
        tag, size = data[pos], int.from_bytes(data[pos + 1:pos + 4], "big")
        ts = int.from_bytes(data[pos + 4:pos + 7], "big") | (data[pos + 7] << 24)
        out.append((tag, ts, data[pos + 11:pos + 11 + size]))
        pos += 11 + size + 4
    return out


async def send_tags(client: RawClient, tags: list[tuple[int, int, bytes]], stream_id: int = 1,
                    ts_offset_ms: int = 0, csids: tuple[int, int] = (4, 6)) -> None:
    """Publish FLV tags through a RawClient (audio on csids[0], video on csids[1], data on 5)."""
    for tag, ts, body in tags:
        if tag == 18:
            values = amf0.decode_all(body)
            client.send(RawMessage(5, m.DATA_AMF0, stream_id, 0, amf0.encode("@setDataFrame", *values)))
        else:
            client.send(RawMessage(csids[0] if tag == 8 else csids[1], tag, stream_id, ts + ts_offset_ms, body))
    await client.w.drain()


def flv_files(root: Path) -> list[Path]:
    return sorted(root.rglob("*.flv"))


def hevc_config_record(tmp_dir: Path, size: str = "854x480") -> bytes:
    """A real hvcC (HEVCDecoderConfigurationRecord) from a libx265 encode, via PyAV."""
    import av

    out = tmp_dir / f"hevc-{size}.mp4"
    subprocess.run([FFMPEG, "-v", "error", "-y", "-f", "lavfi", "-i", f"testsrc2=size={size}:rate=25", "-t", "0.2",
                    "-c:v", "libx265", "-x265-params", "log-level=error", "-pix_fmt", "yuv420p", "-tag:v", "hvc1",
                    str(out)], check=True, timeout=120)
    with av.open(str(out)) as container:
        return bytes(container.streams.video[0].codec_context.extradata)
