"""Near-miss pairs for a seed threshold (issue 21): one case just inside its pass line, one just outside.

The inside case keeps full marks (no check lowered); the outside one loses exactly the check that
judges that threshold. Self-test mutants name the side, so a pair that scores alike shows at once.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TypeVar

T = TypeVar("T")


def pass_line_pair(inside: T, outside: T, check: str) -> Iterator[tuple[T, list[str], str]]:
    """(value, checks it lowers, "inside"/"outside") for the value inside the line, then the one outside."""
    yield inside, [], "inside"
    yield outside, [check], "outside"
