"""In-suite slice of the control-parser fuzzer (a few seconds); the 1e5 run is
`python -m tests.fuzz.control_fuzz 100000` (numbers in the issue-20 note)."""

from __future__ import annotations

import os

from tests.fuzz.control_fuzz import CORPUS, run


def test_control_parser_survives_mutations():
    outcomes, _elapsed_s = run(int(os.environ.get("TALLY_FUZZ_N", "3000")))
    assert sum(outcomes.values()) >= 3000 or os.environ.get("TALLY_FUZZ_N")
    assert any(k.startswith("accepted:start") for k in outcomes), "the corpus reaches a valid start"
    assert any(k.startswith("rejected") for k in outcomes)


def test_corpus_is_in_the_repo():
    assert len(list(CORPUS.iterdir())) >= 15
