"""Measurement primitives: one module per domain, no task knowledge.

Every verifier and probe calls these instead of writing its own signal processing. Unusable input
raises :class:`verifiers.measure.errors.MediaError` and nothing else.
"""

from verifiers.measure.errors import MediaError

__all__ = ["MediaError"]
