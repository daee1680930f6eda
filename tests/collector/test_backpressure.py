"""Back-pressure through the real collector: inline.yaml in front of a `tracescore serve`
(tracescore-inline.yaml) that can buffer one run at a time (assembly.max_runs: 1). While a run
waits for its decision (decision_wait, 2 s as in the file) every new request is answered
UNAVAILABLE; the collector's sending queue retries it until tracescore takes it, and nothing is
lost: every span reaches the backend once and every run is scored.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from collector._agent import SdkAgent
from collector._collector import CONFIGS, Collector, tracescore_config, wait_until
from collector._scores import events_by_run, span_ids_by_run
from e2e._process import ServeProcess
from support.otlp_sink import OtlpSink, free_port

pytestmark = pytest.mark.slow

WAVES = 3
RUNS = 4  # per wave


def test_a_saturated_tracescore_makes_the_collector_retry_and_loses_nothing(
    tmp_path: Path,
) -> None:
    ts_grpc, agents, scores = free_port(), free_port(), free_port()
    saturating = {"assembly": {"max_runs": 1}, "service": {"metrics_interval": "300ms"}}
    config = tracescore_config("tracescore-inline.yaml", ts_grpc, free_port(), scores, saturating)
    with OtlpSink("http") as backend:
        env = {
            "AGENT_OTLP_GRPC": f"127.0.0.1:{agents}",
            "AGENT_OTLP_HTTP": f"127.0.0.1:{free_port()}",
            "SCORES_OTLP_GRPC": f"127.0.0.1:{scores}",
            "TRACESCORE_OTLP": f"127.0.0.1:{ts_grpc}",
            "BACKEND_OTLP_HTTP": backend.endpoint,
        }
        sent: dict[str, set[str]] = {}
        with ServeProcess(config, tmp_path) as serve:
            with Collector(CONFIGS / "inline.yaml", env) as collector:
                for _ in range(WAVES):
                    # Each wave reaches tracescore while the runs before it still wait for their
                    # decision: some of its spans are forwarded at once, the agent spans held.
                    agent = SdkAgent(f"127.0.0.1:{agents}")
                    for _ in range(RUNS):
                        agent.run()
                        agent.flush()
                    agent.shutdown()
                    wave = agent.sent()
                    sent |= wave
                    wait_until(
                        lambda w=wave: set(w) <= set(span_ids_by_run(backend)), 60, "a wave in"
                    )
                wait_until(
                    lambda: (
                        {t: set(c) for t, c in span_ids_by_run(backend).items()} == sent
                        and len(events_by_run(backend)) == len(sent)
                    ),
                    120,
                    "every span forwarded and every run scored",
                )
                refusals = [line for line in collector.log.splitlines() if "overloaded" in line]
                # tracescore stops first, while the collector still takes its last metrics:
                # stopped after it, those would be dropped and serve would exit 1.
                code, _ = serve.stop()
            assert code == 0, serve.stderr
    # The collector was refused (tracescore's UNAVAILABLE names the limit) and retried.
    assert refusals, collector.log
    assert any("assembly.max_runs" in line for line in refusals)
    assert any("retry" in line.lower() for line in refusals)
    assert "dropped" not in collector.log.lower()
    received = span_ids_by_run(backend)
    assert all(n == 1 for c in received.values() for n in c.values())
    assert len(sent) == WAVES * RUNS
    assert set(events_by_run(backend)) == set(sent)
    print(f"back-pressure: {len(refusals)} refused exports retried, runs {len(sent)}, lost 0")
