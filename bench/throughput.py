"""Spans per second through `tracescore serve`, against a parse-and-discard receiver.

    .venv/bin/python bench/throughput.py [--protocols http,grpc] [--rounds 5] [--round-s 4]

For each protocol, three servers run side by side on the same core (CPU 0; the load generator
and the downstream sinks share CPU 1):
  1. a parse-and-discard OTLP receiver (parse each request, count its spans, answer): the
     physical limit of that transport in Python;
  2. `tracescore serve` (forward mode, one scenario scoring every run with deterministic
     scorers), exporting over OTLP/HTTP to a sink on CPU 1;
  3. the same service without scenarios (receive and forward only).
They are loaded to saturation one after the other, round after round; in each round a server
is loaded for `--round-s` seconds from idle and its CPU counted until the sink has every span
it accepted (a service scores a run `decision_wait` after its last span, so every span sent in
the round is paid in full). The ratio of the service to parse-and-discard is taken per round
and its median printed: the machine's speed drifts by tens of percent over minutes, and both
see the same drift within a round.
Both see the same realistic agent traces (20 spans: an `invoke_agent` span, 9 `chat`, 8
`execute_tool` with JSON arguments and results, 2 HTTP client spans; ~650 B/span) in 512-span
batches ordered by end time (children before their agent span, as an SDK exports them), with
fresh trace ids on every pass. Printed: spans/s and spans per CPU-second of each server, the
ratios, the latency from a run's last span being sent to its gen_ai.evaluation.result event
reaching the sink (p50, p99) at half the service's capacity, and peak memory per buffered run.

Every server runs with glibc's mmap threshold raised (MALLOC_MMAP_THRESHOLD_=64MiB,
MALLOC_TRIM_THRESHOLD_=256MiB; `--default-malloc` leaves glibc's defaults): by default a server's
speed depends on whether its 320 KB request buffers keep landing in fresh mmaps, which is decided
by its heap's history. With glibc's defaults the same parse-and-discard gRPC server measured
mostly 240,000-290,000 or 340,000-475,000 spans per CPU-second depending on which modules this
file happened to import (reference/performance.md B.1c saw the same swings).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Awaitable, Callable
from pathlib import Path

import grpc
from aiohttp import ClientSession, TCPConnector, web
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

# bench/ on the path also when this file is loaded by location (the tests do)
sys.path.insert(0, str(Path(__file__).resolve().parent))
import mixes
from shapes import kv as _kv
from shapes import tag as _tag
from shapes import tool_spans_trace as _trace
from tracescore.export.transport import retry_info_delay
from tracescore.retry import parse_retry_after

SERVICE_CPU, CLIENT_CPU = 0, 1
EXPORT = "/opentelemetry.proto.collector.trace.v1.TraceService/Export"
SCENARIOS = (
    """
scenarios:
  - name: agents
    match: {agent: "*"}"""
    + mixes.CHECKS
)
CONFIG = """
receivers:
  grpc: {{endpoint: "127.0.0.1:{grpc_port}"}}
  http: {{endpoint: "127.0.0.1:{http_port}"}}
