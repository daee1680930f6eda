"""`JudgeWait`: a judged run's span attributes, waiting for its judge scores (`judge_wait` > 0).

With `judge.judge_wait` above 0, `LiveJudges.submit` returns one for every run whose judges it
queued, and the scoring hook hands it to the assembler in place of the run's attributes. The
assembler parks the held agent span with it (fanout mode: just the `JudgeWait`, which emits the
`evaluate {agent}` span itself) until the judge result is in, when the future's callback
releases it at once, or until `judge_wait` has passed, when the assembler's tick does. Either
way `finish()` gives the deterministic score attributes plus, when the judges finished in time,
theirs. A run released without them is counted (`tracescore.judge.wait.expired`); its judge
scores still leave later as their own events, as with `judge_wait` 0.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Callable, Mapping

from tracescore.assembler import Pending
from tracescore.config.model import Scenario
from tracescore.export.attributes import score_attributes
from tracescore.judges.runner import JudgeResult
from tracescore.judges.telemetry import JudgeCounters
from tracescore.model.run_result import RunResult
from tracescore.model.span import AttrValue

__all__ = ["JudgeWait", "with_judge_scores"]

log = logging.getLogger(__name__)

# What a waiting run costs besides its held span: this object, its future and the attribute
# mapping (the trajectory itself is kept by the judge queue whether or not the span waits).
_OVERHEAD_BYTES = 512


def with_judge_scores(scenario: Scenario, base: RunResult, judged: JudgeResult) -> RunResult:
    """`base` with the judge scores added, all in the scenario's entry order.

    The verdict stays the deterministic one: it was already sent with the run's events and
    metrics, and a span must not disagree with them.
    """
    by_name = {s.name: s for s in base.scores}
    by_name.update(judged.by_name())
    ordered = tuple(by_name[e.score_name] for e, _ in scenario.entries if e.score_name in by_name)
    return dataclasses.replace(base, scores=ordered)


class JudgeWait(Pending):
    """The attributes of one run whose judges are queued, final once they have answered."""

    def __init__(
        self,
        result: RunResult,
        future: asyncio.Future[JudgeResult],
        scenario: Scenario,
        wait: float,
        *,
        prefix: str,
        counters: JudgeCounters,
        emit: Callable[[RunResult], None] | None = None,
    ) -> None:
        """Args:
        result: the run as scored deterministically.
        future: the judge runner's future for the run's judge job.
        scenario: the run's scenario (the order of its scores).
        wait: `judge.judge_wait`, seconds.
        prefix: the score attribute prefix.
        counters: where an expired wait is counted.
        emit: fanout mode: sends the run's `evaluate {agent}` span once finished.
        """
        self.wait = wait
        self._result = result
        self._future = future
        self._scenario = scenario
        self._prefix = prefix
        self._counters = counters
        self._emit = emit
        self._attributes = score_attributes(result, prefix)
        self.nbytes = _OVERHEAD_BYTES + sum(
            len(k) + (len(v) if isinstance(v, str) else 8) for k, v in self._attributes.items()
        )

    def done(self) -> bool:
        """Whether the judge result is in."""
        return self._future.done()

    def add_done_callback(self, callback: Callable[[], None]) -> None:
        """Call `callback()` once the judge result is in (scheduled on the event loop)."""
        self._future.add_done_callback(lambda _: callback())

    def finish(self) -> Mapping[str, AttrValue]:
        """The run's attributes: with its judge scores if they are in, else without (counted)."""
        future = self._future
        result = self._result
        if future.done() and not future.cancelled() and future.exception() is None:
            result = with_judge_scores(self._scenario, result, future.result())
            attributes = score_attributes(result, self._prefix)
        else:
            self._counters.wait_expired()
            log.debug(
                "run %s: span released before its judge scores were ready (judge_wait %gs); "
                "it carries the deterministic scores, the judge scores follow as events",
                result.trajectory.trace_id,
                self.wait,
            )
            attributes = self._attributes
        if self._emit is not None:
            self._emit(result)
        return attributes
