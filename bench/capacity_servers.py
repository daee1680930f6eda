"""The two helper servers of bench/capacity.py, each run as its own process.

    capacity_servers.py discard --protocol http|grpc --port N [--grpc-server aio|threads]
    capacity_servers.py sink --http-port N --grpc-port M

- discard: parse every request into an ExportTraceServiceRequest, count its spans, answer
  success: the physical limit of that transport in Python (aiohttp; for gRPC grpc.aio's server,
  which with nothing else on its loop takes more than the threaded one serve uses, so the
  ratio is the harder one; `--grpc-server threads` for that one, to compare).
- sink: the service's downstream, OTLP over HTTP (gzip or not) and gRPC (grpc handles gzip):
  traces, logs and metrics are parsed and counted; GET /count answers the totals as JSON.
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import json
from concurrent.futures import ThreadPoolExecutor

import grpc
from aiohttp import web
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

EMPTY = ExportTraceServiceResponse().SerializeToString()


def count_spans(body: bytes) -> int:
    req = ExportTraceServiceRequest.FromString(body)
    return sum(len(ss.spans) for rs in req.resource_spans for ss in rs.scope_spans)


def count_logs(body: bytes) -> int:
    req = ExportLogsServiceRequest.FromString(body)
    return sum(len(sl.log_records) for rl in req.resource_logs for sl in rl.scope_logs)


def count_metrics(body: bytes) -> int:
    ExportMetricsServiceRequest.FromString(body)
    return 1


async def _grpc_server(port: int, methods: dict[str, object]) -> grpc.aio.Server:
    server = grpc.aio.server(options=[("grpc.max_receive_message_length", 64 << 20)])
    for service, handler in methods.items():
        generic = grpc.method_handlers_generic_handler(
            service, {"Export": grpc.unary_unary_rpc_method_handler(handler)}
        )
        server.add_generic_rpc_handlers((generic,))
    server.add_insecure_port(f"127.0.0.1:{port}")
    await server.start()
    return server


async def _http_server(port: int, routes: dict[str, object]) -> web.AppRunner:
    app = web.Application(client_max_size=64 << 20)
    for path, handler in routes.items():
        app.router.add_route("GET" if path == "/count" else "POST", path, handler)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    return runner


async def discard(protocol: str, port: int, grpc_server: str = "aio") -> None:
    """Parse, count, answer: the transport's limit."""
    total = [0]
    if protocol == "grpc" and grpc_server == "threads":

        def export_in_thread(body: bytes, context: object) -> bytes:
            total[0] += count_spans(body)  # a lost count now and then is of no matter here
            return EMPTY

        server = grpc.server(
            ThreadPoolExecutor(32), options=[("grpc.max_receive_message_length", 64 << 20)]
        )
        generic = grpc.method_handlers_generic_handler(
            "opentelemetry.proto.collector.trace.v1.TraceService",
            {"Export": grpc.unary_unary_rpc_method_handler(export_in_thread)},
        )
        server.add_generic_rpc_handlers((generic,))
        server.add_insecure_port(f"127.0.0.1:{port}")
        server.start()
    elif protocol == "grpc":

        async def export(body: bytes, context: object) -> bytes:
            total[0] += count_spans(body)
            return EMPTY

        server = await _grpc_server(
            port, {"opentelemetry.proto.collector.trace.v1.TraceService": export}
        )
    else:

        async def traces(request: web.Request) -> web.Response:
            total[0] += count_spans(await request.read())
            return web.Response(body=EMPTY, content_type="application/x-protobuf")

        server = await _http_server(port, {"/v1/traces": traces})
    print("READY", flush=True)
    await asyncio.Event().wait()
    del server  # kept until here: a gRPC server that is collected stops


async def sink(http_port: int, grpc_port: int) -> None:
    """Count what the service exports, over either protocol."""
    totals = {"spans": 0, "logs": 0, "metrics": 0}
    counters = {"spans": count_spans, "logs": count_logs, "metrics": count_metrics}

    def grpc_handler(kind: str):
        async def export(body: bytes, context: object) -> bytes:
            totals[kind] += counters[kind](body)
            return b""

        return export

    def http_handler(kind: str):
        async def post(request: web.Request) -> web.Response:
            body = await request.read()
            if request.headers.get("Content-Encoding") == "gzip":
                body = gzip.decompress(body)
            totals[kind] += counters[kind](body)
            return web.Response(body=b"", content_type="application/x-protobuf")

        return post

    async def count(request: web.Request) -> web.Response:
        return web.Response(text=json.dumps(totals))

    prefix = "opentelemetry.proto.collector"
    servers = await _grpc_server(
        grpc_port,
        {
            f"{prefix}.trace.v1.TraceService": grpc_handler("spans"),
            f"{prefix}.logs.v1.LogsService": grpc_handler("logs"),
            f"{prefix}.metrics.v1.MetricsService": grpc_handler("metrics"),
        },
    )
    runner = await _http_server(
        http_port,
        {
            "/v1/traces": http_handler("spans"),
            "/v1/logs": http_handler("logs"),
            "/v1/metrics": http_handler("metrics"),
            "/count": count,
        },
    )
    print("READY", flush=True)
    await asyncio.Event().wait()
    del servers, runner  # kept until here: a gRPC server that is collected stops


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="role", required=True)
    role = sub.add_parser("discard")
    role.add_argument("--protocol", choices=["http", "grpc"], required=True)
    role.add_argument("--port", type=int, required=True)
    role.add_argument("--grpc-server", choices=["aio", "threads"], default="aio")
    role = sub.add_parser("sink")
    role.add_argument("--http-port", type=int, required=True)
    role.add_argument("--grpc-port", type=int, required=True)
    args = parser.parse_args()
    if args.role == "discard":
        asyncio.run(discard(args.protocol, args.port, args.grpc_server))
    else:
        asyncio.run(sink(args.http_port, args.grpc_port))


if __name__ == "__main__":
    main()
