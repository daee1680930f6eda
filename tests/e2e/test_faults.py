"""Faults end to end: downstream outage, full buffer, bad requests, SIGTERM under load.

The client here behaves like a collector's OTLP exporter with a retry queue: it resends a
request refused with a retryable status and counts the refusals, so each test can check both
that back-pressure happened and that nothing accepted was lost.
"""

from __future__ import annotations

import gzip
import threading
import time
import urllib.error
import urllib.request
from collections import Counter
from pathlib import Path

import grpc
import pytest

from e2e._process import ServeProcess
from support.agent_spans import AgentRun, agent_run, request
from support.otlp_sink import OtlpSink, attrs, free_port

pytestmark = pytest.mark.slow

BASE = """
scenarios:
  - name: shop
    match: {{agent: shop_agent}}
    gates: [{{type: called_tool, tool: get_weather}}]
receivers:
  grpc: {{endpoint: "127.0.0.1:0"{grpc}}}
  http: {{endpoint: "127.0.0.1:0"{http}}}
exporter:
  endpoint: "{endpoint}"
  protocol: http/protobuf
  queue_size: {queue}
  retry: {{initial_interval: 50ms, max_interval: 200ms, max_elapsed_time: 0}}
assembly: {{decision_wait: {wait}, max_runs: {max_runs}}}
service: {{metrics_interval: 1s, shutdown_grace_period: 8s}}
"""


def _config(
    sink: OtlpSink,
    *,
    queue: int = 1000,
    wait: str = "200ms",
    max_runs: int = 10000,
    grpc_extra: str = "",
    http_extra: str = "",
) -> str:
    return BASE.format(
        endpoint=sink.endpoint,
        queue=queue,
        wait=wait,
        max_runs=max_runs,
        grpc=grpc_extra,
        http=http_extra,
    )


class Client:
    """Sends runs over OTLP/HTTP, resending on 503 like a collector's retry queue."""

    def __init__(self, port: int) -> None:
        self.url = f"http://127.0.0.1:{port}/v1/traces"
        self.accepted: list[AgentRun] = []
        self.refused = 0
        self.gone = False

    def send(self, run: AgentRun, patience: float = 60.0) -> bool:
        """True once accepted; False when the service is gone (connection refused)."""
        body = request(run.spans).SerializeToString()
        deadline = time.monotonic() + patience
        while time.monotonic() < deadline:
            req = urllib.request.Request(
                self.url, body, {"Content-Type": "application/x-protobuf"}, method="POST"
            )
            try:
                with urllib.request.urlopen(req, timeout=10) as resp:
                    status, retry_after, detail = resp.status, "", b""
            except urllib.error.HTTPError as err:
                status, retry_after, detail = err.code, err.headers["Retry-After"], err.read()
            except (urllib.error.URLError, ConnectionError):
                self.gone = True
                return False
            if status == 200:
                self.accepted.append(run)
                return True
            if status != 503 or not retry_after:
                raise AssertionError(f"unexpected {status}: {detail!r}")
            self.refused += 1
            time.sleep(0.05)  # a collector would wait Retry-After; tests move faster
        raise AssertionError("request never accepted")


def _sent_ids(runs: list[AgentRun]) -> Counter[bytes]:
    return Counter(s.span_id for r in runs for s in r.spans)


def _check_delivered(sink: OtlpSink, runs: list[AgentRun]) -> None:
    expected = _sent_ids(runs)
    sink.wait_for(lambda: sum(1 for _ in sink.spans()) >= sum(expected.values()), timeout=60)
    got = {s.span.span_id: s.span for s in sink.spans()}
    assert Counter(s.span.span_id for s in sink.spans()) == expected, "each span exactly once"
    for run in runs:
        agent = attrs(got[run.agent.span_id].attributes)
        assert agent["eval.called_tool.score"] == 1.0, "held agent spans carry their scores"


