"""`tally dash`: a Textual dashboard over a live run (MQTT) or a recorded bundle.

The app never interprets payloads itself: monitor.dash.state folds events into a DashState
and the widgets render that state on a timer, so a burst of events costs one repaint.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any, ClassVar

from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.css.query import NoMatches
from textual.screen import ModalScreen
from textual.widgets import DataTable, Footer, Input, RichLog, Sparkline, Static

from monitor.dash.state import DashState, MeterView
from verifiers.evidence import EvidenceEvent, RunPhase, RunReport

EventSource = Callable[[], AsyncIterator[dict[str, Any]]]

HELP_TEXT = """[b]tally dashboard[/b]

  [b]q[/b]      quit
  [b]/[/b]      filter the event log (source, kind or text; Esc to leave)
  [b]p[/b]      pause / resume the event log
  [b]s[/b]      show / hide the score panel
  [b]c[/b]      clear the event log
  [b]?[/b]      this help

Panels: ingest streams (resolution, fps, bitrate sparkline, keyframe
interval, audio), OBS, vMix, audio meters (M/S/TP, target line),
scenario timeline, score (once the run is scored), event log."""


class HelpScreen(ModalScreen[None]):
    BINDINGS: ClassVar[list[Binding]] = [Binding("escape,q,question_mark", "dismiss", "close")]

    def compose(self) -> ComposeResult:
        yield Static(HELP_TEXT, id="help")


def meter_bar(value: float | None, target: float | None, width: int = 24, lo: float = -60.0,
              hi: float = 0.0) -> str:
    """A text bar from lo to hi dB with a '|' at the target; rich markup."""
    if value is None:
        return "[dim]" + "·" * width + "[/]"
    filled = round((min(max(value, lo), hi) - lo) / (hi - lo) * width)
    cells = ["█"] * filled + ["·"] * (width - filled)
    if target is not None:
        t = round((min(max(target, lo), hi) - lo) / (hi - lo) * (width - 1))
        cells[t] = "|"
    colour = "red" if value > -1 else ("yellow" if target is not None and value > target + 2 else "green")
    return f"[{colour}]" + "".join(cells) + "[/]"


def _fmt(v: float | None, spec: str = ".1f", unit: str = "") -> str:
    return "-" if v is None else f"{v:{spec}}{unit}"


class TallyDash(App[None]):
    CSS_PATH = "dash.tcss"
    TITLE = "tally"
    BINDINGS: ClassVar[list[Binding]] = [
        Binding("q", "quit", "quit"),
        Binding("slash", "filter", "filter"),
        Binding("p", "pause", "pause log"),
        Binding("s", "toggle_score", "score"),
        Binding("c", "clear_log", "clear"),
        Binding("question_mark", "help", "help"),
    ]

    def __init__(self, source: EventSource, title: str = "", refresh_s: float = 0.25) -> None:
        super().__init__()
        self.source = source
        self.state = DashState()
        self.source_title = title
        self.refresh_s = refresh_s
        self.paused = False
        self.filter_text = ""
        self._logged = 0
        self._feed_task: asyncio.Task[None] | None = None
        self.feed_done = asyncio.Event()

    # ---- layout ---------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield Static(id="top")
        with Horizontal(id="body"):
            with VerticalScroll(id="left"):
                with Vertical(classes="panel", id="streams-panel") as p:
                    p.border_title = "Ingest streams"
                    yield DataTable(id="streams-table", show_cursor=False, zebra_stripes=True)
                    yield Sparkline([], id="bitrate")
                with Vertical(classes="panel", id="apps-panel") as p:
                    p.border_title = "OBS / vMix"
                    yield Static(id="obs")
                    yield Static(id="vmix")
                with Vertical(classes="panel", id="meters-panel") as p:
                    p.border_title = "Audio meters (LUFS / dBTP)"
                    yield Static(id="meters")
                with Vertical(classes="panel", id="score-panel") as p:
                    p.border_title = "Score"
                    yield Static(id="score-summary")
                    yield DataTable(id="score-table", show_cursor=False)
            with Vertical(id="right"):
                with Vertical(classes="panel hidden", id="nodes-panel") as p:
                    p.border_title = "Nodes"
                    yield DataTable(id="nodes-table", show_cursor=False, zebra_stripes=True)
                with Vertical(classes="panel", id="scenario-panel") as p:
                    p.border_title = "Scenario timeline"
                    yield DataTable(id="scenario-table", show_cursor=False, zebra_stripes=True)
                with Vertical(classes="panel", id="log-panel") as p:
                    p.border_title = "Events"
                    yield Input(placeholder="filter: source, kind or text (Enter)", id="filter", classes="hidden")
                    yield RichLog(id="log", max_lines=2000, markup=True, wrap=False)
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#streams-table", DataTable).add_columns(
            "stream", "state", "video", "fps", "Mbit/s", "GOP s", "audio", "dur s", "health")
        self.query_one("#scenario-table", DataTable).add_columns("t s", "what", "result", "late ms", "lat ms")
        self.query_one("#score-table", DataTable).add_columns("check", "wt", "score", "status")
        self.query_one("#nodes-table", DataTable).add_columns("node", "state", "task", "run", "last score")
        self._apply_size_class()
        self.set_interval(self.refresh_s, self.refresh_view)
        self._feed_task = asyncio.get_running_loop().create_task(self._feed())
        self.refresh_view()

    def on_resize(self) -> None:
        self._apply_size_class()

    def _apply_size_class(self) -> None:
        self.screen.set_class(self.size.width < 120, "narrow")

    # ---- feeding --------------------------------------------------------------------------
    async def _feed(self) -> None:
        try:
            async for event in self.source():
                self.state.apply(event)
        except Exception as exc:  # a broken feed is shown, not a crash
            self.state.problems.append(f"feed stopped: {type(exc).__name__}: {exc}")
        finally:
            self.feed_done.set()
            if self.is_running:
                self.refresh_view()

    # ---- rendering ------------------------------------------------------------------------
    def refresh_view(self) -> None:
        """Repaint from state; a no-op while the screen is being built or torn down."""
        try:
            self._refresh_view()
        except NoMatches:
            return

    def _refresh_view(self) -> None:
        st = self.state
        head = (f"[b]{st.task or self.source_title or 'tally'}[/b]  run {st.run or '-'}  phase [b]{st.phase}[/b]  "
                f"elapsed {st.elapsed_s:7.1f} s  events {st.event_count}")
        if st.problems:
            head += f"  [red]{st.problems[-1]}[/]"
        self.query_one("#top", Static).update(head)
        self._render_streams()
        self._render_apps()
        self._render_meters()
        self._render_scenario()
        self._render_score()
        self._render_nodes()
        self._render_log()

    def _render_nodes(self) -> None:
        nodes = self.state.nodes
        self.query_one("#nodes-panel").set_class(not nodes, "hidden")
        table = self.query_one("#nodes-table", DataTable)
        table.clear()
        for name in sorted(nodes):
            n = nodes[name]
            score = n.get("last_score")
            table.add_row(name, n.get("state") or "?", n.get("task") or "-", n.get("run") or "-",
                          "-" if score is None else f"{float(score):.1f}")

    def _render_streams(self) -> None:
        table = self.query_one("#streams-table", DataTable)
        table.clear()
        for s in self.state.streams.values():
            res = f"{s.width_px}x{s.height_px} {s.video_codec or ''}".strip() if s.width_px else "-"
            state = "[green]live[/]" if s.state == "live" else "[dim]ended[/]"
            table.add_row(s.name, state, res, _fmt(s.fps, ".2f"),
                          _fmt(None if s.bitrate_bps is None else s.bitrate_bps / 1e6, ".2f"),
                          _fmt(s.keyframe_last_s, ".2f"), s.audio or "-", _fmt(s.duration_s, ".0f"),
                          _health_cell(s.health))
        first = next(iter(self.state.streams.values()), None)
        spark = self.query_one("#bitrate", Sparkline)
        spark.data = list(first.bitrate_history_bps) if first else []

    def _render_apps(self) -> None:
        o, v = self.state.obs, self.state.vmix
        if o.connected is None:
            obs = "[dim]OBS: not observed[/]"
        else:
            link = "[green]connected[/]" if o.connected else "[red]gap[/]"
            muted = ", ".join(f"{k}{' [red]muted[/]' if m else ''}" for k, m in sorted(o.muted.items())) or "-"
            outs = " ".join(f"{k}:{'[green]on[/]' if on else 'off'}" for k, on in sorted(o.outputs.items())) or "-"
            obs = (f"OBS {link} {o.version}\n program [b]{o.program or '-'}[/b]  preview {o.preview or '-'}\n"
                   f" audio {muted}\n outputs {outs}\n cpu {_fmt(o.cpu_pct, '.1f', '%')}  fps {_fmt(o.active_fps, '.1f')}"
                   f"  skipped render/output {o.render_skipped if o.render_skipped is not None else '-'}"
                   f"/{o.output_skipped if o.output_skipped is not None else '-'}")
        self.query_one("#obs", Static).update(obs)
        if v.connected is None:
            vmix = "[dim]vMix: not observed[/]"
        else:
            link = "[green]connected[/]" if v.connected else "[red]gap[/]"
            outs = " ".join(f"{k}:{'[green]on[/]' if on else 'off'}" for k, on in sorted(v.outputs.items())) or "-"
            vmix = f"vMix {link}\n active [b]{v.program or '-'}[/b]  preview {v.preview or '-'}\n outputs {outs}"
        self.query_one("#vmix", Static).update(vmix)

    def _render_meters(self) -> None:
        if not self.state.meters:
            self.query_one("#meters", Static).update("[dim]no audio probe[/]")
            return
        lines = []
        for name, m in self.state.meters.items():
            lines.append(self._meter_lines(name, m))
        self.query_one("#meters", Static).update("\n".join(lines))

    @staticmethod
    def _meter_lines(name: str, m: MeterView) -> str:
        return (f"[b]{name}[/b]  I {_fmt(m.integrated_lufs)}\n"
                f" M {meter_bar(m.momentary_lufs, m.target_lufs)} {_fmt(m.momentary_lufs)}\n"
                f" S {meter_bar(m.short_term_lufs, m.target_lufs)} {_fmt(m.short_term_lufs)}\n"
                f" TP{meter_bar(m.true_peak_dbtp, -1.0)} {_fmt(m.true_peak_dbtp)}")

    def _render_scenario(self) -> None:
        table = self.query_one("#scenario-table", DataTable)
        table.clear()
        for r in self.state.scenario[-200:]:
            colour = "green" if r.result in ("ok", "pass") else "red"
            table.add_row(_fmt(r.at_s, ".2f"), f"{r.kind}: {r.name}", f"[{colour}]{r.result}[/]",
                          _fmt(r.lateness_ms, ".1f"), _fmt(r.latency_ms, ".0f"))

    def _render_score(self) -> None:
        rep = self.state.report
        summary = self.query_one("#score-summary", Static)
        table = self.query_one("#score-table", DataTable)
        table.clear()
        if not rep:
            summary.update("[dim]not scored yet[/]")
            return
        line = f"[b]{rep.get('score', 0):.1f}[/b] / 100  {rep.get('status', '')}"
        if not rep.get("complete", True):
            line += f"  [magenta]{rep.get('unjudged_weight', 0):g} pts not judged[/]"
        summary.update(line)
        colours = {"pass": "green", "partial": "yellow", "fail": "red", "error": "magenta"}
        for c in rep.get("checks", []):
            table.add_row(c["name"], f"{c['weight']:g}", f"{c['score']:.2f}",
                          f"[{colours.get(c['status'], 'white')}]{c['status']}[/]")

    def _matches(self, e: dict[str, Any]) -> bool:
        if not self.filter_text:
            return True
        needle = self.filter_text.lower()
        return needle in f"{e.get('source')}/{e.get('kind')} {json.dumps(e.get('payload'))[:400]}".lower()

    def _render_log(self) -> None:
        if self.paused:
            return
        log = self.query_one("#log", RichLog)
        items = list(self.state.log)
        new = items[-(self.state.event_count - self._logged):] if self.state.event_count > self._logged else []
        self._logged = self.state.event_count
        for e in new:
            if self._matches(e):
                log.write(self._log_line(e))

    def _log_line(self, e: dict[str, Any]) -> str:
        t = 0.0 if self.state.first_mono_ns is None else (e.get("mono_ns", 0) - self.state.first_mono_ns) / 1e9
        payload = json.dumps(e.get("payload"), separators=(",", ":"))[:160].replace("[", r"\[")
        return f"[dim]{t:8.3f}[/] [cyan]{e.get('source')}[/]/[b]{e.get('kind')}[/] {payload}"

    # ---- actions --------------------------------------------------------------------------
    def action_help(self) -> None:
        self.push_screen(HelpScreen())

    def action_filter(self) -> None:
        box = self.query_one("#filter", Input)
        box.remove_class("hidden")
        box.focus()

    def on_input_submitted(self, message: Input.Submitted) -> None:
        self.filter_text = message.value.strip()
        log = self.query_one("#log", RichLog)
        log.clear()
        for e in self.state.log:
            if self._matches(e):
                log.write(self._log_line(e))
        message.input.add_class("hidden")
        self.set_focus(None)

    def action_pause(self) -> None:
        self.paused = not self.paused
        self.query_one("#log-panel").border_title = "Events (paused)" if self.paused else "Events"

    def action_toggle_score(self) -> None:
        self.query_one("#score-panel").toggle_class("hidden")

    def action_clear_log(self) -> None:
        self.query_one("#log", RichLog).clear()


def _dash_event(ev: EvidenceEvent, mono_ns: int) -> dict[str, Any]:
    """A typed event the dashboard makes itself (not recorded: seq -1, no wall time)."""
    return {"seq": -1, "mono_ns": mono_ns, "wall_time": 0, "source": ev.SOURCE, "kind": ev.KIND,
            "payload": ev.to_payload()}


def bundle_source(root: Path, speed: float = 0.0) -> EventSource:
    """Events of a recorded bundle; speed 0 = all at once, 1 = real time, 10 = ten times faster.
    The bundle's report.json, if there, arrives last as a run/report event."""
    from monitor.bundle import Bundle

    async def gen() -> AsyncIterator[dict[str, Any]]:
        bundle = Bundle.open(root)
        task = bundle.manifest.get("task", "")
        yield _dash_event(RunPhase("replaying bundle", task, bundle.manifest.get("run_id", root.name)),
                          bundle.events[0].mono_ns if bundle.events else 0)
        prev = None
        for ev in bundle.events:
            if speed > 0 and prev is not None:
                await asyncio.sleep(max(0.0, (ev.mono_ns - prev) / 1e9 / speed))
            prev = ev.mono_ns
            yield ev.to_dict()
            await asyncio.sleep(0)
        for problem in bundle.log.problems:
            yield {"seq": -1, "mono_ns": prev or 0, "wall_time": 0, "source": "dash", "kind": "problem",
                   "payload": {"message": problem}}
        report = bundle.report
        yield _dash_event(RunReport(task, report) if report else RunPhase("ended (not scored)"), prev or 0)

    return gen