exporter: {{endpoint: "http://127.0.0.1:{sink_port}", protocol: http/protobuf, compression: none}}
assembly: {{decision_wait: {wait}}}
service: {{metrics_interval: 5s, shutdown_grace_period: 10s}}
"""


# -- payload ---------------------------------------------------------------------------------


def make_stream(n_traces: int) -> tuple[list[bytes], list[int], list[list[bytes]]]:
    """512-span batches (bytes), their span counts, and the trace ids each batch completes."""
    rng = random.Random(7)
    services = ["support-agent", "coding-agent", "research-agent", "billing-agent"]
    spans = []
    for i in range(n_traces):
        for span in _trace(rng, 1_760_000_000_000_000_000 + i * 500_000_000):
            spans.append((span.end_time_unix_nano, services[i % 4], span))
    spans.sort(key=lambda x: x[0])
    batches, counts, completes = [], [], []
    for off in range(0, len(spans), 512):
        req, by = ExportTraceServiceRequest(), {}
        done = []
        for _, svc, span in spans[off : off + 512]:
            if svc not in by:
                rs = req.resource_spans.add()
                rs.resource.attributes.extend(
                    [_kv("service.name", svc), _kv("service.version", "1.4.2"),
                     _kv("deployment.environment.name", "prod")]
                )  # fmt: skip
                by[svc] = rs.scope_spans.add()
                by[svc].scope.name = "opentelemetry.instrumentation.openai_agents"
            by[svc].spans.append(span)
            if not span.parent_span_id:
                done.append(span.trace_id)
        batches.append(req.SerializeToString())
        counts.append(len(spans[off : off + 512]))
        completes.append(done)
    return batches, counts, completes


def renew(tid: bytes, n_pass: int) -> bytes:
    """The trace id `tid` gets on pass `n_pass`."""
    return tid[:10] + _tag(n_pass)


# -- the parse-and-discard receiver (run as: throughput.py discard --protocol P --port N) -----


def discard(protocol: str, port: int) -> None:
    """Parse every request, count its spans, answer success: the transport's Python limit."""
    empty = ExportTraceServiceResponse().SerializeToString()
    total = [0]

    def count(body: bytes) -> None:
        req = ExportTraceServiceRequest()
        req.ParseFromString(body)
        total[0] += sum(len(ss.spans) for rs in req.resource_spans for ss in rs.scope_spans)

    async def main() -> None:
        if protocol == "grpc":
            server = grpc.aio.server(options=[("grpc.max_receive_message_length", 64 << 20)])

            async def export(body: bytes, context: object) -> bytes:
                count(body)
                return empty

            handler = grpc.method_handlers_generic_handler(
                EXPORT.split("/")[1], {"Export": grpc.unary_unary_rpc_method_handler(export)}
            )
            server.add_generic_rpc_handlers((handler,))
            server.add_insecure_port(f"127.0.0.1:{port}")
            await server.start()
        else:

            async def traces(request: web.Request) -> web.Response:
                count(await request.read())
                return web.Response(body=empty, content_type="application/x-protobuf")

            app = web.Application(client_max_size=64 << 20)
            app.router.add_post("/v1/traces", traces)
            runner = web.AppRunner(app, access_log=None)
            await runner.setup()
            await web.TCPSite(runner, "127.0.0.1", port).start()
        print("READY", flush=True)
        await asyncio.Event().wait()

    asyncio.run(main())


# -- measurement -----------------------------------------------------------------------------


def cpu_seconds(pid: int) -> float:
    """utime + stime of a process."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def busy_seconds() -> float:
    """CPU seconds the whole machine spent busy (to spot other load)."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    return (sum(v[:8]) - v[3] - v[4]) / os.sysconf("SC_CLK_TCK")


