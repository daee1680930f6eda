"""How many requests a receiver answers while the event loop also runs CPU-bound slices.

    .venv/bin/python bench/loop_turns.py [--slice-ms 5] [--seconds 5]

`tracescore serve` scores due runs on its event loop in slices, with one loop iteration
(`sleep(0)`) between them (pipeline/ticks.py). A grpc.aio server accepts one call at a time,
and each accept needs a few loop iterations in turn (the request's completion reaches the loop
through grpc's poller thread), so beside slices it answers about one call per four slices;
aiohttp reads requests from every connection in the same iteration. This bench puts a
slice-running task next to a bare gRPC and a bare aiohttp OTLP endpoint (server pinned to CPU
0) and a 64-call-deep client in another process (CPU 1), and prints requests answered and
slices run per second for each kind of turn: `sleep(0)`, several of them, short real sleeps.
In the service neither a 0.5 ms sleep nor four `sleep(0)` per slice raised capacity in
bench/capacity.py (docs/performance.md): there, a request's own handling, not the accept,
is what a slice delays.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import time

PORT_GRPC, PORT_HTTP = 15317, 15318
METHOD = "/opentelemetry.proto.collector.trace.v1.TraceService/Export"
TURNS = {"sleep(0)": (0, 1), "4 x sleep(0)": (0, 4), "sleep 0.2 ms": (0.0002, 1),
         "sleep 0.5 ms": (0.0005, 1), "sleep 1 ms": (0.001, 1)}  # fmt: skip


async def serve(protocol: str, slice_s: float, turn: str, seconds: float) -> None:
    """One server, a slice-running task beside it; prints calls/s and slices/s."""
    import grpc
    from aiohttp import web

    answered = slices = 0
    pause, yields = TURNS[turn]

    async def grpc_export(body: bytes, context: object) -> bytes:
        nonlocal answered
        answered += 1
        return b""

    async def http_export(request: web.Request) -> web.Response:
        nonlocal answered
        await request.read()
        answered += 1
        return web.Response(body=b"")

    async def slices_forever() -> None:
        nonlocal slices
        while True:
            started = time.perf_counter()
            while time.perf_counter() - started < slice_s:
                pass
            slices += 1
            for _ in range(yields):
                await asyncio.sleep(pause)

    if protocol == "grpc":
        server = grpc.aio.server()
        handler = grpc.method_handlers_generic_handler(
            METHOD.split("/")[1], {"Export": grpc.unary_unary_rpc_method_handler(grpc_export)}
        )
        server.add_generic_rpc_handlers((handler,))
        server.add_insecure_port(f"127.0.0.1:{PORT_GRPC}")
        await server.start()
    else:
        app = web.Application()
        app.router.add_post("/v1/traces", http_export)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", PORT_HTTP).start()
    task = asyncio.create_task(slices_forever())
    await asyncio.sleep(2)
    calls0, slices0 = answered, slices
    await asyncio.sleep(seconds)
    task.cancel()
    print(
        f"  {protocol:4} {turn:13} calls/s {(answered - calls0) / seconds:7.0f}"
        f"   slices/s {(slices - slices0) / seconds:5.0f}",
        flush=True,
    )
    os._exit(0)  # grpc.aio's shutdown with calls in flight is slow and noisy: not measured


async def client(protocol: str) -> None:
    """64 calls in flight, each sent again as soon as it is answered."""
    body = b"\n\x00" * 500
    if protocol == "grpc":
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
    for protocol in ("grpc", "http"):
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
