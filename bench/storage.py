"""What `storage:` costs: `tracescore serve` with it off and on, measured side by side.

    .venv/bin/python bench/storage.py [--protocols http,grpc] [--rounds 5] [--round-s 4]
        [--storage-dir DIR]

Uses bench/throughput.py's machinery (the same 20-span agent traces in 512-span batches,
servers pinned to CPU 0, load and sink on CPU 1, collector-like resends on back-pressure). Three
services of the same config run side by side: storage off, `sync: always` (each request
answered after the fsync that covers it; requests arriving during one fsync share the next)
and `sync: batch` (the committer gathers 5 ms before each fsync). They are loaded to saturation
in turn, round after round, and the per-round ratios of spans/s and spans per CPU-second to the
service without storage are printed (medians): the machine's speed drifts, the ratios much less.

It also prints what one commit costs on the storage folder's file system: an append of one
request's bytes followed by fdatasync, timed directly (median and p99 of 200).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import throughput as tp


def commit_cost(directory: Path, size: int, n: int = 200) -> tuple[float, float]:
    """Median and p99 seconds of one append of `size` bytes plus fdatasync in `directory`."""
    path = directory / "commit-cost.tmp"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    data = os.urandom(size)
    times = []
    try:
        for _ in range(n):
            t0 = time.perf_counter()
            os.write(fd, data)
            os.fdatasync(fd)
            times.append(time.perf_counter() - t0)
    finally:
        os.close(fd)
        path.unlink()
    times.sort()
    return statistics.median(times), times[int(len(times) * 0.99)]


async def storage_service(
    protocol: str, sink: tp.Sink, storage: str
) -> tuple[tp.subprocess.Popen[str], int]:
    """A pinned serve with `storage` (a YAML section, or "" for none) exporting to `sink`."""
    sink_port, grpc_port, http_port = tp.free_port(), tp.free_port(), tp.free_port()
    await sink.start(sink_port)
    folder = Path(tempfile.mkdtemp(prefix="tracescore-bench-storage-"))
    ports = {"grpc_port": grpc_port, "http_port": http_port, "sink_port": sink_port}
    text = tp.CONFIG.format(wait="2s", **ports)
    config = folder / "tracescore.yaml"
    config.write_text(tp.SCENARIOS + text + storage)
    tracescore = str(Path(sys.executable).with_name("tracescore"))
    command = [tracescore, "serve", "--config", str(config), "--log-level", "warning"]
    proc = tp.start_pinned(command, "tracescore serve: ready")
    return proc, grpc_port if protocol == "grpc" else http_port


async def bench_protocol(protocol: str, stream: tuple, args: argparse.Namespace) -> dict:
    base_dir = Path(args.storage_dir or tempfile.mkdtemp(prefix="tracescore-wal-"))
    variants = {
        "storage off": "",
        "sync: always": f"storage: {{directory: {base_dir / protocol / 'always'}}}\n",
        "sync: batch 5ms": (
            f"storage: {{directory: {base_dir / protocol / 'batch'}, sync: batch, "
            "sync_interval: 5ms}\n"
        ),
    }
    procs = []
    targets = []
    try:
        for name, section in variants.items():
            sink = tp.Sink()
            proc, port = await storage_service(protocol, sink, section)
            procs.append(proc)
            targets.append(tp.Target(name, proc, port, sink))
        await tp.alternate(protocol, stream, targets, args)
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            await asyncio.get_running_loop().run_in_executor(None, proc.wait)
    off = targets[0]
    result: dict[str, object] = {"protocol": protocol}
    for target in targets[1:]:
        cpu = tp.paired_ratios(target, off)
        rate = [t["spans_s"] / b["spans_s"] for t, b in zip(target.rounds, off.rounds, strict=True)]
        result[target.name] = {"cpu_ratio": cpu, "rate_ratio": rate}
        print(
            f"  {target.name} / storage off: spans/s {statistics.median(rate):.3f}, spans per "
            f"CPU-second {statistics.median(cpu):.3f} (medians of {len(cpu)} paired rounds: "
            f"{', '.join(f'{r:.2f}' for r in rate)} / {', '.join(f'{r:.2f}' for r in cpu)})",
            flush=True,
        )
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--protocols", default="http,grpc")
    parser.add_argument("--traces", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--round-s", type=float, default=4.0)
    parser.add_argument("--warm-s", type=float, default=3.0)
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--max-other-cores", type=float, default=0.5)
    parser.add_argument("--storage-dir", help="where the logs go (default: a temporary folder)")
    args = parser.parse_args()
    tp.MALLOC.update(MALLOC_MMAP_THRESHOLD_="67108864", MALLOC_TRIM_THRESHOLD_="268435456")
    os.sched_setaffinity(0, {tp.CLIENT_CPU})
    stream = tp.make_stream(args.traces)
    folder = Path(args.storage_dir or tempfile.gettempdir())
    folder.mkdir(parents=True, exist_ok=True)
    size = statistics.median(map(len, stream[0]))
    for nbytes in (2_000, int(size)):
        p50, p99 = commit_cost(folder, nbytes)
        print(
            f"commit cost in {folder}: append {nbytes:,} B + fdatasync: p50 {p50 * 1e3:.2f} ms,"
            f" p99 {p99 * 1e3:.2f} ms",
            flush=True,
        )
    for protocol in args.protocols.split(","):
        print(f"{protocol}:", flush=True)
        asyncio.run(bench_protocol(protocol, stream, args))
    return 0


if __name__ == "__main__":
    sys.exit(main())
