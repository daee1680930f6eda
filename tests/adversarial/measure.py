"""Measurements behind the README's "Hostile input" section, against a real `serve`.

    .venv/bin/python tests/adversarial/measure.py [flood|caches|all]

flood: one OTLP request (over HTTP, then gRPC) of N one-span traces with random ids and one with
ids that collided under the former unkeyed hash (N = 64k and 512k), each timed, with /healthz
polled every 20 ms meanwhile (its slowest and median wait). caches: RSS and the bytes-buffered
gauge (the scanner's caches included) after 150 requests each with a distinct 1 MiB attribute
key and 1 MiB span name, and after 10,000 requests with distinct ordinary keys.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

sys.path[:0] = [str(Path(__file__).parents[1])]

import http.client  # noqa: E402
import statistics  # noqa: E402

from adversarial._serve import HealthPoller, export_grpc, post, rss_kib, serving  # noqa: E402
from support.adversarial import (  # noqa: E402
    colliding_trace_ids,
    key_value,
    random_trace_ids,
    request,
    resource_spans,
    scope_spans,
    span,
    span_per_trace,
    string_value,
)


def flood(folder: Path) -> None:
    with serving(folder, max_body="64MiB") as serve:
        port = serve.ports["http"]
        for n in (65_536, 524_288):
            bodies = {
                "random": span_per_trace(random_trace_ids(n, 7)),
                "colliding": span_per_trace(colliding_trace_ids(n, 7)),
            }
            for protocol in ("http", "grpc"):
                for kind, body in bodies.items():
                    with HealthPoller(port) as poller:
                        if protocol == "http":
                            status, _, took = post(port, body)
                        else:
                            code, took = export_grpc(serve.ports["grpc"], body)
                            status = 200 if code == "OK" else 500
                    print(
                        f"flood {protocol:4} {kind:9} spans={n:7} "
                        f"body={len(body) / 2**20:5.1f} MiB status={status} "
                        f"answered in {took:6.2f} s; /healthz slowest "
                        f"{poller.slowest * 1000:6.1f} ms, median "
                        f"{statistics.median(poller.waits) * 1000:5.1f} ms "
                        f"over {poller.polls} polls"
                    )


def buffered_gauge(port: int) -> float:
    """The bytes-buffered gauge from /metrics (the scanner's caches included)."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        connection.request("GET", "/metrics")
        text = connection.getresponse().read().decode()
    finally:
        connection.close()
    for line in text.splitlines():
        if line.startswith("tracescore_bytes_buffered_bytes"):
            return float(line.split()[-1])
    return float("nan")


def big_strings_request(n: int) -> bytes:
    """One span whose name, one ignored key and one kept key are 1 MiB, distinct per `n`."""
    big = f"{n:08x}".encode() * (2**17)
    attributes = (
        key_value(big, string_value(b"v")),
        key_value(b"llm.input_messages." + big, string_value(b"v")),
        key_value(b"gen_ai.system", string_value(b"x")),
    )
    trace_id = b"\x01" * 12 + n.to_bytes(4, "big")
    return request([resource_spans([scope_spans([span(trace_id, b"\x02" * 8, big, attributes)])])])


def ordinary_keys_request(n: int) -> bytes:
    """One span with four short attribute keys no earlier request had."""
    attributes = tuple(
        key_value(f"custom.key.{n}.{m}".encode(), string_value(b"v")) for m in range(4)
    )
    trace_id = b"\x03" * 12 + n.to_bytes(4, "big")
    return request(
        [resource_spans([scope_spans([span(trace_id, b"\x02" * 8, b"op", attributes)])])]
    )


def caches(folder: Path) -> None:
    with serving(folder) as serve:
        port = serve.ports["http"]
        pid = serve.process.pid if serve.process else 0
        for label, make, count in (
            ("150 x 1 MiB key+name", big_strings_request, 150),
            ("10,000 x distinct ordinary keys", ordinary_keys_request, 10_000),
        ):
            base = rss_kib(pid)
            for n in range(count):
                status, _, _ = post(port, make(n))
                assert status == 200, status
            time.sleep(1.0)  # decision_wait passes: the traces are released
            print(
                f"caches {label}: RSS {base / 1024:.0f} -> {rss_kib(pid) / 1024:.0f} MiB; "
                f"bytes-buffered gauge {buffered_gauge(port) / 2**20:.1f} MiB"
            )


if __name__ == "__main__":
    what = sys.argv[1] if len(sys.argv) > 1 else "all"
    with tempfile.TemporaryDirectory() as tmp:
        if what in ("flood", "all"):
            flood(Path(tmp))
        if what in ("caches", "all"):
            caches(Path(tmp))
