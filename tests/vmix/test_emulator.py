"""The vMix emulator: script loading, HTTP and TCP wire formats, functions, and the CLI."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time

import aiohttp
import pytest

from monitor.emulators.vmix import ScriptError, VmixEmulator, load_script, script_from_dict
from tests.app_health import AppHealth, late_by_machine, retry_if_app_lagged_async, runqueue_wait_s
from tests.vmix.conftest import FIXTURES, free_port
from verifiers.apps.vmix import parse_api_xml, parse_tally, state_to_xml

BASIC = {
    "inputs": [{"title": "CAM1"}, {"title": "CAM2"},
               {"title": "LT", "type": "GT", "text": {"Name.Text": "Ann", "Role.Text": "Host"}},
               {"title": "CAM3", "type": "NDI"}],
    "initial": {"program": "CAM1", "preview": "CAM2"},
}


def emulator(obj: dict, **kw) -> VmixEmulator:
    return VmixEmulator(script_from_dict(obj), http=("127.0.0.1", 0), tcp=("127.0.0.1", 0), **kw)


class Tcp:
    """A minimal test client for the TCP API (reads CRLF lines and length-prefixed XML)."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer

    @classmethod
    async def connect(cls, port: int) -> Tcp:
        return cls(*await asyncio.open_connection("127.0.0.1", port))

    async def line(self) -> str:
        raw = await asyncio.wait_for(self.reader.readuntil(b"\r\n"), 2)
        return raw[:-2].decode()

    async def send(self, cmd: str) -> None:
        self.writer.write(cmd.encode() + b"\r\n")
        await self.writer.drain()

    async def close(self) -> None:
        self.writer.close()
        await self.writer.wait_closed()


# ---------------------------------------------------------------------------------------- script


def test_t18_script_loads_with_real_times():
    script = load_script(FIXTURES / "t18_cuts.yaml")
    assert [(s.at_s, s.actions) for s in script.steps[:2]] == [(15.0, {"cut": "CAM2"}), (30.0, {"cut": "CAM1"})]
    assert script.duration_s == 45
    st = script.initial
    assert (st.active, st.preview) == (1, 2) and st.output("recording") and st.output("streaming")
    assert [i.type for i in st.inputs] == ["NDI", "NDI"]


@pytest.mark.parametrize("obj, match", [
    ([], "must be a mapping"),
    ({"inputs": []}, "non-empty list"),
    ({"inputs": [{"type": "NDI"}]}, "title"),
    ({"inputs": ["A"], "timeline": [{"cut": "A"}]}, "at_s"),
    ({"inputs": ["A"], "timeline": [{"at_s": 1, "cut": "NOPE"}]}, r"step at 1 s: no input 'NOPE'"),
    ({"inputs": ["A"], "timeline": [{"at_s": 1, "explode": True}]}, "unknown or missing actions"),
    ({"inputs": ["A"], "timeline": [{"at_s": -1, "cut": "A"}]}, ">= 0"),
    ({"inputs": ["A"], "timeline": [{"at_s": 1, "recording": "yes"}]}, "true or false"),
    ({"inputs": ["A"], "timeline": [{"at_s": 1, "text": {"input": "A", "name": "X", "value": 1}}]}, "no text field"),
    ({"inputs": ["A"], "bogus": 1}, "unknown top-level"),
])
def test_bad_scripts_fail_at_load_with_a_clear_message(obj, match):
    with pytest.raises(ScriptError, match=match):
        script_from_dict(obj)


