"""Sustainable capacity of `tracescore serve` on one core, against parse-and-discard.

    .venv/bin/python bench/capacity.py [--quick] [--protocols http,grpc] [--mixes bench,matching]

Sustainable capacity is the highest offered rate (spans/s) at which, over a whole step of
fixed-rate load, at least 99.9% of requests are accepted, the p99 request latency is at most
250 ms and the service's buffers are steady (not growing over the step). That is what a
collector in front of the service can count on: below it nothing queues up at the sender.

How it is measured, each part in its own process:
- servers, all pinned to CPU 0 (the same core): a parse-and-discard receiver (parse, count,
  answer: the transport's Python limit) and one `tracescore serve` per scorer mix, run with its
  SHIPPED DEFAULTS: the config names only the endpoints and the scenarios;
- senders (`--shards` processes) and the sink the service exports to, on CPU 1: the senders
  are open-loop (bench/loadgen, in Go, built on first use and cached; or with
  `--sender python` bench/capacity_load.py, which lags below parse-and-discard's limit):
  requests leave when the rate says, answered or not,
  latency counts from when a request was due, and a refused request is sent again after the
  Retry-After / RetryInfo the server advised;
- rates step up geometrically until a step fails, then bisect; then each server's highest
  passing rate is confirmed by a long step (`--confirm-s`, 30 s), tried again 7% lower while
  one fails: a short step passes a service a few percent behind its load. The servers'
  ladders are interleaved step by step, so drifts of a shared machine hit both sides of the
  ratio alike.

Scorer mixes: `bench` (today's bench/throughput.py mix: a tool-count gate, no_tool_errors,
called_tool) and `matching` (argument and trajectory matching: tool_calls with arguments,
trajectory_accuracy, tool_call_accuracy). The stream mixes two trace shapes (bench/shapes.py).
`--mixes unmatched` adds the floor under both: the matching mix under a scenario that matches no
agent, so runs are received, buffered and forwarded but not built or scored.

Printed: every step (offered rate, accepted, p50/p99 latency, the server's CPU use, buffered
runs at the start and end of the step's second half, every refusal's reason and count, the
verdict and why), then per protocol the capacity of each server, the limit that stopped it,
CPU per span (CPU-seconds from idle to idle over spans accepted: a second figure) and the
ratio to parse-and-discard. On a shared machine absolute rates drift; the ratio is the figure.
"""

from __future__ import annotations

import argparse
import asyncio
import ctypes
import hashlib
import json
import math
import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from aiohttp import ClientSession

import mixes
from capacity_report import Step, print_step, print_summary, verdict
from tracescore.config.serve import ExporterSettings

SERVER_CPU, CLIENT_CPU = 0, 1
CONFIRM_FACTOR = 1.07  # a long step that fails is tried again this much lower
CONFIRM_TRIES = 6
# Before a step, the service is let go down to a few hundred buffered runs (a step ends mid-pass,
# and traces cut before their agent span wait for `max_trace_age`): the partial traces of
# requests a failing step lost (not accepted within the deadline) waited up to 60 s, held the
# next step's memory and made it refuse more (gRPC, unmatched mix, 30-s steps: 85%, 50% then
# 41% accepted at falling rates).
SETTLED_RUNS = 500
SETTLE_MAX_S = 65.0
HERE = Path(__file__).resolve().parent
LOGS: dict[int, Any] = {}  # server pid -> its log file (kept open until the end)
_SCENARIO = """
scenarios:
  - name: agents
    match: {agent: "*"}"""
MIXES = {
    "bench": _SCENARIO + mixes.CHECKS,
    "matching": _SCENARIO + mixes.CAPACITY_MATCHING,
    # The floor under any mix: the matching mix's scenario matches no agent, so every run is
    # received, scanned, assembled and forwarded unscored (nothing built, scored or emitted).
    "unmatched": _SCENARIO.replace('"*"', '"no such agent"') + mixes.CAPACITY_MATCHING,
}


def go_sender() -> Path:
    """bench/loadgen built (cached by its sources' hash under ~/.cache/tracescore)."""
    source = HERE / "loadgen"
    digest = hashlib.sha256()
    for name in ("go.mod", "go.sum", "main.go"):
        digest.update((source / name).read_bytes())
    binary = Path.home() / ".cache" / "tracescore" / f"loadgen-{digest.hexdigest()[:16]}"
    if not binary.exists():
        if shutil.which("go") is None:
            raise SystemExit("--sender go needs Go on PATH (or use --sender python)")
        tmp = binary.with_suffix(".tmp")
        subprocess.run(["go", "build", "-o", str(tmp), "."], cwd=source, check=True)
        tmp.rename(binary)
    return binary


