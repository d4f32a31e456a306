"""Opening a media file with PyAV, the one way every primitive does it.

Why one place: the probe, the frame reader and the audio loader each turn "missing", "empty" and
"not media" into the same one-line MediaError; three copies had drifted into three wordings.
"""

from __future__ import annotations

from pathlib import Path

from verifiers.measure.errors import MediaError, describe


def file_name(path: Path) -> str:
    return path.name or str(path)


def check_file(path: Path) -> None:
    """Raise MediaError unless `path` is a non-empty regular file."""
    if not path.exists():
        raise MediaError(f"{file_name(path)}: no such file")
    if not path.is_file():
        raise MediaError(f"{file_name(path)}: not a regular file")
    if path.stat().st_size == 0:
        raise MediaError(f"{file_name(path)}: empty file (0 bytes)")


def libav_logs_off() -> None:
    """Route libav's log messages nowhere, and never through Python.

    Why: any integer level given to `av.logging.set_level` installs PyAV's Python log callback,
    which takes the GIL from libav's decoder threads. Closing a frame-threaded decoder early (a
    reader that stops after the first frame) then deadlocks: the main thread holds the GIL while it
    joins a worker that waits for the GIL to log. That hung CI for 80 minutes with no traceback
    (PyAV issues 751, 909, 1849); `None` installs PyAV's C callback that drops every message.
    """
    import av

    if av.logging.get_level() is not None:
        av.logging.set_level(None)


def open_container(path: str | Path):
    """An open PyAV input container (caller closes it), or MediaError saying why not."""
    import av

    libav_logs_off()
    path = Path(path)
    check_file(path)
    try:
        return av.open(str(path))
    except (av.error.FFmpegError, UnicodeDecodeError, ValueError) as exc:
        raise MediaError(f"{file_name(path)}: not a readable media file ({describe(exc)})") from None


def video_stream(container, path: str | Path, stream: int = 0):
    """The `stream`-th video stream of an open container, or MediaError naming the file."""
    if len(container.streams.video) <= stream:
        raise MediaError(f"{file_name(Path(path))}: no video stream" + (f" #{stream}" if stream else ""))
    return container.streams.video[stream]
