"""Errors shared across monitor/: kept apart from cli.py so `python -m monitor.cli` and the
console script raise and catch the very same class."""


class UserError(Exception):
    """A problem with what the user gave us: printed as one line, exit 2."""
