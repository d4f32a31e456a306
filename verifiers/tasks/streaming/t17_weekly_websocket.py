"""R06.12.01.01-T17: the Weekly Stream scenes built by a script over obs-websocket (control of T01).

Same collection checks as T01, grouped as the seed groups them: scenes/sources (with z-order and
the BRB mic mute), the Cam transform, the Fade 300 ms transition.

The seed's gate ("websocket server log shows requests from the script; no UI interaction events
recorded", catalog `params.required`) is read from `ws/request` events whose client is not tally
(tally's requester ids are `tally-<n>`): those of tally's obs-websocket proxy (`obs-proxy`,
monitor/observers/obs_ws_proxy.py, exact) when the script went through it, else those of OBS's
debug log (`obs`, monitor/observers/obs_log.py, lossy; docs/obs.md). It is a gate, not a share, so it multiplies each check:
a check counts only if the script sent the requests that make its part of the collection (the
check's `script_requests` param; an empty list means any state-changing request, used for the
transition because OBS's default already is Fade 300 ms). UI interaction fails the gate for every
check: an `obs` `ui/*` event (OBS's Settings dialog was confirmed), or an `x11` `ui/input` event
(monitor/observers/x_input.py, docs/x_input.md: key or button presses recorded through XRECORD)
whose target window's WM_CLASS (instance or class) contains "obs". Input into any other window (the
terminal or editor where the agent writes and runs build_scenes.py) is legitimate and only shown as
evidence. Without the request log or the proxy (scored without a run, or OBS ran without
`--websocket_debug` and no proxy) every check is `error: no live evidence`: the collection alone cannot say whether a script or the
GUI made it (that is T01). Without the X input recorder (no display, no RECORD) "no UI interaction"
is only as strong as the Settings-dialog evidence (most GUI edits leave no UI-only line in OBS's
log); the evidence says whether input was recorded.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np

from verifiers.base import NoLiveEvidence, ScoreContext
from verifiers.checks import Result, check, check_names, provides
from verifiers.curves import Curve
from verifiers.evidence import ObsLogWsRequest, ObsWsLog, ProxyWsRequest
from verifiers.evidence.obs import WsRequestFields
from verifiers.evidence.ui import ObsSettingsChanged, XInput, XInputStarted, XInputUnavailable, XWindow
from verifiers.paramtypes.streaming import ScriptedScenes, ScriptedTransforms, ScriptedTransition
from verifiers.synth import InstanceWriter
from verifiers.tasks.streaming._shared import weekly_stream as W
from verifiers.tasks.streaming._shared.obs_task import ObsTask
from verifiers.tasks.streaming._shared.run_events import event

TASK = "R06.12.01.01-T17"
N = check_names(TASK)
CHECKS = tuple(N)
#: request types that change nothing (never proof that the script built anything)
READ_ONLY_PREFIXES = ("Get",)
READ_ONLY = frozenset({"Sleep", "BroadcastCustomEvent"})


def _is_write(rtype: str) -> bool:
    return not rtype.startswith(READ_ONLY_PREFIXES) and rtype not in READ_ONLY


#: the event source of tally's obs-websocket proxy (monitor/observers/obs_ws_proxy.py)
PROXY_SOURCE = "obs-proxy"
#: an x11 ui/input target counts as OBS when its WM_CLASS instance or class contains this (OBS 29: obs/obs)
OBS_WM_CLASS = "obs"


def _ui_text(e: dict[str, Any]) -> str:
    if ObsSettingsChanged.matches(e):
        changed = ObsSettingsChanged.from_event(e).changed
        return f"OBS Settings dialog confirmed ({', '.join(changed) or 'no change named'})"
    return str(e.get("kind"))


def _window_label(window: XWindow) -> str:
    cls = f"{window.wm_instance or '?'}/{window.wm_class or '?'}"
    return f"{cls} {window.title!r}" if window.title else cls


def is_obs_window(window: XWindow) -> bool:
    """WM_CLASS (instance or class) names OBS; a title alone does not (a terminal may be titled 'obs')."""
    return any(OBS_WM_CLASS in (v or "").lower() for v in (window.wm_instance, window.wm_class))


class InputLog:
    """The run's x11 input events (monitor/observers/x_input.py): presses per window, OBS's apart."""

    def __init__(self, events: list[dict[str, Any]]) -> None:
        self.recorded = any(XInputStarted.matches(e) for e in events)
        self.unavailable = [XInputUnavailable.from_event(e).reason for e in events if XInputUnavailable.matches(e)]
        self.per_window: dict[str, Counter[str]] = {}
        self.obs_windows: list[str] = []
        for p in (XInput.from_event(e) for e in events if XInput.matches(e)):
            window = p.window
            label = _window_label(window)
            counts = self.per_window.setdefault(label, Counter())
            counts["key_presses"] += p.key_presses
            counts["button_presses"] += p.button_presses
            if is_obs_window(window) and label not in self.obs_windows:
                self.obs_windows.append(label)

    def ui_texts(self) -> list[str]:
        return [f"{c['key_presses']} key and {c['button_presses']} button presses into OBS window {label}"
                for label in self.obs_windows for c in [self.per_window[label]]]

    def evidence(self) -> dict[str, Any]:
        return {"recorded": self.recorded, "unavailable": self.unavailable,
                "presses_per_window": {k: dict(v) for k, v in self.per_window.items()}}


class _Requests:
    """One evidence source's `ws/request` payloads, split into the script's writes and tally's own."""

    def __init__(self, reqs: list[WsRequestFields]) -> None:
        self.script = [p for p in reqs if p.client != "tally" and p.request_type is not None]
        # a request OBS answered with result false (ok False) made nothing; no reply read (ok None:
        # OBS tore that log line) still counts, the collection JSON says what was made
        writes = [p for p in self.script if _is_write(str(p.request_type))]
        self.script_writes = Counter(str(p.request_type) for p in writes if p.ok is not False)
        self.failed_writes = Counter(str(p.request_type) for p in writes if p.ok is False)
        self.tally_requests = sum(1 for p in reqs if p.client == "tally")


