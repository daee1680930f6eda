"""CPU per scored run spent recording its metrics, several ways, side by side in one process.

    .venv/bin/python bench/metrics_cost.py [--runs 1000] [--rounds 7]

Each round records the same runs (3 scores and 3 tool calls each, over 5 scenarios, 3 agents
and 6 tools: the series stay few, as in production) into a fresh recorder of each kind, in a
shuffled order, and takes the process CPU time, with one `/metrics` scrape at the end (the old
recorder deferred work to its reads); the median per round is printed. Kinds:
  - `observable`: `Telemetry` as shipped (counts tallied in Python and read by observable
    instruments, score values bucketed in bulk by export/histograms.py), Prometheus reader only;
  - `observable+otlp`: the same pushing over OTLP too (as `serve` runs; the push discarded);
  - `per-call` and `per-call+otlp`: every count an SDK `Counter.add` as it happens (this file's
    `PerCall`, built the way `Telemetry` builds its series).
Run it with another tree's `src` on PYTHONPATH to measure that tree's `Telemetry` as `as-is`.
"""

from __future__ import annotations

import argparse
import gc
import random
import statistics
import time
from collections.abc import Callable, Sequence

from opentelemetry.exporter.prometheus import PrometheusMetricReader
from opentelemetry.sdk.metrics import AlwaysOffExemplarFilter, MeterProvider
from opentelemetry.sdk.metrics.export import (
    MetricExporter,
    MetricExportResult,
    MetricReader,
    MetricsData,
    PeriodicExportingMetricReader,
)
from prometheus_client import CollectorRegistry, generate_latest

from tracescore import semconv
from tracescore.export import metrics
from tracescore.export.metrics import Telemetry
from tracescore.model import Score, ToolCall, Trajectory
from tracescore.scenarios import RunResult
from tracescore.scorers.base import select_calls


class _Discard(MetricExporter):
    def export(
        self, metrics_data: MetricsData, timeout_millis: float = 10_000, **kwargs: object
    ) -> MetricExportResult:
        return MetricExportResult.SUCCESS

    def force_flush(self, timeout_millis: float = 10_000) -> bool:
        return True

    def shutdown(self, timeout: float = 30_000, **kwargs: object) -> None:
        return None


def _otlp_reader() -> PeriodicExportingMetricReader:
    return PeriodicExportingMetricReader(_Discard(), export_interval_millis=3_600_000)


class PerCall:
    """Every count an SDK counter `add` at once (the alternative `Telemetry` measured against)."""

    def __init__(self, otlp: bool) -> None:
        readers: list[MetricReader] = [PrometheusMetricReader(registry=CollectorRegistry())]
        if otlp:
            readers.append(_otlp_reader())
        self.registry = CollectorRegistry()
        readers[0] = PrometheusMetricReader(registry=self.registry)
        self.provider = MeterProvider(
            metric_readers=readers,
            exemplar_filter=AlwaysOffExemplarFilter(),
            shutdown_on_exit=False,
        )
        meter = self.provider.get_meter("bench")
        self.runs = meter.create_counter(semconv.METRIC_RUNS)
        self.results = meter.create_counter(semconv.METRIC_EVALUATION_RESULTS)
        self.calls = meter.create_counter(semconv.METRIC_TOOL_CALLS)
        self.scores = meter.create_histogram(semconv.METRIC_EVALUATION_SCORE)

    def record_run(self, result: RunResult) -> None:
        s = semconv
        agent, scenario = result.trajectory.agent or "", result.scenario or ""
        self.runs.add(
            1,
            {s.TRACESCORE_VERDICT: result.verdict or "", s.TRACESCORE_SCENARIO: scenario,
             s.GEN_AI_AGENT_NAME: agent},
        )  # fmt: skip
        for score in result.scores:
            base = {s.GEN_AI_EVALUATION_NAME: score.name, s.TRACESCORE_SCENARIO: scenario}
            self.results.add(1, {**base, s.EVALUATION_RESULT: metrics.score_result(score)})
            if score.value is not None:
                self.scores.record(score.value, {**base, s.GEN_AI_AGENT_NAME: agent})
        for call in select_calls(result.trajectory, "attempted", True):
            self.calls.add(1, {s.GEN_AI_TOOL_NAME: call.name, s.TOOL_CALL_STATUS: call.status})

    def render_prometheus(self) -> str:
        return generate_latest(self.registry).decode()

    def close(self) -> None:
        self.provider.shutdown()


def _runs(n: int) -> list[RunResult]:
    rng = random.Random(1)
    out = []
    for i in range(n):
        calls = tuple(
            ToolCall(f"tool{rng.randrange(6)}", status=rng.choice(["ok", "ok", "error"]))
            for _ in range(3)
        )
        trajectory = Trajectory(
            trace_id=f"{i:032x}", span_id=None, agent=f"agent{i % 3}", steps=calls
        )
        scores = tuple(
            Score(f"s{j}", "check", rng.choice([0.0, 0.5, 1.0]), rng.random() < 0.8, "", "d")
            for j in range(3)
        )
        out.append(RunResult(trajectory, f"scenario{i % 5}", scores, verdict="passed"))
    return out


def _cpu(make: Callable[[], object], runs: Sequence[RunResult]) -> float:
    recorder = make()
    record = recorder.record_run  # type: ignore[attr-defined]
    gc.collect()
    start = time.process_time()
    for result in runs:
        record(result)
    recorder.render_prometheus()  # type: ignore[attr-defined]  # one scrape: deferred work too
    spent = time.process_time() - start
    close = getattr(recorder, "close", None) or getattr(recorder, "shutdown", None)
    if close is not None:
        close()
    return spent / len(runs) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    runs = _runs(args.runs)
    kinds: dict[str, Callable[[], object]] = {"as-is": Telemetry}
    if hasattr(Telemetry, "push_to"):

        def pushing() -> Telemetry:
            telemetry = Telemetry()
            telemetry.push_to(_Discard(), 3600)
            return telemetry

        kinds = {
            "observable": Telemetry,
            "observable+otlp": pushing,
            "per-call": lambda: PerCall(False),
            "per-call+otlp": lambda: PerCall(True),
        }
    results: dict[str, list[float]] = {k: [] for k in kinds}
    order = list(kinds)
    for _ in range(args.rounds):
        random.shuffle(order)
        for kind in order:
            results[kind].append(_cpu(kinds[kind], runs))
    for kind, values in results.items():
        print(f"{kind:16s} {statistics.median(values):7.2f} µs CPU per scored run "
              f"(min {min(values):.2f}, max {max(values):.2f})")  # fmt: skip


if __name__ == "__main__":
    main()
