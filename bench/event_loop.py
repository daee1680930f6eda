"""`tracescore serve` on uvloop against asyncio's event loop: spans per CPU-second, side by side.

    .venv/bin/python bench/event_loop.py [--protocols http,grpc] [--rounds 5] [--round-s 4]

Two services, identical but for TRACESCORE_EVENT_LOOP, are loaded in turn, round after round,
with bench/throughput.py's stream, load generator and sink (same pinning: services on CPU 0,
load and sink on CPU 1), each from idle until its sink has every span it accepted. Printed per
protocol: each one's spans per CPU-second and the per-round ratio uvloop / asyncio (median).
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import os
import statistics
from pathlib import Path

_spec = importlib.util.spec_from_file_location(
    "throughput", Path(__file__).resolve().with_name("throughput.py")
)
assert _spec is not None
assert _spec.loader is not None
throughput = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(throughput)


async def compare(protocol: str, stream: tuple, args: argparse.Namespace) -> None:
    targets, procs = [], []
    try:
        for loop in ("asyncio", "uvloop"):
            os.environ["TRACESCORE_EVENT_LOOP"] = loop
            sink = throughput.Sink()
            proc, port, _ = await throughput.service(protocol, sink, args, args.decision_wait)
            procs.append(proc)
            targets.append(throughput.Target(f"serve on {loop}", proc, port, sink))
        await throughput.alternate(protocol, stream, targets, args)
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            await asyncio.get_running_loop().run_in_executor(None, proc.wait)
    ratios = throughput.paired_ratios(targets[1], targets[0])
    shown = ", ".join(f"{r:.3f}" for r in ratios)
    print(f"  uvloop / asyncio, spans per CPU-second: {statistics.median(ratios):.3f} ({shown})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--protocols", default="http,grpc")
    parser.add_argument("--traces", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--round-s", type=float, default=4.0)
    parser.add_argument("--warm-s", type=float, default=4.0)
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--max-other-cores", type=float, default=0.15)
    parser.add_argument("--decision-wait", default="2s")
    args = parser.parse_args()
    throughput.MALLOC.update(MALLOC_MMAP_THRESHOLD_="67108864", MALLOC_TRIM_THRESHOLD_="268435456")
    os.sched_setaffinity(0, {throughput.CLIENT_CPU})
    stream = throughput.make_stream(args.traces)
    for protocol in args.protocols.split(","):
        print(f"{protocol}:", flush=True)
        asyncio.run(compare(protocol, stream, args))


if __name__ == "__main__":
    main()