class RequestLog:
    """What the run's request evidence says about websocket clients.

    Two sources, one event shape: tally's obs-websocket proxy (`obs-proxy`, monitor/observers/
    obs_ws_proxy.py: every request the script sent through it, whole, with OBS's answer) and OBS's
    own debug log (`obs`, monitor/observers/obs_log.py: lossy, OBS 29 tears its lines, but it also
    sees a script that went around the proxy). The proxy is preferred when it saw the script's
    writes; when it saw none and the log did, the script bypassed it and the log is used.
    """

    def __init__(self, ctx: ScoreContext) -> None:
        events = list(ctx.events or [])
        proxy_on = any(e.get("source") == PROXY_SOURCE and e.get("kind") == "listening" for e in events)
        log_on = any(ObsWsLog.from_event(e).debug for e in events if ObsWsLog.matches(e))
        if not proxy_on:
            logs = [ObsWsLog.from_event(e) for e in ctx.events_of("obs", "ws/log")]  # none: NoLiveEvidence
            if not any(p.debug for p in logs):
                raise NoLiveEvidence("no live evidence: no obs-websocket proxy ran, and OBS ran without "
                                     "--websocket_debug, its log holds no requests")
        proxy = _Requests([ProxyWsRequest.from_event(e) for e in events if ProxyWsRequest.matches(e)])
        log = _Requests([ObsLogWsRequest.from_event(e) for e in events if ObsLogWsRequest.matches(e)])
        if proxy_on and (proxy.script_writes or not (log_on and log.script_writes)):
            self.source, chosen = "obs-websocket proxy (exact)", proxy
        else:
            self.source = "OBS debug log" + (" (the script went around the proxy)" if proxy_on else "")
            chosen = log
        self.script, self.script_writes, self.failed_writes = chosen.script, chosen.script_writes, chosen.failed_writes
        # a script that sent some requests through the proxy and others straight to OBS: the log's
        # types the proxy never saw still count (the log also holds the proxied ones, so only types
        # are merged, never counts)
        self.around_proxy = sorted(set(log.script_writes) - set(proxy.script_writes)) if chosen is proxy else []
        if self.around_proxy:
            self.script_writes = self.script_writes + Counter({t: log.script_writes[t] for t in self.around_proxy})
            self.source += " + OBS debug log for requests that went around it"
        self.tally_requests = log.tally_requests + proxy.tally_requests
        self.ui = [_ui_text(e) for e in events if e.get("source") == "obs" and str(e.get("kind", "")).startswith("ui/")]
        self.input = InputLog(events)
        self.ui += self.input.ui_texts()
        self.connections = sum(1 for e in events if e.get("source") in ("obs", PROXY_SOURCE)
                               and e.get("kind") == "ws/client_connected")

    def gate(self, needed: list[str]) -> tuple[bool, dict[str, Any], str]:
        """(passed, evidence, message) for a check whose state the `needed` requests make."""
        made = sorted(set(needed) & set(self.script_writes)) if needed else sorted(self.script_writes)
        ev = {"request_evidence": self.source, "script_write_requests": dict(sorted(self.script_writes.items())),
              "failed_write_requests": dict(sorted(self.failed_writes.items())), "tally_requests": self.tally_requests,
              "connections": self.connections, "needed_any_of": needed or "any state-changing request",
              "ui_interaction": self.ui, "x11_input": self.input.evidence()}
        if self.ui:
            return False, ev, f"UI interaction recorded during the run ({'; '.join(self.ui)})"
        if not self.script_writes and self.failed_writes:
            return False, ev, (f"every state-changing request from a script failed ({sum(self.failed_writes.values())}"
                               " answered result false): the script made nothing")
        if not self.script_writes:
            return False, ev, "the websocket log shows no state-changing request from a script (only tally's own)" \
                if self.tally_requests else "the websocket log shows no state-changing request from a script"
        if not made:
            return False, ev, f"the script sent none of {needed}: this part was not made over obs-websocket"
        return True, ev, ""


