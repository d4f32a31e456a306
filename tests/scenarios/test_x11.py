"""The X11 driver and the test window against a real Xvfb with openbox (EWMH)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from monitor.bus import EventBus
from scenarios.engine import ScenarioEngine
from scenarios.loader import parse_scenario
from scenarios.testwindow import spawn_window
from scenarios.x11 import X11Driver, X11Error
from tests.scenarios.xserver import needs_x, xvfb_openbox

pytestmark = needs_x

VAULT = "Password Manager — Vault"


@pytest.fixture(scope="module")
def display() -> Iterator[str]:
    with xvfb_openbox() as d:
        yield d


@pytest.fixture
def driver(display: str) -> Iterator[X11Driver]:
    with X11Driver(display) as drv:
        yield drv


def test_utf8_titles_focus_and_matching(display: str, driver: X11Driver) -> None:
    vault, notes = spawn_window(VAULT, display), spawn_window("Notes", display)
    try:
        assert driver.wait_for_window(VAULT).wid == vault.wid
        assert driver.title(vault.wid) == VAULT             # the em dash survives (UTF-8 _NET_WM_NAME)
        # opening does not focus (the window asks not to be focused on map)
        for title, wid in ((VAULT, vault.wid), ("Notes", notes.wid), (VAULT, vault.wid)):
            info = driver.focus_title(title)
            assert info.wid == wid
            assert driver.wait_active(wid, 2.0)
            assert driver.active_title() == title
        assert driver.focus_title("Password", match="contains").wid == vault.wid
        assert driver.find(r"^Bank|^Notes$", match="regex").wid == notes.wid
        with pytest.raises(X11Error, match=r"no window titled 'Bank of Test'.*'Notes'"):
            driver.focus_title("Bank of Test")
    finally:
        vault.close()
        notes.close()
    driver.sync()


def test_xtest_keys_are_down_while_held(driver: X11Driver) -> None:
    """OBS polls xcb_query_keymap; the same query must see our chord down, then up."""
    codes = [driver.keycode(k) for k in ("Control_L", "Alt_L", "1")]

    def down() -> set[int]:
        keymap = driver.dpy.query_keymap()
        return {c for c in codes if keymap[c // 8] & (1 << (c % 8))}

    assert down() == set()
    driver.key_down("ctrl+alt+1")
    driver.sync()
    assert down() == set(codes)
    driver.key_up("ctrl+alt+1")
    driver.sync()
    assert down() == set()


def test_display_errors_are_clear() -> None:
    with pytest.raises(X11Error, match="cannot open X display ':987'"):
        X11Driver(":987")


async def test_engine_opens_and_focuses_windows(display: str, driver: X11Driver) -> None:
    # Each focus step waits for the window it focuses: an open_window step is done once the window
    # manager manages the window, so `fv` follows `open_n` (it once followed only `open_v`, and on a
    # loaded machine `fn` ran before the Notes window had been mapped: a race in the test itself).
    sc = parse_scenario(f"""
steps:
  - {{id: open_v, at_ms: 0, open_window: "{VAULT}"}}
  - {{id: open_n, after: open_v, delay_ms: 0, open_window: Notes}}
  - {{id: fv, after: open_n, delay_ms: 100, focus: "{VAULT}"}}
  - {{id: fn, after: fv, delay_ms: 100, focus: Notes}}
  - {{id: close, after: fn, delay_ms: 50, close_window: "{VAULT}"}}
""", "x11.yaml")
    result = await ScenarioEngine(sc, EventBus(), driver, display).run()
    acts = result.actions
    assert all(a.status == "ok" for a in acts.values()), {k: a.error for k, a in acts.items()}
    assert acts["fv"].extra["title"] == VAULT
    assert acts["fv"].extra["focus_confirmed_ms"] is not None
    assert driver.find(VAULT) is None and driver.find("Notes") is None   # all windows closed at the end
