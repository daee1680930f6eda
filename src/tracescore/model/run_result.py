"""A run after scoring: its scenario, scores and verdict."""

from __future__ import annotations

from typing import Literal, TypeAlias

from tracescore.model._record import record
from tracescore.model.score import Score
from tracescore.model.trajectory import Trajectory

__all__ = ["RunResult", "Verdict"]

Verdict: TypeAlias = Literal["passed", "scored", "failed"]


@record
class RunResult:
    """One agent run after scoring: the run, its scenario (or None), scores and verdict."""

    trajectory: Trajectory
    scenario: str | None
    scores: tuple[Score, ...] = ()
    gates: frozenset[str] = frozenset()
    """Names of the scores that are gates."""
    verdict: Verdict | None = None
    digest: str | None = None
    """Digest of the scenario's whole scoring config (`tracescore.digest`)."""
    sampled: bool = True
    """False when the scenario matched but sampling left the run out (then no scores)."""
    skipped: tuple[str, ...] = ()
    """Gates and thresholded scorers left out of the verdict: not scorable or not run."""