class WeeklyStreamWebsocket(ObsTask):
    task_id = TASK
    collection_name = W.COLLECTION

    @provides
    def log(self) -> RequestLog:
        """The run's websocket request evidence; NoLiveEvidence (every check error) without one."""
        return RequestLog(self.ctx)

    def gated(self, files: W.Result, needed: tuple[str, ...]) -> Result:
        """A collection check counts only when the script made its part (the seed's gate)."""
        score, evidence, message = files
        try:
            log = self.log
        except NoLiveEvidence as exc:
            return Result.cannot_judge(f"{exc} (the websocket request log decides whether a script made this)",
                                       {"collection_score": score, **evidence})
        ok, gate_ev, why = log.gate(list(needed))
        return Result(score if ok else 0.0, {"collection_score": score, **evidence, "websocket_log": gate_ev},
                      "; ".join(m for m in (why, message) if m))

    @check(N.scenes_sources)
    def scenes_sources(self, p: ScriptedScenes, curve: Curve) -> Result:
        """T01's scenes/sources with the z-order and BRB mute as two more items (the seed's grouping)."""
        req, got = W.scene_checklist(self.ctx, self.coll, p.canvas_px)
        top, m1 = W.frame_topmost(self.coll)
        muted, m2 = W.brb_mic_muted(self.coll)
        missing = [k for k, v in req.items() if not v]
        ev = {"met": sum(req.values()), "of": len(req), "missing": missing, "canvas": got,
              "frame_topmost": top, "brb_mic_muted": muted}
        msg = "; ".join(m for m in (("missing: " + "; ".join(missing)) if missing else "", m1, m2) if m)
        return self.gated((curve.count(sum(req.values()) + top + muted, len(req) + 2), ev, msg), p.script_requests)

    @check(N.transforms)
    def transforms(self, p: ScriptedTransforms, curve: Curve) -> Result:
        files = W.cam_geometry(self.ctx, self.coll, p.bounds_px, p.pos_px, p.tolerance_px, curve)
        return self.gated(files, p.script_requests)

    @check(N.transition)
    def transition(self, p: ScriptedTransition, curve: Curve) -> Result:
        return self.gated(W.transition(self.coll, p.transition, p.duration_ms, curve), p.script_requests)

    def synth(self, inst: InstanceWriter, rng: np.random.Generator) -> None:
        W.write_weekly_instance(inst, W.weekly_mutants(
            geometry=N.transforms, order_mute=N.scenes_sources, scenes=N.scenes_sources, transition=N.transition,
            cam_how="placed", frame_how="created before", fade_how="SetCurrentSceneTransitionDuration 500"),
            list(CHECKS))
        good_run = script_run()
        for folder in [inst.oracle, *sorted(p for p in (inst.root / "mutants").iterdir() if p.is_dir())]:
            InstanceWriter.write_events(folder, good_run)
        good = W.build()

        def solution(name: str, lowers: list[str], why: str, events: list[dict[str, Any]] | None) -> None:
            folder = inst.mutant(name, lowers, why)
            W.write_solution(folder, good)
            if events is not None:
                InstanceWriter.write_events(folder, events)

        solution("only_tally_in_log", list(CHECKS),
                 "the log shows only tally's own observer connection: no script sent anything", script_run(script=False))
        solution("script_requests_failed", list(CHECKS),
                 "build_scenes.py ran but OBS refused every request (result false): the scenes came from elsewhere",
                 script_run(fail=True))
        solution("transform_in_gui", [N.transforms],
                 "the script built the scenes but sent no SetSceneItemTransform (Cam placed by hand)",
                 script_run(skip={"SetSceneItemTransform"}))
        solution("settings_dialog_used", list(CHECKS), "OBS's Settings dialog was confirmed during the run",
                 script_run(ui=True))
        solution("clicked_in_obs_window", list(CHECKS),
                 "two clicks went into the OBS window (x11 ui/input, WM_CLASS obs/obs) besides the script",
                 script_run(x11_input=[*TERMINAL_INPUT, (OBS_WINDOW, 0, 2)]))
        solution("typed_into_obs_window", list(CHECKS), "keys were typed into the OBS window (x11 ui/input)",
                 script_run(x11_input=[(OBS_WINDOW, 5, 0), *TERMINAL_INPUT]))
        solution("terminal_titled_obs", [], "input only into a terminal whose title mentions OBS: not OBS's window",
                 script_run(x11_input=[({**TERMINAL, "title": "obs-websocket: python3 build_scenes.py"}, 40, 1)]))
        solution("no_websocket_debug", list(CHECKS), "OBS ran without --websocket_debug: no request log",
                 script_run(debug=False))
        solution("no_run_recorded", list(CHECKS), "scored without a run: cannot judge", None)
        solution("through_proxy_no_log", [], "the script went through tally's obs-websocket proxy; OBS ran "
                 "without --websocket_debug: the proxy's exact record is the evidence", script_run(proxy="through"))
        solution("around_proxy", [], "the proxy listened but the script connected to OBS directly: OBS's "
                 "debug log still shows its requests", script_run(proxy="around"))
        solution("transform_around_proxy", [], "the script sent SetSceneItemTransform straight to OBS, the rest "
                 "through the proxy: the log still shows the script made the transform",
                 script_run(proxy="through", around=frozenset({"SetSceneItemTransform"})))
        writes = {r for r, _ in SCRIPT_REQUESTS if _is_write(r)}
        solution("proxy_saw_only_reads", list(CHECKS), "through the proxy the script only read (GetSceneItemId);"
                 " the scenes were made some other way", script_run(proxy="through", skip=writes))


