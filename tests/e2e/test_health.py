"""Health that tells the truth, on `tracescore serve` as a subprocess: /readyz fails with the
reason while the exporter cannot deliver, failures are logged once per cause, SIGTERM with
undelivered data exits non-zero saying how much, and a backend that refuses a signal is
warned about once.

The unresolvable host is in `.invalid`, which RFC 6761 reserves to never resolve.
"""

from __future__ import annotations

import re
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from e2e._process import ServeProcess
from support.agent_spans import agent_run, request
from support.otlp_sink import OtlpSink

pytestmark = pytest.mark.slow

CONFIG = """
scenarios:
  - name: shop
    match: {{agent: shop_agent}}
    gates: [{{type: called_tool, tool: get_weather}}]
receivers:
  grpc: null
  http: {{endpoint: "127.0.0.1:0"}}
exporter:
  endpoint: "{endpoint}"
  protocol: {protocol}
  unready_after: 1s
  retry: {{initial_interval: 50ms, max_interval: 200ms, max_elapsed_time: 0}}
{extra}
assembly: {{decision_wait: 100ms}}
service: {{metrics_interval: 200ms, shutdown_grace_period: 1s}}
"""


def get(port: int, path: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as reply:
            return reply.status, reply.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode()


def post_spans(port: int, body: bytes) -> int:
    sent = urllib.request.Request(
        f"http://127.0.0.1:{port}/v1/traces",
        data=body,
        headers={"Content-Type": "application/x-protobuf"},
    )
    with urllib.request.urlopen(sent, timeout=10) as reply:
        return int(reply.status)


def wait_until(predicate: object, what: str, timeout: float = 30.0) -> None:
    assert callable(predicate)
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


@pytest.mark.parametrize("protocol", ["http/protobuf", "grpc"])
def test_unresolvable_exporter_fails_readyz_and_sigterm_exits_1_with_the_count(
    tmp_path: Path, protocol: str
) -> None:
    endpoint = "http://tracescore-test.invalid:4318"
    config = CONFIG.format(endpoint=endpoint, protocol=protocol, extra="")
    run = agent_run(seed=1)
    with ServeProcess(config, tmp_path) as serve:
        port = serve.ports["http"]
        assert post_spans(port, request(run.spans).SerializeToString()) == 200
        wait_until(lambda: get(port, "/readyz")[0] == 503, "/readyz to fail")
        status, body = get(port, "/readyz")
        assert status == 503
        assert "tracescore-test.invalid" in body
        assert "DNS lookup failed" in body
        time.sleep(1.0)  # many more failed attempts: still one line for the cause
        code, _ = serve.stop()
    failing = [line for line in serve.lines if "failing:" in line]
    assert len(failing) == 1, serve.stderr
    assert "WARNING" in failing[0]
    assert endpoint in failing[0]
    assert code == 1, serve.stderr
    (final,) = [line for line in serve.lines if line.startswith("tracescore serve: stopped")]
    match = re.search(r"dropped .*?(\d+) spans", final)
    assert match is not None, final
    assert int(match.group(1)) == len(run.spans)


def test_recovered_exporter_makes_readyz_pass_again_and_a_clean_exit_is_0(
    tmp_path: Path,
) -> None:
    sink = OtlpSink("http")  # not started yet: connections refused
    config = CONFIG.format(endpoint=sink.endpoint, protocol="http/protobuf", extra="")
    run = agent_run(seed=2)
    with ServeProcess(config, tmp_path) as serve:
        port = serve.ports["http"]
        assert post_spans(port, request(run.spans).SerializeToString()) == 200
        wait_until(lambda: get(port, "/readyz")[0] == 503, "/readyz to fail")
        assert "connection refused" in get(port, "/readyz")[1]
        sink.start()
        try:
            wait_until(lambda: get(port, "/readyz")[0] == 200, "/readyz to pass again")
            sink.wait_for(lambda: len(sink.spans()) == len(run.spans))
            code, _ = serve.stop()
        finally:
            sink.stop()
    assert code == 0, serve.stderr
    assert len([line for line in serve.lines if "recovered" in line]) == 1, serve.stderr


def test_a_traces_only_backend_is_warned_about_once_and_scores_still_flow(
    tmp_path: Path,
) -> None:
    with OtlpSink("http", signals=("traces",)) as backend:
        config = CONFIG.format(endpoint=backend.endpoint, protocol="http/protobuf", extra="")
        run = agent_run(seed=3)
        with ServeProcess(config, tmp_path) as serve:
            port = serve.ports["http"]
            assert post_spans(port, request(run.spans).SerializeToString()) == 200
            backend.wait_for(lambda: len(backend.spans()) == len(run.spans))
            time.sleep(1.0)  # several metric pushes, each refused
            assert get(port, "/readyz")[0] == 200
            code, _ = serve.stop()
    refused = [line for line in serve.lines if "does not accept" in line]
    assert {("logs" in line, "metrics" in line) for line in refused} == {
        (True, False),
        (False, True),
    }, serve.stderr
    assert len(refused) == 2
    assert code == 0, "a signal turned away as unsupported is not data lost at shutdown"


def test_metrics_go_where_exporter_metrics_says(tmp_path: Path) -> None:
    with OtlpSink("http") as main, OtlpSink("grpc") as metrics:
        extra = f"  metrics: {{endpoint: '{metrics.endpoint}', protocol: grpc}}"
        config = CONFIG.format(endpoint=main.endpoint, protocol="http/protobuf", extra=extra)
        run = agent_run(seed=4)
        with ServeProcess(config, tmp_path) as serve:
            assert post_spans(serve.ports["http"], request(run.spans).SerializeToString()) == 200
            main.wait_for(lambda: len(main.spans()) == len(run.spans))
            metrics.wait_for(lambda: "tracescore.spans.received" in metrics.metric_names())
            code, _ = serve.stop()
    assert code == 0, serve.stderr
    assert main.requests("metrics") == []
    assert metrics.requests("traces") == []
    assert metrics.requests("logs") == []
