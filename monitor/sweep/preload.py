"""Imported once in the pool's forkserver: every scorer module, so forked workers start warm
(the registry imports scorers lazily; 80 of them take seconds per process otherwise)."""

from __future__ import annotations

from monitor.sweep.worker import warm

warm()