TERMINAL = {"window_id": "0x1a00007", "wm_instance": "xterm", "wm_class": "XTerm", "pid": 4242,
            "title": "agent@box: ~/work"}
OBS_WINDOW = {"window_id": "0x2c00003", "wm_instance": "obs", "wm_class": "obs", "pid": 4100,
              "title": "OBS 29.0.2 - Profile: Untitled - Scenes: Weekly Stream"}
#: the oracle's input: writing and running build_scenes.py in a terminal (two bursts, one click)
TERMINAL_INPUT: list[tuple[dict[str, Any], int, int]] = [(TERMINAL, 612, 1), (TERMINAL, 24, 0)]


#: build_scenes.py's requests, in order, with the names the request events carry
SCRIPT_REQUESTS: list[tuple[str, dict[str, str]]] = [
    ("SetVideoSettings", {}), *[("CreateScene", {"sceneName": s}) for s in W.SCENES],
    *[("CreateInput", {"sceneName": sc, "inputName": name}) for sc, name in (
        ("Starting Soon", "Background"), ("Starting Soon", "Countdown"), ("Live", "Display Capture"),
        ("Live", "Cam"), ("Live", "Frame"), ("BRB", "BRB Background"), ("BRB", "Mic"))],
    ("GetSceneItemId", {"sceneName": "Live", "sourceName": "Cam"}), ("SetSceneItemTransform", {"sceneName": "Live"}),
    ("SetInputMute", {"inputName": "Mic"}), ("SetCurrentSceneTransition", {"transitionName": "Fade"}),
    ("SetCurrentSceneTransitionDuration", {})]


