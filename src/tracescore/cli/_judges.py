"""Judge scorers in `tracescore score`: every pending run judged, then concluded.

Offline, back-pressure is fine (nothing is streaming in), so jobs wait for queue room instead
of being skipped; budgets still apply and say `skipped: budget`. Runs that a scenario's
`judge_sample` leaves out get no judge scores (the verdict names such gates as skipped).
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import MutableMapping, Sequence
from typing import Protocol, TextIO

from tracescore.config.model import Scenario
from tracescore.judges.base import JudgeScorerBase
from tracescore.judges.progress import Progress
from tracescore.judges.runner import JudgeJob, JudgeRunner, judge_sampled
from tracescore.judges.settings import JudgeSettings
from tracescore.model.score import Score
from tracescore.model.trajectory import Trajectory
from tracescore.scorers.base import ScorerBase

__all__ = ["PendingJudging", "judge_pending"]


class PendingJudging(Protocol):
    """What `cli.score.PendingRun` offers: a run, its scenario, scores so far, judge entries."""

    trajectory: Trajectory
    scenario: Scenario
    scores: dict[str, Score]
    deferred: tuple[ScorerBase, ...]


def judge_pending(
    pending: Sequence[PendingJudging],
    settings: JudgeSettings | None,
    *,
    stream: TextIO | None = None,
) -> None:
    """Add every sampled run's judge scores to its `scores`; raises ConfigError at start-up."""
    jobs: list[tuple[JudgeJob, MutableMapping[str, Score]]] = []
    for item in pending:
        judges = tuple(e for e in item.deferred if isinstance(e, JudgeScorerBase))
        others = [e for e in item.deferred if not isinstance(e, JudgeScorerBase)]
        for entry in others:  # a non-judge async scorer: its own sync fallback
            item.scores[entry.score_name] = entry.score(item.trajectory)
        if not judges or not judge_sampled(item.trajectory.trace_id, _judge_sample(item.scenario)):
            continue
        job = JudgeJob(
            item.trajectory,
            judges,
            fields=getattr(item.scenario, "judge_fields", None),
            scenario=item.scenario.name,
        )
        jobs.append((job, item.scores))
    if not jobs:
        return
    runner = JudgeRunner(settings)
    runner.check(s for job, _ in jobs for s in job.scorers)
    asyncio.run(_run(runner, jobs, Progress(len(jobs), stream or sys.stderr)))


async def _run(
    runner: JudgeRunner,
    jobs: list[tuple[JudgeJob, MutableMapping[str, Score]]],
    progress: Progress,
) -> None:
    await runner.start()
    try:
        futures = [await runner.put(job) for job, _ in jobs]
        for future in asyncio.as_completed(futures):
            await future
            progress.advance()
        for (_, scores), future in zip(jobs, futures, strict=True):
            scores.update(future.result().by_name())
    finally:
        progress.close()
        await runner.shutdown()


def _judge_sample(scenario: Scenario) -> float:
    rate = getattr(scenario, "judge_sample", 1.0)
    return float(rate)
