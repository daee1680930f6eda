"""CPU per exported span on a local hop: compression gzip against none, gRPC against HTTP,
asyncio's event loop against uvloop, all through tracescore's own OtlpExporter.

    .venv/bin/python bench/export_hop.py [--rounds 5] [--traces 1000] [--loops asyncio,uvloop]
    .venv/bin/python bench/export_hop.py --compressions none --loops asyncio --groups 1,4 \
        --batch-bytes 2097152     # one export per request against four merged into one
    .venv/bin/python bench/export_hop.py --compressions none --loops asyncio --pace-ms 12.5 \
        --lingers 0,0.02,0.05     # 40k spans/s forwarded, without and with lingering

The exporter runs in this process on CPU 0; a parse-and-discard OTLP receiver
(bench/throughput.py's) runs on CPU 1 for each protocol. The span stream is
bench/throughput.py's (realistic agent traces, ~650 B/span, 512-span requests, forwarded as
bytes the way `serve` forwards them). Each variant sends the whole stream and this process's CPU
time (all its threads: gRPC compresses in its C core's) is divided by the spans delivered.
Variants take turns round after round and the medians are printed with their ratios (the
machine's speed drifts over minutes; side by side, both see the same drift).

With `--groups`, requests are handed over `group` at a time and each group is delivered
before the next is handed over: group 1 is `serve` forwarding requests as they arrive (one
export call per request), a larger group what the export queue merges into one call when that
many wait (up to `--batch-bytes`). With `--pace-ms`, one request is handed over every that
many milliseconds, as `serve` forwards them under load, and `--lingers` compares the exporter's
`linger` (how long a woken sender waits for more to merge).
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import itertools
import logging
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from tracescore import semconv
from tracescore.config.serve import ExporterSettings
from tracescore.export.metrics import Telemetry
from tracescore.export.otlp import OtlpExporter

HERE = Path(__file__).resolve().parent
_spec = importlib.util.spec_from_file_location("throughput", HERE / "throughput.py")
assert _spec is not None
assert _spec.loader is not None
throughput = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(throughput)

Variant = tuple[str, str, str, int, float]  # protocol, compression, loop, group, linger


def loop_factory(name: str) -> Callable[[], asyncio.AbstractEventLoop] | None:
    if name == "asyncio":
        return None
    import uvloop

    factory: Callable[[], asyncio.AbstractEventLoop] = uvloop.new_event_loop
    return factory


async def export_all(
    endpoint: str,
    protocol: str,
    compression: str,
    batches: list[bytes],
    counts: list[int],
    group: int = 0,
    batch_bytes: int | None = None,
    linger: float = 0.0,
    pace_s: float = 0.0,
) -> tuple[float, float]:
    """(CPU microseconds per span, spans per wall second) to deliver the whole stream."""
    settings = ExporterSettings(
        endpoint=endpoint,
        protocol=protocol,  # type: ignore[arg-type]
        compression=compression,  # type: ignore[arg-type]
        metrics={"enabled": False},
        logs={"enabled": False},
    )
    telemetry = Telemetry()
    exporter = OtlpExporter(settings, telemetry, linger=linger)
    if batch_bytes is not None:
        exporter._queue.max_batch_bytes = batch_bytes
    await exporter.start()
    total = sum(counts)
    for body, n in zip(batches[:8], counts[:8], strict=True):  # connections up, code warm
        exporter.submit_traces(body, n)
    warm = sum(counts[:8])
    while telemetry.value(semconv.METRIC_SPANS_FORWARDED) < warm:
        await asyncio.sleep(0.005)
    cpu0, wall0 = time.process_time(), time.perf_counter()
    for i, (body, n) in enumerate(zip(batches, counts, strict=True)):
        if pace_s:  # one request every pace_s seconds, as `serve` forwards them
            await asyncio.sleep(max(0.0, wall0 + i * pace_s - time.perf_counter()))
        while not exporter.submit_traces(body, n):
            await asyncio.sleep(0.002)
        if group and (i + 1) % group == 0:  # this group delivered before the next goes
            await exporter._idle.wait()  # set by the senders, no polling to pay for
    while telemetry.value(semconv.METRIC_SPANS_FORWARDED) < warm + total:
        await asyncio.sleep(0.005)
    cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    await exporter.shutdown()
    return cpu / total * 1e6, total / wall


def start_receiver(protocol: str) -> tuple[subprocess.Popen[str], int]:
    port = throughput.free_port()
    cmd = ["taskset", "-c", "1", sys.executable, str(HERE / "throughput.py"), "discard"]
    proc = subprocess.Popen(
        [*cmd, "--protocol", protocol, "--port", str(port)], stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "READY"
    return proc, port


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--traces", type=int, default=1000, help="20-span traces per stream")
    parser.add_argument("--protocols", default="http/protobuf,grpc")
    parser.add_argument("--compressions", default="none,gzip")
    parser.add_argument("--loops", default="asyncio,uvloop")
    parser.add_argument("--groups", default="0", help="requests handed over at a time (0: all)")
    parser.add_argument("--batch-bytes", type=int, default=None, help="the queue's merge bound")
    parser.add_argument("--lingers", default="0", help="the exporter's linger, seconds")
    parser.add_argument("--pace-ms", type=float, default=0.0, help="one request every N ms")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    batches, counts, _ = throughput.make_stream(args.traces)
    print(f"stream: {sum(counts)} spans in {len(batches)} requests, "
          f"{sum(map(len, batches)) / sum(counts):.0f} B/span")  # fmt: skip
    protocols = args.protocols.split(",")
    receivers = {p: start_receiver("grpc" if p == "grpc" else "http") for p in protocols}
    os.sched_setaffinity(0, {0})
    variants: list[Variant] = list(
        itertools.product(
            protocols,
            args.compressions.split(","),
            args.loops.split(","),
            [int(g) for g in args.groups.split(",")],
            [float(x) for x in args.lingers.split(",")],
        )
    )
    results: dict[Variant, list[tuple[float, float]]] = {v: [] for v in variants}
    try:
        for _ in range(args.rounds):
            for protocol, compression, loop, group, linger in variants:
                endpoint = f"http://127.0.0.1:{receivers[protocol][1]}"
                run = export_all(
                    endpoint,
                    protocol,
                    compression,
                    batches,
                    counts,
                    group,
                    args.batch_bytes,
                    linger,
                    args.pace_ms / 1000,
                )
                with asyncio.Runner(loop_factory=loop_factory(loop)) as runner:
                    got = runner.run(run)
                results[protocol, compression, loop, group, linger].append(got)
    finally:
        for proc, _ in receivers.values():
            proc.kill()
            proc.wait()
    med = {v: statistics.median(cpu for cpu, _ in r) for v, r in results.items()}
    rate = {v: statistics.median(spans for _, spans in r) for v, r in results.items()}
    for v in variants:
        rounds = ", ".join(f"{cpu:.2f}" for cpu, _ in results[v])
        print(f"{' '.join(map(str, v)):<34} {med[v]:6.2f} us CPU/span  {rate[v]:9.0f} spans/s  "
              f"(rounds: {rounds})")  # fmt: skip
    first = variants[0]
    for v in variants[1:]:
        print(f"{' '.join(map(str, v))} / {' '.join(map(str, first))}: {med[v] / med[first]:.2f}")


if __name__ == "__main__":
    main()
