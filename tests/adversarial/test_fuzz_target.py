"""The fuzz target (tests/fuzz/wire_target.py) holds on its seeds and on a fixed run of
generated inputs, so the CI fuzz stage starts from a target that passes, and the target's own
checks stay exercised by the ordinary suite."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "fuzz"))

import wire_target

pytestmark = pytest.mark.skipif(wire_target._native is None, reason="needs the built extension")


def test_every_seed_passes_the_target() -> None:
    seeds = wire_target.seeds()
    assert len(seeds) > 40
    for body in seeds:
        wire_target.check(body)


def test_a_fixed_run_of_generated_inputs_passes_the_target() -> None:
    rng = random.Random(20)
    corpus = wire_target.seeds()
    accepted = 0
    for _ in range(1500):
        body = wire_target._next_input(rng, corpus)
        wire_target.check(body)
        accepted += wire_target._upb(body) is not None
    assert 100 < accepted < 1400  # both verdicts are exercised


def test_a_failing_check_is_reported_with_its_input(tmp_path: Path) -> None:
    # An input the target must refuse to call fine: validate_request is asked of upb's verdict.
    broken = wire_target.check
    try:
        wire_target.check = lambda body: (_ for _ in ()).throw(AssertionError("planted"))  # type: ignore[assignment]
        with pytest.raises(AssertionError, match="planted"):
            wire_target.fuzz(5.0, tmp_path, seed=1)
    finally:
        wire_target.check = broken
    assert len(list(tmp_path.iterdir())) == 1
