"""A scored run's metrics: runs by verdict, scores by result, scorer errors, tool calls, and
the score values waiting for the histogram (export/histograms.py).

`ScoredRuns` holds no lock: `Telemetry` (metrics.py) calls it with its lock held, and owns the
tallies it counts into and the cardinality caps (`fold`). Series keys are memoized by their raw
label values: a folded value never changes once decided (the seen sets only grow), so each
series is built once per (verdict, scenario, agent), tool and status, or score name.

A run's counts wait where they are cheapest to keep until `settle` adds them to the tallies
(`Telemetry` settles before every read): runs and score results in their memoized series,
keyed by a string at most, and tool calls by name (by name and status unless clean).
Adding each count to its tally at once hashed its series key (a tuple of pairs) twice per
count, a dozen times per run (callgrind, bench/emit_cpu.py: counting a run 61.1k -> 44.1k
instructions with the checks mix, 53.9k -> 36.5k with matching). Tool names are folded when
their calls are settled, in the order first counted since the last settle, which is the
order of counting them at once: the same values fold. A series enters its tally (at 0) when
first counted, so the series keep the order they had when counted at once.
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
# Distinct (tool, status) pairs counted before a settle: bounded, since names come from traffic.
_RAW_CALLS_LIMIT = 4096
_K = TypeVar("_K")
_V = TypeVar("_V")
_OK = "ok"  # the status of a clean tool call


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
        # Tool calls counted since the last settle, clean ones by name, others by (name, status),
        # in the order first counted.
        self._raw_calls: dict[str | tuple[str, str], int] = {}

    def record_run(self, result: RunResult, calls: Sequence[ToolCall]) -> None:
        """A scored run (`result.scenario` set), its scores and its tool calls."""
        assert result.scenario is not None
        memo = (result.verdict, result.scenario, result.trajectory.agent)
        run = self._run_keys.get(memo)
        if run is None:
            run = self._memo(self._run_keys, memo, self._run_series(*memo))
        run.count += 1
        self._count_scores(result, run.agent, run.scenario)
        # Keyed by name for a clean call, the commonest, else by (name, status): a loop of
        # dict reads by string cost half of counting (name, status) pairs with
        # `Counter.update`, which hashes a fresh tuple per call and checks its argument
        # against `Mapping`. One dict, so that it keeps the order names were first counted in.
        raw = self._raw_calls
        for call in calls:
            status = call.status
            key: str | tuple[str, str] = call.name if status == _OK else (call.name, status)
            raw[key] = raw.get(key, 0) + 1
        if len(raw) > _RAW_CALLS_LIMIT:
            self._settle_calls()

    def settle(self) -> None:
        """Add the counts waiting since the last settle to the tallies (before reading them)."""
        runs = self._runs
        for run in self._run_keys.values():
            if run.count:
                runs[run.key] = runs.get(run.key, 0) + run.count
                run.count = 0
        results = self._results
        for by_name in self._score_keys.values():
            for series in by_name.values():
                waiting = series.waiting
                if waiting:
                    for verdict, n in waiting.items():
                        key = series.result_key(verdict)
                        results[key] = results.get(key, 0) + n
                    waiting.clear()
        self._settle_calls()

    def _settle_calls(self) -> None:
        counts, call_keys = self._calls, self._call_keys
        for raw, n in self._raw_calls.items():
            pair = (raw, _OK) if isinstance(raw, str) else raw
            key = call_keys.get(pair)
            if key is None:
                tool = self._fold(semconv.GEN_AI_TOOL_NAME, pair[0])
                key = _pairs((semconv.GEN_AI_TOOL_NAME, tool), (semconv.TOOL_CALL_STATUS, pair[1]))
                _memo_put(call_keys, pair, key)
            counts[key] = counts.get(key, 0) + n
        self._raw_calls.clear()

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

    def _memo(self, memo: dict[_K, _V], key: _K, value: _V) -> _V:
        """`_memo_put` for the memos whose series hold waiting counts: settled before a clear."""
        if len(memo) >= _MEMO_LIMIT:
            self.settle()
        return _memo_put(memo, key, value)

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
        self._runs.setdefault(key, 0)  # its place among the series: where first counted
        return _RunSeries(key, folded_agent, folded_scenario)

    def _count_scores(self, result: RunResult, agent: str | None, scenario: str | None) -> None:
        # Call with the lock held: counts results (waiting in their series) and errors, queues
        # the values.
        s = semconv
        by_name = self._score_keys.get((agent, scenario))
        if by_name is None:
            by_name = self._memo(self._score_keys, (agent, scenario), {})
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
                series = self._memo(by_name, score.name, _ScoreSeries(key, point, base))
            value = score.value
            verdict = score_result(score)
            waiting = series.waiting
            n = waiting.get(verdict)
            if n is None:
                waiting[verdict] = 1
                if verdict not in series.results:  # its series first counted: placed at once,
                    results.setdefault(series.result_key(verdict), 0)  # in counting order
            else:
                waiting[verdict] = n + 1
            if value is not None:
                pending = series.point.pending
                pending.append(value)
                if len(pending) >= _PENDING_LIMIT:  # bounded while nobody reads
                    series.point.flush(SCORE_BOUNDS)
            elif score.error is not None:
                kind = self._fold(s.ERROR_TYPE, error_type(score))
                error_key = series.key + _pairs((s.ERROR_TYPE, kind))
                self._errors[error_key] = self._errors.get(error_key, 0) + 1


@dataclass(slots=True)
class _RunSeries:
    """A scored run's series in `tracescore.runs`, its folded agent and scenario, and the runs
    counted into it since the last settle."""

    key: Attrs
    agent: str | None
    scenario: str | None
    count: int = 0


@dataclass(slots=True)
class _ScoreSeries:
    """A score's series: its histogram key and point, its result counter keys, and its results
    counted since the last settle."""

    key: Attrs
    point: Point
    base: Attrs
    """The evaluation name and scenario, the result counter's series without the result."""
    results: dict[str, Attrs] = field(default_factory=dict)
    waiting: dict[str, int] = field(default_factory=dict)

    def result_key(self, result: str) -> Attrs:
        """The result counter's series of `result`."""
        key = self.results.get(result)
        if key is None:
            key = self.results[result] = (*self.base, (semconv.EVALUATION_RESULT, result))
        return key


def _memo_put(memo: dict[_K, _V], key: _K, value: _V) -> _V:
    """Store in a bounded memo (cleared when full: its values come from traffic)."""
    if len(memo) >= _MEMO_LIMIT:
        memo.clear()
    memo[key] = value
    return value


def _pairs(*pairs: tuple[str, str | None]) -> Attrs:
    """A series key from (key, value) pairs given in the instrument's key order."""
    return tuple((k, v) for k, v in pairs if v is not None)
