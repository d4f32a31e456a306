"""Which components a task's `live` needs turn into: one adapter per need.

Adapters import their module lazily, so a need whose module has not landed (or cannot import on
this machine) becomes an `Unavailable` entry recorded in the bundle, never a crash. Adding a new
live part means adding one adapter function here.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from monitor.aio import cancel_and_wait
from monitor.bus import EventBus
from monitor.run.component import Component, Unavailable
from verifiers.catalog import TaskSpec


@dataclass
class LiveOptions:
    """What the command line (or a serve `start` message) says about the live side."""

    workdir: Path
    bundle_dir: Path
    obs_url: str | None = None
    vmix_url: str | None = None
    #: OBS's log folder (obs-websocket's request log); None: the work dir's obs-studio/logs/
    obs_log_dir: Path | None = None
    ingest_host: str = "127.0.0.1"
    ingest_port: int = 1935
    #: X display whose user input is recorded (x11 ui/input); None: $DISPLAY; "": none
    x_display: str | None = None
    #: where tally's obs-websocket proxy listens (127.0.0.1) for the agent's script; None: no proxy
    obs_proxy_port: int | None = None
    extra: list[Component] = field(default_factory=list)


# -- ingest -------------------------------------------------------------------------------------

def ingest_target(task: TaskSpec) -> tuple[str, str | None]:
    """The (app, key) a task publishes to: from the task params or a check's `server`/`key` params."""
    params = task.params.get("ingest") if isinstance(task.params.get("ingest"), dict) else {}
    app, key = params.get("app"), params.get("key")
    for check in task.checks:
        server = check.params.get("server")
        if isinstance(server, str) and server.startswith("rtmp://"):
            app = app or urlsplit(server).path.strip("/").split("/")[0] or None
            key = key or check.params.get("key")
    return (app or "live"), key


class IngestComponent:
    """rtmp.IngestServer bridged onto the bus: its on_event(kind, payload) becomes rtmp/<kind>."""

    name = "ingest"

    def __init__(self, host: str, port: int, record_dir: Path, app: str, key: str | None,
                 keys: set[str] | None = None, probe_audio: bool = False, probe_video: bool = False,
                 profiles: list[str] | None = None, video_image_every_s: float | None = None) -> None:
        self.host, self.port, self.record_dir, self.app, self.key = host, port, record_dir, app, key
        #: every key accepted; none at all means any safe key (the ingest's allow_any)
        self.keys = ({key} if key else set()) | set(keys or ())
        self.probe_audio, self.probe_video = probe_audio, probe_video
        self.video_image_every_s = video_image_every_s  # program pictures on frame events (T09), or None
        self.profiles = list(profiles or [])  # platform profiles for live health (rtmp/profiles)
        self.server: Any = None
        self.probes: Any = None

    async def start(self, bus: EventBus) -> None:
        from rtmp.server import IngestConfig, IngestServer

        config = IngestConfig(host=self.host, port=self.port, record_dir=self.record_dir,
                              allowed_keys={f"{self.app}/{k}" for k in self.keys}, allow_any=not self.keys,
                              profiles=self.profiles)
        on_event: Callable[[str, dict[str, Any]], None] = lambda kind, payload: bus.emit("rtmp", kind, payload)  # noqa: E731
        if self.probe_audio or self.probe_video:
            from probes.live import IngestProbes
            from probes.run import threadsafe_emit

            self.probes = IngestProbes(threadsafe_emit(asyncio.get_running_loop(), bus.emit),
                                       video=self.probe_video, avsync=self.probe_video,
                                       open_tap=lambda app, key: self.server.open_tap(app, key),
                                       video_image_every_s=self.video_image_every_s)

            def on_event(kind: str, payload: dict[str, Any]) -> None:
                bus.emit("rtmp", kind, payload)
                self.probes.on_ingest_event(kind, payload)

        self.server = IngestServer(config, on_event=on_event)
        if self.probes is not None:
            # Probes tail the recording: flush it often enough for live meters (~0.3 s at 6 Mbit/s).
            self.server.ctx.config.record_buffer_bytes = 64 * 1024
        await self.server.start()

    async def stop(self) -> None:
        if self.server is not None:
            await self.server.stop()
        if self.probes is not None:
            await asyncio.to_thread(self.probes.stop)

    def describe(self) -> dict[str, Any]:
        port = self.server.port if self.server is not None else self.port
        return {"url": f"rtmp://{self.host}:{port}/{self.app}", "key_required": bool(self.keys)}