def rss_kib(pid: int, key: str = "VmRSS") -> int:
    """Resident (or, with key=VmHWM, peak resident) memory of a process in KiB."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return 0


class Load:
    """Keeps `concurrency` requests in flight, resending on back-pressure like a collector:
    a refused request is sent again after the delay the service advises (HTTP Retry-After,
    gRPC RetryInfo), as the collector's OTLP exporters wait at least that long.

    With `rate` (spans/s) it paces itself instead of saturating the server.
    """

    def __init__(
        self, protocol: str, port: int, stream: tuple, concurrency: int, rate: float = 0.0
    ) -> None:
        self.protocol, self.port, self.concurrency, self.rate = protocol, port, concurrency, rate
        self.batches, self.counts, self.completes = stream
        self.spans = 0
        self.refused = 0
        self.sent_at: dict[bytes, float] = {}  # trace id -> when its last span was accepted
        self.n_pass0 = 0
        self._next = 0
        self._stop = False
        self._started = 0.0

    def _body(self, index: int) -> tuple[bytes, int, list[bytes]]:
        n_pass, i = divmod(index, len(self.batches))
        n_pass += self.n_pass0
        body = self.batches[i].replace(_tag(0), _tag(n_pass)) if n_pass else self.batches[i]
        return body, self.counts[i], [renew(t, n_pass) for t in self.completes[i]]

    async def run(self, limit: int | None = None) -> None:
        """Send until `stop()` (or until `limit` batches were accepted)."""
        self._started = time.monotonic()
        if self.protocol == "grpc":
            channel = grpc.aio.insecure_channel(f"127.0.0.1:{self.port}")
            call = channel.unary_unary(EXPORT)

            async def send(body: bytes) -> float | None:
                try:
                    await call(body, timeout=60)
                    return None
                except grpc.aio.AioRpcError as err:
                    if err.code() != grpc.StatusCode.UNAVAILABLE:
                        raise
                    return retry_info_delay(err.trailing_metadata()) or 0.0

            await self._workers(send, limit)
            await channel.close()
        else:
            url = f"http://127.0.0.1:{self.port}/v1/traces"
            headers = {"Content-Type": "application/x-protobuf"}
            async with ClientSession(connector=TCPConnector(limit=self.concurrency)) as session:

                async def send(body: bytes) -> float | None:
                    async with session.post(url, data=body, headers=headers) as resp:
                        await resp.read()
                        if resp.status not in (200, 503):
                            raise RuntimeError(f"HTTP {resp.status}")
                        if resp.status == 200:
                            return None
                        return parse_retry_after(resp.headers.get("Retry-After")) or 0.0

                await self._workers(send, limit)

    async def _workers(
        self, send: Callable[[bytes], Awaitable[float | None]], limit: int | None
    ) -> None:
        async def worker() -> None:
            while not self._stop and (limit is None or self._next < limit):
                index, self._next = self._next, self._next + 1
                body, n, done = self._body(index)
                if self.rate:
                    due = self._started + (index * self.counts[0]) / self.rate
                    await asyncio.sleep(max(0.0, due - time.monotonic()))
                while (retry_s := await send(body)) is not None:
                    self.refused += 1
                    await asyncio.sleep(max(0.05, retry_s))
                now = time.monotonic()
                for tid in done:
                    self.sent_at[tid] = now
                self.spans += n

        await asyncio.gather(*(worker() for _ in range(self.concurrency)))

    def stop(self) -> None:
        self._stop = True


class Sink:
    """The service's downstream: counts forwarded spans, times gen_ai.evaluation.result events."""

    def __init__(self) -> None:
        self.load: Load | None = None
        self.spans = 0
        self.latencies: list[float] = []

    async def start(self, port: int) -> web.AppRunner:
        async def traces(request: web.Request) -> web.Response:
            req = ExportTraceServiceRequest.FromString(await request.read())
            self.spans += sum(len(ss.spans) for rs in req.resource_spans for ss in rs.scope_spans)
            return web.Response(body=b"", content_type="application/x-protobuf")

        async def logs(request: web.Request) -> web.Response:
            now = time.monotonic()
            req = ExportLogsServiceRequest.FromString(await request.read())
            sent_at = self.load.sent_at if self.load is not None else {}
            for rl in req.resource_logs:
                for sl in rl.scope_logs:
                    for record in sl.log_records:
                        sent = sent_at.pop(record.trace_id, None)  # first event of the run
                        if sent is not None:
                            self.latencies.append(now - sent)
            return web.Response(body=b"", content_type="application/x-protobuf")

        async def metrics(request: web.Request) -> web.Response:
            await request.read()
            return web.Response(body=b"", content_type="application/x-protobuf")

        app = web.Application(client_max_size=64 << 20)
        app.router.add_post("/v1/traces", traces)
        app.router.add_post("/v1/logs", logs)
        app.router.add_post("/v1/metrics", metrics)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", port).start()
        return runner


def free_port() -> int:
    """A free loopback port."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_pinned(cmd: list[str], ready: str) -> subprocess.Popen[str]:
    """Start `cmd` on CPU 0 and wait for a line containing `ready` (stdout or stderr)."""
    proc = subprocess.Popen(
        ["taskset", "-c", str(SERVICE_CPU), *cmd],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, **MALLOC},
    )
    lines: list[str] = []
    assert proc.stdout is not None
    for line in proc.stdout:
        lines.append(line)
        if ready in line:
            return proc
    raise RuntimeError("server did not start:\n" + "".join(lines))


def scrape(http_port: int, name: str) -> float:
    """One unlabelled metric from the service's /metrics."""
    with urllib.request.urlopen(f"http://127.0.0.1:{http_port}/metrics", timeout=10) as resp:
        for line in resp.read().decode().splitlines():
            if line.startswith(name + " "):
                return float(line.split()[1])
    return 0.0


