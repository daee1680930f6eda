"""Judges in `tracescore serve`: deterministic scores go out at once, judge scores follow.

    live = LiveJudges(config, telemetry, logs_outbox, spans=fanout_outbox)
    run_scorer = RunScorer(..., judges=live.submit)      # after a run's deterministic scores
    await live.start() ... await live.shutdown(timeout)

`submit` hands a scored run's judge entries to a `JudgeRunner` without waiting (a full queue
yields `skipped: queue_full` scores). When they finish, their scores leave as their own
`gen_ai.evaluation.result` events on the same agent span and as score metrics; the judges' own
counters (calls, tokens, latency, retries, cache hits, skips, expired waits) are instruments on
`Telemetry.meter`, so they join `/metrics` and the OTLP push. With `judge.judge_wait` above 0,
`submit` also returns a `JudgeWait` (pipeline/judge_wait.py) that keeps the run's span until its
judge scores are on it or the wait is over; with 0 it returns None and the span leaves at once.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping

from tracescore.assembler import Outbox
from tracescore.config.model import Config, Scenario
from tracescore.export.events import evaluation_logs
from tracescore.export.metrics import Telemetry
from tracescore.export.spans import fanout_request
from tracescore.judges.base import JudgeScorerBase
from tracescore.judges.runner import JudgeJob, JudgeResult, JudgeRunner, judge_sampled
from tracescore.judges.telemetry import JudgeCounters
from tracescore.model.run_result import RunResult
from tracescore.pipeline.judge_wait import JudgeWait

__all__ = ["LiveJudges", "judge_entries"]

log = logging.getLogger(__name__)


def judge_entries(scenario: Scenario) -> tuple[JudgeScorerBase, ...]:
    """The scenario's LLM-judge gates and scorers, in config order."""
    return tuple(e for e, _ in scenario.entries if isinstance(e, JudgeScorerBase))


class LiveJudges:
    """The judge side of the live pipeline, one per `Pipeline`."""

    def __init__(
        self,
        config: Config,
        telemetry: Telemetry,
        logs: Outbox,
        *,
        spans: Outbox | None = None,
        environ: Mapping[str, str] | None = None,
        viewers: Callable[[RunResult], None] | None = None,
    ) -> None:
        """Build the runner and register its counters with `telemetry`; nothing starts yet.

        `spans` is where `evaluate {agent}` spans go in fanout mode: a run that waited for its
        judges gets its span there once they answer (or `judge_wait` ends).
        """
        self._scenarios = {s.name: s for s in config.scenarios}
        self._telemetry = telemetry
        self._logs = logs
        self._spans = spans
        self._viewers = viewers
        self._prefix = config.service.score_attribute_prefix
        self.wait = config.judge.judge_wait if config.judge is not None else 0.0
        self.runner = JudgeRunner(
            config.judge,
            on_result=self._emit,
            environ=environ,
            counters=JudgeCounters(telemetry.meter),
        )
        self.runner.check(e for s in config.scenarios for e in judge_entries(s))

    @staticmethod
    def wanted(config: Config) -> bool:
        """Whether any scenario has a judge entry."""
        return any(judge_entries(s) for s in config.scenarios)

    async def start(self) -> None:
        """Start the judge workers."""
        await self.runner.start()

    async def shutdown(self, timeout: float | None = None) -> None:
        """Finish queued judge work within `timeout`, then skip the rest (still emitted)."""
        await self.runner.shutdown(drain=True, timeout=timeout)

    def submit(self, result: RunResult) -> JudgeWait | None:
        """Queue the judges of a run just scored deterministically (never waits).

        Returns what its span waits on when `judge_wait` > 0 and judges were queued, else None.
        """
        scenario = self._scenarios.get(result.scenario or "")
        if scenario is None or not result.sampled:
            return None
        judges = judge_entries(scenario)
        if not judges or not judge_sampled(result.trajectory.trace_id, scenario.judge_sample):
            return None
        job = JudgeJob(
            result.trajectory,
            judges,
            fields=scenario.judge_fields,
            scenario=scenario.name,
            context=result,
        )
        try:
            future = self.runner.submit(job)
        except RuntimeError:  # not started, or shutting down: say so in the scores
            log.warning("judges not running; run %s left unjudged", result.trajectory.trace_id)
            return None
        if self.wait <= 0:
            return None
        return JudgeWait(
            result,
            future,
            scenario,
            self.wait,
            prefix=self._prefix,
            counters=self.runner.counters,
            emit=self._emit_fanout if self._spans is not None else None,
        )

    def _emit_fanout(self, result: RunResult) -> None:
        assert self._spans is not None
        request = fanout_request([result], self._prefix)
        n = sum(len(ss.spans) for rs in request.resource_spans for ss in rs.scope_spans)
        if n:
            self._spans.send(request.SerializeToString(), n)

    def _emit(self, judged: JudgeResult) -> None:
        base = judged.job.context
        assert isinstance(base, RunResult)
        # The judge scores as a result of their own: same run and span, no verdict (that was
        # decided with the deterministic scores and already sent).
        result = RunResult(
            trajectory=base.trajectory,
            scenario=base.scenario,
            scores=judged.scores,
            digest=base.digest,
        )
        self._telemetry.record_scores(result)
        self._logs.send(evaluation_logs([result]).SerializeToString(), len(judged.scores))
        if self._viewers is not None:
            self._viewers(result)
