"""A private PulseAudio daemon with one null sink, for tests that capture through sounddevice.

Minimal invocation that works as root in a container: no system mode, no D-Bus, no autospawn, a
private runtime dir (XDG_RUNTIME_DIR/HOME) and an explicit unix socket; clients find it through
PULSE_SERVER. sounddevice reaches it via PortAudio's ALSA backend and the ALSA "pulse" PCM
(Debian package libasound2-plugins).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from scenarios.procs import stop_process

SINK = "probe_sink"


@contextmanager
def pulse_daemon(root: Path, *, rate_hz: int = 48000, channels: int = 2) -> Iterator[dict[str, str]]:
    """Start pulseaudio, yield the env for its clients; the daemon is stopped on exit."""
    if shutil.which("pulseaudio") is None or shutil.which("pactl") is None:
        raise RuntimeError("pulseaudio/pactl not installed (apt: pulseaudio pulseaudio-utils)")
    runtime = root / "runtime"
    home = root / "home"
    runtime.mkdir(mode=0o700, parents=True)
    home.mkdir(parents=True)
    socket = runtime / "native"
    env = {**os.environ, "XDG_RUNTIME_DIR": str(runtime), "HOME": str(home), "PULSE_RUNTIME_PATH": str(runtime),
           "PULSE_STATE_PATH": str(home)}
    env.pop("DISPLAY", None)
    cmd = ["pulseaudio", "--daemonize=no", "--exit-idle-time=-1", "-n", "--use-pid-file=no",
           "--disable-shm=yes", "--system=false", "--log-target=stderr",
           f"--load=module-null-sink sink_name={SINK} rate={rate_hz} channels={channels}",
           f"--load=module-native-protocol-unix socket={socket} auth-anonymous=1"]
    log = open(root / "pulseaudio.log", "wb")
    proc = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT)
    client_env = {"PULSE_SERVER": f"unix:{socket}", "XDG_RUNTIME_DIR": str(runtime), "HOME": str(home)}
    try:
        deadline = time.monotonic() + 10
        while True:
            ok = subprocess.run(["pactl", "info"], env={**env, **client_env}, capture_output=True).returncode == 0
            if ok:
                break
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("pulseaudio did not start: " + (root / "pulseaudio.log").read_text()[-2000:])
            time.sleep(0.1)
        subprocess.run(["pactl", "set-default-source", f"{SINK}.monitor"], env={**env, **client_env}, check=True)
        subprocess.run(["pactl", "set-default-sink", SINK], env={**env, **client_env}, check=True)
        yield client_env
    finally:
        stop_process(proc)
        log.close()
