"""`tally obs`: run a headless OBS, snapshot a running one, parse saved OBS files, diff them.

    tally obs launch --collection coll.json [--profile-dir DIR] [--port 4455]   (Ctrl-C closes OBS, which saves)
    tally obs snapshot --port 4455 [--out snap.json]                              (read-only)
    tally obs parse basic/scenes/Weekly_Stream.json [--profile-dir DIR]
    tally obs diff snap.json basic/scenes/Weekly_Stream.json                      (exit 1 on differences)

The websocket password comes from TALLY_OBS_PASSWORD or a .env file, never from the command line
(it would show in `ps`), and is never printed.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import signal
import sys
import time
from pathlib import Path
from typing import Any

from monitor.cli import UserError


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("obs", help="headless OBS, read-only snapshots, OBS file parsing")
    osub = p.add_subparsers(dest="obs_command", metavar="ACTION")

    la = osub.add_parser("launch", help="start OBS headless under Xvfb until Ctrl-C")
    la.add_argument("--collection", type=Path, help="scene collection JSON to load")
    la.add_argument("--profile-dir", type=Path, help="profile directory (basic.ini, encoder/service JSON)")
    la.add_argument("--port", type=int, default=None, help="websocket port (default: a free one)")
    la.add_argument("--wm", action="store_true", help="also run openbox (EWMH window manager)")
    la.add_argument("--keep-home", action="store_true", help="keep the private HOME after exit")
    la.add_argument("--env-file", default=".env")
    la.set_defaults(func=_launch)

    sn = osub.add_parser("snapshot", help="one read-only state snapshot of a running OBS, as JSON")
    sn.add_argument("--host", default="127.0.0.1")
    sn.add_argument("--port", type=int, default=4455)
    sn.add_argument("--env-file", default=".env")
    sn.add_argument("--out", type=Path)
    sn.set_defaults(func=_snapshot)

    pa = osub.add_parser("parse", help="summarise a saved scene collection (and profile)")
    pa.add_argument("collection", type=Path)
    pa.add_argument("--profile-dir", type=Path)
    pa.add_argument("--canvas", default="1920x1080", help="canvas size for item rectangles")
    pa.add_argument("--json", action="store_true")
    pa.set_defaults(func=_parse)

    di = osub.add_parser("diff", help="differences between a snapshot and a saved collection")
    di.add_argument("snapshot", type=Path)
    di.add_argument("collection", type=Path)
    di.set_defaults(func=_diff)
    p.set_defaults(func=lambda _a: (p.print_help(), 2)[1])


def _stop_on_interrupt_or_term() -> None:
    """Ctrl-C (SIGINT) and SIGTERM both close OBS the saving way. Why set SIGINT explicitly: a
    non-interactive shell starts a background job with SIGINT ignored, and Python keeps an ignored
    SIGINT, so `tally obs launch &` from a script (or a CI runner) would never stop on SIGINT."""
    def interrupt(_signum: int, _frame: object) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, interrupt)


def _launch(args: argparse.Namespace) -> int:
    from monitor.obs import ObsInstance, ObsLaunchError
    from monitor.observers.obs_client import load_password

    _stop_on_interrupt_or_term()

    collection = _read_json(args.collection) if args.collection else None
    profile: dict[str, Any] = {}
    if args.profile_dir:
        if not args.profile_dir.is_dir():
            raise UserError(f"{args.profile_dir}: not a directory")
        for f in sorted(args.profile_dir.iterdir()):
            if f.is_file() and f.suffix in (".ini", ".json"):
                profile[f.name] = f.read_text(encoding="utf-8", errors="replace")
    password = load_password(env_file=args.env_file)
    generated = not password
    password = password or secrets.token_urlsafe(12)
    inst = ObsInstance(collection=collection, profile=profile, ws_port=args.port, ws_password=password,
                       window_manager=args.wm, keep_home=args.keep_home)
    try:
        inst.start()
    except ObsLaunchError as exc:
        inst.close()
        raise UserError(str(exc).splitlines()[0]) from None
    except BaseException:  # Ctrl-C during start-up: leave nothing running
        inst.close()
        raise
    rc: int | None = None
    try:
        if generated:
            pw_file = inst.home / "ws-password"
            pw_file.write_text(password)
            os.chmod(pw_file, 0o600)
        print(f"OBS {inst.version.get('obsVersion', '?')} (websocket {inst.version.get('obsWebSocketVersion', '?')}) "
              f"on display {inst.display}")
        print(f"websocket: {inst.ws_url}  password: "
              + (f"generated, in {inst.home / 'ws-password'}" if generated else "from TALLY_OBS_PASSWORD/.env"))
        print(f"config dir: {inst.config_dir}")
        print("Ctrl-C closes OBS (it saves the collection and profile).", flush=True)
        while inst.running():
            time.sleep(0.5)
        print("OBS exited by itself.", file=sys.stderr)
    except KeyboardInterrupt:
        pass
    finally:
        # a second Ctrl-C must not abandon OBS half-closed: shutdown runs to the end
        previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
        try:
            rc = inst.stop()
            if inst.last_stop_method == "sigkill":  # OBS hung in its own shutdown: what it had not saved is lost
                print(f"OBS did not close within {inst.stop_grace_s:g} s and was killed (exit {rc}); "
                      "its collection and profile may not have been saved", file=sys.stderr)
            if args.keep_home:
                print(f"saved files kept under {inst.config_dir}")
            inst.close()
        finally:
            signal.signal(signal.SIGINT, previous)
    return 0 if rc in (0, None) else 1


def _snapshot(args: argparse.Namespace) -> int:
    from monitor.observers.obs_client import ObsConnectionLost, ReadOnlyRequester, load_password
    from monitor.observers.obs_snapshot import Capabilities, take_snapshot

    try:
        req = ReadOnlyRequester(args.host, args.port, load_password(env_file=args.env_file))
    except ObsConnectionLost as exc:
        raise UserError(str(exc)) from None
    try:
        caps = Capabilities.from_version(req.request("GetVersion"))
        snap = {"capabilities": caps.as_payload(), "state": take_snapshot(req, caps)}
    except ObsConnectionLost as exc:
        raise UserError(str(exc)) from None
    finally:
        req.close()
    text = json.dumps(snap, indent=2, sort_keys=True)
    if args.out:
        args.out.write_text(text + "\n")
    else:
        print(text)
    return 0


def _parse(args: argparse.Namespace) -> int:
    from verifiers.apps.obs import ObsFileError, item_rect, load_collection, load_profile

    try:
        w, h = (int(v) for v in args.canvas.lower().split("x"))
    except ValueError:
        raise UserError(f"--canvas {args.canvas!r}: expected WIDTHxHEIGHT") from None
    try:
        coll = load_collection(args.collection)
        prof = load_profile(args.profile_dir) if args.profile_dir else None
    except ObsFileError as exc:
        raise UserError(str(exc)) from None
    if prof and prof.video.base_w_px and prof.video.base_h_px:
        w, h = prof.video.base_w_px, prof.video.base_h_px
    out: dict[str, Any] = {"collection": coll.name, "program_scene": coll.current_program_scene,
                           "transition": {"name": coll.current_transition, "duration_ms": coll.transition_duration_ms},
                           "scenes": []}
    for name in coll.scene_order:
        sc = coll.scenes.get(name)
        if sc is None:
            continue
        items = []
        for it in sc.items:
            src = coll.sources.get(it.source_name)
            r = item_rect(coll, name, it.source_name, (w, h))
            items.append({"source": it.source_name, "kind": src.versioned_id if src else None,
                          "visible": it.visible, "rect": r.as_tuple() if r else None,
                          "muted": src.muted if src else None,
                          "filters": [f.name for f in src.filters] if src else []})
        out["scenes"].append({"name": name, "items_bottom_to_top": items,
                              "hotkeys": list(sc.select_hotkeys),
                              "transition_override": sc.transition_override})
    if prof:
        out["profile"] = {"name": prof.name, "output_mode": prof.output_mode,
                          "recording": prof.recording.__dict__, "replay_buffer": prof.replay_buffer.__dict__,
                          "video": {"base": [prof.video.base_w_px, prof.video.base_h_px],
                                    "output": [prof.video.output_w_px, prof.video.output_h_px],
                                    "fps": prof.video.fps_float},
                          "hotkeys": {k: list(v) for k, v in prof.hotkeys.items() if v}}
    if args.json:
        print(json.dumps(out, indent=2, default=str))
        return 0
    print(f"collection {coll.name!r}: program scene {coll.current_program_scene!r}, "
          f"transition {coll.current_transition} {coll.transition_duration_ms} ms")
    for sc in out["scenes"]:
        extra = f"  hotkey {', '.join(sc['hotkeys'])}" if sc["hotkeys"] else ""
        print(f"scene {sc['name']!r}{extra}")
        for it in reversed(sc["items_bottom_to_top"]):
            rect = "x".join(f"{v:g}" for v in it["rect"][2:]) + f" at ({it['rect'][0]:g}, {it['rect'][1]:g})" \
                if it["rect"] else "size unknown"
            flags = ("" if it["visible"] else " hidden") + (" muted" if it["muted"] else "")
            print(f"  {it['source']:<24} {it['kind'] or '?':<22} {rect}{flags}")
    if prof:
        print(json.dumps(out["profile"], indent=2, default=str))
    return 0


def _diff(args: argparse.Namespace) -> int:
    from monitor.observers.obs_consistency import compare
    from verifiers.apps.obs import ObsFileError, load_collection

    snap = _read_json(args.snapshot)
    state = snap.get("state", snap)
    try:
        coll = load_collection(args.collection)
    except ObsFileError as exc:
        raise UserError(str(exc)) from None
    diffs = compare(state, coll)
    for d in diffs:
        print(f"{d.path}: live {json.dumps(d.live, default=str)} != saved {json.dumps(d.saved, default=str)}")
    if not diffs:
        print("live snapshot and saved collection agree")
    return 1 if diffs else 0


def _read_json(path: Path) -> dict[str, Any]:
    try:
        obj = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise UserError(f"{path}: {exc.strerror or exc}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise UserError(f"{path}: not valid JSON ({exc})") from None
    if not isinstance(obj, dict):
        raise UserError(f"{path}: expected a JSON object")
    return obj
