"""collector-config/loadbalancing.yaml with three `tracescore serve` replicas (each running
tracescore-fanout.yaml): the collector's `loadbalancing` exporter routes by trace id, so every run
is scored exactly once, by one replica, from all of its spans, also while a replica restarts.

Each replica's scenario is renamed `replica-N`, so the evaluation events name the replica that
scored a run. A run is split when its spans reach more than one replica; then the replica that
scored it would not have received all of its spans. Each replica's `/metrics` counts the spans
it received; for every replica that count equals the spans of the runs it scored (summed over
both lives of the restarted one), and the counts add up to every span the agent sent.
"""

from __future__ import annotations

import urllib.request
from collections import Counter
from pathlib import Path

import pytest
import yaml

from collector._agent import SdkAgent
from collector._collector import CONFIGS, Collector, tracescore_config, wait_until
from collector._scores import FAST, evaluate_spans, events_by_run, span_ids_by_run
from e2e._process import ServeProcess
from export.prometheus_text import parse_prometheus
from support.otlp_sink import OtlpSink, attrs, free_port
from tracescore import semconv

pytestmark = pytest.mark.slow

REPLICAS = 3
WAVE = 20  # runs per wave: before, during and after replica 1's restart
RESTARTED = 1


def _spans_received(http_port: int) -> int:
    with urllib.request.urlopen(f"http://127.0.0.1:{http_port}/metrics", timeout=5) as reply:
        families = parse_prometheus(reply.read().decode())
    name = semconv.METRIC_SPANS_RECEIVED.replace(".", "_") + "_total"
    return int(sum(value for _, _, value in families[name].samples))


def _replica_config(n: int, grpc: int, http: int, scores: int) -> str:
    data = yaml.safe_load(tracescore_config("tracescore-fanout.yaml", grpc, http, scores, FAST))
    (scenario,) = data["scenarios"]
    scenario["name"] = f"replica-{n}"
    return yaml.safe_dump(data, sort_keys=False)


def _wave(agents: int) -> SdkAgent:
    agent = SdkAgent(f"127.0.0.1:{agents}")
    for _ in range(WAVE):
        agent.run()
        agent.flush()  # one request per run: the collector routes many batches
    agent.shutdown()
    return agent


def test_every_run_is_scored_once_by_one_replica_also_across_a_restart(tmp_path: Path) -> None:
    grpc = [free_port() for _ in range(REPLICAS)]
    http = [free_port() for _ in range(REPLICAS)]
    agents, scores = free_port(), free_port()
    configs = []
    for n in range(REPLICAS):
        (tmp_path / f"r{n}").mkdir()
        configs.append(_replica_config(n, grpc[n], http[n], scores))
    with OtlpSink("http") as backend:
        env = {
            "AGENT_OTLP_GRPC": f"127.0.0.1:{agents}",
            "AGENT_OTLP_HTTP": f"127.0.0.1:{free_port()}",
            "SCORES_OTLP_GRPC": f"127.0.0.1:{scores}",
            "BACKEND_OTLP_HTTP": backend.endpoint,
            **{f"TRACESCORE_{n}": f"127.0.0.1:{grpc[n]}" for n in range(REPLICAS)},
        }
        received_before_restart = 0
        sent: dict[str, set[str]] = {}
        with Collector(CONFIGS / "loadbalancing.yaml", env) as collector:
            replicas = [
                ServeProcess(configs[n], tmp_path / f"r{n}").start() for n in range(REPLICAS)
            ]
            try:
                sent |= _wave(agents).sent()
                wait_until(lambda: len(events_by_run(backend)) == len(sent), 60, "wave 1 scored")
                received_before_restart = _spans_received(http[RESTARTED])
                code, _ = replicas[RESTARTED].stop()
                assert code == 0
                # While it is down its share waits in the collector's queue for it.
                sent |= _wave(agents).sent()
                down = f"127.0.0.1:{grpc[RESTARTED]}"
                wait_until(
                    lambda: any(
                        "Exporting failed" in line and down in line for line in collector.lines
                    ),
                    30,
                    "the collector retrying the stopped replica",
                )
                replicas[RESTARTED] = ServeProcess(
                    configs[RESTARTED], tmp_path / f"r{RESTARTED}"
                ).start()
                sent |= _wave(agents).sent()
                wait_until(
                    lambda: (
                        len(events_by_run(backend)) == len(sent)
                        and {t: set(c) for t, c in span_ids_by_run(backend).items()} == sent
                    ),
                    90,
                    "every run scored and every span at the backend",
                )
                received = [_spans_received(port) for port in http]
                received[RESTARTED] += received_before_restart
            finally:
                for replica in replicas:
                    replica.stop()

    # Every run scored exactly once, by one replica: one event per score, all from one scenario.
    events = events_by_run(backend)
    scored_by: dict[str, str] = {}
    for trace_id, records in events.items():
        names = Counter(r[semconv.GEN_AI_EVALUATION_NAME] for r in records)
        assert names == {"max_tool_calls": 1, "no_tool_errors": 1}, trace_id
        (scored_by[trace_id],) = {r[semconv.TRACESCORE_SCENARIO] for r in records}
    assert set(scored_by) == set(sent)
    evaluations = evaluate_spans(backend)
    assert {t: len(s) for t, s in evaluations.items()} == dict.fromkeys(sent, 1)
    assert all(attrs(s[0].attributes)[semconv.TRACESCORE_COMPLETE] for s in evaluations.values())
    # No run split: each replica received exactly the spans of the runs it scored.
    expected = [
        sum(len(sent[t]) for t, r in scored_by.items() if r == f"replica-{n}")
        for n in range(REPLICAS)
    ]
    # (a run split across replicas leaves the replica that scored it short of its spans)
    mismatched = [n for n in range(REPLICAS) if received[n] != expected[n]]
    # No span lost: the backend got every original once, the replicas all of them between them.
    originals = span_ids_by_run(backend)
    lost = sum(len(ids - set(originals.get(t, ()))) for t, ids in sent.items())
    duplicated = sum(n - 1 for c in originals.values() for n in c.values())
    per_replica = Counter(scored_by.values())
    total = sum(len(ids) for ids in sent.values())
    print(
        f"loadbalancing: runs sent {len(sent)}, scored {len(scored_by)} "
        f"{dict(sorted(per_replica.items()))}, replicas short of their runs' spans {mismatched}, "
        f"spans lost {lost}, duplicated {duplicated}, received {received} of {total}"
    )
    assert len(sent) == 3 * WAVE
    assert received == expected
    assert mismatched == []
    assert sum(received) == total
    assert lost == 0
    assert duplicated == 0
    assert all(per_replica[f"replica-{n}"] > 0 for n in range(REPLICAS))
