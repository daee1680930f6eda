"""A tiny OTLP/HTTP receiver that shows what tracescore sends downstream.

It accepts POST /v1/traces, /v1/logs and /v1/metrics (binary protobuf, gzip or not), answers
as an OTLP endpoint does, prints a one-line summary of what is interesting (spans carrying
scores, `gen_ai.evaluation.result` events, metric names) and appends every request as JSON to
`--out`. Loopback only; a stand-in for your real backend.

    python examples/live/sink.py --port 4328 --out sink.jsonl
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from google.protobuf.json_format import MessageToDict
from google.protobuf.message import Message
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import (
    ExportLogsServiceRequest,
    ExportLogsServiceResponse,
)
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
    ExportMetricsServiceResponse,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue

ROUTES: dict[str, tuple[type[Message], type[Message]]] = {
    "/v1/traces": (ExportTraceServiceRequest, ExportTraceServiceResponse),
    "/v1/logs": (ExportLogsServiceRequest, ExportLogsServiceResponse),
    "/v1/metrics": (ExportMetricsServiceRequest, ExportMetricsServiceResponse),
}
LISTENING = "otlp sink listening on"
_LOCK = threading.Lock()


def value(v: AnyValue) -> Any:
    """A readable Python value of an AnyValue."""
    kind = v.WhichOneof("value")
    return getattr(v, kind) if kind else None


def summarize(path: str, request: Any) -> list[str]:
    """The lines worth printing for one request."""
    lines: list[str] = []
    if path == "/v1/traces":
        for rs in request.resource_spans:
            for ss in rs.scope_spans:
                for span in ss.spans:
                    scores = {
                        kv.key: value(kv.value)
                        for kv in span.attributes
                        if kv.key.startswith(("eval.", "tracescore."))
                    }
                    if scores:
                        shown = " ".join(f"{k}={v!r}" for k, v in scores.items())
                        lines.append(f"scored span {span.name!r}: {shown}")
    elif path == "/v1/logs":
        for rl in request.resource_logs:
            for sl in rl.scope_logs:
                for record in sl.log_records:
                    attrs = {kv.key: value(kv.value) for kv in record.attributes}
                    lines.append(
                        f"event {record.event_name}: {attrs.get('gen_ai.evaluation.name')} "
                        f"= {attrs.get('gen_ai.evaluation.score.value')} "
                        f"({attrs.get('gen_ai.evaluation.score.label')}) "
                        f"trace {record.trace_id.hex()} span {record.span_id.hex()}"
                    )
    else:
        names = sorted(
            {
                m.name
                for rm in request.resource_metrics
                for sm in rm.scope_metrics
                for m in sm.metrics
            }
        )
        lines.append(f"metrics: {', '.join(names)}")
    return lines


class Handler(BaseHTTPRequestHandler):
    out_path: str | None = None

    def log_message(self, format: str, *args: Any) -> None:  # quiet: we print summaries
        pass

    def do_POST(self) -> None:
        route = ROUTES.get(self.path)
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if route is None:
            self.answer(404, b"")
            return
        try:
            if self.headers.get("Content-Encoding", "").lower() == "gzip":
                body = gzip.decompress(body)
            request = route[0]()
            request.ParseFromString(body)
        except Exception as exc:  # a bad body is answered, never fatal
            self.answer(400, str(exc).encode())
            return
        with _LOCK:
            for line in summarize(self.path, request):
                print(line, flush=True)
            if self.out_path:
                with open(self.out_path, "a", encoding="utf-8") as fh:
                    doc = MessageToDict(request)
                    fh.write(json.dumps({"path": self.path, "body": doc}) + "\n")
        self.answer(200, route[1]().SerializeToString())

    def answer(self, status: int, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=4328, help="0 picks a free port")
    parser.add_argument("--out", help="append every request as JSON to this file")
    args = parser.parse_args(argv)
    Handler.out_path = args.out
    server = ThreadingHTTPServer((args.host, args.port), Handler)
    print(f"{LISTENING} http://{args.host}:{server.server_port}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
