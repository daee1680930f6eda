"""Span corpora the trajectory tests compare readers and builders on.

Every recorded fixture (the project's testdata, and the shared framework and Langfuse fixtures
when ../shared is there), and the benchmark's own agent runs, decoded as the service decodes
them.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

from tracescore.model.span import SpanRecord
from tracescore.otlp import read_trace_files
from tracescore.otlp.json import decode_json_request
from tracescore.otlp.proto import decode_proto_request
from tracescore.trajectory import KeepKey, needed_attribute
from trajectory.langfuse import convert

TESTS = Path(__file__).resolve().parents[1]
SHARED = TESTS.parent.parent / "shared" / "fixtures"


def fixture_span_files() -> list[list[SpanRecord]]:
    """The spans of every fixture file, one list per file."""
    files = [
        list(read_trace_files([str(path)]).spans)
        for path in sorted((TESTS / "testdata").glob("**/*.otlp.json"))
    ]
    assert len(files) > 10
    if SHARED.is_dir():
        for path in sorted(SHARED.glob("*.json")):
            files.append(list(decode_json_request(json.loads(path.read_text())).spans))
        for path in sorted(SHARED.glob("langfuse/*.trace.json")):
            request = convert(json.loads(path.read_text()))
            files.append(list(decode_json_request(request).spans))
    return files


def bench_spans(n_traces: int) -> list[SpanRecord]:
    """`n_traces` of bench/throughput.py's runs, with only the attribute keys the service keeps."""
    spec = importlib.util.spec_from_file_location(
        "bench_throughput", TESTS.parent / "bench" / "throughput.py"
    )
    assert spec is not None
    assert spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    batches, _, _ = bench.make_stream(n_traces)
    return [
        s for body in batches for s in decode_proto_request(body, key_filter=needed_attribute).spans
    ]


def capacity_spans(n_traces: int, keep: KeepKey | None = None) -> list[SpanRecord]:
    """`n_traces` of bench/capacity.py's runs (its two shapes, alternating), decoded with the
    attribute keys `keep` keeps (by default, every key the builder reads)."""
    bench_dir = TESTS.parent / "bench"
    if str(bench_dir) not in sys.path:
        sys.path.insert(0, str(bench_dir))  # capacity_load imports its sibling `shapes`
    spec = importlib.util.spec_from_file_location(
        "bench_capacity_load", bench_dir / "capacity_load.py"
    )
    assert spec is not None
    assert spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    batches, _ = bench.make_stream(n_traces, 0)
    return [
        s
        for body in batches
        for s in decode_proto_request(body, key_filter=keep or needed_attribute).spans
    ]
