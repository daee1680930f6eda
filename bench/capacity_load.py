"""The open-loop paced sender of bench/capacity.py, run as its own process (one per shard).

    capacity_load.py --shard K --traces N    (then one JSON command per line on stdin)

Each command asks for one step: `rate` spans/s for `seconds` to a server on `port` over
`protocol` (http: OTLP/HTTP protobuf; grpc). Requests leave at the times the rate sets whether
or not earlier ones were answered (open loop: a slow server does not slow the sender down, so
its latency is counted from when a request was due, not from when it could be sent). A refused
request (HTTP 503, gRPC UNAVAILABLE) is sent again after the delay the server advised
(Retry-After, RetryInfo), as the OpenTelemetry SDK's exporters do; one not accepted within
`deadline` seconds of being due counts as lost. The step's figures go back as one JSON line.

The stream mixes two trace shapes (bench/shapes.py), 512-span batches ordered by end time
(children before their agent span, as an SDK exports them), four services; each shard has
its own trace ids and every pass over the stream renews them.

The HTTP client is a few lines of HTTP/1.1 over asyncio streams, not aiohttp's: the senders
share one core with the sink, and at parse-and-discard's rates aiohttp's client would run out
of that core before the server did (it costs about 0.4 core at 800,000 spans/s, see
reference/performance.md B.2); this one writes prepared bytes and reads one small answer.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import re
import sys
import time
from collections import Counter
from collections.abc import Awaitable, Callable

import grpc
from google.rpc import error_details_pb2, status_pb2
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from shapes import kv, messages_trace, tag, tool_spans_trace

EXPORT = "/opentelemetry.proto.collector.trace.v1.TraceService/Export"
SERVICES = ["support-agent", "coding-agent", "research-agent", "billing-agent"]
MAX_IN_FLIGHT = 256

# (answered: accepted / refused / failed, reason, seconds to wait before retrying)
Outcome = tuple[str, str, float]


def make_stream(n_traces: int, shard: int) -> tuple[list[bytes], list[int]]:
    """512-span batches and their span counts: traces alternate between the two shapes."""
    rng = random.Random(1000 + shard)
    spans = []
    for i in range(n_traces):
        t0 = 1_760_000_000_000_000_000 + i * 500_000_000
        trace = (tool_spans_trace if i % 2 == 0 else messages_trace)(rng, t0)
        tid = rng.randbytes(10) + tag(0)  # ids renewed per pass by one replace
        for span in trace:
            span.trace_id = tid
            spans.append((span.end_time_unix_nano, SERVICES[i % 4], span))
    spans.sort(key=lambda x: x[0])
    batches, counts = [], []
    for off in range(0, len(spans), 512):
        req, by = ExportTraceServiceRequest(), {}
        for _, svc, span in spans[off : off + 512]:
            if svc not in by:
                rs = req.resource_spans.add()
                rs.resource.attributes.extend(
                    [kv("service.name", svc), kv("service.version", "1.4.2"),
                     kv("deployment.environment.name", "prod")]
                )  # fmt: skip
                by[svc] = rs.scope_spans.add()
                by[svc].scope.name = "opentelemetry.instrumentation.openai_agents"
            by[svc].spans.append(span)
        batches.append(req.SerializeToString())
        counts.append(len(spans[off : off + 512]))
    return batches, counts


def reason_of(message: str) -> str:
    """A refusal's message with its numbers left out, so refusals group by cause."""
    return re.sub(r"\d+(\.\d+)?", "N", message)[:160]


class HttpClient:
    """Keep-alive HTTP/1.1 POSTs of prepared protobuf bodies to /v1/traces."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.idle: list[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = []
        self.head = (
            f"POST /v1/traces HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
            "Content-Type: application/x-protobuf\r\nContent-Length: "
        ).encode()

    async def send(self, body: bytes) -> Outcome:
        if self.idle:
            conn = self.idle.pop()
        else:
            conn = await asyncio.open_connection("127.0.0.1", self.port)
        reader, writer = conn
        try:
            writer.write(self.head + str(len(body)).encode() + b"\r\n\r\n" + body)
            head = await reader.readuntil(b"\r\n\r\n")
            lines = head.decode("latin-1").split("\r\n")
            status = int(lines[0].split()[1])
            headers = {}
            for line in lines[1:]:
                if ":" in line:
                    name, value = line.split(":", 1)
                    headers[name.strip().lower()] = value.strip()
            payload = await reader.readexactly(int(headers.get("content-length", "0")))
        except (OSError, asyncio.IncompleteReadError, ValueError, IndexError) as exc:
            writer.close()
            return "failed", f"connection: {type(exc).__name__}", 0.0
        if headers.get("connection", "").lower() == "close":
            writer.close()
        else:
            self.idle.append(conn)
        if status == 200:
            return "accepted", "", 0.0
        message = f"HTTP {status}"
        if headers.get("content-type") == "application/x-protobuf":
            message += ": " + status_pb2.Status.FromString(payload).message
        if status in (429, 502, 503, 504):
            return "refused", reason_of(message), float(headers.get("retry-after") or 1.0)
        return "failed", reason_of(message), 0.0

    async def close(self) -> None:
        for _, writer in self.idle:
            writer.close()
        self.idle = []


def retry_delay(metadata: object) -> float:
    """Seconds from a gRPC error's RetryInfo (grpc-status-details-bin), 1 without one."""
    for key, value in metadata or ():  # type: ignore[attr-defined]
        if key == "grpc-status-details-bin":
            for detail in status_pb2.Status.FromString(value).details:
                info = error_details_pb2.RetryInfo()
                if detail.Unpack(info):
                    return info.retry_delay.seconds + info.retry_delay.nanos / 1e9
    return 1.0