class Target:
    """One server under test: its process, where load goes, how to tell it has caught up."""

    def __init__(self, name: str, proc: subprocess.Popen[str], port: int, sink: Sink | None):
        self.name, self.proc, self.port, self.sink = name, proc, port, sink
        self.accepted = 0  # spans it accepted over every round (a sink sees them all, in time)
        self.n_pass = 0  # the next pass of the stream: fresh trace ids in every round
        self.rounds: list[dict[str, float]] = []


async def _caught_up(target: Target, timeout: float) -> bool:
    """Wait until the sink has every span the target accepted: everything held was scored."""
    deadline = time.monotonic() + timeout
    while target.sink is not None and target.sink.spans < target.accepted:
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(0.05)
    await asyncio.sleep(0.3)  # the last logs and metrics leave with or after the last spans
    return True


async def measure_round(
    protocol: str, stream: tuple, target: Target, args: argparse.Namespace, seconds: float
) -> dict[str, float] | None:
    """Load `target` for `seconds` from idle; its CPU is counted until it has caught up.

    A service scores a run `decision_wait` after its last span: counting its CPU only while
    the load runs would leave out the scoring of the last runs and include that of runs sent
    before. From idle to idle, every span sent in the round is paid in full. None when the
    machine was busy with something else meanwhile.
    """
    load = Load(protocol, target.port, stream, args.concurrency)
    load.n_pass0 = target.n_pass
    pid, me = target.proc.pid, os.getpid()
    c0, b0, m0, t0 = cpu_seconds(pid), busy_seconds(), cpu_seconds(me), time.monotonic()
    task = asyncio.create_task(load.run())
    await asyncio.sleep(seconds)
    load.stop()
    await asyncio.gather(task, return_exceptions=True)
    sending = time.monotonic() - t0
    target.accepted += load.spans
    target.n_pass += load._next // len(stream[0]) + 1
    if not await _caught_up(target, timeout=30.0):
        raise RuntimeError(f"{target.name}: the sink is missing spans 30 s after the load")
    wall = time.monotonic() - t0
    cpu = cpu_seconds(pid) - c0
    other = (busy_seconds() - b0 - cpu - (cpu_seconds(me) - m0)) / wall
    if other > args.max_other_cores or not cpu:
        return None
    return {
        "spans_s": load.spans / sending,
        "spans_cpu_s": load.spans / cpu,
        "other": other,
        "refused": load.refused,
    }


async def alternate(
    protocol: str, stream: tuple, targets: list[Target], args: argparse.Namespace
) -> None:
    """Warm every target up, then measure them in turn, round after round.

    The machine's speed drifts by tens of percent over minutes; targets measured side by side
    in every round see the same drift, so per-round ratios move much less than rates do.
    """
    for target in targets:
        await measure_round(protocol, stream, target, args, args.warm_s)
    tries = 0
    while len(targets[0].rounds) < args.rounds and tries < args.rounds * 3:
        tries += 1
        measured = [await measure_round(protocol, stream, t, args, args.round_s) for t in targets]
        if any(m is None for m in measured):
            continue  # someone else was busy: measure that round again
        for target, m in zip(targets, measured, strict=True):
            assert m is not None
            target.rounds.append(m)
    for target in targets:
        rounds = target.rounds
        print(
            f"  {target.name:<20} {statistics.median(r['spans_s'] for r in rounds):>9,.0f}"
            f" spans/s = {statistics.median(r['spans_cpu_s'] for r in rounds):>9,.0f} spans per"
            f" CPU-second, median of {len(rounds)} rounds"
            f" (other load <= {max(r['other'] for r in rounds):.2f} cores;"
            f" {sum(int(r['refused']) for r in rounds)} requests refused as overloaded)",
            flush=True,
        )


def paired_ratios(target: Target, base: Target) -> list[float]:
    """Per round: the target's spans per CPU-second over the baseline's in the same round."""
    return [
        t["spans_cpu_s"] / b["spans_cpu_s"] for t, b in zip(target.rounds, base.rounds, strict=True)
    ]


