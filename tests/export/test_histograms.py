"""Histograms aggregated in bulk (export/histograms.py) give what the SDK's own histogram gives
for the same values: the same buckets, counts, sums, in `/metrics` and in the OTLP push."""

from __future__ import annotations

import random

from opentelemetry.exporter.prometheus import PrometheusMetricReader
from opentelemetry.sdk.metrics import MeterProvider
from prometheus_client import CollectorRegistry, generate_latest

from export.prometheus_text import parse_prometheus
from tracescore import semconv
from tracescore.export.catalog import SCORE_BOUNDS
from tracescore.export.metrics import Telemetry
from tracescore.model import Score, Trajectory
from tracescore.model.run_result import RunResult


def _samples(text: str, family: str) -> list[tuple[str, tuple[tuple[str, str], ...], float]]:
    parsed = parse_prometheus(text)[family]
    return sorted((name, tuple(sorted(labels.items())), v) for name, labels, v in parsed.samples)


def test_bulk_histograms_equal_the_sdks_histogram_for_the_same_values() -> None:
    registry = CollectorRegistry(auto_describe=False)
    reader = PrometheusMetricReader(
        disable_target_info=True, scope_info_enabled=False, registry=registry
    )
    provider = MeterProvider(metric_readers=[reader], shutdown_on_exit=False)
    sdk = provider.get_meter("check").create_histogram(
        semconv.METRIC_EVALUATION_SCORE, "1", "x", explicit_bucket_boundaries_advisory=SCORE_BOUNDS
    )
    telemetry = Telemetry()
    rng = random.Random(7)
    values = [0.0, 0.1, 0.30000000000000004, 1 / 3, 0.5, 0.7, 0.9, 1.0]
    for i in range(3000):
        score = Score(f"s{i % 4}", "x", rng.choice(values), None, "", "d")
        agent, scenario = f"agent{i % 3}", ("a", "b")[i % 2]
        trajectory = Trajectory(trace_id="ab" * 16, span_id=None, agent=agent)
        telemetry.record_run(RunResult(trajectory, scenario, (score,)))
        assert score.value is not None
        sdk.record(
            score.value,
            {semconv.GEN_AI_EVALUATION_NAME: score.name, semconv.GEN_AI_AGENT_NAME: agent,
             semconv.TRACESCORE_SCENARIO: scenario},
        )  # fmt: skip
        if i in (10, 1000):  # reads in between change nothing
            telemetry.render_prometheus()
    ours = _samples(telemetry.render_prometheus(), "gen_ai_evaluation_score")
    theirs = _samples(generate_latest(registry).decode(), "gen_ai_evaluation_score")
    assert len(ours) == 4 * 3 * 2 // 2 * (len(SCORE_BOUNDS) + 3)
    assert [(n, k) for n, k, _ in ours] == [(n, k) for n, k, _ in theirs]
    for (name, _, mine), (_, _, sdks) in zip(ours, theirs, strict=True):
        if name.endswith("_sum"):
            assert abs(mine - sdks) < 1e-9
        else:
            assert mine == sdks, name
    provider.shutdown()
