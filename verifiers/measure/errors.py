"""The one error type the measurement primitives raise for unusable media.

Verifiers catch exactly this (and turn it into AgentOutputError or GTError depending on whose
file it is); `tally analyze` turns it into exit 2 with the message as its one line. Anything else
escaping a primitive is a bug, not bad input.
"""

from __future__ import annotations


class MediaError(Exception):
    """A file or signal that cannot be measured: missing, empty, truncated, NaN, or not media.

    The message is one line that says what is wrong and with which file, e.g.
    ``"take.wav: truncated: header says 96000 bytes of audio, file holds 4000"``.
    """


def describe(exc: BaseException) -> str:
    """A library exception as a short clause: no errno, no repeated path, one line."""
    import re

    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    text = re.sub(r"^\[Errno -?\d+\]\s*", "", text)
    text = re.sub(r":\s*'[^']*'\s*$", "", text)
    return text[:160]