async def service(
    protocol: str, sink: Sink, args: argparse.Namespace, wait: str, *, scoring: bool = True
) -> tuple[subprocess.Popen[str], int, int]:
    """A pinned `tracescore serve` exporting to `sink`; returns it, its load port, http port."""
    sink_port, grpc_port, http_port = free_port(), free_port(), free_port()
    await sink.start(sink_port)
    folder = Path(tempfile.mkdtemp(prefix="tracescore-bench-"))
    config = folder / "tracescore.yaml"
    text = CONFIG.format(grpc_port=grpc_port, http_port=http_port, sink_port=sink_port, wait=wait)
    config.write_text((SCENARIOS if scoring else "scenarios: []\n") + text)
    tracescore = str(Path(sys.executable).with_name("tracescore"))
    command = [tracescore, "serve", "--config", str(config), "--log-level", "warning"]
    proc = start_pinned(command, "tracescore serve: ready")
    return proc, grpc_port if protocol == "grpc" else http_port, http_port


def _quantile(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(len(values) * q))]


async def bench_protocol(protocol: str, stream: tuple, args: argparse.Namespace) -> dict:
    """Parse-and-discard, the service and the service without scenarios measured in turn
    (throughput), then latency and memory of the service."""
    port = free_port()
    cmd = [sys.executable, __file__, "discard", "--protocol", protocol, "--port", str(port)]
    procs = [start_pinned(cmd, "READY")]
    base = Target("parse-and-discard", procs[0], port, None)
    sink, bare_sink = Sink(), Sink()
    try:
        proc, load_port, http_port = await service(protocol, sink, args, args.decision_wait)
        procs.append(proc)
        serve = Target("tracescore serve", proc, load_port, sink)
        # The same service with no scenario: receive and forward only (the floor of its cost).
        bare, bare_port, _ = await service(protocol, bare_sink, args, "2s", scoring=False)
        procs.append(bare)
        forward_only = Target("serve, no scenarios", bare, bare_port, bare_sink)
        await alternate(protocol, stream, [base, serve, forward_only], args)

        # Latency at half the measured capacity: at saturation it is queueing, not the service.
        rate = statistics.median(r["spans_s"] for r in serve.rounds) / 2
        paced = Load(protocol, load_port, stream, 2, rate=rate)
        paced.n_pass0 = serve.n_pass
        sink.load, sink.latencies = paced, []
        task = asyncio.create_task(paced.run())
        await asyncio.sleep(args.warm_s + args.rounds * args.round_s)
        paced.stop()
        await asyncio.gather(task, return_exceptions=True)
    finally:
        procs[0].kill()
        for proc in procs[1:]:
            proc.terminate()  # SIGTERM: what is still held is scored and forwarded
        for proc in procs:
            await asyncio.get_running_loop().run_in_executor(None, proc.wait)
    await asyncio.sleep(0.5)
    forwarded_ok = sink.spans
    accepted = serve.accepted + paced.spans
    lat = sink.latencies
    ratios = paired_ratios(serve, base)
    bare_ratios = paired_ratios(forward_only, base)

    # Memory: runs held (decision_wait 1h) over what the process grew by.
    memory_sink = Sink()
    proc, port, http_port = await service(protocol, memory_sink, args, "1h")
    try:
        idle = rss_kib(proc.pid)
        batches = (args.memory_runs * 20) // 512
        await Load(protocol, port, stream, args.concurrency).run(limit=batches)
        await asyncio.sleep(1.0)
        runs = scrape(http_port, "tracescore_runs_buffered")
        estimate = scrape(http_port, "tracescore_bytes_buffered_bytes")
        grown = (rss_kib(proc.pid) - idle) * 1024
        peak = rss_kib(proc.pid, "VmHWM") * 1024
    finally:
        proc.terminate()
        await asyncio.get_running_loop().run_in_executor(None, proc.wait)

    def summary(target: Target) -> dict[str, float | list[float]]:
        rounds = target.rounds
        return {
            "spans_s": statistics.median(r["spans_s"] for r in rounds),
            "spans_cpu_s": statistics.median(r["spans_cpu_s"] for r in rounds),
            # Per round, to tell a drifting machine from a server with two speeds.
            "spans_cpu_s_per_round": [r["spans_cpu_s"] for r in rounds],
            "rounds": len(rounds),
            "refused": sum(r["refused"] for r in rounds),
        }

    result = {
        "protocol": protocol,
        "parse_and_discard": summary(base),
        "service": summary(serve),
        "ratio": statistics.median(ratios),
        "ratio_per_round": ratios,
        "service_without_scenarios": summary(forward_only),
        "ratio_without_scenarios": statistics.median(bare_ratios),
        "latency_rate_spans_s": rate,
        "latency_p50_s": _quantile(lat, 0.5) if lat else None,
        "latency_p99_s": _quantile(lat, 0.99) if lat else None,
        "latency_runs": len(lat),
        "runs_buffered": runs,
        "rss_bytes_per_buffered_run": grown / runs if runs else None,
        "assembler_bytes_per_buffered_run": estimate / runs if runs else None,
        "peak_rss_bytes": peak,
        "accepted_spans": accepted,
        "forwarded_spans_seen": forwarded_ok,
    }
    print(
        f"  ratio, spans per CPU-second of tracescore serve / parse-and-discard, median of the"
        f" rounds: {result['ratio']:.3f} (rounds: {', '.join(f'{r:.3f}' for r in ratios)};"
        f" without scenarios: {result['ratio_without_scenarios']:.3f})\n"
        f"  latency, a run's last span sent -> its first gen_ai.evaluation.result at the sink, "
        f"at {rate:,.0f} spans/s, decision_wait {args.decision_wait}: "
        f"p50 {result['latency_p50_s'] or 0:.2f} s, p99 {result['latency_p99_s'] or 0:.2f} s "
        f"({len(lat)} runs)\n"
        f"  memory, {runs:,.0f} runs buffered: {grown / runs / 1024 if runs else 0:.1f} KiB of RSS "
        f"per run (the assembler's own estimate: {estimate / runs / 1024 if runs else 0:.1f} KiB),"
        f" peak RSS {peak / 2**20:.0f} MiB\n"
        f"  delivered: {forwarded_ok:,} spans at the sink of {accepted:,} accepted",
        flush=True,
    )
    return result


