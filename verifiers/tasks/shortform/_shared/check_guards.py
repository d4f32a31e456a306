"""Guards on check methods (used under `@check`): a condition that decides the check before it
measures anything, written once instead of at the top of every check it applies to."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from verifiers.checks import Result
from verifiers.measure.ocr import OCRUnavailable


def needs_ocr(fn: Callable[..., Any]) -> Callable[..., Any]:
    """A check that reads text on screen: OCRUnavailable raised by the check or a provider it reads
    makes it "cannot judge" with the engine's message (no OCR engine is not the agent's failure),
    instead of a verifier crash."""
    @functools.wraps(fn)
    def judged(*args: Any, **kw: Any) -> Any:
        try:
            return fn(*args, **kw)
        except OCRUnavailable as exc:
            return Result.cannot_judge(str(exc))
    return judged


def unless(guard: Callable[[Any], Result | None]) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """A check that only means something when `guard(self)` is None; otherwise the guard's result
    (e.g. "the composite does not play the source") is the check's answer."""
    def deco(fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)
        def judged(self: Any, *args: Any, **kw: Any) -> Any:
            if (decided := guard(self)) is not None:
                return decided
            return fn(self, *args, **kw)
        return judged
    return deco
