"""CPU per OTLP/HTTP export: tracescore's HttpClient against aiohttp's client, same run.

    .venv/bin/python bench/http_client.py [--size 320000] [--requests 800] [--rounds 5]

An aiohttp server on CPU 1 reads each POST whole and answers 200; the client side runs on
CPU 0 with 4 requests in flight (the exporter's senders), and its process CPU time is counted
per request. The two clients take turns, round after round, and the ratio of their medians is
printed (the machine's speed drifts over minutes; both see the same drift within a round).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable

from aiohttp import ClientSession, TCPConnector, web

from tracescore.export.http_client import HttpClient

CONCURRENCY = 4
HEADERS = {"Content-Type": "application/x-protobuf"}


async def serve(port: int) -> None:
    async def handle(request: web.Request) -> web.Response:
        await request.read()
        return web.Response(body=b"", content_type="application/x-protobuf")

    app = web.Application(client_max_size=64 << 20)
    app.router.add_post("/v1/traces", handle)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    print("READY", flush=True)
    await asyncio.Event().wait()


async def cpu_per_request(post: Callable[[], Awaitable[None]], n: int) -> float:
    """Microseconds of this process's CPU per request, `CONCURRENCY` in flight."""
    for _ in range(20):
        await post()

    async def worker() -> None:
        for _ in range(n // CONCURRENCY):
            await post()

    started = time.process_time()
    await asyncio.gather(*(worker() for _ in range(CONCURRENCY)))
    return (time.process_time() - started) / n * 1e6


async def measure(url: str, body: bytes, n: int, rounds: int) -> dict[str, list[float]]:
    session = ClientSession(connector=TCPConnector(limit=CONCURRENCY))
    client = HttpClient(url, HEADERS, None)

    async def with_aiohttp() -> None:
        async with session.post(url + "/v1/traces", data=body, headers=HEADERS) as response:
            await response.read()

    async def with_tracescore() -> None:
        await client.post("/v1/traces", body, 10.0)

    results: dict[str, list[float]] = {"aiohttp": [], "tracescore": []}
    try:
        for _ in range(rounds):
            results["aiohttp"].append(await cpu_per_request(with_aiohttp, n))
            results["tracescore"].append(await cpu_per_request(with_tracescore, n))
    finally:
        await session.close()
        await client.close()
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size", type=int, default=320_000, help="request body bytes")
    parser.add_argument("--requests", type=int, default=800, help="requests per client per round")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--serve", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        os.sched_setaffinity(0, {1})
        asyncio.run(serve(args.serve))
        return
    port = 18000 + os.getpid() % 1000
    server = subprocess.Popen(
        [sys.executable, __file__, "--serve", str(port)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert server.stdout is not None
        assert server.stdout.readline().strip() == "READY"
        os.sched_setaffinity(0, {0})
        body = os.urandom(args.size)
        results = asyncio.run(measure(f"http://127.0.0.1:{port}", body, args.requests, args.rounds))
    finally:
        server.kill()
        server.wait()
    medians = {name: statistics.median(values) for name, values in results.items()}
    for name, values in results.items():
        shown = ", ".join(f"{v:.0f}" for v in values)
        print(f"{name:>10}: {medians[name]:6.0f} us CPU per request (rounds: {shown})")
    print(f"ratio tracescore / aiohttp: {medians['tracescore'] / medians['aiohttp']:.2f}")


if __name__ == "__main__":
    main()
