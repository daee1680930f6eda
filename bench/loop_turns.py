"""How many requests a receiver answers while the event loop also runs CPU-bound slices.

    .venv/bin/python bench/loop_turns.py [--slice-ms 5] [--seconds 5]

`tracescore serve` scores due runs on its event loop in slices, with one loop iteration
(`sleep(0)`) between them (pipeline/ticks.py). A grpc.aio server accepts one call at a time,
and each accept needs a few loop iterations in turn (the request's completion reaches the loop
through grpc's poller thread), so beside slices it answers about one call per four slices;
aiohttp reads requests from every connection in the same iteration; grpcio's threaded server
(what the service's gRPC receiver is) accepts on its own threads, and its handler hands the
request to the loop and waits, as the receiver does. This bench puts a slice-running task next
to each bare OTLP endpoint (server pinned to CPU 0) and a 64-call-deep client in another
process (CPU 1), and prints requests answered and slices run per second for each kind of turn:
`sleep(0)`, several of them, short real sleeps. In the service neither a 0.5 ms sleep nor four
`sleep(0)` per slice raised grpc.aio's capacity in bench/capacity.py (docs/performance.md).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import time
from collections.abc import Callable

PORT_GRPC, PORT_HTTP = 15317, 15318
METHOD = "/opentelemetry.proto.collector.trace.v1.TraceService/Export"
TURNS = {"sleep(0)": (0, 1), "4 x sleep(0)": (0, 4), "sleep 0.2 ms": (0.0002, 1),
         "sleep 0.5 ms": (0.0005, 1), "sleep 1 ms": (0.001, 1)}  # fmt: skip


class Slices:
    """CPU-bound slices of `slice_s` on the running loop, each followed by `yields` sleeps of
    `pause` s (a turn of the loop); `run` never returns, `done` counts the slices. A slice
    lasts `slice_s` by `clock`: wall time by default (what this bench asks: how often the loop
    turns); `time.thread_time` makes it that much of the loop thread's own CPU, so what other
    threads take from the core shows as slices lost (bench/receive_cost.py)."""

    def __init__(
        self,
        slice_s: float,
        pause: float = 0.0,
        yields: int = 1,
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        self.slice_s, self.pause, self.yields, self.clock = slice_s, pause, yields, clock
        self.done = 0

    async def run(self) -> None:
        clock = self.clock
        while True:
            started = clock()
            while clock() - started < self.slice_s:
                pass
            self.done += 1
            for _ in range(self.yields):
                await asyncio.sleep(self.pause)


async def serve(protocol: str, slice_s: float, turn: str, seconds: float) -> None:
    """One server, a slice-running task beside it; prints calls/s and slices/s."""
    from concurrent.futures import ThreadPoolExecutor

    import grpc
    from aiohttp import web

    answered = 0
    slices = Slices(slice_s, *TURNS[turn])

    async def grpc_export(body: bytes, context: object) -> bytes:
        nonlocal answered
        answered += 1
        return b""

    loop = asyncio.get_running_loop()

    async def taken(body: bytes) -> bytes:
        return b""

    def threaded_export(body: bytes, context: object) -> bytes:
        nonlocal answered
        answer = asyncio.run_coroutine_threadsafe(taken(body), loop).result()
        answered += 1
        return answer

    async def http_export(request: web.Request) -> web.Response:
        nonlocal answered
        await request.read()
        answered += 1
        return web.Response(body=b"")

    if protocol in ("grpc", "grpc-threads"):
        threaded = protocol == "grpc-threads"
        server = grpc.server(ThreadPoolExecutor(32)) if threaded else grpc.aio.server()
        method = threaded_export if threaded else grpc_export
        handler = grpc.method_handlers_generic_handler(
            METHOD.split("/")[1], {"Export": grpc.unary_unary_rpc_method_handler(method)}
        )
        server.add_generic_rpc_handlers((handler,))
        server.add_insecure_port(f"127.0.0.1:{PORT_GRPC}")
        started = server.start()
        if started is not None:
            await started
    else:
        app = web.Application()
        app.router.add_post("/v1/traces", http_export)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", PORT_HTTP).start()
    task = asyncio.create_task(slices.run())
    await asyncio.sleep(2)
    calls0, slices0 = answered, slices.done
    await asyncio.sleep(seconds)
    task.cancel()
    print(
        f"  {protocol:12} {turn:13} calls/s {(answered - calls0) / seconds:7.0f}"
        f"   slices/s {(slices.done - slices0) / seconds:5.0f}",
        flush=True,
    )
    os._exit(0)  # grpc.aio's shutdown with calls in flight is slow and noisy: not measured


async def client(protocol: str) -> None:
    """64 calls in flight, each sent again as soon as it is answered."""
    body = b"\n\x00" * 500
    if protocol.startswith("grpc"):
        import grpc

        channel = grpc.aio.insecure_channel(f"127.0.0.1:{PORT_GRPC}")
        call = channel.unary_unary(METHOD)

        async def one() -> None:
            await call(body, timeout=5)
    else:
        from aiohttp import ClientSession, TCPConnector

        session = ClientSession(connector=TCPConnector(limit=64))

        async def one() -> None:
            async with session.post(f"http://127.0.0.1:{PORT_HTTP}/v1/traces", data=body) as r:
                await r.read()

    async def worker() -> None:
        while True:
            try:
                await one()
            except Exception:
                await asyncio.sleep(0.1)

    await asyncio.gather(*(worker() for _ in range(64)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--slice-ms", type=float, default=5.0)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--role", choices=["server", "client"], help=argparse.SUPPRESS)
    parser.add_argument("--protocol", default="grpc", help=argparse.SUPPRESS)
    parser.add_argument("--turn", default="sleep(0)", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.role == "server":
        os.sched_setaffinity(0, {0})
        asyncio.run(serve(args.protocol, args.slice_ms / 1000, args.turn, args.seconds))
        return
    if args.role == "client":
        os.sched_setaffinity(0, {1})
        asyncio.run(client(args.protocol))
        return
    print(f"slices of {args.slice_ms:g} ms on the server's loop; a turn after each:")
    me = [sys.executable, __file__, "--slice-ms", str(args.slice_ms)]
    for protocol in ("grpc", "grpc-threads", "http"):
        for turn in TURNS:
            load = subprocess.Popen([*me, "--role", "client", "--protocol", protocol])
            try:
                server = [*me, "--seconds", str(args.seconds), "--role", "server"]
                subprocess.run([*server, "--protocol", protocol, "--turn", turn], check=True)
            finally:
                load.kill()
                load.wait()


if __name__ == "__main__":
    sys.exit(main())
