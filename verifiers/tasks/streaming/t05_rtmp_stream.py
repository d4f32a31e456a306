"""R06.12.01.01-T05: stream 1080p30 CBR 6000 kbps (keyframe 2 s, AAC 160 kbps 48 kHz) to the local ingest for 60 s.

Files: the active profile's service.json (custom server and key). Live: the RTMP ingest's own
measurements (rtmp/ events: `publish`, periodic `stats`, `unpublish` with the final stats snapshot)
for app `live`, key `test_key`: size from the AVC sequence header, frame rate and keyframe
spacing from timestamps, video bitrate over whole GOPs (what a CBR setting should hit), audio from
the AAC config and byte counts, duration from media time, and an unpublish as proof it stopped.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from verifiers.base import AgentOutputError, Checks, NoLiveEvidence, ScoreContext, TaskVerifier
from verifiers.registry import register
from verifiers.synth import InstanceWriter
from verifiers.synthkit import obs_synth as O
from verifiers.tasks.streaming.common import OBS_DIR, active_profile, event, frac, payload, ramp

APP, KEY = "live", "test_key"


def final_stats(ctx: ScoreContext, app: str, key: str) -> tuple[dict[str, Any], bool]:
    """The last stats snapshot of that stream, and whether it was unpublished (stopped).

    No rtmp events at all: the ingest was not part of the run (NoLiveEvidence, an error). Events but
    none for this app/key: the ingest was listening and the agent's stream never came (a failure).
    """
    evs = ctx.events_of("rtmp")
    mine = [e for e in evs if payload(e).get("app") == app and payload(e).get("key") == key]
    ends = [payload(e).get("stats") or {} for e in mine if e.get("kind") == "unpublish"]
    if ends:
        return ends[-1], True
    stats = [payload(e) for e in mine if e.get("kind") == "stats"]
    if not stats:  # the ingest ran (it logged something) but this stream never arrived: the agent's failure
        raise AgentOutputError(f"the ingest received no stream {app}/{key}")
    return stats[-1], False


def gop_bitrate_kbps(v: dict[str, Any]) -> float | None:
    g = (v.get("bitrate_gop_bps") or {}).get("mean")
    b = g if g is not None else v.get("bitrate_overall_bps")
    return None if b is None else b / 1000


@register
class RtmpStream(TaskVerifier):
    task_id = "R06.12.01.01-T05"

    def score(self, ctx: ScoreContext, checks: Checks) -> None:
        p = checks.params("server_config")
        try:
            svc = active_profile(ctx).service or {}
        except AgentOutputError as exc:
            checks.fail("server_config", str(exc))
            svc = None
        if svc is not None:
            parts = {"custom server": svc.get("type") == "rtmp_custom"
                     and str(svc.get("server", "")).rstrip("/") == p["server"],
                     "key": svc.get("key") == p["key"]}
            checks.set("server_config", frac(sum(parts.values()), 2), {"type": svc.get("type"),
                                                                       "server": svc.get("server"), **parts},
                       "; ".join(f"wrong {k}" for k, v in parts.items() if not v))
        try:
            stats, stopped = final_stats(ctx, APP, KEY)
        except NoLiveEvidence as exc:
            for n in ("encoder_at_ingest", "audio", "duration"):
                checks.error(n, str(exc))
            return
        except AgentOutputError as exc:
            for n in ("encoder_at_ingest", "audio", "duration"):
                checks.fail(n, str(exc))
            return
        v, a = stats.get("video") or {}, stats.get("audio") or {}
        pe = checks.params("encoder_at_ingest")
        kbps = gop_bitrate_kbps(v)
        ki = (v.get("keyframe_interval_s") or {}).get("mean")
        err_pct = abs(kbps - pe["bitrate_kbps"]) / pe["bitrate_kbps"] * 100 if kbps else 1e9
        vparts = {"1920x1080": float([v.get("width"), v.get("height")] == pe["size_px"]),
                  "30 fps": float(v.get("fps") is not None and abs(v["fps"] - pe["fps"]) <= 0.5),
                  "6000 kbps": ramp(err_pct, pe["bitrate_tolerance_pct"], 3 * pe["bitrate_tolerance_pct"]),
                  "keyframe 2 s": float(ki is not None and abs(ki - pe["keyframe_interval_s"]) <= 0.1)}
        checks.set("encoder_at_ingest", sum(vparts.values()) / 4,
                   {"width": v.get("width"), "height": v.get("height"), "fps": v.get("fps"), "bitrate_kbps": kbps,
                    "keyframe_interval_s": ki, **vparts},
                   "; ".join(f"wrong {k}" for k, s in vparts.items() if s < 1))
        pa = checks.params("audio")
        akbps = (a.get("bitrate_bps") or 0) / 1000
        aparts = {"AAC": a.get("codec") == pa["codec"], "48 kHz": a.get("sample_rate_hz") == pa["sample_rate_hz"],
                  "160 kbps": abs(akbps - pa["bitrate_kbps"]) <= 0.1 * pa["bitrate_kbps"]}
        checks.set("audio", frac(sum(aparts.values()), 3), {"codec": a.get("codec"), "sample_rate_hz":
                                                            a.get("sample_rate_hz"), "bitrate_kbps": akbps, **aparts},
                   "; ".join(f"wrong {k}" for k, s in aparts.items() if not s))
        pd = checks.params("duration")
        dur = float(stats.get("duration_s") or 0.0)
        s = ramp(dur - pd["duration_s"], pd["tolerance_s"], 3 * pd["tolerance_s"]) * (1.0 if stopped else 0.5)
        checks.set("duration", s, {"duration_s": dur, "stopped": stopped},
                   ("" if abs(dur - pd["duration_s"]) <= pd["tolerance_s"] else f"streamed {dur:.0f} s")
                   + ("" if stopped else "; stream never stopped"))

    def synth(self, inst: InstanceWriter, rng: np.random.Generator) -> None:
        inst.workdir.mkdir(exist_ok=True)

        def solution(folder: Path, *, server: str = "rtmp://127.0.0.1/live", key: str = KEY, size=(1920, 1080),
                     fps: float = 30.0, kbps: float = 6000.0, ki: float = 2.0, acodec: str = "aac",
                     akbps: float = 160.0, rate: int = 48000, dur: float = 60.0, stop: bool = True,
                     run: bool = True) -> None:
            cfg = folder / OBS_DIR
            O.write_profile(cfg, "Stream", {"Output": {"Mode": "Advanced"},
                                            "AdvOut": {"Encoder": "obs_x264", "TrackIndex": 1, "Track1Bitrate": int(akbps)},
                                            "Video": {"BaseCX": size[0], "BaseCY": size[1], "OutputCX": size[0],
                                                      "OutputCY": size[1], "FPSType": 1, "FPSInt": int(fps)}},
                            stream_encoder={"rate_control": "CBR", "bitrate": int(kbps), "keyint_sec": int(ki)},
                            service={"type": "rtmp_custom", "settings": {"server": server, "key": key,
                                                                         "use_auth": False}})
            O.write_global(cfg, "Stream", "Stream")
            if not run:
                return
            jitter = rng.normal(0, 0.01, 4)

            def snap(t: float) -> dict[str, Any]:
                return {"duration_s": round(t, 3), "video": {
                    "codec": "h264", "profile": "High", "width": size[0], "height": size[1], "fps": fps,
                    "bitrate_bps": kbps * 1000 * (1 + jitter[0]),
                    "bitrate_gop_bps": {"mean": kbps * 1000 * (1 + jitter[1]), "min": kbps * 960, "max": kbps * 1040},
                    "bitrate_overall_bps": kbps * 1000 * (1 + jitter[2]),
                    "keyframe_interval_s": {"mean": ki, "min": ki, "max": ki}},
                    "audio": {"codec": acodec, "sample_rate_hz": rate, "channels": 2,
                              "bitrate_bps": akbps * 1000 * (1 + jitter[3])}}
            evs = [event("rtmp", "listening", -5000, {"host": "127.0.0.1", "port": 1935}),
                   event("rtmp", "publish", 0, {"app": APP, "key": key, "client": "127.0.0.1:50000"})]
            evs += [event("rtmp", "stats", t * 1000, {"app": APP, "key": key, **snap(t)})
                    for t in range(5, int(dur), 5)]
            if stop:
                evs.append(event("rtmp", "unpublish", dur * 1000, {"app": APP, "key": key, "reason": "deleteStream",
                                                                   "stats": snap(dur)}))
            InstanceWriter.write_events(folder, evs)

        solution(inst.oracle)
        solution(inst.mutant("bitrate_4500", ["encoder_at_ingest"], "bitrate left at 4500 kbps"), kbps=4500)
        solution(inst.mutant("keyframe_auto", ["encoder_at_ingest"], "keyframe interval 0 (auto): 250 frames"),
                 ki=250 / 30)
        solution(inst.mutant("output_720p", ["encoder_at_ingest"], "output scaled to 1280x720"), size=(1280, 720))
        solution(inst.mutant("audio_128k_44k1", ["audio"], "audio 128 kbps at 44.1 kHz"), akbps=128, rate=44100)
        solution(inst.mutant("stream_50s", ["duration"], "stopped after 50 s"), dur=50.0)
        solution(inst.mutant("never_stopped", ["duration"], "left streaming"), stop=False)
        solution(inst.mutant("wrong_key", ["server_config", "encoder_at_ingest", "audio", "duration"],
                             "key test-key: the ingest saw no test_key stream"), key="test-key")
        solution(inst.mutant("no_ingest_recorded", ["encoder_at_ingest", "audio", "duration"],
                             "no run recorded: cannot judge"), run=False)
