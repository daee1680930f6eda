"""Traces scored together (a tick's due traces) emit what each scored alone would.

`RunScorer.score_traces` frames the evaluation events of all its traces as one logs request;
the records, annotations and metrics must be those of scoring each trace alone, and a trace
whose scoring fails must cost only its own annotations.
"""

from __future__ import annotations

import gc
from typing import Any

import pytest
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest

from pipeline.test_scoring_pinned import NOW_NS, _bench, _bench_runs
from tracescore import semconv
from tracescore.config import parse_config
from tracescore.export import events
from tracescore.export.metrics import Telemetry
from tracescore.model.trajectory import Trajectory
from tracescore.pipeline import scoring
from tracescore.pipeline.scoring import RunScorer


class _Sink:
    def __init__(self) -> None:
        self.sent: list[tuple[bytes, int]] = []

    def send(self, body: bytes, n: int) -> None:
        self.sent.append((body, n))


def _records(sent: list[tuple[bytes, int]]) -> list[Any]:
    """Every log record with its resource and scope, whatever the requests' grouping (records
    are grouped by resource within a request, so a batch orders them by resource first)."""
    out = []
    for body, _ in sent:
        for resource_logs in ExportLogsServiceRequest.FromString(body).resource_logs:
            for scope_logs in resource_logs.scope_logs:
                for record in scope_logs.log_records:
                    out.append((resource_logs.resource, scope_logs.scope, record))
    return out


def _serialized(records: list[Any]) -> list[tuple[bytes, ...]]:
    return sorted(tuple(part.SerializeToString() for part in record) for record in records)


def _metrics(telemetry: Telemetry) -> list[Any]:
    return [i for i in telemetry.snapshot() if i.name != semconv.METRIC_SCORING_DURATION]


def _scorer(config: Any) -> tuple[RunScorer, _Sink, Telemetry]:
    sink, telemetry = _Sink(), Telemetry(start_ns=1)
    return RunScorer(config, telemetry, sink, None), sink, telemetry  # type: ignore[arg-type]


def test_traces_scored_together_emit_what_each_alone_would(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(events.time, "time_ns", lambda: NOW_NS)
    bench = _bench()
    config = parse_config(bench.SCENARIOS)
    ready, _ = _bench_runs(bench)
    alone, alone_sink, alone_telemetry = _scorer(config)
    each = [alone(trace) for trace in ready]
    together, sink, telemetry = _scorer(config)
    batches = [ready[:1], ready[1:7], ready[7:]]
    scored = [a for batch in batches for a in together.score_traces(batch)]
    assert [dict(a) for a in scored] == [dict(a) for a in each]
    assert len(sink.sent) == len(batches)  # one logs request per batch
    assert sum(n for _, n in sink.sent) == sum(n for _, n in alone_sink.sent)
    assert _serialized(_records(sink.sent)) == _serialized(_records(alone_sink.sent))
    assert _metrics(telemetry) == _metrics(alone_telemetry)
    assert together.score_traces([]) == []
    assert len(sink.sent) == len(batches)  # nothing scored, nothing sent


def test_a_trace_whose_scoring_fails_costs_only_its_own_annotations(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    bench = _bench()
    config = parse_config(bench.SCENARIOS)
    ready, _ = _bench_runs(bench)
    batch = [r for r in ready if r.complete][:5]
    broken = batch[2].trace_id
    build = scoring.build_trajectories

    def failing(spans: Any) -> Any:
        if spans[0].trace_id == broken:
            raise RuntimeError("builder bug")
        return build(spans)

    scorer, sink, _ = _scorer(config)
    expected = [dict(scorer(r)) for r in batch]
    monkeypatch.setattr(scoring, "build_trajectories", failing)
    scorer, sink, _ = _scorer(config)
    scored = [dict(a) for a in scorer.score_traces(batch)]
    assert scored[2] == {}
    assert scored[:2] + scored[3:] == expected[:2] + expected[3:]
    assert all(scored[:2] + scored[3:])
    trace_ids = {r.trace_id.hex() for _, _, r in _records(sink.sent)}
    assert trace_ids == {r.trace_id for r in batch} - {broken}


def test_a_batch_lets_each_run_go_once_it_is_scored() -> None:
    # A tick scores hundreds of traces; kept alive until the batch's logs were framed, their
    # trajectories were most of what the garbage collector scanned (twice) under load.
    bench = _bench()
    config = parse_config(bench.SCENARIOS)
    ready, _ = _bench_runs(bench)
    batch = [r for r in ready if r.complete][:8]
    alive: list[int] = []

    def judges(result: Any) -> None:  # called with each run as it is scored
        alive.append(sum(type(o) is Trajectory for o in gc.get_objects()))

    sink, telemetry = _Sink(), Telemetry(start_ns=1)
    scorer = RunScorer(config, telemetry, sink, None, judges=judges)  # type: ignore[arg-type]
    before = sum(type(o) is Trajectory for o in gc.get_objects())
    scorer.score_traces(batch)
    assert len(alive) == len(batch)
    assert max(alive) - before <= 2, alive  # the run being scored (and the one just before)
    assert len(sink.sent) == 1
