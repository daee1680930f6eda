"""The event-loop time one OTLP receive costs a busy service, by transport, side by side.

    .venv/bin/python bench/receive_cost.py [--rate 200] [--seconds 10] [--rounds 2]

`tracescore serve` builds and scores runs on its event loop in slices; what receiving a
request costs it is the slice time it loses. A server process on CPU 0 runs busy slices (3 ms
of its loop thread's CPU, a `sleep(0)` after each: timed by the thread's CPU clock, so what
grpcio's own threads take from the core counts too) beside one OTLP endpoint whose handler
hands the request to that loop as the service's receivers do; a paced sender on CPU 1 offers
`--rate` requests a second, each bench/shapes.py's traces in one 512-span request (~336 KB).
Each transport is run idle, then loaded, in each round. Printed: requests answered a second,
the sender's latency, and the core's time lost per request and per span (slices lost times
their length, over requests answered).

- grpc-threads: grpcio's threaded server; a handler thread waits for the loop (serve's gRPC
  receiver);
- grpc-aio-thread: grpc.aio's server on a thread and loop of its own, handing each request to
  the main loop;
- grpc-aio: grpc.aio's server on the main loop (its accepts wait for the slices: latency);
- http: aiohttp on the main loop, reading the body (serve's HTTP receiver).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import subprocess
import sys
import threading
import time
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from loop_turns import Slices
from shapes import messages_trace, tool_spans_trace

PORT = 15319
SERVICE = "opentelemetry.proto.collector.trace.v1.TraceService"
METHOD = f"/{SERVICE}/Export"
TRANSPORTS = ("grpc-threads", "grpc-aio-thread", "grpc-aio", "http")
SPANS = 512
WARM_S = 3.0


def request_body() -> bytes:
    """One 512-span request of the benchmarks' two trace shapes, alternating."""
    rng, spans, n = random.Random(1), [], 0
    while len(spans) < SPANS:
        shape = messages_trace if n % 2 else tool_spans_trace
        spans += shape(rng, 1_700_000_000_000_000_000 + n * 1_000_000_000)
        n += 1
    request = ExportTraceServiceRequest()
    request.resource_spans.add().scope_spans.add().spans.extend(spans[:SPANS])
    return request.SerializeToString()


async def serve(transport: str, slice_s: float, seconds: float) -> None:
    """One endpoint beside the slices; prints answered/s and slices/s over `seconds`."""
    import grpc
    from aiohttp import web

    sys.setswitchinterval(0.001)  # as serve sets it
    loop = asyncio.get_running_loop()
    answered = 0
    slices = Slices(slice_s, clock=time.thread_time)  # threads' CPU must show as lost

    async def take(body: bytes) -> bytes:  # the service's work on its loop, left out
        nonlocal answered
        answered += 1
        return b""

    def on_thread(body: bytes, context: Any) -> bytes:
        return asyncio.run_coroutine_threadsafe(take(body), loop).result(5.0)

    async def on_own_loop(body: bytes, context: Any) -> bytes:
        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(take(body), loop))

    async def on_main_loop(body: bytes, context: Any) -> bytes:
        return await take(body)

    async def over_http(request: web.Request) -> web.Response:
        return web.Response(body=await take(await request.read()))

    def grpc_handler(method: Callable[..., Any]) -> Any:
        return grpc.method_handlers_generic_handler(
            SERVICE, {"Export": grpc.unary_unary_rpc_method_handler(method)}
        )

    options = [("grpc.max_receive_message_length", 64 << 20)]
    address = f"127.0.0.1:{PORT}"
    if transport == "grpc-threads":
        threaded = grpc.server(ThreadPoolExecutor(32), options=options)
        threaded.add_generic_rpc_handlers((grpc_handler(on_thread),))
        threaded.add_insecure_port(address)
        threaded.start()
    elif transport == "grpc-aio":
        server = grpc.aio.server(options=options)
        server.add_generic_rpc_handlers((grpc_handler(on_main_loop),))
        server.add_insecure_port(address)
        await server.start()
    elif transport == "grpc-aio-thread":
        ready = threading.Event()

        async def own_loop() -> None:
            server = grpc.aio.server(options=options)
            server.add_generic_rpc_handlers((grpc_handler(on_own_loop),))
            server.add_insecure_port(address)
            await server.start()
            ready.set()
            await asyncio.Event().wait()

        threading.Thread(target=asyncio.run, args=(own_loop(),), daemon=True).start()
        ready.wait()
    else:
        app = web.Application(client_max_size=64 << 20)
        app.router.add_post("/v1/traces", over_http)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", PORT).start()

    task = asyncio.create_task(slices.run())
    print("ready", flush=True)
    await asyncio.sleep(WARM_S)
    answered0, slices0 = answered, slices.done
    await asyncio.sleep(seconds)
    print((answered - answered0) / seconds, (slices.done - slices0) / seconds, flush=True)
    task.cancel()
    os._exit(0)  # grpc.aio's shutdown with calls in flight is slow and noisy: not measured


