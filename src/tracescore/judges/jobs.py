"""What a judge runner works on: a job (one run and its judge scorers) and its result."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tracescore.judges.base import JudgeScorerBase
from tracescore.judges.settings import JudgeFields
from tracescore.model.sampling import is_sampled
from tracescore.model.score import Score
from tracescore.model.trajectory import Trajectory

__all__ = ["JudgeJob", "JudgeResult", "judge_sampled"]


def judge_sampled(trace_id: str, rate: float) -> bool:
    """Whether a run gets its scenario's judges: by trace id, like scenario sampling.

    The same hash as `scenarios.is_sampled`, so with `judge_sample <= sample` the judged runs
    are a subset of the scored ones, and every judge of a scenario sees the same runs.
    """
    return is_sampled(trace_id, rate)


@dataclass(frozen=True, slots=True)
class JudgeJob:
    """One run and the judge scorers it needs; `context` is the caller's own handle."""

    trajectory: Trajectory
    scorers: tuple[JudgeScorerBase, ...]
    fields: JudgeFields | None = None
    scenario: str | None = None
    context: Any = None


@dataclass(frozen=True, slots=True)
class JudgeResult:
    """The scores of a job, one per scorer in the job's order."""

    job: JudgeJob
    scores: tuple[Score, ...]

    def by_name(self) -> dict[str, Score]:
        """Scores keyed by score name."""
        return {s.name: s for s in self.scores}
