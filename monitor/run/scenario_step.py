"""The task's scenario inside a run: prepared before the components start, played after `done`.

Prepared early because the scenario engine must subscribe to the bus before the observers'
start-up snapshots (the start state it judges against); played after the agent is done, before
the components stop, so the observers see the scenario's effects. Anything missing (no scenario
file for the task, no X display, scenarios/ not importable) is recorded, not fatal.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from monitor.bus import EventBus
from verifiers.evidence import (
    RunComponentUnavailable,
    RunScenarioFailed,
    RunScenarioFinished,
    RunScenarioPrepared,
)


def scenario_file(task_id: str) -> Path | None:
    import scenarios

    path = Path(scenarios.__file__).parent / "files" / f"{task_id}.yaml"
    return path if path.is_file() else None


class ScenarioStep:
    def __init__(self, task_id: str, bus: EventBus, display: str | None = None, timeout_s: float = 600.0) -> None:
        self.task_id = task_id
        self.bus = bus
        self.display = display or os.environ.get("DISPLAY")
        self.timeout_s = timeout_s
        self.engine: Any = None
        self.driver: Any = None

    def prepare(self) -> bool:
        """Load the scenario and subscribe its engine; False (and an event saying why) if impossible."""
        path = scenario_file(self.task_id)
        if path is None:
            return self._unavailable(f"no scenario file for {self.task_id} in scenarios/files")
        try:
            from scenarios.engine import ScenarioEngine
            from scenarios.loader import ScenarioError, load_scenario
        except ImportError as exc:
            return self._unavailable(f"scenarios package not importable: {exc}")
        try:
            scenario = load_scenario(path)
        except ScenarioError as exc:
            return self._unavailable(str(exc))
        needs_x = any(s.action not in ("mark", "wait") for s in scenario.steps)
        if needs_x:
            if not self.display:
                return self._unavailable("the scenario drives X11 but no DISPLAY is set")
            try:
                from scenarios.x11 import X11Driver

                self.driver = X11Driver(self.display)
            except Exception as exc:  # X11Error, or Xlib failing to connect
                return self._unavailable(f"cannot open display {self.display}: {exc}")
        self.engine = ScenarioEngine(scenario, self.bus, self.driver, self.display)
        self.bus.emit_typed(RunScenarioPrepared(path.name, len(scenario.steps)))
        return True

    def _unavailable(self, reason: str) -> bool:
        self.bus.emit_typed(RunComponentUnavailable("scenario", reason))
        return False

    async def play(self) -> None:
        import asyncio

        if self.engine is None:
            return
        try:
            async with asyncio.timeout(self.timeout_s):
                result = await self.engine.run()
            self.bus.emit_typed(RunScenarioFinished(bool(result.passed)))
        except Exception as exc:
            self.bus.emit_typed(RunScenarioFailed(f"{type(exc).__name__}: {exc}"))
        finally:
            if self.driver is not None:
                self.driver.close()
