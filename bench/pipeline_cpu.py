"""CPU per span of the whole service pipeline, in process, for two scorer mixes.

    .venv/bin/python bench/pipeline_cpu.py [--mix checks|matching] [--stream capacity]
    valgrind --tool=callgrind --callgrind-out-file=/dev/null \\
        .venv/bin/python bench/pipeline_cpu.py --mix checks --passes 1   # and --passes 3

What `tracescore serve` does to a request, without the sockets: the receiver's schema check
and scan (`checked_scan`: `check_proto_request`'s verdict, in one walk with the scan where
the native scanner can vouch for the bytes), the assembler's ingest, a tick that scores
every run (build, score, metrics, evaluation events, score attributes) and the exporter's
hand-off, which here keeps a digest of every body instead of sending it. The stream is
`bench/throughput.py`'s (20-span agent runs in 512-span batches, fresh trace ids on every
pass), or with `--stream capacity` bench/capacity.py's (two shapes, half of them chat spans
carrying their tool-call messages, which the builder joins to the tool spans: the costlier
and the commoner shape). Mixes:
- checks: bench/throughput.py's scenario (a `max_tool_calls` gate, `no_tool_errors`,
  `called_tool`);
- matching: `tool_calls` with argument specs, `trajectory_accuracy` and `tool_call_accuracy`
  (tool arguments and results decoded, steps compared);
- capacity-matching: bench/capacity.py's matching mix (the same scorers, with a subset of
  arguments to match, relaxed ordering and an expected tool order).

Printed: CPU µs per span of the measured passes (the first pass warms up and is left out) and a
checksum of every exported body, which must not change when the engine does. Under callgrind,
the instructions of `--passes 3` minus `--passes 1`, over two passes' spans, are instructions
per span without start-up. Compare two engines side by side in one run (the machine drifts).
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import time
import zlib
from pathlib import Path
from typing import Any

from tracescore.cli.serve import settle_collector
from tracescore.config import parse_config
from tracescore.pipeline.service import Pipeline

_HERE = Path(__file__).resolve().parent
_spec = importlib.util.spec_from_file_location("_throughput", _HERE / "throughput.py")
assert _spec is not None
assert _spec.loader is not None
throughput = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(throughput)
sys.path.insert(0, str(_HERE))
import capacity_load  # noqa: E402
import mixes  # noqa: E402

MIXES = {
    "checks": mixes.CHECKS,
    "matching": """
    scorers:
      - type: tool_calls
        expected_tools: [search_docs, read_file]
        arguments: {search_docs: [{pad: ""}]}
        allow_additional: true
      - type: trajectory_accuracy
        steps: [{tool: search_docs}, {tool: read_file}, {tool: run_sql}]
      - type: tool_call_accuracy
        expected_tool: search_docs
""",
    # bench/capacity.py's matching mix (the one capacity is measured with).
    "capacity-matching": mixes.CAPACITY_MATCHING,
}
CONFIG = """
exporter: {{endpoint: "http://127.0.0.1:9", protocol: http/protobuf, compression: none}}
assembly: {{decision_wait: 1s}}
scenarios:
  - name: agents
    match: {{agent: "*"}}
{mix}
"""


class DigestExporter:
    """The exporter's surface, keeping a checksum of every body it is handed (CRC-32: a
    cryptographic digest of the forwarded bytes would cost more than the service per span)."""

    def __init__(self) -> None:
        self.digest = 0
        self.bodies = 0

    def _take(self, request: Any, count: int | None = None) -> bool:
        body = request if isinstance(request, bytes) else request.SerializeToString()
        self.digest = zlib.crc32(body, self.digest)
        self.bodies += 1
        return True

    submit_traces = submit_logs = _take

    def submit_metrics(self, request: Any) -> bool:
        return True

    def has_capacity(self) -> bool:
        return True


def drop_buffered(assembler: Any) -> None:
    """Forget every buffered trace unscored (`--phase ingest`): the next pass starts empty."""
    for tid in list(assembler._traces):
        assembler._scored[tid] = None
    assembler._traces.clear()
    assembler._anchored.clear()
    assembler.spans = assembler.nbytes = 0


class PipelineRun:
    """A pipeline fed pass after pass of one stream, as `serve` would be (fresh trace ids on
    every pass after the first), each pass ended by a tick that scores what it left."""

    def __init__(
        self, mix: str, stream: str = "capacity", traces: int = 200, ingest_only: bool = False
    ) -> None:
        time.time_ns = lambda: 1_800_000_000_000_000_000  # observed times: a digest can repeat
        config = parse_config(CONFIG.format(mix=MIXES[mix]))
        self.exporter = DigestExporter()
        self.pipeline = Pipeline(config, exporter=self.exporter)  # type: ignore[arg-type]
        self.assembler = assembler = self.pipeline.assembler
        if stream == "capacity":
            self.batches, self.counts = capacity_load.make_stream(traces, 0)
            self.retag = capacity_load.tag
        else:
            self.batches, self.counts, _ = throughput.make_stream(traces)
            self.retag = throughput._tag
        self.clock = 0.0
        assembler._clock = lambda: self.clock  # runs are due when the bench says
        self.ingest_only = ingest_only
        self.passes = 0
        settle_collector()  # as `serve` runs (its young threshold is 70x the default)

    def run_pass(self) -> tuple[int, float]:
        """One pass: (spans sent, CPU seconds taken)."""
        assembler, n_pass, ingest_only = self.assembler, self.passes, self.ingest_only
        retag = self.retag
        started = time.process_time()
        for body in self.batches:
            body = body.replace(retag(0), retag(n_pass)) if n_pass else body
            assembler.consume(None, body, assembler.checked_scan(body))
            self.clock += 0.01
            if ingest_only:
                assembler.flush_outbox()
            else:
                assembler.tick()
        self.clock += 10.0
        if ingest_only:
            drop_buffered(assembler)
        else:
            assembler.tick()
        assembler.flush_outbox()
        self.pipeline._flush_outboxes()
        self.passes += 1
        return sum(self.counts), time.process_time() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mix", choices=sorted(MIXES), default="checks")
    parser.add_argument("--traces", type=int, default=200)
    parser.add_argument("--passes", type=int, default=5)
    parser.add_argument(
        "--stream",
        choices=["throughput", "capacity"],
        default="throughput",
        help="bench/throughput.py's runs, or bench/capacity.py's two shapes (bench/shapes.py)",
    )
    parser.add_argument(
        "--phase",
        choices=["all", "ingest"],
        default="all",
        help="ingest: only the receiver's check and the assembler's consume (scan, records, "
        "agent spans, cut, forward); buffered traces are dropped unscored after each pass",
    )
    args = parser.parse_args()
    run = PipelineRun(args.mix, args.stream, args.traces, args.phase == "ingest")
    run.run_pass()  # warms up; not counted
    spans, cpu = 0, 0.0
    for _ in range(args.passes):
        sent, took = run.run_pass()
        spans += sent
        cpu += took
    print(
        f"mix={args.mix} spans={spans} cpu_us_per_span={cpu / spans * 1e6:.2f} "
        f"bodies={run.exporter.bodies} crc32={run.exporter.digest:08x}"
    )


if __name__ == "__main__":
    sys.exit(main())
