"""The audit as a run component: fanotify when it can, inotify when it must, and a /proc watch.

Events (source `audit`):
  started         {mode: fanotify|inotify, attribution: bool, root, forbidden, exec_marks}
  write           {path (relative to the work dir), process (program name: exe basename, else comm),
                   pid, exe, cmdline, comm, ppid, cwd,
                   identified_at: close|open (open: read while the writer opened the file)}
  forbidden_exec  {forbidden, pid, exe, cmdline, comm, ppid, cwd, via: fanotify|proc, near_workdir}
                  (exec marks are system-wide: `near_workdir` says whether its cwd or argv points
                  into the work dir, which separates the agent's tools from unrelated processes)
  overflow        {count}   (the kernel queue overflowed: some writes were not seen)

The latest writer of each file is kept for the bundle manifest (`writers`), so a verifier can
fail "written by a process other than the app".
"""

from __future__ import annotations

import asyncio
import os
import shutil
from pathlib import Path
from typing import Any

from monitor.aio import cancel_and_wait
from monitor.audit.fanotify import FanotifyUnavailable, FanotifyWatcher, refuse_root
from monitor.audit.inotify import InotifyWatcher
from monitor.audit.procinfo import matches_forbidden, process_info, program_name
from monitor.bus import EventBus
from verifiers.evidence import AuditWrite

#: Event kind of a file closed after writing (the kind verifiers look for, with `process`).
WRITE_KIND = "write"
#: How often /proc is scanned for forbidden programs fanotify's exec marks could not cover.
PROC_POLL_S = 0.25
#: Delay before reading /proc of a process caught exec'ing a forbidden program.
EXEC_SETTLE_S = 0.05


def exec_candidates(forbidden: tuple[str, ...]) -> list[Path]:
    """Executables on PATH for the forbidden names (python also as python3), resolved to real files."""
    found: set[Path] = set()
    for name in forbidden:
        for candidate in (name, f"{name}3"):
            hit = shutil.which(candidate)
            if hit:
                found.add(Path(os.path.realpath(hit)))
    return sorted(found)


