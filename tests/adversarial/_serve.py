"""`tracescore serve` under hostile requests: a running service, a client that times each
request, and a /healthz poller that records the slowest answer while requests are served."""

from __future__ import annotations

import http.client
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import grpc

from e2e._process import ServeProcess
from support.otlp_sink import OtlpSink

__all__ = ["HealthPoller", "export_grpc", "post", "rss_kib", "serving"]

_EXPORT = "/opentelemetry.proto.collector.trace.v1.TraceService/Export"

CONFIG = """
scenarios:
  - name: shop
    match: {{agent: shop-assistant}}
    scorers:
      - {{type: no_tool_errors, threshold: 1.0}}
receivers:
  grpc: {{endpoint: "127.0.0.1:0", max_body_size: {max_body}}}
  http: {{endpoint: "127.0.0.1:0", max_body_size: {max_body}}}
exporter: {{endpoint: "{endpoint}", protocol: http/protobuf}}
mode: {mode}
assembly: {{decision_wait: 300ms}}
service: {{shutdown_grace_period: 5s}}
"""


@contextmanager
def serving(folder: Path, mode: str = "forward", max_body: str = "32MiB") -> Iterator[ServeProcess]:
    """A `tracescore serve` with an HTTP receiver on loopback, exporting to an OTLP sink."""
    with OtlpSink("http") as sink:
        config = CONFIG.format(endpoint=sink.endpoint, mode=mode, max_body=max_body)
        with ServeProcess(config, folder) as serve:
            yield serve


def post(
    port: int,
    body: bytes,
    timeout: float = 600.0,
    content_type: str = "application/x-protobuf",
) -> tuple[int, bytes, float]:
    """POST an OTLP body (protobuf unless said otherwise); (status, response body, seconds)."""
    started = time.perf_counter()
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        connection.request("POST", "/v1/traces", body, {"Content-Type": content_type})
        response = connection.getresponse()
        return response.status, response.read(), time.perf_counter() - started
    finally:
        connection.close()


def export_grpc(port: int, body: bytes, timeout: float = 600.0) -> tuple[str, float]:
    """Export an OTLP body over gRPC; (status code name, seconds)."""
    started = time.perf_counter()
    options = [("grpc.max_send_message_length", -1), ("grpc.max_receive_message_length", -1)]
    with grpc.insecure_channel(f"127.0.0.1:{port}", options=options) as channel:
        try:
            channel.unary_unary(_EXPORT)(body, timeout=timeout)
            code = grpc.StatusCode.OK
        except grpc.RpcError as exc:
            code = exc.code()
    return code.name, time.perf_counter() - started


def healthy(port: int, timeout: float = 10.0) -> bool:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        connection.request("GET", "/healthz")
        return connection.getresponse().status == 200
    finally:
        connection.close()


class HealthPoller:
    """Polls /healthz every `interval` seconds in a thread; `slowest` is the longest wait,
    `waits` every one."""

    def __init__(self, port: int, interval: float = 0.02) -> None:
        self.port = port
        self.interval = interval
        self.slowest = 0.0
        self.waits: list[float] = []
        self.polls = 0
        self.failures = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            started = time.perf_counter()
            try:
                ok = healthy(self.port, timeout=60.0)
            except OSError:
                ok = False
            self.waits.append(time.perf_counter() - started)
            self.slowest = max(self.slowest, self.waits[-1])
            self.polls += 1
            self.failures += not ok
            self._stop.wait(self.interval)

    def __enter__(self) -> HealthPoller:
        self._thread.start()
        return self

    def poll_on(self, polls: int, timeout: float = 60.0) -> None:
        """Wait until `polls` more polls have been answered: a stall the request left behind
        (or one between two polls of a request quicker than the interval) is then seen."""
        wanted = self.polls + polls
        deadline = time.perf_counter() + timeout
        while self.polls < wanted and time.perf_counter() < deadline:
            time.sleep(self.interval / 4)

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(120)


def rss_kib(pid: int) -> int:
    """Resident memory of a process, from /proc."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError(f"no VmRSS for pid {pid}")
