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
