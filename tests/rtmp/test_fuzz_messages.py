"""The messages/chunk-layer fuzz target (tests/rtmp/fuzz_messages.py) in the suite: the committed
corpus is what it claims, and a short seeded run finds no internal error or broken invariant.
The 1e5-input run is `python -m tests.rtmp.fuzz_messages --inputs 100000` (numbers in docs/rtmp.md)."""

from __future__ import annotations

import random

import pytest

from tests.rtmp.fuzz_messages import CORPUS_DIR, FuzzStats, fuzz, load_corpus, run_one, seeds

pytestmark = pytest.mark.timeout(300)


def test_committed_corpus_matches_the_seed_builder() -> None:
    """The corpus files are the seeds (regenerate with --write-corpus after changing them)."""
    built = seeds()
    on_disk = {p.stem: p.read_bytes() for p in CORPUS_DIR.glob("*.bin") if not p.name.startswith("crash-")}
    assert on_disk == built


async def test_valid_seeds_publish_and_measure() -> None:
    """Unmutated, the publish seeds get through to a stream with media (so mutations start deep)."""
    for name in ("publish-4096", "publish-128", "chunk-size-2", "chunk-size-1", "chunk-size-300", "extended-ts",
                 "aggregate"):
        stats = FuzzStats()
        run_one(seeds()[name], random.Random(0), stats)
        assert stats.publishes == 1 and not stats.crashes and stats.protocol_errors == 0, name


def test_fuzz_messages_short_run() -> None:
    stats = fuzz(4000, seed=20261201, corpus=load_corpus())
    assert stats.inputs == 4000
    assert stats.publishes > 500  # mutations still reach the publishing state
    assert not stats.crashes, stats.crashes[:3]
