"""What refusing an unread OTLP/HTTP body costs the server: draining it or closing the socket.

    .venv/bin/python bench/refusal_cost.py [--requests 400] [--rounds 2]

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
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import subprocess
import sys
from collections import Counter

from aiohttp import web

from capacity_load import HttpClient, make_stream


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


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def load(port: int, body: bytes, n: int) -> Counter[str]:
    client, seen = HttpClient(port), Counter[str]()
    for _ in range(n):
        outcome, reason, _ = await client.send(body)
        seen[f"{outcome} ({reason.split(':')[0]})"] += 1
    await client.close()
    return seen


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=400)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--serve", nargs=2, metavar=("MODE", "PORT"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        server(args.serve[0], int(args.serve[1]))
        return
    os.sched_setaffinity(0, {1})
    body = make_stream(60, 0)[0][0]
    for _ in range(args.rounds):
        for mode in ("drain", "close"):
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
            seen = asyncio.run(load(port, body, args.requests))
            used = cpu_seconds(proc.pid) - before
            proc.terminate()
            proc.wait()
            print(
                f"{mode:>5}: {used / args.requests * 1e6:5.0f} µs of server CPU per refused"
                f" {len(body):,} B request; the client saw {dict(seen)}",
                flush=True,
            )


if __name__ == "__main__":
    main()