def test_load_script_file_errors(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(ScriptError, match="not valid JSON"):
        load_script(bad)
    with pytest.raises(ScriptError, match="cannot read"):
        load_script(tmp_path / "missing.yaml")
    good = tmp_path / "ok.json"
    good.write_text(json.dumps(BASIC))
    assert [i.title for i in load_script(good).initial.inputs] == ["CAM1", "CAM2", "LT", "CAM3"]


# ---------------------------------------------------------------------------------------- HTTP


async def test_http_serves_state_that_round_trips_through_the_parser():
    async with emulator(BASIC) as emu, aiohttp.ClientSession() as http:
        async with http.get(f"http://127.0.0.1:{emu.http_port}/api") as resp:
            assert resp.status == 200 and resp.content_type == "text/xml"
            body = await resp.read()
        parsed = parse_api_xml(body)
        assert parsed == emu.state  # emulator state → XML → parser is lossless
        assert body.decode() == state_to_xml(emu.state)
        assert parsed.input_by_title("LT").text_value("Name") == "Ann"
        assert emu.function_calls == []


async def test_http_function_calls_are_recorded_and_applied():
    async with emulator(BASIC) as emu, aiohttp.ClientSession() as http:
        base = f"http://127.0.0.1:{emu.http_port}/api"
        async with http.get(base, params={"Function": "PreviewInput", "Input": "3"}) as resp:
            assert resp.status == 200
        async with http.get(base, params={"Function": "Cut"}) as resp:
            assert resp.status == 200
        async with http.get(base, params={"Function": "StartRecording"}) as resp:
            assert resp.status == 200
        async with http.get(base, params={"Function": "SetText", "Input": "LT", "SelectedName": "Name.Text",
                                          "Value": "Bo"}) as resp:
            assert resp.status == 200
        async with http.get(base, params={"Function": "NoSuchThing"}) as resp:
            assert resp.status == 500
        assert (emu.state.active, emu.state.preview) == (3, 1)
        assert emu.state.output("recording") is True
        assert emu.state.input_by_title("LT").text_value("Name") == "Bo"
        assert len(emu.function_calls) == 5 and all(c.startswith("HTTP /api?Function=") for c in emu.function_calls)


async def test_http_faults():
    async with emulator(BASIC) as emu, aiohttp.ClientSession() as http:
        url = f"http://127.0.0.1:{emu.http_port}/api"
        for fault, status in (("malformed", 200), ("truncated", 200), ("status500", 500), ("empty", 200)):
            emu.set_http_fault(fault)
            async with http.get(url) as resp:
                assert resp.status == status
                body = await resp.read()
            if status == 200:
                with pytest.raises(ValueError):
                    parse_api_xml(body)
        emu.set_http_fault(None)
        async with http.get(url) as resp:
            assert parse_api_xml(await resp.read()) == emu.state


# ---------------------------------------------------------------------------------------- TCP


async def test_tcp_greeting_xml_tally_acts_and_unknown():
    async with emulator({**BASIC, "version": "26.0.0.40"}) as emu:
        c = await Tcp.connect(emu.tcp_port)
        assert await c.line() == "VERSION OK 26.0.0.40"
        await c.send("XML")
        header = await c.line()
        word, size = header.split()
        body = await asyncio.wait_for(c.reader.readexactly(int(size)), 2)
        assert word == "XML" and body.endswith(b"</vmix>\r\n")  # length counts the trailing CRLF
        assert parse_api_xml(body) == emu.state
        await c.send("TALLY")
        assert await c.line() == "TALLY OK 1200"
        await c.send("ACTS Input")
        assert await c.line() == "ACTS OK Input 1 1"
        await c.send("ACTS Input 2")
        assert await c.line() == "ACTS OK Input 2 0"
        await c.send("ACTS Overlay1")
        assert await c.line() == "ACTS ER No Input"
        await c.send("ACTS Recording")
        assert await c.line() == "ACTS OK Recording 0"
        await c.send("HELLO there")
        assert await c.line() == "HELLO ER Unknown command"
        await c.send("QUIT")
        assert await asyncio.wait_for(c.reader.read(), 2) == b""
        await c.close()


async def test_tcp_subscriptions_push_changes():
    async with emulator(BASIC) as emu:
        c = await Tcp.connect(emu.tcp_port)
        await c.line()
        await c.send("SUBSCRIBE TALLY")
        assert await c.line() == "SUBSCRIBE OK TALLY Subscribed"
        assert await c.line() == "TALLY OK 1200"  # current tally right after subscribing
        await c.send("SUBSCRIBE ACTS")
        assert await c.line() == "SUBSCRIBE OK ACTS Subscribed"
        emu.apply({"cut": "CAM2"})
        pushed = [await c.line() for _ in range(5)]
        assert pushed == ["TALLY OK 2100", "ACTS OK Input 1 0", "ACTS OK Input 2 1",
                          "ACTS OK InputPreview 2 0", "ACTS OK InputPreview 1 1"]
        emu.apply({"overlay": {"channel": 1, "input": "LT"}, "recording": True, "master": {"muted": True}})
        pushed = [await c.line() for _ in range(3)]
        assert pushed == ["ACTS OK Overlay1 3 1", "ACTS OK Recording 1", "ACTS OK MasterAudio 0"]
        await c.send("UNSUBSCRIBE ACTS")
        assert await c.line() == "UNSUBSCRIBE OK ACTS Unsubscribed"
        emu.apply({"streaming": True})  # only ACTS would report this, and ACTS is off now
        emu.apply({"preview": "CAM3"})
        assert await c.line() == "TALLY OK 0102"
        await c.close()


async def test_tcp_function_recorded_and_applied():
    async with emulator(BASIC) as emu:
        c = await Tcp.connect(emu.tcp_port)
        await c.line()
        await c.send("FUNCTION CutDirect Input=4")
        assert await c.line() == "FUNCTION OK Completed"
        await c.send("FUNCTION Nope")
        assert (await c.line()).startswith("FUNCTION ER")
        assert emu.state.active == 4
        assert emu.function_calls == ["TCP FUNCTION CutDirect Input=4", "TCP FUNCTION Nope"]
        await c.close()


async def test_add_and_remove_inputs_renumber_like_vmix():
    async with emulator(BASIC) as emu:
        emu.apply({"add_input": {"title": "CAM5", "type": "NDI"}})
        assert emu.state.input_by_title("CAM5").number == 5
        emu.apply({"cut": "CAM5"})  # program 5, preview 1
        emu.apply({"remove_input": "CAM2"})
        assert [i.title for i in emu.state.inputs] == ["CAM1", "LT", "CAM3", "CAM5"]
        assert [i.number for i in emu.state.inputs] == [1, 2, 3, 4]
        assert (emu.state.active, emu.state.preview) == (4, 1)
        assert parse_tally("2001") == ([4], [1])


@pytest.mark.realtime  # judges wake-up times: on a loaded machine the event loop wakes late (0.3 s seen at load 17)
async def test_timeline_runs_on_time_scaled():
    obj = {**BASIC, "timeline": [{"at_s": 2.0, "cut": "CAM2"}, {"at_s": 1.0, "recording": True}]}
    due_s = (0.1, 0.2)

    async def attempt() -> tuple[tuple[list[float], list, str], AppHealth]:
        """One scripted timeline; late by the machine when this process (the emulator's loop) waited
        for a CPU at least as long as the worst step was past its 50 ms (tests/app_health.py)."""
        waited0_s = runqueue_wait_s(os.getpid())
        async with emulator(obj, time_scale=0.1) as emu:
            await asyncio.wait_for(emu.wait_timeline(), 2)
            offsets_s = [(c.mono_ns - emu.t0_ns) / 1e9 for c in emu.changes]
            run = (offsets_s, [c.actions for c in emu.changes], emu.changes[-1].tally)
        excess_ms = max((abs(o - d) - 0.05) * 1000.0 for o, d in zip(offsets_s, due_s, strict=False))
        return run, late_by_machine("a timeline step was", excess_ms, (runqueue_wait_s(os.getpid()) - waited0_s) * 1000)

    def on_time(run: tuple[list[float], list, str]) -> bool:
        return len(run[0]) == 2 and all(abs(o - d) <= 0.05 for o, d in zip(run[0], due_s, strict=True))

    offsets_s, actions, tally = await retry_if_app_lagged_async(attempt, on_time)
    assert actions == [{"recording": True}, {"cut": "CAM2"}]
    # never early, whatever the load (asyncio may wake within its clock resolution of the due time)
    assert offsets_s[0] >= 0.1 - 1e-3 and offsets_s[1] >= 0.2 - 1e-3
    assert offsets_s[0] == pytest.approx(0.1, abs=0.05) and offsets_s[1] == pytest.approx(0.2, abs=0.05)
    assert tally == "2100"


# ---------------------------------------------------------------------------------------- CLI


#: The installed entry point (`python -m monitor.cli` would load monitor.cli twice, as __main__ too,
#: so its UserError would not be the one the command raises).
TALLY = [sys.executable, "-c", "import sys; from monitor.cli import main; sys.exit(main())"]


def _cli(*args: str, timeout: float = 20) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*TALLY, "vmix-emulator", *args], capture_output=True,
                          text=True, timeout=timeout, env={**os.environ, "PYTHONUNBUFFERED": "1"})


