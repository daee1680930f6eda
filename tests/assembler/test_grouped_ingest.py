"""Ingest per trace (the scanner groups spans) decides exactly what ingest per span decided.

`_PerSpanAssembler.consume` below is the per-span loop `Assembler.consume` ran before the
scanner grouped spans by trace; both are driven through the same requests and ticks and must
leave the same buffer, counters and outputs behind.
"""

from __future__ import annotations

import dataclasses
import random
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.trace.v1.trace_pb2 import Span

from assembler._harness import SHOP, Harness
from support.agent_spans import agent_run, kv, span_ids
from tracescore import semconv
from tracescore.assembler import Assembler, Ingest
from tracescore.assembler.buffer import RECORD_OVERHEAD
from tracescore.assembler.buffer import Trace as _Trace
from tracescore.errors import InputError
from tracescore.pipeline.scoring import AGENT_CANDIDATES

WAIT = 2.0  # the default decision_wait
_ZERO16, _ZERO8 = bytes(16), bytes(8)


class _PerSpanAssembler(Assembler):
    """The assembler with the per-span ingest loop it had before spans were grouped."""

    def consume(self, request: ExportTraceServiceRequest, body: bytes | None = None) -> Ingest:
        assert body is not None
        now = self._clock()
        result = Ingest()
        remove: dict[int, dict[int, set[int]]] = {}
        holds: list[tuple[tuple[int, int, int], _Trace, str]] = []
        touched: dict[bytes, _Trace] = {}
        accepted = late = kept = kept_bytes = 0
        traces, scored, scoring = self._traces, self._scored, self._scoring
        try:
            scanned = self._reader.records(body)
        except Exception as exc:
            raise InputError(f"unreadable OTLP request: {exc}") from exc
        for i, j, k, tid, sid, size, record, candidate in scanned:
            if len(tid) != 16 or len(sid) != 8 or tid == _ZERO16 or sid == _ZERO8:
                self._reject(result, (i, j, k), tid, sid, record.name, remove)
                continue
            accepted += 1
            if not scoring:
                continue
            trace = traces.get(tid)
            if trace is None:
                if tid in scored:
                    late += 1
                    continue
                if not record.attributes:
                    continue
                trace = traces[tid] = _Trace(record.trace_id, now, [])
            size += RECORD_OVERHEAD
            trace.records.append(record)
            trace.nbytes += size
            kept += 1
            kept_bytes += size
            touched[tid] = trace
            if record.parent_span_id is None:
                trace.anchored = True
            if not candidate:
                continue
            agent = self._hooks.agent_name(record)
            if agent is None:
                continue
            trace.anchored = True
            wanted = self._hooks.wants(record, agent)
            if wanted or not agent:
                trace.scorable = True
            elif trace.scorable is None:
                trace.scorable = False
            if (
                self._forwarding
                and self._restoring is None
                and record.span_id not in trace.held
                and wanted
            ):
                remove.setdefault(i, {}).setdefault(j, set()).add(k)
                holds.append(((i, j, k), trace, record.span_id))
        self.spans += kept
        self.nbytes += kept_bytes
        anchored = self._anchored
        for tid, trace in touched.items():
            trace.last = now
            if trace.anchored:
                anchored[tid] = trace
                anchored.move_to_end(tid)
        self._conclude(result, accepted, late, body, remove, holds)
        return result