def write_stream(n_traces: int, shard: int) -> str:
    """One shard's requests in a file for the Go sender: (spans, size) as two little-endian
    uint32, then the bytes, for each request."""
    from capacity_load import make_stream

    batches, counts = make_stream(n_traces, shard)
    path = Path(tempfile.mkdtemp(prefix="tracescore-capacity-")) / f"stream-{shard}.bin"
    with path.open("wb") as f:
        for body, count in zip(batches, counts, strict=True):
            f.write(struct.pack("<II", count, len(body)) + body)
    return str(path)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def cpu_seconds(pid: int) -> float:
    """utime + stime of a process (0 once it is gone)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def busy_seconds() -> float:
    """CPU-seconds the whole machine spent busy."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    return (sum(v[:8]) - v[3] - v[4]) / os.sysconf("SC_CLK_TCK")


def _pinned(cpu: int) -> Callable[[], None]:
    """What a child runs before exec: its core, and SIGTERM when the bench dies (prctl
    PR_SET_PDEATHSIG), so an interrupted run leaves no server behind."""

    def setup() -> None:
        os.sched_setaffinity(0, {cpu})
        ctypes.CDLL("libc.so.6").prctl(1, signal.SIGTERM)

    return setup


def start(cmd: list[str], cpu: int, ready: str, env: dict[str, str]) -> subprocess.Popen[str]:
    """Start `cmd` pinned to `cpu`, its output to a log file; wait for a line with `ready`."""
    log = tempfile.NamedTemporaryFile("w+", prefix="tracescore-capacity-", suffix=".log")  # noqa: SIM115
    proc = subprocess.Popen(
        cmd,
        stdout=log,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, **env},
        preexec_fn=_pinned(cpu),
    )
    LOGS[proc.pid] = log
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        with open(log.name) as f:
            if ready in f.read():
                return proc
        time.sleep(0.1)
    with open(log.name) as f:
        raise RuntimeError(f"{cmd[:3]} did not start:\n" + f.read()[-3000:])


class Target:
    """One server under test."""

    def __init__(self, name: str, proc: subprocess.Popen[str], port: int, metrics: int | None):
        self.name, self.proc, self.port, self.metrics = name, proc, port, metrics
        self.steps: list[Step] = []
        self.n_pass = 0
        self.idle_cores = 0.0  # CPU use with no load (and /metrics scraped as in a step)


class Ladder:
    """Rates to try: up by `factor` until a step fails, then `refine` bisections; then long
    steps from the highest rate that passed, down by `CONFIRM_FACTOR` until one passes.

    Why confirm: a short step passes a service a few percent behind its load. Nothing is due
    in its first `decision_wait`, and a deficit of d of the rate grows the buffers by about
    1.8 d over the half step the verdict reads, under the 20% it allows below d = 11%. At 8 s a
    step passed the matching mix at 90,000 spans/s over HTTP where a 30-s step at that rate
    found it behind (buffers 13,936 -> 26,391 runs, scored 5.1 s after the load) and passed
    it at 82,569.
    """

    def __init__(
        self, target: Target, start: float, factor: float, refine: int, confirm_s: float
    ) -> None:
        self.target, self.rate, self.factor, self.refine = target, start, factor, refine
        self.lo, self.hi = 0.0, math.inf
        self.done = False
        self.downs = 0
        self.confirm_s = confirm_s
        self.confirming = False
        self.confirms = 0

    def step_s(self, short_s: float) -> float:
        return self.confirm_s if self.confirming else short_s

    def record(self, step: Step) -> None:
        if step.sender_limited:  # the senders could not keep the pace: no verdict on the server
            self.done = True
            return
        if self.confirming:
            self.confirms += 1
            self.rate /= CONFIRM_FACTOR
            self.done = step.ok or self.confirms >= CONFIRM_TRIES
            return
        if step.ok:
            self.lo = max(self.lo, step.rate)
        else:
            self.hi = min(self.hi, step.rate)
        if self.hi == math.inf:
            self.rate *= self.factor
        elif self.lo == 0.0:
            self.downs += 1
            self.rate /= self.factor
            self.done = self.downs > 4
        elif self.refine > 0 and self.hi / self.lo > 1.04:
            self.refine -= 1
            self.rate = math.sqrt(self.lo * self.hi)
        else:
            self.end_search()

    def end_search(self) -> None:
        """The search ended (bisected enough, or out of steps): confirm what passed."""
        if self.lo > 0 and self.confirm_s > 0:
            self.confirming, self.rate = True, self.lo
        else:
            self.done = True