def test_cli_bad_script_is_one_line_exit_2(tmp_path):
    bad = tmp_path / "s.yaml"
    bad.write_text("inputs: [CAM1]\ntimeline:\n  - {at_s: 1, cut: CAM9}\n")
    res = _cli("--script", str(bad))
    assert res.returncode == 2
    assert res.stderr.strip().count("\n") == 0 and "no input 'CAM9'" in res.stderr and "Traceback" not in res.stderr
    res = _cli("--script", str(bad), "--http", "localhost:80")
    assert res.returncode == 2 and "IP address" in res.stderr


def test_cli_serves_and_follows_the_script(tmp_path):
    script = tmp_path / "s.yaml"
    script.write_text("inputs: [CAM1, CAM2]\ntimeline:\n  - {at_s: 1.0, cut: CAM2}\nduration_s: 3\n")
    http_port, tcp_port = free_port(), free_port()
    proc = subprocess.Popen([*TALLY, "vmix-emulator", "--script", str(script),
                             "--http", f"127.0.0.1:{http_port}", "--tcp", f"127.0.0.1:{tcp_port}",
                             "--time-scale", "0.5"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        assert "vMix emulator: http://127.0.0.1" in proc.stdout.readline()

        async def probe() -> tuple[str, str]:
            c = await Tcp.connect(tcp_port)
            greeting = await c.line()
            await c.send("SUBSCRIBE TALLY")
            await c.line()
            first = await c.line()
            second = await asyncio.wait_for(c.line(), 3)  # the cut at 1.0 s × 0.5
            await c.close()
            return greeting, first + "|" + second

        t0 = time.monotonic()
        greeting, tallies = asyncio.run(probe())
        assert greeting.startswith("VERSION OK") and tallies == "TALLY OK 12|TALLY OK 21"
        assert time.monotonic() - t0 < 3
        out, err = proc.communicate(timeout=10)
        assert proc.returncode == 0
        assert "{'cut': 'CAM2'}" in out and "write attempts received: 0" in err
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_cli_port_in_use_is_one_line_exit_2():
    import socket

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        res = _cli("--script", str(FIXTURES / "t18_cuts.yaml"), "--http", "127.0.0.1:0", "--tcp", f"127.0.0.1:{port}")
    assert res.returncode == 2 and "cannot listen" in res.stderr and "Traceback" not in res.stderr


async def test_start_failure_leaves_nothing_open():
    import socket

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        http_port = free_port()
        emu = VmixEmulator(script_from_dict(BASIC), http=("127.0.0.1", http_port), tcp=("127.0.0.1", port))
        with pytest.raises(OSError):
            await emu.start()
    # The HTTP side was torn down again: its port can be bound at once.
    with socket.socket() as again:
        again.bind(("127.0.0.1", http_port))