class _Calls:
    """Counters that record every call (in order) before passing it on."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.log: list[tuple[str, tuple[Any, ...]]] = []

    def __getattr__(self, name: str) -> Any:
        def call(*args: Any) -> Any:
            self.log.append((name, args))
            return getattr(self.inner, name)(*args)

        return call


def _rewire(h: Harness, cls: type[Assembler], candidates: bool) -> _Calls:
    """Give h an assembler of class cls, wired as the harness wires its own."""
    old = h.assembler
    hooks = old._hooks
    if candidates:
        hooks = dataclasses.replace(hooks, agent_candidates=AGENT_CANDIDATES)
    calls = _Calls(h.telemetry)
    h.assembler = cls(
        old.settings,
        hooks,
        calls,
        mode="forward" if old._forwarding else "fanout",
        scoring=old._scoring,
        clock=lambda: h.now,
    )
    return calls


def _outputs(h: Harness) -> Any:
    """Log records and fanout spans without what the wall clock or randomness sets."""
    logs = [(r.trace_id, r.span_id, r.attributes) for r in h.log_records()]
    fanout = [
        (s.trace_id, s.parent_span_id, s.name, s.attributes)
        for body in h.fanout_out
        for rs in ExportTraceServiceRequest.FromString(body).resource_spans
        for ss in rs.scope_spans
        for s in ss.spans
    ]
    return logs, fanout


def _state(h: Harness) -> Any:
    a = h.assembler
    traces = [
        (tid, t.hex, t.first, t.last, t.anchored, t.scorable, t.records, t.nbytes, t.held)
        for tid, t in a._traces.items()
    ]
    return (
        traces, list(a._anchored), list(a._scored), a.spans, a.nbytes, h.forwarded, h.ready,
        _outputs(h),
    )  # fmt: skip


def _odd(span: Span, what: str) -> Span:
    out = Span()
    out.CopyFrom(span)
    if what == "bare":  # no attribute at all
        del out.attributes[:]
    elif what == "root":  # another root
        out.parent_span_id = b""
    elif what == "zero-trace":
        out.trace_id = _ZERO16
    elif what == "short-span":
        out.span_id = out.span_id[:4]
    elif what == "copy":
        pass
    out.span_id = out.span_id[:-1] + bytes([out.span_id[-1] ^ 0x5A])  # a span of its own
    return out


def _request(spans: list[Span], rng: random.Random) -> ExportTraceServiceRequest:
    """spans over one to three resources and scopes, with an empty scope now and then."""
    req = ExportTraceServiceRequest()
    for n, span in enumerate(spans):
        if n == 0 or rng.random() < 0.2:
            rs = req.resource_spans.add()
            rs.resource.attributes.append(kv("service.name", rng.choice(["a", "b"])))
            ss = rs.scope_spans.add()
            if rng.random() < 0.3:
                ss = rs.scope_spans.add()  # the first one stays empty
        elif rng.random() < 0.2:
            ss = req.resource_spans[-1].scope_spans.add()
        ss.spans.append(span)
    return req


CONFIGS = [SHOP, SHOP + "mode: fanout\n", "scenarios: []\n"]


def mixed_spans(rng: random.Random, seed: int, n_runs: int, *, agent_twice: bool) -> list[Span]:
    """The spans of `n_runs` agent runs with odd ones mixed in (bare, roots, zero trace ids,
    short span ids, copies; with `agent_twice`, sometimes an agent span twice), shuffled, and
    half the time the spans without kept attributes first (traces then reordered)."""
    spans: list[Span] = []
    for n in range(n_runs):
        run = agent_run(agent=rng.choice(["shop_agent", "billing_agent"]), seed=seed + n)
        spans.extend(run.spans)
        for what in ("bare", "root", "zero-trace", "short-span", "copy"):
            if rng.random() < 0.3:
                spans.append(_odd(rng.choice(run.spans), what))
        if agent_twice and rng.random() < 0.3:
            spans.append(run.agent)
    rng.shuffle(spans)
    if rng.random() < 0.5:
        spans.sort(key=lambda s: s.name != "POST")
    return spans


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 100_000),
    config=st.sampled_from(CONFIGS),
    candidates=st.booleans(),
    n_runs=st.integers(1, 5),
    batch=st.integers(1, 30),
)
def test_ingest_per_trace_equals_ingest_per_span(
    seed: int, config: str, candidates: bool, n_runs: int, batch: int
) -> None:
    rng = random.Random(seed)
    spans = mixed_spans(rng, seed, n_runs, agent_twice=True)
    grouped, per_span = Harness(config), Harness(config)
    calls = _rewire(grouped, Assembler, candidates)
    reference = _rewire(per_span, _PerSpanAssembler, candidates)
    now = 0.0
    for start in range(0, len(spans), batch):
        body = _request(spans[start : start + batch], rng).SerializeToString()
        parsed = ExportTraceServiceRequest.FromString(body)
        assert grouped.assembler.consume(parsed, body) == per_span.assembler.consume(parsed, body)
        assert _state(grouped) == _state(per_span)
        if rng.random() < 0.4:
            now += rng.choice([0.5, WAIT, 40.0])
            assert grouped.tick(now) == per_span.tick(now)
            assert _state(grouped) == _state(per_span)
    assert grouped.assembler.drain() == per_span.assembler.drain()
    assert _state(grouped) == _state(per_span)
    assert calls.log == reference.log


def test_a_new_trace_starts_at_its_first_span_with_attributes() -> None:
    # A's first span has no attribute a trajectory reads: A starts at its chat span, after B's
    # first span, so B is the older trace (scored first), and A does not keep that span.
    a, b = agent_run(seed=1), agent_run(seed=2)
    http = next(s for s in a.children if s.name == "POST")
    chat_a = next(s for s in a.children if s.name.startswith("chat"))
    chat_b = next(s for s in b.children if s.name.startswith("chat"))
    h = Harness()
    assert h.send([http, chat_b, chat_a]).accepted == 3
    assert h.assembler.runs == 2
    assert span_ids(h.forwarded_spans()) == span_ids([http, chat_b, chat_a])
    assert h.assembler.drain() == 2
    assert [r.trace_id for r in h.ready] == [b.trace_id.hex(), a.trace_id.hex()]
    assert [s.span_id for s in h.ready[1].spans] == [chat_a.span_id.hex()]
    assert not h.ready[1].complete, "the skipped span does not count"
    # The same span in a trace already buffered is kept.
    h = Harness()
    h.send([chat_a])
    h.send([http])
    h.assembler.drain()
    assert [s.span_id for s in h.ready[0].spans] == [chat_a.span_id.hex(), http.span_id.hex()]


def test_late_spans_of_a_scored_trace_mixed_with_a_new_trace() -> None:
    old, new = agent_run(seed=1), agent_run(seed=2)
    h = Harness()
    h.send([*old.children[:-2], old.agent])
    assert h.tick(WAIT) == 1
    mixed = [old.children[-2], *new.children, old.children[-1], new.agent]
    result = h.send(mixed)
    assert (result.accepted, result.rejected) == (len(mixed), 0)
    assert h.telemetry.value(semconv.METRIC_SPANS_LATE) == 2
    assert h.assembler.runs == 1
    assert h.assembler.spans == len(new.spans) + 1, "the new run's records and its held span"
    assert span_ids(h.forwarded_spans())[-len(mixed) + 1 :] == span_ids(mixed[:-1])
    assert h.tick(2 * WAIT) == 1
    assert h.ready[-1].trace_id == new.trace_id.hex()
    assert len(h.ready[-1].spans) == len(new.spans)
    assert span_ids(h.forwarded_spans())[-1] == new.agent.span_id


def test_rejected_spans_are_named_in_wire_order_among_valid_ones() -> None:
    run = agent_run()
    bad = [_odd(run.children[0], "zero-trace"), _odd(run.children[1], "short-span")]
    h = Harness()
    result = h.send([bad[0], *run.children, bad[1]])
    assert (result.accepted, result.rejected) == (len(run.children), 2)
    assert [p.split(":")[0] for p in result.problems] == [
        f"resource_spans[0].scope_spans[0].spans[0] ({bad[0].name!r})",
        f"resource_spans[0].scope_spans[0].spans[{len(run.children) + 1}] ({bad[1].name!r})",
    ]
    assert "trace_id must be" in result.problems[0]
    assert "span_id must be" in result.problems[1]
    assert span_ids(h.forwarded_spans()) == span_ids(run.children)