class AuditComponent:
    name = "audit"

    def __init__(self, workdir: Path, forbidden: tuple[str, ...] = (), exclude: list[Path] | None = None,
                 mode: str = "auto") -> None:
        self.workdir = Path(os.path.realpath(workdir))
        self.forbidden = tuple(forbidden)
        self.exclude = list(exclude or [])
        self.requested_mode = mode
        self.mode = "off"
        self.writers: dict[str, dict[str, Any]] = {}
        self.forbidden_seen: list[dict[str, Any]] = []
        self._seen_exec: set[tuple[int, str | None]] = set()
        self._watcher: FanotifyWatcher | InotifyWatcher | None = None
        self._bus: EventBus | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._poll_task: asyncio.Task[None] | None = None
        self._known_pids: set[int] = set()
        self.fallback_reason: str | None = None

    @property
    def attribution(self) -> bool:
        return self.mode == "fanotify"

    def summary(self) -> dict[str, Any]:
        """For the manifest: how strong the evidence is."""
        return {"mode": self.mode, "attribution": self.attribution, "fallback_reason": self.fallback_reason,
                "overflows": getattr(self._watcher, "overflows", 0) if self._watcher else 0,
                "open_snapshots": getattr(self._watcher, "perm_error", "n/a") is None,
                "forbidden": list(self.forbidden), "forbidden_seen": len(self.forbidden_seen)}

    async def start(self, bus: EventBus) -> None:
        refuse_root(self.workdir)
        self._bus = bus
        self._loop = asyncio.get_running_loop()
        exec_paths = exec_candidates(self.forbidden)
        if self.requested_mode in ("auto", "fanotify"):
            watcher = FanotifyWatcher(self.workdir, self._from_thread_write, self._from_thread_exec,
                                      exec_paths=exec_paths, exclude=self.exclude)
            try:
                # The first walk marks every directory under the work dir: off the event loop.
                await asyncio.to_thread(watcher.start)
                self._watcher, self.mode = watcher, "fanotify"
            except FanotifyUnavailable as exc:
                if self.requested_mode == "fanotify":
                    raise
                self.fallback_reason = str(exc)
        if self._watcher is None:
            inw = InotifyWatcher(self.workdir, self._from_thread_write, exclude=self.exclude)
            await asyncio.to_thread(inw.start)
            self._watcher, self.mode = inw, "inotify"
        self._known_pids = _pids()
        if self.forbidden:
            self._poll_task = self._loop.create_task(self._poll_proc(), name="audit-proc-poll")
        bus.emit("audit", "started", {
            "mode": self.mode, "attribution": self.attribution, "root": str(self.workdir),
            "forbidden": list(self.forbidden), "fallback_reason": self.fallback_reason,
            "exec_marks": list(getattr(self._watcher, "marked_exec", []))})

    async def stop(self) -> None:
        await cancel_and_wait(self._poll_task)
        self._poll_task = None
        if self._watcher is not None:
            await asyncio.to_thread(self._watcher.stop)
            await asyncio.sleep(0)  # let callbacks queued by the thread's last drain run
            overflows = self._watcher.overflows
            if overflows and self._bus is not None:
                self._bus.emit("audit", "overflow", {"count": overflows})

    # -- thread side: hand over to the loop -------------------------------------------------------

    def _from_thread_write(self, record: dict[str, Any]) -> None:
        assert self._loop is not None
        self._loop.call_soon_threadsafe(self._on_write, record)

    def _from_thread_exec(self, record: dict[str, Any]) -> None:
        assert self._loop is not None
        self._loop.call_soon_threadsafe(self._loop.call_later, EXEC_SETTLE_S, self._exec_settled, record)

    def _exec_settled(self, record: dict[str, Any]) -> None:
        """At FAN_OPEN_EXEC time /proc still shows the old image's argv; read it again once exec is done."""
        later = process_info(int(record["pid"]))
        opened = str(record.get("exe_opened") or "")
        if later.get("exe") == opened:
            record = {**record, **later}
        else:  # gone already: the argv read at exec time was the old image's; cwd was already the new one's
            record = {**record, "cmdline": None, "comm": later.get("comm") or record.get("comm")}
        self._on_exec(record, "fanotify")

    # -- loop side --------------------------------------------------------------------------------

    def _on_write(self, record: dict[str, Any]) -> None:
        try:
            rel = os.path.relpath(record["path"], self.workdir)
        except ValueError:
            return
        payload = AuditWrite(rel, program_name(record), **{k: record.get(k) for k in (
            "pid", "exe", "cmdline", "comm", "ppid", "cwd", "identified_at")}).to_payload()
        self.writers[rel] = payload
        if self._bus is not None:
            self._bus.emit("audit", WRITE_KIND, payload, mono_ns=record.get("mono_ns"))

    def _on_exec(self, record: dict[str, Any], via: str) -> None:
        name = program_name(record) if via == "proc" else os.path.basename(str(record.get("exe_opened") or ""))
        entry = matches_forbidden(name, self.forbidden)
        if entry is None:
            return
        key = (int(record["pid"]), name)
        if key in self._seen_exec:
            return
        self._seen_exec.add(key)
        payload = {"forbidden": entry, "via": via,
                   **{k: record.get(k) for k in ("pid", "exe", "cmdline", "comm", "ppid", "cwd")}}
        if via == "fanotify":
            payload["exe"] = record.get("exe_opened")  # the image being exec'd, not the one exec'ing it
        payload["near_workdir"] = self._near_workdir(payload)
        self.forbidden_seen.append(payload)
        if self._bus is not None:
            self._bus.emit("audit", "forbidden_exec", payload, mono_ns=record.get("mono_ns"))

    def _near_workdir(self, info: dict[str, Any]) -> bool:
        root = str(self.workdir)
        texts = [info.get("cwd") or ""] + [str(a) for a in info.get("cmdline") or []]
        return any(t == root or t.startswith(root + os.sep) or (root + os.sep) in t for t in texts)

    async def _poll_proc(self) -> None:
        """Catch forbidden programs exec marks missed (not on PATH, other copies) while they run."""
        while True:
            await asyncio.sleep(PROC_POLL_S)
            now = _pids()
            for pid in sorted(now - self._known_pids):
                info = process_info(pid)
                if matches_forbidden(program_name(info), self.forbidden):
                    self._on_exec(info, "proc")
            self._known_pids = now


def _pids() -> set[int]:
    return {int(n) for n in os.listdir("/proc") if n.isdigit()}