def test_downstream_down_then_back_loses_nothing(tmp_path: Path) -> None:
    sink = OtlpSink("http", port=free_port())  # down at first
    runs = [agent_run(seed=n) for n in range(40)]
    with ServeProcess(_config(sink, queue=3), tmp_path) as serve:
        client = Client(serve.ports["http"])
        sender = threading.Thread(target=lambda: [client.send(r) for r in runs])
        sender.start()
        # A full export queue must push back on the sender.
        sink.wait_for(lambda: client.refused > 0, timeout=60)
        assert len(client.accepted) < len(runs)
        sink.start()  # downstream is back
        try:
            sender.join(60)
            assert len(client.accepted) == len(runs)
            _check_delivered(sink, runs)
            with urllib.request.urlopen(f"http://127.0.0.1:{serve.ports['http']}/metrics") as r:
                metrics = r.read().decode()
            dropped = [
                float(line.rsplit(" ", 1)[1])
                for line in metrics.splitlines()
                if line.startswith("tracescore_spans_dropped_total{")
            ]
            assert dropped, "every known reason is a series from start-up"
            assert set(dropped) == {0.0}, "nothing dropped"
            assert serve.stop()[0] == 0
        finally:
            sink.stop()


def test_a_full_buffer_pushes_back_then_recovers(tmp_path: Path) -> None:
    runs = [agent_run(seed=100 + n) for n in range(12)]
    with OtlpSink("http") as sink, ServeProcess(_config(sink, max_runs=2), tmp_path) as serve:
        client = Client(serve.ports["http"])
        for run in runs:
            assert client.send(run)
        assert client.refused > 0, "two buffered runs fill this buffer"
        _check_delivered(sink, runs)
        assert serve.stop()[0] == 0


def test_bad_requests_are_refused_and_the_service_keeps_running(
    tmp_path: Path,
) -> None:
    token = {"TS_E2E_TOKEN": "letmein"}
    auth = ", auth: {bearer_token_env: TS_E2E_TOKEN}, max_body_size: 1MiB"
    with (
        OtlpSink("http") as sink,
        ServeProcess(_config(sink, grpc_extra=auth, http_extra=auth), tmp_path, env=token) as serve,
    ):
        url = f"http://127.0.0.1:{serve.ports['http']}/v1/traces"
        good = request(agent_run(agent="other").spans).SerializeToString()
        ok_headers = {"Authorization": "Bearer letmein"}

        def post(
            body: bytes, headers: dict[str, str], ctype: str = "application/x-protobuf"
        ) -> int:
            req = urllib.request.Request(url, body, {"Content-Type": ctype, **headers})
            try:
                with urllib.request.urlopen(req, timeout=10) as resp:
                    return int(resp.status)
            except urllib.error.HTTPError as err:
                return err.code

        assert post(good, {}) == 401
        assert post(b"\xff\xfe not protobuf", ok_headers) == 400
        assert post(b"{oops", ok_headers, "application/json") == 400
        assert post(b"\x00" * (2 * 1024 * 1024), ok_headers) == 413
        bomb = gzip.compress(bytes(32 * 1024 * 1024))
        assert post(bomb, {**ok_headers, "Content-Encoding": "gzip"}) == 413
        with grpc.insecure_channel(f"127.0.0.1:{serve.ports['grpc']}") as channel:
            export = channel.unary_unary(
                "/opentelemetry.proto.collector.trace.v1.TraceService/Export"
            )
            for body, metadata, code in (
                (good, (), grpc.StatusCode.UNAUTHENTICATED),
                (
                    b"\x0a\xff\xff",
                    (("authorization", "Bearer letmein"),),
                    grpc.StatusCode.INVALID_ARGUMENT,
                ),
            ):
                with pytest.raises(grpc.RpcError) as caught:
                    export(body, metadata=metadata, timeout=10)
                assert caught.value.code() == code
        assert post(good, ok_headers) == 200
        sink.wait_for(lambda: len(sink.spans()) == len(agent_run(agent="other").spans))
        assert serve.stop()[0] == 0


def test_sigterm_mid_load_forwards_everything_accepted(tmp_path: Path) -> None:
    # decision_wait 1h: every matched agent span is still held when SIGTERM arrives.
    with OtlpSink("http") as sink, ServeProcess(_config(sink, wait="1h"), tmp_path) as serve:
        client = Client(serve.ports["http"])
        stop = threading.Event()

        def load() -> None:
            n = 0
            while not stop.is_set() and client.send(agent_run(seed=1000 + n), patience=5):
                n += 1

        sender = threading.Thread(target=load)
        sender.start()
        sink.wait_for(lambda: len(client.accepted) >= 20, timeout=60)
        code, _ = serve.stop()
        stop.set()
        sender.join(30)
        assert code == 0, "exit 0 means the shutdown finished within the grace period"
        assert "tracescore serve: stopped" in serve.stderr
        assert client.accepted, "some runs were accepted before SIGTERM"
        _check_delivered(sink, client.accepted)
