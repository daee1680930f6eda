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

from pipeline.test_scoring_pinned import NOW_NS, _bench, _bench_runs, metrics_text
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


def _metrics(telemetry: Telemetry) -> str:
    return metrics_text(telemetry)


def _scorer(config: Any) -> tuple[RunScorer, _Sink, Telemetry]:
    sink, telemetry = _Sink(), Telemetry()
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

    def failing(spans: Any, **grouped: Any) -> Any:
        if spans[0].trace_id == broken:
            raise RuntimeError("builder bug")
        return build(spans, **grouped)

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


def test_a_batch_lets_its_runs_go_a_slice_at_a_time(monkeypatch: pytest.MonkeyPatch) -> None:
    # A tick scores hundreds of traces; kept alive until the batch's logs were framed, their
    # trajectories were most of what the garbage collector scanned (twice) under load.
    monkeypatch.setattr(scoring, "_SLICE", 4)
    bench = _bench()
    config = parse_config(bench.SCENARIOS)
    ready, _ = _bench_runs(bench)
    batch = [r for r in ready if r.complete][:16]
    alive: list[int] = []

    def judges(result: Any) -> None:  # called with each run as it is scored
        alive.append(sum(type(o) is Trajectory for o in gc.get_objects()))

    sink, telemetry = _Sink(), Telemetry()
    scorer = RunScorer(config, telemetry, sink, None, judges=judges)  # type: ignore[arg-type]
    before = sum(type(o) is Trajectory for o in gc.get_objects())
    scored = scorer.score_traces(batch)
    assert len(alive) == len(batch)
    assert max(alive) - before <= 4, alive  # the slice being emitted, not the batch
    assert len(sink.sent) == 1
    assert [dict(a) for a in scored] == [dict(_scorer(config)[0](r)) for r in batch]


@pytest.mark.parametrize("stage", ["record_run", "logged_score_attributes"])
def test_a_trace_failing_in_an_output_stage_costs_only_its_own_annotations(
    monkeypatch: pytest.MonkeyPatch, stage: str
) -> None:
    monkeypatch.setattr(scoring, "_SLICE", 3)  # the broken trace sits mid-slice
    bench = _bench()
    config = parse_config(bench.SCENARIOS)
    ready, _ = _bench_runs(bench)
    batch = [r for r in ready if r.complete][:7]
    broken = batch[4].trace_id
    scorer, _, _ = _scorer(config)
    expected = [dict(scorer(r)) for r in batch]
    owner: Any = {"record_run": Telemetry, "logged_score_attributes": scoring}[stage]
    real = getattr(owner, stage)

    def failing(*args: Any) -> Any:
        result = args[-1] if stage == "record_run" else args[1]  # (logs, result, prefix)
        if result.trajectory.trace_id == broken:
            raise RuntimeError("output bug")
        return real(*args)

    monkeypatch.setattr(owner, stage, failing)
    scorer, _, _ = _scorer(config)
    scored = [dict(a) for a in scorer.score_traces(batch)]
    assert scored[4] == {}
    assert scored[:4] + scored[5:] == expected[:4] + expected[5:]
    assert all(scored[:4] + scored[5:])