_HEALTH_COLOURS = {"good": "green", "ok": "yellow", "bad": "red"}


def _health_cell(health: dict[str, tuple[str, list[str]]]) -> str:
    """`youtube good  twitch bad: keyframeInterval` with the status coloured (rtmp/health)."""
    parts = []
    for name, (status, issues) in sorted(health.items()):
        colour = _HEALTH_COLOURS.get(status, "dim")
        parts.append(f"{name} [{colour}]{status}[/]" + (f": {','.join(issues)}" if issues else ""))
    return "  ".join(parts) or "-"


def node_event(topic: str, obj: Any) -> dict[str, Any] | None:
    """A node's retained status or a run's score message as a `node/status` / `node/score` event."""
    parts = topic.split("/")
    if len(parts) == 3 and parts[2] == "status" and isinstance(obj, dict):
        return {"seq": -1, "source": "node", "kind": "status", "payload": {**obj, "node": obj.get("node") or parts[1]}}
    if len(parts) == 5 and parts[2] == "run" and parts[4] == "score" and isinstance(obj, dict):
        return {"seq": -1, "source": "node", "kind": "score",
                "payload": {"node": parts[1], "run": parts[3], "task": obj.get("task"), "score": obj.get("score")}}
    return None


def mqtt_source(url: str, topic: str = "tally/+/run/#") -> EventSource:
    """Events from the MQTT feed: every event line is published on tally/<node>/run/<run>/<source>/<kind>;
    every node's retained status (tally/<node>/status) and run scores feed the nodes table."""
    from urllib.parse import urlparse

    import aiomqtt

    async def gen() -> AsyncIterator[dict[str, Any]]:
        u = urlparse(url if "://" in url else f"mqtt://{url}")
        async with aiomqtt.Client(u.hostname or "127.0.0.1", port=u.port or 1883, username=u.username,
                                  password=u.password) as client:
            await client.subscribe(topic, qos=1)
            await client.subscribe("tally/+/status", qos=1)
            async for msg in client.messages:
                try:
                    obj = json.loads(msg.payload)
                except (json.JSONDecodeError, TypeError, UnicodeDecodeError):
                    continue
                node = node_event(str(msg.topic), obj)
                if node is not None:
                    yield node
                elif isinstance(obj, dict) and "source" in obj and "kind" in obj:
                    yield obj

    return gen