async def send(transport: str, rate: float, seconds: float) -> None:
    """Open loop: one request every 1/rate s for `seconds`; prints p50 and p99 latency (s)."""
    body = request_body()
    latencies: list[float] = []
    one: Callable[[], Awaitable[None]]
    if transport.startswith("grpc"):
        import grpc

        channel = grpc.aio.insecure_channel(
            f"127.0.0.1:{PORT}", options=[("grpc.max_send_message_length", 64 << 20)]
        )
        call = channel.unary_unary(METHOD)

        async def one_grpc() -> None:
            await call(body, timeout=10)

        one = one_grpc
    else:
        from aiohttp import ClientSession

        session = ClientSession()
        headers = {"Content-Type": "application/x-protobuf"}

        async def one_http() -> None:
            url = f"http://127.0.0.1:{PORT}/v1/traces"
            async with session.post(url, data=body, headers=headers) as response:
                await response.read()

        one = one_http

    async def timed(due: float) -> None:
        try:
            await one()
            latencies.append(time.perf_counter() - due)
        except Exception:  # the server ends first: the last calls fail, uncounted
            pass

    tasks: set[asyncio.Task[None]] = set()
    start, n = time.perf_counter(), 0
    while (due := start + n / rate) < start + seconds:
        await asyncio.sleep(max(0.0, due - time.perf_counter()))
        task = asyncio.create_task(timed(due))
        tasks.add(task)
        task.add_done_callback(tasks.discard)
        n += 1
    latencies.sort()
    if not latencies:
        print("nan nan", flush=True)
    else:
        last = len(latencies) - 1
        print(latencies[last // 2], latencies[min(last, int(len(latencies) * 0.99))], flush=True)
    os._exit(0)


def one_run(transport: str, rate: float, seconds: float, slice_ms: float) -> list[float]:
    """[answered/s, slices/s, p50 s, p99 s] of the server loaded at `rate` (0: idle)."""
    me = [sys.executable, __file__, "--transport", transport, "--slice-ms", str(slice_ms)]
    server = subprocess.Popen(
        ["taskset", "-c", "0", *me, "--role", "server", "--seconds", str(seconds)],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert server.stdout is not None
    server.stdout.readline()  # ready
    sender = None
    if rate:
        sending = ["--role", "sender", "--rate", str(rate), "--seconds", str(WARM_S + seconds)]
        sender = subprocess.Popen(
            ["taskset", "-c", "1", *me, *sending],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
    figures = [float(x) for x in server.stdout.read().split()]
    server.wait()
    if sender is None:
        return [*figures, 0.0, 0.0]
    out, _ = sender.communicate()
    return figures + [float(x) for x in out.split()]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rate", type=float, default=200.0, help="requests/s")
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--slice-ms", type=float, default=3.0)
    parser.add_argument("--transports", default=",".join(TRANSPORTS))
    parser.add_argument("--role", choices=["server", "sender"], help=argparse.SUPPRESS)
    parser.add_argument("--transport", default="http", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.role == "server":
        asyncio.run(serve(args.transport, args.slice_ms / 1000, args.seconds))
        return 0
    if args.role == "sender":
        asyncio.run(send(args.transport, args.rate, args.seconds))
        return 0
    print(f"{args.rate:g} requests/s of {SPANS} spans; slices of {args.slice_ms:g} ms on CPU 0")
    for round_ in range(1, args.rounds + 1):
        print(f"round {round_}")
        for transport in args.transports.split(","):
            _, idle, _, _ = one_run(transport, 0, args.seconds, args.slice_ms)
            answered, loaded, p50, p99 = one_run(transport, args.rate, args.seconds, args.slice_ms)
            lost_us = (idle - loaded) * args.slice_ms * 1000 / max(answered, 1e-9)
            print(
                f"  {transport:16} answered {answered:6.1f}/s  p50 {p50 * 1000:7.1f} ms"
                f"  p99 {p99 * 1000:7.1f} ms  loop time lost {lost_us:6.0f} µs a request"
                f" ({lost_us / SPANS:4.2f} µs a span)",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
