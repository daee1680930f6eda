"""What refusing an unread OTLP request costs the server, over HTTP and over gRPC.

    .venv/bin/python bench/refusal_cost.py [--requests 400] [--rounds 2] [--protocol http|grpc]

`tracescore serve` decides before it reads a body (the buffer's limits are checked first), so
a refused request's body is still in the socket. An aiohttp server (CPU 0) answers every POST
with 503 and Retry-After, one way or the other, to a client on CPU 1 sending 512-span requests
(bench/capacity_load.py's stream) one after another on a keep-alive connection:
- drain: what aiohttp does after the handler returns: it reads and drops the rest of the body
  (up to `lingering_time`), then keeps the connection;
- close: the handler marks the connection to be closed at once (`force_close` on the response
  and the protocol), so the unread body is never read.
Printed per mode: the server's CPU per refused request and what the client saw. Closing with
unread data makes the kernel reset the connection, which can destroy the 503 before the
client reads it: the client then sees a reset, not the Retry-After.

`--protocol grpc`: a grpcio threaded server (serve's) answers UNAVAILABLE to 8 calls at a time
from grpc.aio, the method registered one way or the other:
- read: unary-unary, as `serve` registers Export: grpcio has received the whole message before
  the handler runs;
- unread: stream-unary (the client still makes a unary call): the handler aborts before it
  asks for the message;
and, for the price of the second way on every call that is accepted, the same two
registrations answering OK after reading the message (accept-unary, accept-stream).
"""

from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import os
import socket
import subprocess
import sys
from collections import Counter

import grpc
from aiohttp import web

from capacity_load import GrpcClient, HttpClient, make_stream

SERVICE = "opentelemetry.proto.collector.trace.v1.TraceService"
GRPC_MODES = ("read", "unread", "accept-unary", "accept-stream")


def server(mode: str, port: int) -> None:
    async def traces(request: web.Request) -> web.Response:
        resp = web.Response(
            status=503, body=b"\x08\x0e", headers={"Retry-After": "1"},
            content_type="application/x-protobuf",
        )  # fmt: skip
        if mode == "close":
            resp.force_close()
            request.protocol.force_close()
        return resp

    async def main() -> None:
        app = web.Application(client_max_size=64 << 20)
        app.router.add_post("/v1/traces", traces)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", port).start()
        print("READY", flush=True)
        await asyncio.Event().wait()

    asyncio.run(main())


def grpc_server(mode: str, port: int) -> None:
    def refuse(_request: object, context: grpc.ServicerContext) -> bytes:
        context.abort(grpc.StatusCode.UNAVAILABLE, "overloaded")
        raise AssertionError("abort raises")

    def accept_stream(requests: object, _context: grpc.ServicerContext) -> bytes:
        for _ in requests:  # type: ignore[attr-defined]
            pass
        return b""

    handler = {
        "read": grpc.unary_unary_rpc_method_handler(refuse),
        "unread": grpc.stream_unary_rpc_method_handler(refuse),
        "accept-unary": grpc.unary_unary_rpc_method_handler(lambda _r, _c: b""),
        "accept-stream": grpc.stream_unary_rpc_method_handler(accept_stream),
    }[mode]
    server = grpc.server(
        concurrent.futures.ThreadPoolExecutor(32),
        options=[("grpc.max_receive_message_length", 64 << 20)],
    )
    server.add_generic_rpc_handlers(
        (grpc.method_handlers_generic_handler(SERVICE, {"Export": handler}),)
    )
    server.add_insecure_port(f"127.0.0.1:{port}")
    server.start()
    print("READY", flush=True)
    server.wait_for_termination()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def load(port: int, body: bytes, n: int, protocol: str) -> Counter[str]:
    client = HttpClient(port) if protocol == "http" else GrpcClient(port)
    seen = Counter[str]()
    calls = asyncio.Semaphore(1 if protocol == "http" else 8)

    async def one() -> None:
        async with calls:
            outcome, reason, _ = await client.send(body)
        seen[f"{outcome} ({reason.split(':')[0]})"] += 1

    await asyncio.gather(*(one() for _ in range(n)))
    await client.close()
    return seen


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=400)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--protocol", choices=["http", "grpc"], default="http")
    parser.add_argument("--serve", nargs=2, metavar=("MODE", "PORT"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        mode, port = args.serve[0], int(args.serve[1])
        grpc_server(mode, port) if mode in GRPC_MODES else server(mode, port)
        return
    os.sched_setaffinity(0, {1})
    body = make_stream(60, 0)[0][0]
    for _ in range(args.rounds):
        for mode in ("drain", "close") if args.protocol == "http" else GRPC_MODES:
            port = free_port()
            proc = subprocess.Popen(
                [sys.executable, __file__, "--serve", mode, str(port)],
                stdout=subprocess.PIPE,
                text=True,
                preexec_fn=lambda: os.sched_setaffinity(0, {0}),
            )
            assert proc.stdout is not None
            proc.stdout.readline()
            before = cpu_seconds(proc.pid)
            seen = asyncio.run(load(port, body, args.requests, args.protocol))
            used = cpu_seconds(proc.pid) - before
            proc.terminate()
            proc.wait()
            print(
                f"{mode:>13}: {used / args.requests * 1e6:5.0f} µs of server CPU per"
                f" {len(body):,} B request; the client saw {dict(seen)}",
                flush=True,
            )


if __name__ == "__main__":
    main()