class Bench:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.senders: list[asyncio.subprocess.Process] = []
        self.session: ClientSession | None = None
        self.sink_port = 0
        self.procs: list[subprocess.Popen[str]] = []

    async def setup(self) -> None:
        env = {"PYTHONPATH": str(HERE)}
        http_port, grpc_port = free_port(), free_port()
        cmd = [sys.executable, str(HERE / "capacity_servers.py"), "sink"]
        cmd += ["--http-port", str(http_port), "--grpc-port", str(grpc_port)]
        self.procs.append(start(cmd, CLIENT_CPU, "READY", env))
        self.sink_http, self.sink_grpc = http_port, grpc_port
        loadgen = go_sender() if self.args.sender == "go" else None
        for shard in range(self.args.shards):
            if loadgen is not None:
                cmd = [str(loadgen), "--stream", write_stream(self.args.traces, shard)]
            else:
                cmd = [sys.executable, str(HERE / "capacity_load.py"), "--shard", str(shard)]
                cmd += ["--traces", str(self.args.traces)]
            proc = await asyncio.create_subprocess_exec(
                *cmd,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                preexec_fn=_pinned(CLIENT_CPU),
                limit=256 << 20,  # a step's figures are one line, every latency in it
            )
            assert proc.stdout is not None
            json.loads(await proc.stdout.readline())
            self.senders.append(proc)
        self.session = ClientSession()

    def discard(self, protocol: str) -> Target:
        port = free_port()
        cmd = [sys.executable, str(HERE / "capacity_servers.py"), "discard"]
        cmd += ["--protocol", protocol, "--port", str(port)]
        cmd += ["--grpc-server", self.args.discard_grpc_server]
        proc = start(cmd, SERVER_CPU, "READY", {})
        self.procs.append(proc)
        return Target("parse-and-discard", proc, port, None)

    def service(self, protocol: str, mix: str) -> Target:
        grpc_port, http_port = free_port(), free_port()
        defaults = ExporterSettings(endpoint="http://127.0.0.1:1")
        exporter_protocol = self.args.export_protocol or defaults.protocol
        sink = self.sink_grpc if exporter_protocol == "grpc" else self.sink_http
        exporter = f'endpoint: "http://127.0.0.1:{sink}"'
        if self.args.export_protocol:
            exporter += f", protocol: {self.args.export_protocol}"
        if self.args.export_compression:
            exporter += f", compression: {self.args.export_compression}"
        config = MIXES[mix] + (
            f'receivers:\n  grpc: {{endpoint: "127.0.0.1:{grpc_port}"}}\n'
            f'  http: {{endpoint: "127.0.0.1:{http_port}"}}\nexporter: {{{exporter}}}\n'
        )
        path = Path(tempfile.mkdtemp(prefix="tracescore-capacity-")) / "tracescore.yaml"
        path.write_text(config)
        cmd = [sys.executable, "-m", "tracescore", "serve", "--config", str(path)]
        env = {"PYTHONPATH": self.args.serve_src} if self.args.serve_src else {}
        env.update(item.split("=", 1) for item in self.args.serve_env)  # type: ignore[misc]
        proc = start([*cmd, "--log-level", "warning"], SERVER_CPU, "tracescore serve: ready", env)
        self.procs.append(proc)
        port = grpc_port if protocol == "grpc" else http_port
        return Target(f"serve, {mix} mix", proc, port, http_port)

    async def gauges(self, target: Target) -> tuple[float, float]:
        """(runs buffered, bytes buffered) from the service's /metrics."""
        assert self.session is not None
        assert target.metrics is not None
        url = f"http://127.0.0.1:{target.metrics}/metrics"
        async with self.session.get(url) as resp:
            text = await resp.text()
        runs = nbytes = 0.0
        for line in text.splitlines():
            if line.startswith("tracescore_runs_buffered"):
                runs = float(line.split()[-1])
            elif line.startswith("tracescore_bytes_buffered"):
                nbytes = float(line.split()[-1])
        return runs, nbytes

    async def idle(self, target: Target, seconds: float = 3.0) -> None:
        """The target's CPU use with no load, its /metrics scraped as during a step."""
        c0, t0 = cpu_seconds(target.proc.pid), time.monotonic()
        while time.monotonic() - t0 < seconds:
            if target.metrics:
                await self.gauges(target)
            await asyncio.sleep(0.5)
        target.idle_cores = (cpu_seconds(target.proc.pid) - c0) / (time.monotonic() - t0)

    async def sink_spans(self) -> int:
        assert self.session is not None
        async with self.session.get(f"http://127.0.0.1:{self.sink_http}/count") as resp:
            return int(json.loads(await resp.text())["spans"])

    async def settle(self, target: Target) -> float:
        """Seconds waited until the service held at most `SETTLED_RUNS` runs."""
        started = time.monotonic()
        while target.metrics and time.monotonic() - started < SETTLE_MAX_S:
            runs, _ = await self.gauges(target)
            if runs <= SETTLED_RUNS:
                break
            await asyncio.sleep(0.5)
        return time.monotonic() - started

    async def step(
        self, protocol: str, target: Target, rate: float, seconds: float, confirming: bool
    ) -> Step:
        settle_s = await self.settle(target)
        cmd = {"protocol": protocol, "port": target.port, "seconds": seconds,
               "rate": rate / len(self.senders), "deadline": self.args.deadline_s}  # fmt: skip
        pid = target.proc.pid
        ours = [p.pid for p in self.senders] + [self.procs[0].pid, os.getpid()]
        sink0 = await self.sink_spans() if target.metrics else 0
        c0, b0, o0 = cpu_seconds(pid), busy_seconds(), sum(map(cpu_seconds, ours))
        t0 = time.monotonic()
        for shard, proc in enumerate(self.senders):
            assert proc.stdin is not None
            line = json.dumps({**cmd, "pass0": target.n_pass + 1000 * shard}) + "\n"
            proc.stdin.write(line.encode())
            await proc.stdin.drain()
        samples: list[tuple[float, float, float]] = []

        async def sample() -> None:
            while target.metrics:
                runs, nbytes = await self.gauges(target)
                samples.append((time.monotonic() - t0, runs, nbytes))
                await asyncio.sleep(0.5)

        sampler = asyncio.create_task(sample())
        results = []
        for proc in self.senders:
            assert proc.stdout is not None
            results.append(json.loads(await proc.stdout.readline()))
        sampler.cancel()
        loaded_s, loaded_cpu = time.monotonic() - t0, cpu_seconds(pid) - c0
        target.n_pass = max(r["next_pass"] for r in results)
        spans = sum(r["spans"] for r in results)
        delivered = drain_s = None
        if target.metrics:  # idle to idle: wait until every run was scored and forwarded
            ended = time.monotonic()
            deadline = ended + 30
            # Every accepted span delivered means every run was scored: agent spans are held
            # until then. (The runs gauge never reaches 0: a step ends mid-pass, and traces cut
            # before their agent span wait for `max_trace_age`, their spans forwarded already.)
            while time.monotonic() < deadline:
                delivered = await self.sink_spans() - sink0
                if delivered >= spans:
                    drain_s = time.monotonic() - ended
                    break
                await asyncio.sleep(0.1)
            else:
                drain_s = math.inf
        await asyncio.sleep(0.3)
        wall = time.monotonic() - t0
        cpu = cpu_seconds(pid) - c0
        other = (busy_seconds() - b0 - cpu - (sum(map(cpu_seconds, ours)) - o0)) / wall
        cores = loaded_cpu / loaded_s
        cpu -= target.idle_cores * wall  # ticks, metrics and this bench's scraping, not spans
        step = verdict(rate, seconds, results, samples, cores, cpu, delivered, other, drain_s)
        step.confirming = confirming
        step.settle_s = settle_s
        step.loaded_s = loaded_s
        target.steps.append(step)
        return step

    async def protocol(self, protocol: str) -> list[Target]:
        targets = [self.discard(protocol)]
        targets += [self.service(protocol, mix) for mix in self.args.mixes.split(",")]
        for target in targets:
            await self.idle(target)
        a = self.args
        ladders = [Ladder(targets[0], a.discard_start, a.factor, a.refine, a.confirm_s)]
        ladders += [
            Ladder(t, a.service_start, a.factor, a.refine, a.confirm_s) for t in targets[1:]
        ]
        while any(not ladder.done for ladder in ladders):
            for ladder in ladders:
                if ladder.done or len(ladder.target.steps) >= a.max_steps + CONFIRM_TRIES:
                    ladder.done = True
                    continue
                if not ladder.confirming and len(ladder.target.steps) >= a.max_steps:
                    ladder.end_search()
                    if ladder.done:
                        continue
                seconds = ladder.step_s(a.step_s)
                step = await self.step(
                    protocol, ladder.target, ladder.rate, seconds, ladder.confirming
                )
                print_step(protocol, ladder.target.name, step)
                ladder.record(step)
        for target in targets:
            target.proc.terminate()
        for target in targets:
            target.proc.wait()
        return targets

    async def close(self) -> None:
        for proc in self.senders:
            assert proc.stdin is not None
            proc.stdin.close()
            await proc.wait()
        for proc in self.procs:
            proc.terminate()
            proc.wait()
        if self.session is not None:
            await self.session.close()


