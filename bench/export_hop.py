"""CPU per exported span on a local hop: compression gzip against none, gRPC against HTTP,
asyncio's event loop against uvloop, all through tracescore's own OtlpExporter.

    .venv/bin/python bench/export_hop.py [--rounds 5] [--traces 1000] [--loops asyncio,uvloop]

The exporter runs in this process on CPU 0; a parse-and-discard OTLP receiver
(bench/throughput.py's) runs on CPU 1 for each protocol. The span stream is
bench/throughput.py's (realistic agent traces, ~650 B/span, 512-span requests, forwarded as
bytes the way `serve` forwards them). Each variant sends the whole stream and this process's CPU
time (all its threads: gRPC compresses in its C core's) is divided by the spans delivered.
Variants take turns round after round and the medians are printed with their ratios (the
machine's speed drifts over minutes; side by side, both see the same drift).
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

Variant = tuple[str, str, str]  # protocol, compression, loop


def loop_factory(name: str) -> Callable[[], asyncio.AbstractEventLoop] | None:
    if name == "asyncio":
        return None
    import uvloop

    factory: Callable[[], asyncio.AbstractEventLoop] = uvloop.new_event_loop
    return factory


async def export_all(
    endpoint: str, protocol: str, compression: str, batches: list[bytes], counts: list[int]
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
    exporter = OtlpExporter(settings, telemetry)
    await exporter.start()
    total = sum(counts)
    for body, n in zip(batches[:8], counts[:8], strict=True):  # connections up, code warm
        exporter.submit_traces(body, n)
    warm = sum(counts[:8])
    while telemetry.value(semconv.METRIC_SPANS_FORWARDED) < warm:
        await asyncio.sleep(0.005)
    cpu0, wall0 = time.process_time(), time.perf_counter()
    for body, n in zip(batches, counts, strict=True):
        while not exporter.submit_traces(body, n):
            await asyncio.sleep(0.002)
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
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    batches, counts, _ = throughput.make_stream(args.traces)
    print(f"stream: {sum(counts)} spans in {len(batches)} requests, "
          f"{sum(map(len, batches)) / sum(counts):.0f} B/span")  # fmt: skip
    protocols = args.protocols.split(",")
    receivers = {p: start_receiver("grpc" if p == "grpc" else "http") for p in protocols}
    os.sched_setaffinity(0, {0})
    variants: list[Variant] = list(
        itertools.product(protocols, args.compressions.split(","), args.loops.split(","))
    )
    results: dict[Variant, list[tuple[float, float]]] = {v: [] for v in variants}
    try:
        for _ in range(args.rounds):
            for protocol, compression, loop in variants:
                endpoint = f"http://127.0.0.1:{receivers[protocol][1]}"
                with asyncio.Runner(loop_factory=loop_factory(loop)) as runner:
                    got = runner.run(export_all(endpoint, protocol, compression, batches, counts))
                results[protocol, compression, loop].append(got)
    finally:
        for proc, _ in receivers.values():
            proc.kill()
            proc.wait()
    med = {v: statistics.median(cpu for cpu, _ in r) for v, r in results.items()}
    rate = {v: statistics.median(spans for _, spans in r) for v, r in results.items()}
    for v in variants:
        rounds = ", ".join(f"{cpu:.2f}" for cpu, _ in results[v])
        print(f"{' '.join(v):<32} {med[v]:6.2f} us CPU/span  {rate[v]:9.0f} spans/s  "
              f"(rounds: {rounds})")  # fmt: skip
    for protocol, loop in itertools.product(protocols, args.loops.split(",")):
        if (protocol, "gzip", loop) in med and (protocol, "none", loop) in med:
            ratio = med[protocol, "gzip", loop] / med[protocol, "none", loop]
            print(f"gzip / none, {protocol} on {loop}: {ratio:.2f}")
    for protocol, compression in itertools.product(protocols, args.compressions.split(",")):
        if (protocol, compression, "uvloop") in med and (protocol, compression, "asyncio") in med:
            ratio = med[protocol, compression, "uvloop"] / med[protocol, compression, "asyncio"]
            print(f"uvloop / asyncio, {protocol} {compression}: {ratio:.2f}")


if __name__ == "__main__":
    main()
