"""The metrics tracescore emits: scores, runs, tool calls, and the service's own health.

`Telemetry` is thread-safe: one lock guards every update, so receivers on gRPC worker threads and
the asyncio loop can share it; an update costs a dict lookup or two under the lock (series are
memoized per label values, and the tool calls of scored runs are counted in bulk before any
read). Rendering copies the numbers under the lock and formats outside it. The instruments
themselves are listed in `catalog`.

Cardinality is bounded: attribute values that come from traffic (agent, tool and evaluation
names, scenarios) are capped per key (`max_values` distinct values each); later values are folded
into `_other`. Trace ids never become attributes.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TypeAlias, TypeVar

from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
)

from tracescore import __version__, semconv
from tracescore.export.attributes import error_type
from tracescore.export.catalog import CAPPED_KEYS, DURATION_BOUNDS, SCORE_BOUNDS, instruments
from tracescore.export.instruments import Attrs, HistogramPoint, Instrument
from tracescore.export.otlp_metrics import metrics_request
from tracescore.export.prometheus import render
from tracescore.model.score import Score
from tracescore.model.span import AttrValue
from tracescore.model.trajectory import ToolCall, Trajectory
from tracescore.otlp.native import extension
from tracescore.scenarios import RunResult
from tracescore.scorers.base import select_calls

__all__ = ["DURATION_BOUNDS", "SCORE_BOUNDS", "Telemetry"]

_MEMO_LIMIT = 4096
_PENDING_LIMIT = 4096
_K = TypeVar("_K")
_V = TypeVar("_V")
# A scored run's series key in `tracescore.runs`, and its folded agent and scenario.
_RunSeries: TypeAlias = tuple[Attrs, str | None, str | None]


class Telemetry:
    """Cumulative instruments, rendered as Prometheus text or as OTLP metrics."""

    def __init__(self, *, max_values: int = 100, start_ns: int | None = None) -> None:
        """Create every instrument; counters without attributes start at 0.

        Args:
            max_values: distinct values kept per capped attribute before folding to `_other`.
            start_ns: start of the cumulative period (default: now).
        """
        self._lock = threading.Lock()
        self._max_values = max_values
        self._seen: dict[str, set[str]] = {k: set() for k in CAPPED_KEYS}
        self.start_ns = time.time_ns() if start_ns is None else start_ns
        self._inst = instruments()
        for inst in self._inst.values():
            if inst.kind != "histogram" and not inst.keys:
                inst.values[()] = 0
        self._sources: list[Callable[[], Iterable[Instrument]]] = []
        s = semconv
        self._runs = self._inst[s.METRIC_RUNS]
        self._scores = self._inst[s.METRIC_EVALUATION_SCORE]
        self._errors = self._inst[s.METRIC_EVALUATION_ERRORS]
        self._calls = self._inst[s.METRIC_TOOL_CALLS]
        self._scoring = self._inst[s.METRIC_SCORING_DURATION]
        # Series of scored runs by their raw label values, memoized: a folded value never
        # changes once decided (the seen sets only grow), so each series is looked up once.
        # Bounded: the values come from traffic.
        self._run_keys: dict[tuple[str | None, str, str | None], _RunSeries] = {}
        self._call_keys: dict[tuple[str, str], Attrs] = {}
        # Tool calls of scored runs as names and statuses, counted into `tracescore.tool_calls`
        # in bulk before any read (and whenever many wait): one by one, they were a third of
        # recording a run. Two flat lists of strings, not one of (name, status) pairs: held
        # pairs were a few thousand tuples for every young collection of the GC to walk.
        self._pending_names: list[str] = []
        self._pending_statuses: list[str] = []
        # Score series by (folded agent, folded scenario), then by score name.
        self._score_keys: dict[tuple[str | None, str | None], dict[str, _ScoreSeries]] = {}
        # Score values wait in their series and go into the histograms in bulk before any read
        # (and whenever many wait), as tool calls do: observing each was a fifth of recording
        # a run. The series holding values, and how many values they hold:
        self._dirty: list[_ScoreSeries] = []
        self._scores_pending = 0
        # What the native `record_run` reads and appends to (the containers themselves).
        self._native_state = (
            self._run_keys,
            self._runs.values,
            self._score_keys,
            self._dirty,
            self._pending_names,
            self._pending_statuses,
        )

    # -- scored runs ----------------------------------------------------------------------

    def record_run(self, result: RunResult) -> None:
        """Count a scored run, observe its scores and count its tool calls.

        Tool calls of sub-agents are counted with the run that contains them. A run that was not
        scored (no scenario matched, or sampling left it out) is not counted.
        """
        if _native_record is not None:
            with self._lock:
                # Natively when every series the run touches is known (most runs): the same
                # memos read, the same lists appended to; None when the run is left to Python.
                added = _native_record(self._native_state, result)
                if added is not None:
                    self._scores_pending += added
                    if self._scores_pending >= _PENDING_LIMIT:
                        self._observe_pending()
                    if len(self._pending_names) >= _PENDING_LIMIT:
                        self._count_calls()
                    return
        if result.scenario is None or not result.sampled:
            return
        calls = select_calls(result.trajectory, "attempted", True)  # sub-agents' calls too
        with self._lock:
            memo = (result.verdict, result.scenario, result.trajectory.agent)
            run = self._run_keys.get(memo)
            if run is None:
                run = _memo_put(self._run_keys, memo, self._run_series(*memo))
            run_key, agent, scenario = run
            counts = self._runs.values
            counts[run_key] = counts.get(run_key, 0) + 1
            self._observe_scores(result, agent, scenario)
            # Comprehensions: attrgetter reads slots through the generic lookup (slower).
            pending = self._pending_names
            pending += [c.name for c in calls]
            self._pending_statuses += [c.status for c in calls]
            if len(pending) >= _PENDING_LIMIT:
                self._count_calls()

    def _count_calls(self) -> None:
        # Call with the lock held: the pending tool calls into their series.
        counts = self._calls.values
        call_keys = self._call_keys
        # Counter keeps first-seen order, so tool names are folded in the order calls came.
        pairs = zip(self._pending_names, self._pending_statuses, strict=True)
        for pair, n in Counter(pairs).items():
            key = call_keys.get(pair)
            if key is None:
                tool = self._fold(semconv.GEN_AI_TOOL_NAME, pair[0])
                key = _pairs((semconv.GEN_AI_TOOL_NAME, tool), (semconv.TOOL_CALL_STATUS, pair[1]))
                _memo_put(call_keys, pair, key)
            counts[key] = counts.get(key, 0) + n
        self._pending_names.clear()
        self._pending_statuses.clear()

    def _observe_pending(self) -> None:
        # Call with the lock held: the waiting score values into their histograms, each
        # series' in the order they came. A series' histogram appears with its first value.
        for series in self._dirty:
            point = series.point
            if point is None:
                point = series.point = self._scores.point(series.key)
            point.observe_all(series.pending, SCORE_BOUNDS)
            series.pending = []
        self._dirty.clear()
        self._scores_pending = 0

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

    def record_scores(self, result: RunResult) -> None:
        """Observe scores that arrive after their run was counted (LLM judges in `serve`)."""
        if result.scenario is None or not result.sampled:
            return
        s = semconv
        with self._lock:
            agent = self._fold(s.GEN_AI_AGENT_NAME, result.trajectory.agent)
            scenario = self._fold(s.TRACESCORE_SCENARIO, result.scenario)
            self._observe_scores(result, agent, scenario)

    def _observe_scores(self, result: RunResult, agent: str | None, scenario: str | None) -> None:
        # Call with the lock held.
        s = semconv
        # The series of this agent and scenario by score name: looked up once per run.
        by_name = self._score_keys.get((agent, scenario))
        if by_name is None:
            by_name = _memo_put(self._score_keys, (agent, scenario), {})
        for score in result.scores:
            series = by_name.get(score.name)
            if series is None:  # built once per (score, agent, scenario): folds are final
                name = self._fold(s.GEN_AI_EVALUATION_NAME, score.name)
                key = _pairs(
                    (s.GEN_AI_EVALUATION_NAME, name),
                    (s.GEN_AI_AGENT_NAME, agent),
                    (s.TRACESCORE_SCENARIO, scenario),
                )
                series = _memo_put(by_name, score.name, _ScoreSeries(key))
            value = score.value
            if value is not None:
                waiting = series.pending
                if not waiting:
                    self._dirty.append(series)
                waiting.append(value)
                self._scores_pending += 1
            elif score.error is not None:
                kind = self._fold(s.ERROR_TYPE, error_type(score))
                self._errors.add(series.key + _pairs((s.ERROR_TYPE, kind)), 1)
        if self._scores_pending >= _PENDING_LIMIT:
            self._observe_pending()

    def add_source(self, source: Callable[[], Iterable[Instrument]]) -> None:
        """Render another component's instruments too (e.g. the judges' own counters).

        `source` returns snapshots (it does its own locking); it is called on every render.
        """
        self._sources.append(source)

    # -- the service's own ----------------------------------------------------------------

    def spans_received(self, n: int = 1) -> None:
        """Spans accepted by a receiver."""
        self._add(semconv.METRIC_SPANS_RECEIVED, n)

    def spans_rejected(self, n: int = 1) -> None:
        """Spans refused as malformed (counted in partial_success)."""
        self._add(semconv.METRIC_SPANS_REJECTED, n)

    def spans_forwarded(self, n: int = 1) -> None:
        """Spans delivered downstream (the exporter counts these on success)."""
        self._add(semconv.METRIC_SPANS_FORWARDED, n)

    def spans_late(self, n: int = 1) -> None:
        """Spans that arrived after their run was scored (still forwarded)."""
        self._add(semconv.METRIC_SPANS_LATE, n)

    def spans_dropped(self, reason: str, n: int = 1) -> None:
        """Spans accepted but not delivered, by reason (e.g. `export_rejected`)."""
        self._add(semconv.METRIC_SPANS_DROPPED, n, {semconv.REASON: reason})

    def set_runs_buffered(self, n: int) -> None:
        """Gauge: runs held by the assembler."""
        self._set(semconv.METRIC_RUNS_BUFFERED, n)

    def set_bytes_buffered(self, n: int) -> None:
        """Gauge: bytes held by the assembler."""
        self._set(semconv.METRIC_BYTES_BUFFERED, n)

    def set_export_queue(self, items: int, size: int) -> None:
        """Gauges: requests and bytes waiting in the export queue."""
        with self._lock:
            self._inst[semconv.METRIC_EXPORT_QUEUE_ITEMS].set((), items)
            self._inst[semconv.METRIC_EXPORT_QUEUE_BYTES].set((), size)

    def observe_scoring_latency(self, seconds: float, runs: int = 1) -> None:
        """Histogram: time to score one run, observed for `runs` runs (scored together)."""
        with self._lock:  # in bulk: as many observations of one value, in one call
            self._scoring.point(()).observe_all([seconds] * runs, DURATION_BOUNDS)

    def observe_export_latency(self, signal: str, seconds: float) -> None:
        """Histogram: one export attempt's duration, by signal (traces, logs, metrics)."""
        with self._lock:
            self._inst[semconv.METRIC_EXPORT_DURATION].observe(((semconv.SIGNAL, signal),), seconds)

    def export_failure(self, signal: str, reason: str) -> None:
        """Count one failed export attempt (retryable or permanent)."""
        self._add(
            semconv.METRIC_EXPORT_FAILURES, 1, {semconv.SIGNAL: signal, semconv.REASON: reason}
        )

    # -- reading ------------------------------------------------------------------------

    def value(self, name: str, attributes: Mapping[str, str] | None = None) -> float:
        """A counter's or gauge's current value (0 if never recorded), for checks and tests."""
        with self._lock:
            self._count_calls()
            inst = self._inst[name]
            return inst.values.get(inst.series_key(dict(attributes or {})), 0)

    def snapshot(self) -> list[Instrument]:
        """Copies of every instrument, in a stable order."""
        with self._lock:
            self._count_calls()
            self._observe_pending()
            own = [inst.snapshot() for inst in self._inst.values()]
        return own + [inst for source in self._sources for inst in source()]

    def render_prometheus(self) -> str:
        """Prometheus text exposition format 0.0.4 for `/metrics`."""
        return render(self.snapshot())

    def to_otlp(
        self, resource: Mapping[str, AttrValue] | None = None
    ) -> ExportMetricsServiceRequest:
        """All instruments as OTLP metrics with cumulative temporality.

        Args:
            resource: resource attributes; default `service.name=tracescore` and its version.
        """
        res = resource or {semconv.SERVICE_NAME: "tracescore", semconv.SERVICE_VERSION: __version__}
        return metrics_request(self.snapshot(), res, self.start_ns, time.time_ns())

    # -- helpers (call with the lock held where they touch state) --------------------------

    def _fold(self, key: str, value: str | None) -> str | None:
        """The attribute value to record: None when absent, `_other` past the key's cap."""
        if not value:
            return None  # absent, not empty: a missing agent name is no label value
        seen = self._seen.get(key)
        if seen is None or value in seen:
            return value
        if len(seen) >= self._max_values:
            return semconv.OTHER_VALUE
        seen.add(value)
        return value

    def _attrs(self, raw: Mapping[str, str | None]) -> dict[str, str]:
        out: dict[str, str] = {}
        for key, value in raw.items():
            folded = self._fold(key, value)
            if folded is not None:
                out[key] = folded
        return out

    def _add(self, name: str, n: float, attributes: Mapping[str, str] | None = None) -> None:
        with self._lock:
            inst = self._inst[name]
            inst.add(inst.series_key(self._attrs(attributes or {})), n)

    def _set(self, name: str, value: float) -> None:
        with self._lock:
            self._inst[name].set((), value)


@dataclass(slots=True)
class _ScoreSeries:
    """A score's series in `gen_ai.evaluation.score`, and its histogram once it has one."""

    key: Attrs
    point: HistogramPoint | None = None
    pending: list[float] = field(default_factory=list)
    """Values not yet in `point` (see `Telemetry._observe_pending`)."""


def _memo_put(memo: dict[_K, _V], key: _K, value: _V) -> _V:
    """Store in a bounded memo (cleared when full: its values come from traffic)."""
    if len(memo) >= _MEMO_LIMIT:
        memo.clear()
    memo[key] = value
    return value


def _pairs(*pairs: tuple[str, str | None]) -> Attrs:
    """A series key from (key, value) pairs given in the instrument's key order."""
    return tuple((k, v) for k, v in pairs if v is not None)


_native_record: Callable[[tuple[object, ...], RunResult], int | None] | None = None
if (_native := extension()) is not None:
    _native.bind_metrics(RunResult, Trajectory, Score, _ScoreSeries, ToolCall)
    _native_record = _native.record_run