class GrpcClient:
    """Unary TraceService/Export calls with prepared request bytes."""

    def __init__(self, port: int) -> None:
        self.channel = grpc.aio.insecure_channel(
            f"127.0.0.1:{port}", options=[("grpc.max_send_message_length", 64 << 20)]
        )
        self.call = self.channel.unary_unary(EXPORT)

    async def send(self, body: bytes) -> Outcome:
        try:
            await self.call(body, timeout=30)
        except grpc.aio.AioRpcError as err:
            message = f"{err.code().name}: {err.details()}"
            if err.code() in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.RESOURCE_EXHAUSTED):
                return "refused", reason_of(message), retry_delay(err.trailing_metadata())
            return "failed", reason_of(message), 0.0
        return "accepted", "", 0.0

    async def close(self) -> None:
        await self.channel.close()


async def step(stream: tuple[list[bytes], list[int]], cmd: dict) -> dict:
    """Send `cmd['rate']` spans/s for `cmd['seconds']`; the step's figures."""
    batches, counts = stream
    rate, seconds, deadline = cmd["rate"], cmd["seconds"], cmd["deadline"]
    client = HttpClient(cmd["port"]) if cmd["protocol"] == "http" else GrpcClient(cmd["port"])
    per_request = sum(counts) / len(counts)
    interval = per_request / rate
    n_requests = max(1, int(seconds / interval))
    slots = asyncio.Semaphore(MAX_IN_FLIGHT)
    refusals: Counter[str] = Counter()
    failures: Counter[str] = Counter()
    latencies: list[float] = []
    late: list[float] = []
    tally = Counter[str]()
    send: Callable[[bytes], Awaitable[Outcome]] = client.send

    async def request(index: int, due: float) -> None:
        n_pass, i = divmod(index, len(batches))
        n_pass += cmd["pass0"]
        body = batches[i].replace(tag(0), tag(n_pass))
        async with slots:
            first = True
            while True:
                outcome, reason, wait = await send(body)
                now = time.monotonic()
                if outcome == "accepted":
                    latencies.append(now - due)
                    tally["accepted"] += 1
                    tally["first_try" if first else "after_retry"] += 1
                    tally["spans"] += counts[i]
                    return
                first = False
                if outcome == "failed":
                    failures[reason] += 1
                    return
                refusals[reason] += 1
                if now + wait - due > deadline:
                    failures["not accepted within the deadline"] += 1
                    return
                await asyncio.sleep(wait)

    tasks = []
    start = time.monotonic() + 0.02
    for index in range(n_requests):
        due = start + index * interval
        delay = due - time.monotonic()
        if delay > 0:
            await asyncio.sleep(delay)
        late.append(time.monotonic() - due)  # the sender's own lag: it must stay small
        tasks.append(asyncio.create_task(request(index, due)))
    sent_by = time.monotonic()
    await asyncio.gather(*tasks)
    await client.close()
    return {
        "offered": n_requests,
        "offered_spans": sum(counts[i % len(batches)] for i in range(n_requests)),
        "sending_s": sent_by - start,
        "accepted": tally["accepted"],
        "first_try": tally["first_try"],
        "spans": tally["spans"],
        "refusals": dict(refusals),
        "failures": dict(failures),
        "latencies": sorted(round(x, 5) for x in latencies),
        "late": sorted(round(x, 5) for x in late),
        "next_pass": cmd["pass0"] + n_requests // len(batches) + 1,
    }


async def serve_commands(stream: tuple[list[bytes], list[int]]) -> None:
    loop = asyncio.get_running_loop()
    print(json.dumps({"ready": True, "batches": len(stream[0])}), flush=True)
    while line := await loop.run_in_executor(None, sys.stdin.readline):
        print(json.dumps(await step(stream, json.loads(line))), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shard", type=int, default=0)
    parser.add_argument("--traces", type=int, default=2000)
    args = parser.parse_args()
    asyncio.run(serve_commands(make_stream(args.traces, args.shard)))


if __name__ == "__main__":
    main()
