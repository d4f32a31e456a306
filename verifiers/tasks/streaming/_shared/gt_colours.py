"""GT colours: the (R, G, B) triples streaming GT files pin to tell a recording's parts apart
(T09's program background, T12's scene under the ticker, T16's Live/BRB/swipe)."""

from __future__ import annotations

from verifiers.gtfiles import GTFile


def expect_rgb(gt: GTFile, *fields: str) -> None:
    """Each named field is an (R, G, B) triple of 0-255 codes (GTFile.expect reports the first that is not)."""
    for f in fields:
        c = getattr(gt, f)
        gt.expect(len(c) == 3 and all(0 <= v <= 255 for v in c), f, "must be (R, G, B), each 0-255")
