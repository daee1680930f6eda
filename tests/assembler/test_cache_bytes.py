"""The scanner's caches of what clients send count against `assembly.max_bytes` and show in
the bytes-buffered gauge, and stay under their bound whatever clients send."""

from __future__ import annotations

import pytest
from opentelemetry.proto.trace.v1.trace_pb2 import Span

from assembler._harness import Harness
from support.agent_spans import agent_run, kv, request
from tracescore import semconv
from tracescore.errors import OverloadedError
from tracescore.otlp.scan import CACHE_BYTES_MAX, SpanReader

WAIT = 2.0


def _span(n: int, keys: int = 4) -> Span:
    span = Span(trace_id=(n + 1).to_bytes(16, "big"), span_id=b"\x01" * 8, name=f"op {n}")
    span.attributes.extend(kv(f"custom.{n}.{m}", "v") for m in range(keys))
    return span


def test_distinct_keys_names_and_resources_never_grow_the_caches_past_their_bound() -> None:
    reader = SpanReader()
    assert reader.cache_bytes == 0
    emptied, last = 0, 0
    for n in range(3000):
        # A distinct resource (up to ~6 KiB) each, distinct keys, a distinct span name.
        body = request([_span(n)], service=f"svc-{n}" + "x" * (2 * n)).SerializeToString()
        reader.grouped(body)
        assert 0 < reader.cache_bytes <= CACHE_BYTES_MAX
        emptied, last = emptied + (reader.cache_bytes < last), reader.cache_bytes
    assert emptied, "a full cache was emptied (~9 MiB of distinct resources were sent)"
    assert CACHE_BYTES_MAX < 20 * 2**20


def test_the_caches_count_against_max_bytes_but_alone_refuse_nothing() -> None:
    run = agent_run()
    probe = Harness()
    probe.send(run.spans)
    held, caches = probe.assembler.buffered_bytes, probe.assembler.cache_bytes
    assert held > 0
    assert caches > 0
    assert probe.telemetry.value(semconv.METRIC_BYTES_BUFFERED) == held + caches
    # Room for the run's records, but not for them and the caches together.
    h = Harness(max_bytes=held + caches // 2)
    h.assembler.check_capacity()
    h.send(run.spans)
    with pytest.raises(OverloadedError, match="of them the scanner's caches"):
        h.assembler.check_capacity()
    h.tick(WAIT)
    h.assembler.check_capacity()  # scored: room again
    # Caches over the limit on their own: scoring cannot free them, so they refuse nothing.
    h = Harness(max_bytes=caches // 2)
    h.send(run.spans)
    assert h.assembler.cache_bytes > caches // 2
    with pytest.raises(OverloadedError, match=r"assembly\.max_bytes"):
        h.assembler.check_capacity()
    h.tick(WAIT)
    assert h.assembler.buffered_bytes == 0
    h.assembler.check_capacity()
