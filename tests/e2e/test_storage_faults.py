"""Storage under damage and at its limit, end to end: a segment file truncated by a crash
mid-write (and a flipped byte in the middle of another record) is read around, and a full
`storage.max_bytes` makes the receivers push back until the downstream drains it."""

from __future__ import annotations

import threading
import time
import urllib.error
import urllib.request
from collections import Counter
from pathlib import Path

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from e2e._process import ServeProcess
from e2e.test_crash import Harness, _send_runs
from support.agent_spans import AgentRun, agent_run, kv, request
from support.otlp_sink import OtlpSink
from tracescore.storage.log import MAGIC, Damage, read_segment
from tracescore.storage.records import decode_request

pytestmark = pytest.mark.slow


def _record_spans(payload: bytes) -> set[bytes]:
    parsed = ExportTraceServiceRequest.FromString(decode_request(payload).body)
    return {s.span_id for rs in parsed.resource_spans for ss in rs.scope_spans for s in ss.spans}


def test_a_truncated_and_a_damaged_record_are_skipped_and_the_rest_recovered(
    tmp_path: Path,
) -> None:
    harness = Harness(tmp_path, storage=True, wait="1h")
    sink = harness.sink
    sink.start()
    sink.refuse(503)  # everything stays in storage
    try:
        harness.start()
        sent = _send_runs(harness, 6)
        harness.kill()
        segments = sorted((tmp_path / "wal").glob("*.wal"))
        data = bytearray(segments[-1].read_bytes())
        records = list(read_segment(bytes(data), Damage(), "x"))
        assert len(records) == len(sent), "one record per request answered OK"
        # The second record damaged in the middle, the last one torn by the crash.
        second = len(MAGIC) + 9 + len(records[0][1]) + 9
        data[second + 20] ^= 0xFF
        segments[-1].write_bytes(bytes(data[:-7]))
        lost = _record_spans(records[1][1]) | _record_spans(records[-1][1])
        sink.refuse(None)
        serve = harness.start()
        kept = {s for e in sent for s in e.spans} - lost
        children = kept - {s for e in sent if e.agent for s in e.spans}
        sink.wait_for(lambda: children <= set(sink.arrivals), timeout=30)
        assert serve.stop()[0] == 0  # held agent spans are scored and sent at SIGTERM
    finally:
        sink.stop()
    assert "storage: 2 damaged region(s)" in serve.stderr
    arrived = Counter({s: len(t) for s, t in sink.arrivals.items()})
    assert set(arrived) == kept, "every intact request delivered, nothing of the damaged ones"
    assert set(arrived.values()) == {1}


def _padded_run(seed: int) -> AgentRun:
    run = agent_run(seed=seed)
    run.children[0].attributes.append(kv("padding", "x" * 20_000))
    return run


def test_at_the_disk_limit_receivers_push_back_and_nothing_is_lost(tmp_path: Path) -> None:
    sink = OtlpSink("http")
    sink.start()
    sink.refuse(503)
    config = f"""
scenarios:
  - name: shop
    match: {{agent: shop_agent}}
    gates: [{{type: called_tool, tool: get_weather}}]
receivers:
  grpc: null
  http: {{endpoint: "127.0.0.1:0"}}
exporter:
  endpoint: "{sink.endpoint}"
  protocol: http/protobuf
  retry: {{initial_interval: 50ms, max_interval: 200ms, max_elapsed_time: 0}}
assembly: {{decision_wait: 200ms}}
service: {{metrics_interval: 1h}}
storage: {{directory: {tmp_path / "wal"}, max_bytes: 1MiB, segment_bytes: 128KiB}}
"""
    runs = [_padded_run(seed) for seed in range(120)]  # ~2.5 MiB of requests
    accepted: list[AgentRun] = []
    refusals: list[str] = []
    try:
        with ServeProcess(config, tmp_path) as serve:
            url = f"http://127.0.0.1:{serve.ports['http']}/v1/traces"

            def send_all() -> None:
                for run in runs:
                    body = request(run.spans).SerializeToString()
                    while True:
                        req = urllib.request.Request(
                            url, body, {"Content-Type": "application/x-protobuf"}
                        )
                        try:
                            with urllib.request.urlopen(req, timeout=10):
                                accepted.append(run)
                                break
                        except urllib.error.HTTPError as err:
                            retry_after = err.headers["Retry-After"]
                            refusals.append(f"{err.code} {retry_after} {err.read()!r}")
                            time.sleep(0.05)

            sender = threading.Thread(target=send_all)
            sender.start()
            sink.wait_for(lambda: len(refusals) >= 5, timeout=60)
            on_disk = sum(p.stat().st_size for p in (tmp_path / "wal").glob("*.wal"))
            assert on_disk <= 1024 * 1024 + 64 * 1024, "bounded by max_bytes (plus one request)"
            # Retryable, with a Retry-After: 1 s (the export queue's wait) for the first refused,
            # later turns for the next ones when this sender, retrying every 50 ms instead of
            # waiting, asks faster than requests were getting in (pipeline/retry_schedule.py).
            waits = [int(r.split()[1]) for r in refusals]
            assert all(r.startswith("503 ") for r in refusals), refusals[-1]
            assert waits[0] == 1, refusals[0]
            assert all(1 <= w <= 30 for w in waits), waits
            assert any("storage.max_bytes" in r for r in refusals), refusals[-1]
            sink.refuse(None)  # the downstream is back: storage drains, the sender gets in
            sender.join(120)
            assert len(accepted) == len(runs)
            want = Counter(s.span_id for r in runs for s in r.spans)
            sink.wait_for(lambda: len(sink.spans()) >= sum(want.values()), timeout=60)
            assert Counter(s.span.span_id for s in sink.spans()) == want
            assert serve.stop()[0] == 0
    finally:
        sink.stop()
    assert not list((tmp_path / "wal").glob("00000001.wal")), "delivered segments are deleted"