#: a task that judges a picture of the program fed to the ingest (catalog live need `probe_video_images`,
#: T09's alert) gets one PNG of it on a frame event this often: an alert stays up for seconds
PROBE_IMAGE_INTERVAL_S = 2.0


def _ingest(task: TaskSpec, opts: LiveOptions) -> Component | Unavailable:
    app, key = ingest_target(task)
    from rtmp.platforms import task_profiles
    # Audio meters are cheap (~2 % of a core) and feed the dashboard: on for every ingest stream.
    # Video analysis decodes every frame (~20 % of a core at 1080p30): only when the task asks.
    return IngestComponent(opts.ingest_host, opts.ingest_port, opts.bundle_dir / "captures" / "rtmp", app, key,
                           probe_audio=True,
                           probe_video="probe_video" in task.live, profiles=task_profiles(task.title, task.params),
                           video_image_every_s=PROBE_IMAGE_INTERVAL_S if "probe_video_images" in task.live else None)


# -- observers ----------------------------------------------------------------------------------

class ObsComponent:
    """monitor.observers.obs.ObsObserver (which runs until stopped) as a component, plus the
    follower of OBS's log (obs-websocket's connection/request log) when a log folder is given, and
    tally's obs-websocket proxy (every request a script sends through it) when a port is given."""

    name = "obs"

    def __init__(self, host: str, port: int, log_dir: Path | None = None, proxy_port: int | None = None,
                 screenshot_interval_s: float | None = None) -> None:
        self.host, self.port, self.log_dir, self.proxy_port = host, port, log_dir, proxy_port
        #: program screenshots (GetSourceScreenshot) every this many s; None: none (the default)
        self.screenshot_interval_s = screenshot_interval_s
        self.observer: Any = None
        self.log_follower: Any = None
        self.proxy: Any = None
        self._task: asyncio.Task[None] | None = None

    async def start(self, bus: EventBus) -> None:
        from monitor.observers.obs import ObsObserver

        if self.log_dir is not None:  # first: it must know which log lines predate the run
            from monitor.observers.obs_log import ObsLogFollower

            self.log_follower = ObsLogFollower(bus, self.log_dir)
            await self.log_follower.start()
        if self.proxy_port is not None:
            from monitor.observers.obs_ws_proxy import ObsWsProxy

            proxy = ObsWsProxy(bus, self.host, self.port, port=self.proxy_port)
            try:
                await proxy.start()
                self.proxy = proxy
            except OSError as exc:  # port taken: the observer and the log still run, the error is recorded
                await proxy.stop()
                bus.emit("obs-proxy", "ws/proxy_error", {"session": None, "error":
                         f"cannot listen on {proxy.host}:{self.proxy_port}: {exc.strerror or exc}"})
        from monitor.observers.obs_screenshot import ScreenshotConfig

        self.observer = ObsObserver(bus, host=self.host, port=self.port,
                                    screenshots=ScreenshotConfig(interval_s=self.screenshot_interval_s))
        self._task = asyncio.get_running_loop().create_task(self.observer.run(), name="obs-observer")

    async def stop(self) -> None:
        if self.observer is not None:
            await self.observer.stop()
        await cancel_and_wait(self._task)
        if self.proxy is not None:
            await self.proxy.stop()
        if self.log_follower is not None:
            await self.log_follower.stop()


#: a task that judges the program picture (catalog live need `obs_screenshots`) gets one 320 px
#: program screenshot this often: enough to see a ticker or an alert that stays up for seconds,
#: cheap for OBS (one scaled render a few seconds apart) and for the bundle (~100 kB each)
OBS_SCREENSHOT_INTERVAL_S = 2.0


def _hostport(url: str, default_port: int) -> tuple[str, int]:
    parts = urlsplit(url if "://" in url else f"tcp://{url}")
    return parts.hostname or "127.0.0.1", parts.port or default_port


def _obs(task: TaskSpec, opts: LiveOptions) -> Component | Unavailable:
    if not opts.obs_url:
        return Unavailable("obs", "no --obs URL given (ws://host:4455)")
    host, port = _hostport(opts.obs_url, 4455)
    shots_s = OBS_SCREENSHOT_INTERVAL_S if "obs_screenshots" in task.live else None
    return ObsComponent(host, port, opts.obs_log_dir or opts.workdir / "obs-studio" / "logs", opts.obs_proxy_port,
                        screenshot_interval_s=shots_s)