def script_run(*, script: bool = True, skip: frozenset[str] | set[str] = frozenset(), ui: bool = False,
               debug: bool = True, x11_input: list[tuple[dict[str, Any], int, int]] | None = None,
               fail: bool = False, proxy: str | None = None, around: frozenset[str] = frozenset()
               ) -> list[dict[str, Any]]:
    """The OBS log events of a run: tally's observer (two connections, `tally-<n>` reads) and,
    when `script`, build_scenes.py's connection and the requests that make the Weekly Stream;
    plus the x11 input recorder's events: (window, key presses, button presses) per burst
    (default TERMINAL_INPUT), before the script's requests as when the agent writes it.

    `proxy`: None, no obs-websocket proxy ran; "through", the script connected through tally's
    proxy (its requests are `obs-proxy` events, every reply read) and OBS ran without debug log;
    "around", the proxy listened but the script connected to OBS directly (only the log saw it).
    `around` (with "through"): request types the script sent straight to OBS (only the log has them)."""
    evs = [ObsWsLog("2026-12-01 10-00-00.txt", debug, from_end=True).event(0),
           XInputStarted(":1", "1.13").event(1)]
    if proxy is not None:
        evs.append(event(PROXY_SOURCE, "listening", 2, {"host": "127.0.0.1", "port": 4456,
                                                       "upstream": "ws://127.0.0.1:4455"}))
    t = 100.0
    for window, keys, buttons in TERMINAL_INPUT if x11_input is None else x11_input:
        t += 20.0
        evs.append(XInput(XWindow(**window), keys, buttons, {"1": buttons} if buttons else {},
                          round((t - 15) * 1e6), round(t * 1e6)).event(t))

    def add(kind: str, p: dict[str, Any], src: str = "obs") -> None:
        nonlocal t
        t += 20.0
        if kind == "ws/request":  # typed evidence: the log follower's or the proxy's request
            evs.append((ProxyWsRequest if src == PROXY_SOURCE else ObsLogWsRequest)(**p).event(t))
        else:
            evs.append(event(src, kind, t, p))

    for session, port, subs in ((1, 50001, 0), (2, 50002, 526335)):
        add("ws/client_connected", {"session": session, "remote": f"127.0.0.1:{port}"})
        add("ws/client_identified", {"session": session, "event_subscriptions": subs, "rpc_version": 1})
    for i, rtype in enumerate(("GetVersion", "GetSceneList", "GetInputList", "GetSceneItemList"), 1):
        add("ws/request", {"request_type": rtype, "request_id": f"tally-{i}", "client": "tally", "batch": False,
                           "names": {}})
    if ui:
        t += 20.0
        evs.append(ObsSettingsChanged(["video"]).event(t))
    if not debug:
        return evs[:1] + [e for e in evs[1:] if e["kind"] != "ws/request"]
    if script and proxy == "through":
        src, session = PROXY_SOURCE, 1
        if not around:
            evs[0]["payload"]["debug"] = False
            evs = [e for e in evs if e["kind"] != "ws/request"]
    else:
        src, session = "obs", 3
    if script:
        add("ws/client_connected", {"session": session, "remote": "127.0.0.1:50010"}, src)
        add("ws/client_identified", {"session": session, "event_subscriptions": 0, "rpc_version": 1}, src)
        for i, (rtype, names) in enumerate(SCRIPT_REQUESTS):
            if rtype not in skip:
                # ok/code: the reply's requestStatus as the log follower reads it (one reply torn: ok None)
                torn = src == "obs" and rtype == "CreateScene" and names["sceneName"] == "Live"
                ok = False if fail else (None if torn else True)
                add("ws/request", {"request_type": rtype, "request_id": 100 + i, "client": "other", "batch": False,
                                   "names": names, "ok": ok, "code": {True: 100, False: 600, None: None}[ok]},
                    "obs" if rtype in around else src)
        add("ws/client_disconnected", {"session": session, "remote": "127.0.0.1:50010", "code": 1000}, src)
    return evs
