"""`tracescore serve` under uvloop receives, scores and delivers everything, over both export
protocols, with its export queue turning over under back-pressure (the hand-written HTTP client
this replaced stopped delivering under uvloop: the queue stuck at its limit).

uvloop is a test dependency (pyproject.toml `test` extra); without it this fails in CI and is
skipped elsewhere.
"""

from __future__ import annotations

import importlib.util
import os
import threading
from collections import Counter
from pathlib import Path

import pytest

from e2e._process import ServeProcess
from e2e.test_faults import Client
from support.agent_spans import agent_run
from support.otlp_sink import OtlpSink, attrs

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
  queue_size: 4
  retry: {{initial_interval: 50ms, max_interval: 200ms, max_elapsed_time: 0}}
assembly: {{decision_wait: 100ms}}
service: {{metrics_interval: 500ms, shutdown_grace_period: 10s}}
"""


def _need_uvloop() -> None:
    if importlib.util.find_spec("uvloop") is not None:
        return
    if os.environ.get("CI") == "true":
        pytest.fail("uvloop is not installed: .venv/bin/pip install -e '.[test]'")
    pytest.skip("uvloop is not installed: .venv/bin/pip install -e '.[test]'")


@pytest.mark.parametrize(
    ("protocol", "sink_protocol"), [("http/protobuf", "http"), ("grpc", "grpc")]
)
def test_serve_under_uvloop_delivers_every_span_scored(
    tmp_path: Path, protocol: str, sink_protocol: str
) -> None:
    _need_uvloop()
    runs = [agent_run(seed=n) for n in range(150)]
    with OtlpSink(sink_protocol) as sink:  # type: ignore[arg-type]
        config = CONFIG.format(endpoint=sink.endpoint, protocol=protocol)
        env = {"TRACESCORE_EVENT_LOOP": "uvloop"}
        with ServeProcess(config, tmp_path, env=env) as serve:
            client = Client(serve.ports["http"])
            senders = [
                threading.Thread(target=lambda part=part: [client.send(r) for r in part])
                for part in (runs[0::2], runs[1::2])
            ]
            for sender in senders:
                sender.start()
            for sender in senders:
                sender.join(120)
            assert len(client.accepted) == len(runs)
            expected = Counter(s.span_id for r in runs for s in r.spans)
            sink.wait_for(lambda: len(sink.spans()) >= sum(expected.values()), timeout=60)
            sink.wait_for(lambda: len(sink.log_records()) >= len(runs), timeout=30)
            code, _ = serve.stop()
    assert "event loop: uvloop" in serve.stderr
    assert Counter(s.span.span_id for s in sink.spans()) == expected, "each span exactly once"
    agents = {r.agent.span_id for r in runs}
    scored = [s for s in sink.spans() if s.span.span_id in agents]
    assert all("eval.called_tool.score" in attrs(s.span.attributes) for s in scored)
    assert code == 0, serve.stderr


def test_an_unknown_event_loop_exits_2_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from tracescore.cli import main

    monkeypatch.setenv("TRACESCORE_EVENT_LOOP", "tokio")
    path = tmp_path / "serve.yaml"
    path.write_text("exporter: {endpoint: 'http://127.0.0.1:9'}\n")
    assert main(["serve", "--config", str(path)]) == 2
    assert "TRACESCORE_EVENT_LOOP='tokio': expected asyncio or uvloop" in capsys.readouterr().err