class VmixComponent:
    """monitor.observers.vmix.VmixObserver (HTTP poll + TCP API) as a component."""

    name = "vmix"

    def __init__(self, host: str, http_port: int, tcp_port: int = 8099) -> None:
        self.host, self.http_port, self.tcp_port = host, http_port, tcp_port
        self.observer: Any = None

    async def start(self, bus: EventBus) -> None:
        from monitor.observers.vmix import VmixObserver, VmixObserverConfig

        self.observer = VmixObserver(bus, VmixObserverConfig(host=self.host, http_port=self.http_port,
                                                             tcp_port=self.tcp_port))
        await self.observer.start()

    async def stop(self) -> None:
        if self.observer is not None:
            await self.observer.stop()


def _vmix(task: TaskSpec, opts: LiveOptions) -> Component | Unavailable:
    if not opts.vmix_url:
        return Unavailable("vmix", "no --vmix URL given (http://host:8088)")
    return vmix_component(opts.vmix_url)


def vmix_component(url: str) -> VmixComponent:
    """`http://host[:8088][?tcp=8099]`: the HTTP API, and the TCP API port when not the default."""
    host, port = _hostport(url, 8088)
    query = dict(parse_qsl(urlsplit(url if "://" in url else f"http://{url}").query))
    try:
        tcp = int(query.get("tcp", 8099))
    except ValueError:
        tcp = 8099
    return VmixComponent(host, port, tcp)


# -- audit ---------------------------------------------------------------------------------------

def _audit(task: TaskSpec, opts: LiveOptions) -> Component | Unavailable:
    from monitor.audit.component import AuditComponent

    return AuditComponent(opts.workdir, forbidden=task.forbidden_writers)


# -- x11 input ----------------------------------------------------------------------------------

def x_input_component(opts: LiveOptions, environ: dict[str, str] | None = None) -> Component | None:
    """The XRECORD input recorder when the run has an X display (option, else $DISPLAY).

    Not a catalog live need: any task done in a GUI may be asked how it was done (T17: "without
    touching the OBS window"), and recording presses per window is cheap. A display that cannot
    be recorded becomes one `x11` `ui/input_unavailable` event, not a failed run."""
    from monitor.observers.x_input import XInputComponent, default_display

    display = default_display(opts.x_display, environ)
    return XInputComponent(display) if display else None


# -- not wired yet: explicit adapter points -------------------------------------------------------

def _not_wired(need: str, module: str) -> Callable[[TaskSpec, LiveOptions], Unavailable]:
    def adapter(task: TaskSpec, opts: LiveOptions) -> Unavailable:
        return Unavailable(need, f"adapter point: {module} exists but `tally run` does not drive it yet")
    return adapter


ADAPTERS: dict[str, Callable[[TaskSpec, LiveOptions], Component | Unavailable]] = {
    "ingest": _ingest,
    "obs": _obs,
    "vmix": _vmix,
    "audit": _audit,
    # The scenario is not a component: session.py prepares it early and plays it after `done`.
    "probe_audio": _not_wired("probe_audio", "probes.run"),
    "probe_video": _not_wired("probe_video", "probes.run"),
}


def build_components(task: TaskSpec, opts: LiveOptions, always_audit: bool = True,
                     shared: frozenset[str] = frozenset()) -> tuple[list[Component], list[Unavailable]]:
    """Components for the task's live needs (audit always, cheap and needed for the manifest).

    Needs in `shared` are served by a long-lived component outside the run (`tally serve`)."""
    needs = sorted(task.live | ({"audit"} if always_audit else set()))
    # Audit first: it must be watching before anything else can write.
    needs.sort(key=lambda n: (n != "audit", n))
    components: list[Component] = []
    unavailable: list[Unavailable] = []
    for need in needs:
        if need == "scenario" or need in shared:
            continue
        if need == "obs_screenshots":
            if "obs" not in task.live:
                unavailable.append(Unavailable(need, "program screenshots come from the OBS observer: add `obs`"))
            continue  # the obs component takes them
        if need == "probe_video_images":
            if not {"ingest", "probe_video"} <= task.live:
                unavailable.append(Unavailable(need, "program pictures come from the ingest's video probe: "
                                                     "add `ingest` and `probe_video`"))
            continue  # the ingest component's video probe takes them
        if need.startswith("probe_") and "ingest" in task.live:
            continue  # the ingest component runs the probes on its streams

        adapter = ADAPTERS.get(need)
        if adapter is None:
            unavailable.append(Unavailable(need, "no adapter for this live need"))
            continue
        made = adapter(task, opts)
        if isinstance(made, Unavailable):
            unavailable.append(made)
        else:
            components.append(made)
    x_input = x_input_component(opts)
    if x_input is not None:
        components.append(x_input)
    components.extend(opts.extra)
    return components, unavailable
