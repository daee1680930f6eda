"""Scenarios: which runs get which scorers, and the verdicts that follow (pure).

Per run: verdict `failed` if a gate did not pass, else `scored` if a threshold was missed, else
`passed`; None when the scenario has no gates or thresholds.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, TypeAlias

from tracescore.model.score import Score
from tracescore.model.trajectory import Trajectory

__all__ = ["RunResult", "Verdict"]

Verdict: TypeAlias = Literal["passed", "scored", "failed"]


@dataclass(frozen=True, slots=True)
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