async def run(args: argparse.Namespace) -> dict:
    bench = Bench(args)
    report: dict = {"args": vars(args), "protocols": {}}
    try:
        await bench.setup()
        defaults = ExporterSettings(endpoint="http://127.0.0.1:1")
        print(
            f"servers on CPU {SERVER_CPU}; {args.shards} {args.sender} sender processes and the"
            f" sink on CPU"
            f" {CLIENT_CPU}; steps of {args.step_s:.0f} s; serve exports over"
            f" {args.export_protocol or defaults.protocol + ' (default)'} with compression"
            f" {args.export_compression or defaults.compression + ' (default)'}"
            + (f"; serve's environment: {' '.join(args.serve_env)}" if args.serve_env else ""),
            flush=True,
        )
        for protocol in args.protocols.split(","):
            targets = await bench.protocol(protocol)
            report["protocols"][protocol] = print_summary(protocol, targets)
    finally:
        await bench.close()
    return report


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="shorter steps, coarser search")
    parser.add_argument("--protocols", default="http,grpc")
    parser.add_argument("--mixes", default="bench,matching")
    parser.add_argument("--shards", type=int, default=2, help="sender processes")
    parser.add_argument(
        "--sender",
        choices=["go", "python"],
        default="go" if shutil.which("go") else "python",
        help="bench/loadgen (Go; the default where Go is installed) or bench/capacity_load.py:"
        " the Python sender lags below parse-and-discard's limit",
    )
    parser.add_argument("--traces", type=int, default=2000, help="distinct traces per pass")
    parser.add_argument("--step-s", type=float, help="seconds of load per step (8; quick 5)")
    parser.add_argument(
        "--confirm-s",
        type=float,
        help="seconds of the long steps that confirm each server's capacity (30; quick 20;"
        " 0: none, the search's highest passing step is the capacity)",
    )
    parser.add_argument("--deadline-s", type=float, default=10.0)
    parser.add_argument("--discard-start", type=float, default=40_000, help="spans/s")
    parser.add_argument("--service-start", type=float, default=5_000, help="spans/s")
    parser.add_argument("--factor", type=float, help="rate step up (1.4; quick 1.6)")
    parser.add_argument("--refine", type=int, help="bisections after the first failure (2; 1)")
    parser.add_argument("--max-steps", type=int, default=18)
    parser.add_argument("--export-protocol", choices=["grpc", "http/protobuf"])
    parser.add_argument(
        "--discard-grpc-server",
        choices=["threads", "aio"],
        default="aio",
        help="parse-and-discard's gRPC server: grpc.aio's (faster when it does nothing else:"
        " 512k+ against 312k spans/s) or grpcio's threaded one (serve's)",
    )
    parser.add_argument("--export-compression", choices=["gzip", "none"])
    parser.add_argument(
        "--serve-src", help="run serve from this source tree (a src/ folder) to compare versions"
    )
    parser.add_argument(
        "--serve-env",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="environment of serve, e.g. TRACESCORE_NATIVE=0 for the pure-Python path",
    )
    parser.add_argument("--out", help="write every step and the summary as JSON here")
    args = parser.parse_args()
    args.step_s = args.step_s or (5.0 if args.quick else 8.0)
    args.factor = args.factor or (1.6 if args.quick else 1.4)
    if args.confirm_s is None:
        args.confirm_s = 20.0 if args.quick else 30.0
    args.refine = args.refine if args.refine is not None else (1 if args.quick else 2)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    report = asyncio.run(run(args))
    if args.out:
        Path(args.out).write_text(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