MALLOC: dict[str, str] = {}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="role")
    role = sub.add_parser("discard", help="(internal) the parse-and-discard receiver")
    role.add_argument("--protocol", choices=["http", "grpc"], required=True)
    role.add_argument("--port", type=int, required=True)
    parser.add_argument("--protocols", default="http,grpc")
    parser.add_argument("--traces", type=int, default=2000, help="distinct traces per pass")
    parser.add_argument("--rounds", type=int, default=5, help="measured rounds per protocol")
    parser.add_argument("--round-s", type=float, default=4.0, help="seconds of load per round")
    parser.add_argument("--warm-s", type=float, default=4.0)
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument(
        "--max-other-cores",
        type=float,
        default=0.15,
        help="a round during which other processes used more CPU than this is measured again",
    )
    parser.add_argument("--decision-wait", default="2s")
    parser.add_argument("--memory-runs", type=int, default=2000)
    parser.add_argument(
        "--default-malloc",
        action="store_true",
        help="run the servers with glibc's default malloc settings (see the module docstring)",
    )
    parser.add_argument("--out", help="write the results as JSON here")
    args = parser.parse_args()
    if args.role == "discard":
        discard(args.protocol, args.port)
        return 0
    if not args.default_malloc:
        MALLOC.update(MALLOC_MMAP_THRESHOLD_="67108864", MALLOC_TRIM_THRESHOLD_="268435456")
    os.sched_setaffinity(0, {CLIENT_CPU})
    stream = make_stream(args.traces)
    n = sum(stream[1])
    print(
        f"payload: {len(stream[0])} batches, {n:,} spans, {sum(map(len, stream[0])) / n:.0f} "
        f"B/span; servers on CPU {SERVICE_CPU}, load generator and sink on CPU {CLIENT_CPU};"
        f" malloc: {'glibc defaults' if args.default_malloc else 'mmap threshold 64 MiB'}",
        flush=True,
    )
    results = []
    for protocol in args.protocols.split(","):
        print(f"{protocol}:", flush=True)
        results.append(asyncio.run(bench_protocol(protocol, stream, args)))
    if args.out:
        Path(args.out).write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
