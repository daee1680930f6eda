"""Decode plus trajectory building, in spans per second, against plain protobuf parsing.

    .venv/bin/python bench/trajectories.py [--traces 100] [--repeat 7] [--number 5]

Payload: `--traces` realistic 20-span agent traces in one OTLP ExportTraceServiceRequest
(the shape of reference/performance.md B.1: one `invoke_agent` root, 9 `chat` spans whose
output messages hold the `tool_call` parts, 8 `execute_tool` spans with ~200 B arguments and
~300 B results, one of them failing, 2 HTTP client spans; plus the usual noise attributes),
serialised once before timing.

Timed on the same bytes, in the same process, rounds interleaved so machine load hits all alike:
- parse: `ExportTraceServiceRequest.ParseFromString` (the floor: the bytes must be parsed);
- decode: `decode_proto_request(bytes, key_filter=needed_attribute)` (SpanRecords, needed keys);
- decode+build: the same plus `build_trajectories` of every span (what the service does);
- build per run: `build_trajectories` of one trace's decoded spans at a time, as the service
  calls it once a run is complete (the builder's own cost, without decoding).
Each figure is the best of `--repeat` rounds of `--number` calls, in CPU time of this process
(`time.process_time`: other processes on a loaded machine do not count). Printed: spans/s for
each, the build's µs per 20-span run, and the ratios to parse time (performance.md: touching
every attribute costs about 18 times the parse; reading only what matters must stay well
below that).
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

# bench/ on the path also when this file is loaded by location
sys.path.insert(0, str(Path(__file__).resolve().parent))
from shapes import kv as _kv
from shapes import messages_trace as _trace
from tracescore.model import SpanRecord
from tracescore.otlp import decode_proto_request
from tracescore.trajectory import build_trajectories, needed_attribute


def payload(traces: int, seed: int = 42) -> tuple[bytes, int]:
    """(serialised request, span count)."""
    rng = random.Random(seed)
    request = ExportTraceServiceRequest()
    resource_spans = request.resource_spans.add()
    resource_spans.resource.attributes.extend(
        [_kv("service.name", "support-agent"), _kv("telemetry.sdk.language", "python")]
    )
    scope_spans = resource_spans.scope_spans.add()
    scope_spans.scope.name = "bench"
    spans = [s for i in range(traces) for s in _trace(rng, 1_760_000_000_000_000_000 + i * 10**9)]
    rng.shuffle(spans)  # an SDK batch interleaves traces
    scope_spans.spans.extend(spans)
    return request.SerializeToString(), len(spans)


def main() -> None:
    """Print spans/s of parse, decode and decode+build, and their ratios."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--traces", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--number", type=int, default=5)
    args = parser.parse_args()
    body, n_spans = payload(args.traces)

    def parse() -> None:
        ExportTraceServiceRequest().ParseFromString(body)

    def decode() -> None:
        decode_proto_request(body, key_filter=needed_attribute)

    def decode_build() -> None:
        result = build_trajectories(decode_proto_request(body, key_filter=needed_attribute).spans)
        assert len(result.trajectories) == args.traces

    runs: dict[str, list[SpanRecord]] = {}
    for record in decode_proto_request(body, key_filter=needed_attribute).spans:
        runs.setdefault(record.trace_id, []).append(record)

    def build_per_run() -> None:
        for spans in runs.values():
            build_trajectories(spans)

    timed: dict[str, Callable[[], None]] = {
        "parse": parse,
        "decode": decode,
        "decode+build": decode_build,
        "build per run": build_per_run,
    }
    best = dict.fromkeys(timed, float("inf"))
    for _ in range(args.repeat):
        for name, fn in timed.items():
            start = time.process_time()
            for _ in range(args.number):
                fn()
            best[name] = min(best[name], (time.process_time() - start) / args.number)
    print(f"payload: {args.traces} traces x 20 spans, {len(body) / n_spans:.0f} B/span protobuf")
    for name, seconds in best.items():
        per_span = seconds * 1e6 / n_spans
        print(f"{name:>13}: {n_spans / seconds:>10,.0f} spans/s  ({per_span:.2f} µs/span)")
    print(f"build: {best['build per run'] * 1e6 / len(runs):.1f} µs per 20-span run")
    parse_s = best["parse"]
    print(f"ratio decode / parse:       {best['decode'] / parse_s:.1f}x")
    print(f"ratio decode+build / parse: {best['decode+build'] / parse_s:.1f}x")
    print(f"ratio build / parse:        {best['build per run'] / parse_s:.1f}x")


if __name__ == "__main__":
    main()
