"""R06.12.01.01-T08: a 30 s / 512 MB replay buffer saving to recordings/replays/, Save Replay on F9.

Files: the active profile's basic.ini. OBS 29 keeps the buffer in [SimpleOutput] or [AdvOut]
(RecRB, RecRBTime, RecRBSize) by [Output] Mode, the save folder as that mode's recording path
(FilePath / RecFilePath), the name as [SimpleOutput] RecRBPrefix (default "Replay") + " " +
[Output] FilenameFormatting (default "%CCYY-%MM-%DD %hh-%mm-%ss"); only non-default values are
saved, so absent keys read as OBS's defaults. The hotkey is [Hotkeys] ReplayBuffer.Save.
Replay file: exactly one video in recordings/replays/ named like the format, 30 ± 1 s long; when a
run was recorded, the observer's ReplayBufferSaved event must name that file.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import numpy as np

from verifiers.apps.obs.hotkeys import normalize
from verifiers.apps.obs.profile import Profile
from verifiers.checks import CheckedTask, Result, check, check_names, provides
from verifiers.curves import Curve
from verifiers.evidence import ObsEvent, OutputStateData
from verifiers.evidence.obs import ReplaySavedData
from verifiers.measure.errors import MediaError
from verifiers.paramtypes.streaming import Hotkey, ReplayFile, ReplaySettings
from verifiers.synth import InstanceWriter
from verifiers.synthkit import obs_synth as O
from verifiers.synthkit.streaming_media import write_media
from verifiers.tasks.streaming._shared.near_misses import pass_line_pair
from verifiers.tasks.streaming._shared.obs_config import OBS_DIR, active_profile, path_ends_with
from verifiers.tasks.streaming._shared.recording import probe
from verifiers.tasks.streaming._shared.run_events import obs_events

TASK = "R06.12.01.01-T08"
N = check_names(TASK)
REPLAYS = "recordings/replays"
DEFAULT_FORMAT = "%CCYY-%MM-%DD %hh-%mm-%ss"
#: OBS's replay buffer defaults (verifiers.apps.obs.profile reads the same): an item the seed asks
#: at its default value is done by leaving it alone
OBS_DEFAULT_RB_SIZE_MB, OBS_DEFAULT_RB_PREFIX = 512, "Replay"
#: OBS filename-format specifiers -> regex (the ones the task's format uses, plus common ones)
_SPEC = {"%CCYY": r"\d{4}", "%YY": r"\d\d", "%MM": r"\d\d", "%DD": r"\d\d", "%hh": r"\d\d", "%mm": r"\d\d",
         "%ss": r"\d\d", "%%": "%"}
VIDEO_EXT = (".mkv", ".mp4", ".mov", ".flv", ".ts", ".m3u8", ".fragmented.mp4")


def name_regex(prefix: str, fmt: str) -> re.Pattern[str]:
    out, i = "", 0
    while i < len(fmt):
        spec = next((s for s in _SPEC if fmt.startswith(s, i)), None)
        if spec:
            out += _SPEC[spec]
            i += len(spec)
        else:
            out += re.escape(fmt[i])
            i += 1
    pre = re.escape(prefix + " ") if prefix else ""
    return re.compile(rf"^{pre}{out}\.[A-Za-z0-9]+$")


class ReplayBuffer(CheckedTask):
    task_id = TASK

    @provides
    def prof(self) -> Profile:
        """The active profile; every check reads it (without one the agent configured nothing)."""
        return active_profile(self.ctx)

    @check(N.replay_settings)
    def replay_settings(self, p: ReplaySettings, curve: Curve) -> Result:
        prof = self.prof
        rb = prof.replay_buffer
        enabled, rb_time, rb_size = rb.enabled, rb.max_time_s, rb.max_size_mb
        # an explicitly emptied prefix is saved as "RecRBPrefix=" and OBS then uses "" (not the default)
        prefix = prof.ini.get("SimpleOutput", {}).get("RecRBPrefix", rb.prefix)
        folder = prof.recording.path
        fmt = prof.get("Output", "FilenameFormatting") or DEFAULT_FORMAT
        want_prefix, want_fmt = p.filename_format.split(" ", 1)
        parts = {"max time 30 s": rb_time == p.max_time_s, "memory 512 MB": rb_size == p.max_memory_mb,
                 "file name format": prefix == want_prefix and fmt == want_fmt,
                 "folder recordings/replays/": path_ends_with(folder, p.folder.rstrip("/"))}
        # items the seed asks at OBS's defaults (512 MB, "Replay <default format>") pay in proportion
        # to the items that take a change (30 s, the folder): ticking Enable alone earns 0 (rule 3)
        at_default = {"memory 512 MB": p.max_memory_mb == OBS_DEFAULT_RB_SIZE_MB,
                      "file name format": (want_prefix, want_fmt) == (OBS_DEFAULT_RB_PREFIX, DEFAULT_FORMAT)}
        changed = [v for k, v in parts.items() if not at_default.get(k)]
        work = sum(changed) / len(changed) if changed else 1.0
        earned = [float(v) * (work if at_default.get(k) else 1.0) for k, v in parts.items()]
        score = curve.count(earned) if enabled else 0.0
        return Result(score, {"mode": prof.output_mode, "enabled": enabled, "time_s": rb_time, "size_mb": rb_size,
                              "prefix": prefix, "format": fmt, "folder": folder},
                      "replay buffer not enabled" if not enabled else
                      "; ".join(f"wrong {k}" for k, v in parts.items() if not v))

    @check(N.hotkey)
    def hotkey(self, p: Hotkey, curve: Curve) -> Result:
        bound = self.prof.hotkeys.get("ReplayBuffer.Save", ())
        ok = normalize(p.key) in bound
        return Result(curve.passes(ok), {"bindings": list(bound)},
                      "" if ok else f"Save Replay bound to {list(bound) or 'nothing'}, not {p.key}")

    @check(N.replay_file)
    def replay_file(self, p: ReplayFile, curve: Curve) -> Result:
        self.prof  # noqa: B018 - as before the split: without a profile this check fails too
        d = self.ctx.workdir / REPLAYS
        files = sorted(f for f in d.iterdir() if f.is_file() and f.name.lower().endswith(VIDEO_EXT)) \
            if d.is_dir() else []
        if not files:
            return Result.fail(f"no saved replay in {REPLAYS}/")
        if not self.prof.replay_buffer.enabled:   # a file named like a replay is no replay without the buffer
            return Result.fail("the replay buffer is not enabled: the files in replays/ are not its saves",
                               {"files": [x.name for x in files]})
        rx = name_regex(*self.task.check(N.replay_settings).typed.filename_format.split(" ", 1))
        f = files[-1]
        try:
            dur, err = probe(f).duration_s, ""
        except MediaError as exc:
            dur, err = None, str(exc)
        parts = {"exactly one replay": len(files) == p.count, "name matches the format": bool(rx.match(f.name)),
                 "30 s long": dur is not None and abs(dur - p.duration_s) <= p.tolerance_s}
        if self.ctx.events is not None:
            saved = [Path(d.savedReplayPath).name for _t, d in obs_events(self.ctx.events, "ReplayBufferSaved")]
            parts["ReplayBufferSaved names it"] = f.name in saved
        return Result(curve.count(sum(parts.values()), len(parts)),
                      {"files": [x.name for x in files], "duration_s": dur, **parts},
                      "; ".join([err, *(f"not {k}" for k, v in parts.items() if not v)]).strip("; "))

    def synth(self, inst: InstanceWriter, rng: np.random.Generator) -> None:
        (inst.workdir / "recordings").mkdir(parents=True)
        cache: dict[float, bytes] = {}

        def solution(folder: Path, *, rb_time: int = 30, rb_size: int = 512, key: str = "F9",
                     files: tuple[tuple[str, float], ...] = (("Replay 2026-11-30 21-04-10.mkv", 30.0),),
                     rec_path: str = "/home/streamer/work/recordings/replays", prefix: str | None = None) -> None:
            cfg = folder / OBS_DIR
            simple = {"RecRBPrefix": prefix} if prefix is not None else {}
            basic: dict[str, dict[str, Any]] = {
                "Output": {"Mode": "Advanced"},
                "AdvOut": {"RecType": "Standard", "RecFilePath": rec_path, "RecFormat": "mkv", "RecRB": True,
                           "RecRBTime": rb_time, "RecRBSize": rb_size},
                "Hotkeys": {"ReplayBuffer.Save": json.dumps({"bindings": [{"key": f"OBS_KEY_{key}"}]},
                                                            separators=(",", ":"))}}
            if simple:
                basic["SimpleOutput"] = simple
            O.write_profile(cfg, "Stream", basic)
            O.write_global(cfg, "Stream", "Stream")
            evs = []
            for name, dur in files:
                sub = REPLAYS if rec_path.endswith("/replays") else "recordings"
                path = folder / sub / name
                if dur not in cache:
                    write_media(path, [np.full((36, 64, 3), 90, np.uint8)] * round(dur * 2), 2)
                    cache[dur] = path.read_bytes()
                else:
                    path.parent.mkdir(parents=True, exist_ok=True)
                    path.write_bytes(cache[dur])
                evs.append(ObsEvent.of("ReplayBufferSaved", ReplaySavedData(f"{rec_path}/{name}")).event(45_000))
            InstanceWriter.write_events(folder, [
                ObsEvent.of("ReplayBufferStateChanged", OutputStateData(True)).event(1000), *evs])

        solution(inst.oracle)
        solution(inst.mutant("replay_20s", [N.replay_settings, N.replay_file], "max time left at 20 s"), rb_time=20,
                 files=(("Replay 2026-11-30 21-04-10.mkv", 20.0),))
        solution(inst.mutant("memory_256", [N.replay_settings], "memory 256 MB"), rb_size=256)
        solution(inst.mutant("hotkey_f10", [N.hotkey], "Save Replay bound to F10"), key="F10")
        solution(inst.mutant("two_replays", [N.replay_file], "saved twice"),
                 files=(("Replay 2026-11-30 21-04-10.mkv", 30.0), ("Replay 2026-11-30 21-04-40.mkv", 30.0)))
        solution(inst.mutant("no_prefix", [N.replay_settings, N.replay_file], "prefix cleared"), prefix="",
                 files=(("2026-11-30 21-04-10.mkv", 30.0),))
        solution(inst.mutant("saved_in_recordings", [N.replay_settings, N.replay_file], "folder not changed"),
                 rec_path="/home/streamer/work/recordings")
        write_cases(inst, solution)
        for dur_s, lowers, side in pass_line_pair(29.5, 28.5, N.replay_file):  # the seed's 30 +-1 s pass line
            solution(inst.mutant(f"replay_{dur_s}s_{side}", lowers, f"the saved replay is {dur_s} s long: {side} 30 +-1 s"),
                     files=(("Replay 2026-11-30 21-04-10.mkv", dur_s),))


def write_cases(inst: InstanceWriter, solution: Any) -> None:
    """Gaming baselines (<= 5; verifiers.synthcases): the replay buffer ticked on with OBS's defaults
    and nothing saved; a 30 s file named like a replay with the buffer off (a recording renamed)."""
    prof = f"{OBS_DIR}/basic/profiles/Stream/basic.ini"
    glob = f"{OBS_DIR}/global.ini"
    base = inst.root / "baselines"
    solution(base / "defaults", rb_time=20, rec_path="/home/streamer/work/recordings", files=())
    solution(base / "renamed", rb_time=20, rec_path="/home/streamer/work/recordings/replays")
    ini = base / "renamed" / prof
    ini.write_text(ini.read_text().replace("RecRB=true", "RecRB=false"))
    for name in ("defaults", "renamed"):   # no Save Replay binding: OBS's default
        ini = base / name / prof
        ini.write_text("".join(ln for ln in ini.read_text().splitlines(keepends=True)
                               if not ln.startswith("ReplayBuffer.Save")))
    for name, why in (("defaults", "Enable Replay Buffer ticked, everything else OBS's default, no replay saved"),
                      ("renamed", "the buffer off, a 30 s recording saved as 'Replay <date>.mkv' in replays/")):
        files = [(prof, f"copy:baselines/{name}/{prof}"), (glob, f"copy:baselines/{name}/{glob}")]
        files += [(f"{REPLAYS}/{f.name}", f"copy:baselines/{name}/{REPLAYS}/{f.name}")
                  for f in sorted((base / name / REPLAYS).glob("*.mkv"))]
        inst.baseline_case(f"rb_{name}", files, why=why)
