"""The live-scoring glue: which spans are agent runs worth holding, and scoring a ready trace.

Spotting an agent span at ingest must be cheap (it runs on every kept span), so a span is
first tested for the markers every convention's agent spans carry, and only those candidates
are classified by the trajectory builder's own reader: the name the builder gives the agent is
the name scenarios match on.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TypeVar

from tracescore import semconv
from tracescore.assembler import Annotations, Outbox, Pending, ReadyTrace
from tracescore.config.model import Config, ScenarioMatch
from tracescore.export.events import EvaluationLogs
from tracescore.export.metrics import Telemetry
from tracescore.export.scored_output import logged_score_attributes
from tracescore.export.spans import FanoutSpans
from tracescore.model.span import AttrValue, SpanRecord
from tracescore.model.trajectory import READINGS, Reading, Trajectory
from tracescore.otlp.scan import CandidateRule
from tracescore.scenarios import RunResult, is_sampled, matches, run_evaluator

# The builder's per-span reader is not part of its public surface yet; it is the one source of
# truth for "is this an agent span, and what is it called".
from tracescore.trajectory import (
    BuildOptions,
    KeepKey,
    agent_name_of,
    attribute_filter,
    build_trajectories,
)

__all__ = [
    "AGENT_CANDIDATES",
    "RunScorer",
    "agent_name",
    "config_readings",
    "key_filter",
    "may_match",
]

log = logging.getLogger(__name__)

_OPTIONS = BuildOptions()
_AGENT_MEMO_LIMIT = 4096
# Traces taken a stage at a time (`RunScorer.score_traces`): enough for the stages' code to
# stay warm, few enough that the runs held between stages stay a small heap to scan.
_SLICE = 32


# Spans that may be agent spans: GenAI agent spans are told by their operation or name, other
# conventions' by keys whose presence makes a span a candidate (their values are checked by the
# builder's reader). Tested on every span, natively by the scanner (the assembler then asks
# `agent_name` only of candidates), so it must stay a cheap superset of agent spans.
AGENT_CANDIDATES = CandidateRule(
    semconv.GEN_AI_OPERATION_NAME,
    semconv.OP_INVOKE_AGENT,
    semconv.OP_INVOKE_AGENT,
    (
        semconv.MASTRA_SPAN_TYPE,
        semconv.OI_SPAN_KIND,
        semconv.PYDANTIC_AI_AGENT_NAME,
        semconv.TRACELOOP_SPAN_KIND,
    ),
)


def agent_name(record: SpanRecord) -> str | None:
    """The agent name of an agent span ("" when unnamed); None for any other span."""
    if not AGENT_CANDIDATES.matches(record):
        return None
    return agent_name_of(record, _OPTIONS)


def key_filter(config: Config) -> KeepKey:
    """Span attribute keys worth decoding: what trajectories read and what scenarios match,
    less the keys behind parts of a run that none of the config's scorers reads (tool
    arguments and results, model usage; see `ScorerBase.readings`): for checks of tool names
    and statuses, those were most of what a run kept. A tool result that may mark its call
    failed is still decoded (`attribute_filter`)."""
    extra = frozenset(k for s in config.scenarios for k in s.match.attributes)
    return attribute_filter(extra, READINGS - config_readings(config))


def config_readings(config: Config) -> frozenset[Reading]:
    """The optional parts of a run that some scorer or gate of `config` reads."""
    read: set[Reading] = set()
    for scenario in config.scenarios:
        for scorer in (*scenario.gates, *scenario.scorers):
            read |= scorer.readings()
    return frozenset(read)


def may_match(config: Config) -> Callable[[SpanRecord, str], bool]:
    """Whether a sampled scenario may score the run of this agent span.

    The user input is not known until the run is built, so `match.input` is left out here:
    a run held on a guess is forwarded unscored if its scenario turns out not to match.
    """
    stripped = [
        (ScenarioMatch(agent=s.match.agent, attributes=s.match.attributes), s.sample)
        for s in config.scenarios
    ]

    def wants(record: SpanRecord, agent: str) -> bool:
        run = Trajectory(
            trace_id=record.trace_id,
            span_id=record.span_id,
            agent=agent or None,
            attributes=record.attributes,
            resource=record.resource,
        )
        return any(matches(m, run) and is_sampled(run.trace_id, rate) for m, rate in stripped)

    if any(m.attributes or 0.0 < rate < 1.0 for m, rate in stripped):
        return wants
    # No attribute conditions and no partial sampling: the answer depends on the agent name
    # alone, so it is decided once per name (bounded: names come from traffic).
    decided: dict[str, bool] = {}

    def wants_by_agent(record: SpanRecord, agent: str) -> bool:
        answer = decided.get(agent)
        if answer is None:
            answer = wants(record, agent)
            if len(decided) >= _AGENT_MEMO_LIMIT:
                decided.clear()
            decided[agent] = answer
        return answer

    return wants_by_agent


class RunScorer:
    """Scores the runs of a ready trace and emits their events, metrics and fanout spans."""

    def __init__(
        self,
        config: Config,
        telemetry: Telemetry,
        logs: Outbox,
        spans: Outbox | None,
        *,
        prefix: str = semconv.DEFAULT_SCORE_ATTRIBUTE_PREFIX,
        judges: Callable[[RunResult], Pending | None] | None = None,
        viewers: Callable[[RunResult], None] | None = None,
    ) -> None:
        """Args:
        config: scenarios to score with.
        telemetry: run, score and tool-call metrics, and scoring latency.
        logs: where `gen_ai.evaluation.result` events go.
        spans: where `evaluate {agent}` spans go (`mode: fanout`), else None.
        prefix: score attribute prefix.
        judges: takes each scored run for its LLM judges (`pipeline.live_judges`); must not block.
            What it returns (with `judge_wait` > 0) stands in for the run's attributes: the
            assembler keeps the span, or in fanout mode the `evaluate` span, waiting on it.
        viewers: takes each scored run for viewers' own annotation APIs (Phoenix); must not
            block.
        """
        self._config = config
        self._telemetry = telemetry
        self._logs = logs
        self._spans = spans
        self._prefix = prefix
        self._judges = judges
        self._viewers = viewers
        # Judges run off the ingestion path; here only deterministic scorers score.
        self._evaluate = run_evaluator(config, deterministic_only=True)

    def __call__(self, ready: ReadyTrace) -> Annotations:
        """Build, score and emit one trace; returns score attributes per agent span id."""
        return self.score_traces([ready])[0]

    def score_traces(self, readies: list[ReadyTrace]) -> list[Annotations]:
        """Build, score and emit traces (a tick's due ones); per trace, the score attributes
        per agent span id.

        Their evaluation events go out as one logs request: framing one request per trace cost
        about a fifth of emitting a run. Runs go through in slices of `_SLICE` traces, a stage
        at a time over the slice (build, score and count, then events and annotations):
        each stage's code stays warm in the CPU's caches, which cut a run's cost by about a
        sixth against taking each run through every stage in turn. A slice's runs are then let
        go: keeping a tick's runs until the end made the garbage collector scan every
        trajectory of the tick, twice. A trace that fails in any stage loses its annotations,
        and only it.
        """
        started = time.perf_counter()
        scored = 0
        logs = EvaluationLogs()
        fanout = FanoutSpans(self._prefix) if self._spans is not None else None
        out: list[Annotations] = []
        for first in range(0, len(readies), _SLICE):
            part = readies[first : first + _SLICE]
            built = self._per_trace(part, part, self._trajectories)
            runs = self._per_trace(part, built, self._scored_runs)
            scored += sum(len(results) for results in runs if results)
            annotated = self._per_trace(
                part, runs, lambda results: self._emit(results, logs, fanout)
            )
            out += [{} if annotations is None else annotations for annotations in annotated]
        if scored:
            if logs.records:
                self._logs.send(logs.encode(), logs.records)
            if self._spans is not None and fanout is not None and fanout.spans:  # fanout mode
                self._spans.send(fanout.request.SerializeToString(), fanout.spans)
            # The batch's mean per run: runs scored together share their cost.
            per_run = (time.perf_counter() - started) / scored
            self._telemetry.observe_scoring_latency(per_run, scored)
        return out

    def _per_trace(
        self, part: list[ReadyTrace], inputs: Sequence[_In | None], stage: Callable[[_In], _Out]
    ) -> list[_Out | None]:
        """`stage` on each trace's input; None for a trace that failed here or before."""
        outputs: list[_Out | None] = []
        for ready, item in zip(part, inputs, strict=True):
            if item is None:
                outputs.append(None)
                continue
            try:
                outputs.append(stage(item))
            except Exception:  # a bug scoring one trace costs its annotations, not the batch's
                log.exception(
                    "scoring trace %s failed; its held spans go out unscored", ready.trace_id
                )
                outputs.append(None)
        return outputs

    def _trajectories(self, ready: ReadyTrace) -> list[Trajectory]:
        """The trace's runs, marked incomplete when the trace is."""
        build = build_trajectories(ready.spans, trace_id=ready.trace_id)
        for warning in build.warnings:
            log.debug("trace %s: %s", ready.trace_id, warning)
        if ready.complete:
            return build.trajectories
        return [
            dataclasses.replace(t, complete=False) if t.complete else t for t in build.trajectories
        ]

    def _scored_runs(self, trajectories: list[Trajectory]) -> list[RunResult]:
        """The runs that a scenario scored, each counted in the metrics as it is scored."""
        evaluate, record_run = self._evaluate, self._telemetry.record_run
        scored: list[RunResult] = []
        for trajectory in trajectories:
            result = evaluate(trajectory)
            if result.scenario is not None and result.sampled:
                # Counted at once: its tool calls are still in `select_calls`' one-run memo,
                # which the scorers just filled. As a stage of its own after the slice was
                # scored, every run missed it (a third of counting a run).
                record_run(result)
                scored.append(result)
        return scored

    def _emit(
        self, results: list[RunResult], logs: EvaluationLogs, fanout: FanoutSpans | None
    ) -> dict[str, Mapping[str, AttrValue] | Pending]:
        """The evaluation events, the judges' hand-off, fanout spans and span attributes of a
        trace's scored runs."""
        annotations: dict[str, Mapping[str, AttrValue] | Pending] = {}
        for result in results:
            attributes = None
            if fanout is None:
                # Its records and span attributes in one pass over its scores.
                attributes = logged_score_attributes(logs, result, self._prefix)
            else:  # no span is held in fanout mode, so none is annotated
                logs.add(result)
            if self._viewers is not None:
                self._viewers(result)
            span_id = result.trajectory.span_id
            pending = self._judges(result) if self._judges is not None else None
            if pending is not None and span_id:
                annotations[span_id] = pending  # waits for judge scores
                continue
            if fanout is not None:
                fanout.add(result)
                continue
            # With their span bytes: `annotate_span_bytes` appends those as they are.
            if attributes and span_id:
                annotations[span_id] = attributes
        return annotations


_In = TypeVar("_In")
_Out = TypeVar("_Out")
