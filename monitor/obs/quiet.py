"""Keep obs-websocket passwords out of logs.

obsws-python logs its connection parameters, password included, at INFO level
("Connecting with parameters: ... password='...'"), and its clients' repr() shows it too. We
attach a redacting filter to the exact loggers that do so; a filter on the emitting logger
applies before any handler sees the record, whatever logging config the host app has.
"""

from __future__ import annotations

import logging
import re

_PASSWORD_RE = re.compile(r"(password\s*[=:]\s*)(['\"]).*?\2", re.IGNORECASE)
_LOGGERS = ("obsws_python.baseclient.ObsClient", "obsws_python.reqs.ReqClient",
            "obsws_python.events.EventClient", "obsws_python.baseclient", "obsws_python")


def redact(text: str) -> str:
    """Replace any `password='…'` / `password: "…"` value by ***."""
    return _PASSWORD_RE.sub(lambda m: f"{m.group(1)}{m.group(2)}***{m.group(2)}", text)


class _RedactPasswords(logging.Filter):
    """Redact passwords; demote obsws-python's connection-failure tracebacks to one DEBUG line.

    An observer waiting for OBS retries every few seconds; each refusal is expected, not an
    ERROR with a traceback on the user's terminal.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        if record.exc_info and isinstance(record.exc_info[1], (ConnectionError, TimeoutError, OSError)):
            record.exc_info, record.exc_text = None, None
            record.levelno, record.levelname = logging.DEBUG, "DEBUG"
        try:
            msg = record.getMessage()
        except Exception:  # a broken format string is not ours to fix; drop nothing
            return True
        clean = redact(msg)
        if clean != msg:
            record.msg, record.args = clean, None
        return True


_FILTER = _RedactPasswords()


def quiet_obsws_logging() -> None:
    """Idempotent: install the redacting filter on obsws-python's loggers."""
    for name in _LOGGERS:
        lg = logging.getLogger(name)
        if _FILTER not in lg.filters:
            lg.addFilter(_FILTER)
    # a library's loggers get a NullHandler, so without logging configured nothing reaches
    # stderr through logging's last-resort handler
    top = logging.getLogger("obsws_python")
    if not any(isinstance(h, logging.NullHandler) for h in top.handlers):
        top.addHandler(logging.NullHandler())
