"""A scored run's metrics: runs by verdict, scores by result, scorer errors, tool calls, and
the score values waiting for the histogram (export/histograms.py).

`ScoredRuns` holds no lock: `Telemetry` (metrics.py) calls it with its lock held, and owns the
tallies it counts into and the cardinality caps (`fold`). Series keys are memoized by their raw
label values: a folded value never changes once decided (the seen sets only grow), so each
series is built once per (verdict, scenario, agent), tool and status, or score name.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TypeAlias, TypeVar

from tracescore import semconv
from tracescore.export.attributes import error_type
from tracescore.export.catalog import SCORE_BOUNDS
from tracescore.export.histograms import BulkHistograms, Point
from tracescore.model.run_result import RunResult
from tracescore.model.score import Score
from tracescore.model.trajectory import ToolCall

__all__ = ["RESULTS", "Attrs", "ScoredRuns", "score_result"]

# Attribute pairs of one series, in the instrument's key order.
Attrs: TypeAlias = tuple[tuple[str, str], ...]
Fold: TypeAlias = Callable[[str, str | None], str | None]
RESULTS = (
    semconv.RESULT_PASSED,
    semconv.RESULT_FAILED,
    semconv.RESULT_ERROR,
    semconv.RESULT_UNSCORABLE,
    semconv.RESULT_SCORED,
)
_MEMO_LIMIT = 4096
_PENDING_LIMIT = 4096
_K = TypeVar("_K")
_V = TypeVar("_V")
# A scored run's series key in `tracescore.runs`, and its folded agent and scenario.
_RunSeries: TypeAlias = tuple[Attrs, str | None, str | None]


def score_result(score: Score) -> str:
    """The `tracescore.evaluation.result` of a score."""
    if score.error is not None:
        return semconv.RESULT_ERROR
    if score.value is None:
        return semconv.RESULT_UNSCORABLE
    if score.passed is None:
        return semconv.RESULT_SCORED
    return semconv.RESULT_PASSED if score.passed else semconv.RESULT_FAILED


class ScoredRuns:
    """Counts scored runs into `Telemetry`'s tallies; every method wants its lock held."""

    def __init__(
        self, tallies: Mapping[str, dict[Attrs, float]], bulk: BulkHistograms, fold: Fold
    ) -> None:
        s = semconv
        self._runs = tallies[s.METRIC_RUNS]
        self._calls = tallies[s.METRIC_TOOL_CALLS]
        self._results = tallies[s.METRIC_EVALUATION_RESULTS]
        self._errors = tallies[s.METRIC_EVALUATION_ERRORS]
        self._bulk = bulk
        self._fold = fold
        # Bounded memos: their keys come from traffic.
        self._run_keys: dict[tuple[str | None, str, str | None], _RunSeries] = {}
        self._call_keys: dict[tuple[str, str], Attrs] = {}
        self._score_keys: dict[tuple[str | None, str | None], dict[str, _ScoreSeries]] = {}

    def record_run(self, result: RunResult, calls: Sequence[ToolCall]) -> None:
        """A scored run (`result.scenario` set), its scores and its tool calls."""
        assert result.scenario is not None
        memo = (result.verdict, result.scenario, result.trajectory.agent)
        run = self._run_keys.get(memo)
        if run is None:
            run = _memo_put(self._run_keys, memo, self._run_series(*memo))
        run_key, agent, scenario = run
        runs = self._runs
        runs[run_key] = runs.get(run_key, 0) + 1
        self._count_scores(result, agent, scenario)
        counts, call_keys = self._calls, self._call_keys
        for call in calls:
            pair = (call.name, call.status)
            key = call_keys.get(pair)
            if key is None:
                tool = self._fold(semconv.GEN_AI_TOOL_NAME, call.name)
                key = _pairs((semconv.GEN_AI_TOOL_NAME, tool), (semconv.TOOL_CALL_STATUS, pair[1]))
                _memo_put(call_keys, pair, key)
            counts[key] = counts.get(key, 0) + 1

    def record_scores(self, result: RunResult) -> None:
        """Scores of a run counted before (LLM judges' scores)."""
        agent = self._fold(semconv.GEN_AI_AGENT_NAME, result.trajectory.agent)
        scenario = self._fold(semconv.TRACESCORE_SCENARIO, result.scenario)
        self._count_scores(result, agent, scenario)

    def declare(self, scenario: str, names: Iterable[str]) -> None:
        """Every result of each named score of `scenario`, at 0."""
        s = semconv
        folded = self._fold(s.TRACESCORE_SCENARIO, scenario)
        for name in names:
            base = _pairs(
                (s.GEN_AI_EVALUATION_NAME, self._fold(s.GEN_AI_EVALUATION_NAME, name)),
                (s.TRACESCORE_SCENARIO, folded),
            )
            for result in RESULTS:
                self._results.setdefault((*base, (s.EVALUATION_RESULT, result)), 0)

    def _run_series(self, verdict: str | None, scenario: str, agent: str | None) -> _RunSeries:
        # Call with the lock held. Series keys follow each instrument's key order and leave
        # out absent values.
        s = semconv
        folded_agent = self._fold(s.GEN_AI_AGENT_NAME, agent)
        folded_scenario = self._fold(s.TRACESCORE_SCENARIO, scenario)
        key = _pairs(
            (s.TRACESCORE_VERDICT, verdict or None),
            (s.TRACESCORE_SCENARIO, folded_scenario),
            (s.GEN_AI_AGENT_NAME, folded_agent),
        )
        return key, folded_agent, folded_scenario

    def _count_scores(self, result: RunResult, agent: str | None, scenario: str | None) -> None:
        # Call with the lock held: counts results and errors, queues the values.
        s = semconv
        by_name = self._score_keys.get((agent, scenario))
        if by_name is None:
            by_name = _memo_put(self._score_keys, (agent, scenario), {})
        results = self._results
        for score in result.scores:
            series = by_name.get(score.name)
            if series is None:  # built once per (score, agent, scenario): folds are final
                name = self._fold(s.GEN_AI_EVALUATION_NAME, score.name)
                key = _pairs(
                    (s.GEN_AI_EVALUATION_NAME, name),
                    (s.GEN_AI_AGENT_NAME, agent),
                    (s.TRACESCORE_SCENARIO, scenario),
                )
                base = _pairs((s.GEN_AI_EVALUATION_NAME, name), (s.TRACESCORE_SCENARIO, scenario))
                point = self._bulk.point(s.METRIC_EVALUATION_SCORE, key)
                series = _memo_put(by_name, score.name, _ScoreSeries(key, point, base))
            verdict = score_result(score)
            result_key = series.results.get(verdict)
            if result_key is None:
                result_key = series.results[verdict] = (
                    *series.base,
                    (s.EVALUATION_RESULT, verdict),
                )
            results[result_key] = results.get(result_key, 0) + 1
            if score.value is not None:
                pending = series.point.pending
                pending.append(score.value)
                if len(pending) >= _PENDING_LIMIT:  # bounded while nobody reads
                    series.point.flush(SCORE_BOUNDS)
            elif score.error is not None:
                kind = self._fold(s.ERROR_TYPE, error_type(score))
                error_key = series.key + _pairs((s.ERROR_TYPE, kind))
                self._errors[error_key] = self._errors.get(error_key, 0) + 1


@dataclass(slots=True)
class _ScoreSeries:
    """A score's series: its histogram key and point, and its result counter keys."""

    key: Attrs
    point: Point
    base: Attrs
    """The evaluation name and scenario, the result counter's series without the result."""
    results: dict[str, Attrs] = field(default_factory=dict)


def _memo_put(memo: dict[_K, _V], key: _K, value: _V) -> _V:
    """Store in a bounded memo (cleared when full: its values come from traffic)."""
    if len(memo) >= _MEMO_LIMIT:
        memo.clear()
    memo[key] = value
    return value


def _pairs(*pairs: tuple[str, str | None]) -> Attrs:
    """A series key from (key, value) pairs given in the instrument's key order."""
    return tuple((k, v) for k, v in pairs if v is not None)
