"""Telemetry: exact metric names, attribute keys and value types; Prometheus text that a strict
parser accepts; OTLP metrics with cumulative temporality; bounded cardinality; thread safety."""

from __future__ import annotations

import dataclasses
import math
import random
import threading

import pytest
from opentelemetry.proto.metrics.v1.metrics_pb2 import AggregationTemporality

from export.prometheus_text import parse_prometheus
from tracescore import semconv
from tracescore.export import metrics
from tracescore.export.instruments import HistogramPoint
from tracescore.export.metrics import SCORE_BOUNDS, Telemetry
from tracescore.model import AgentStep, Score, ToolCall, Trajectory
from tracescore.scenarios import RunResult


def test_the_strict_parser_refuses_malformed_text() -> None:
    bad = [
        "# TYPE x_total counter\nx_total 1",  # no final newline
        "x 1\n",  # sample without TYPE
        '# TYPE x_total counter\nx_total{a="1",a="2"} 1\n',
        '# TYPE x_total counter\nx_total{a="\n"} 1\n',
        "# TYPE x counter\nx 1\n",  # counter without _total
        "# TYPE h histogram\n"
        'h_bucket{le="1"} 2\nh_bucket{le="+Inf"} 1\nh_sum 1\nh_count 1\n',  # not cumulative
        "# TYPE x_total counter\nx_total one\n",
    ]
    for text in bad:
        with pytest.raises(AssertionError):
            parse_prometheus(text)


# --- fixtures --------------------------------------------------------------------------------


def run(
    agent: str = "shop", tools: tuple[str, ...] = ("get_weather",), verdict: str = "scored"
) -> RunResult:
    calls = tuple(
        ToolCall(name, status="error" if name == "charge_card" else "ok") for name in tools
    )
    trajectory = Trajectory(trace_id="ab" * 16, span_id="cd" * 8, agent=agent, steps=calls)
    scores = (
        Score("tool_calls", "tool_calls", 0.5, False, "1 of 2", "scorer-v1:a", label="fail"),
        Score("perfect", "x", 1.0, True, "all good", "scorer-v1:b", label="pass"),
        Score("judge", "llm_judge", None, None, "scorer failed: boom", "scorer-v1:c",
              error="TimeoutError: judge did not answer"),
    )  # fmt: skip
    return RunResult(trajectory, "checkout", scores, verdict=verdict, digest="scenario-v1:x")  # type: ignore[arg-type]


# --- tests -----------------------------------------------------------------------------------


def test_prometheus_text_is_valid_and_carries_every_metric() -> None:
    t = Telemetry()
    t.record_run(run(tools=("get_weather", "charge_card")))
    t.spans_received(10)
    t.spans_rejected(1)
    t.spans_forwarded(9)
    t.spans_late(2)
    t.spans_dropped(semconv.DROP_EXPORT_REJECTED, 3)
    t.set_runs_buffered(4)
    t.set_bytes_buffered(2048)
    t.set_export_queue(2, 512)
    t.observe_scoring_latency(0.004)
    t.observe_export_latency("traces", 0.02)
    t.export_failure("traces", "unavailable")
    families = parse_prometheus(t.render_prometheus())

    assert {name: f.type for name, f in families.items()} == {
        "gen_ai_evaluation_score": "histogram",
        "tracescore_evaluation_errors_total": "counter",
        "tracescore_runs_total": "counter",
        "tracescore_tool_calls_total": "counter",
        "tracescore_spans_received_total": "counter",
        "tracescore_spans_rejected_total": "counter",
        "tracescore_spans_forwarded_total": "counter",
        "tracescore_spans_late_total": "counter",
        "tracescore_spans_dropped_total": "counter",
        "tracescore_runs_buffered": "gauge",
        "tracescore_bytes_buffered_bytes": "gauge",
        "tracescore_export_queue_items": "gauge",
        "tracescore_export_queue_bytes": "gauge",
        "tracescore_scoring_duration_seconds": "histogram",
        "tracescore_export_duration_seconds": "histogram",
        "tracescore_export_failures_total": "counter",
    }
    assert all(f.help for f in families.values())
    runs = families["tracescore_runs_total"].samples
    assert runs == [
        (
            "tracescore_runs_total",
            {"tracescore_verdict": "scored", "tracescore_scenario": "checkout",
             "gen_ai_agent_name": "shop"},
            1.0,
        )
    ]  # fmt: skip
    tools = {(s[1]["gen_ai_tool_name"], s[1]["tracescore_tool_call_status"]): s[2]
             for s in families["tracescore_tool_calls_total"].samples}  # fmt: skip
    assert tools == {("get_weather", "ok"): 1.0, ("charge_card", "error"): 1.0}
    errors = families["tracescore_evaluation_errors_total"].samples
    assert errors[0][1]["error_type"] == "TimeoutError"
    assert errors[0][1]["gen_ai_evaluation_name"] == "judge"
    score = families["gen_ai_evaluation_score"].samples
    count = {s[1]["gen_ai_evaluation_name"]: s[2] for s in score if s[0].endswith("_count")}
    assert count == {"tool_calls": 1.0, "perfect": 1.0}, "an error score is no observation"
    le_half = [
        s[2]
        for s in score
        if s[1].get("le") == "0.5" and s[1]["gen_ai_evaluation_name"] == "tool_calls"
    ]
    assert le_half == [1.0], "a value equal to a bound falls into that bound's bucket"
    dropped = families["tracescore_spans_dropped_total"].samples
    assert dropped == [("tracescore_spans_dropped_total", {"reason": "export_rejected"}, 3.0)]


def test_label_values_are_escaped() -> None:
    t = Telemetry()
    t.record_run(run(agent='say "hi"\\\nbye'))
    families = parse_prometheus(t.render_prometheus())
    (sample,) = families["tracescore_runs_total"].samples
    assert sample[1]["gen_ai_agent_name"] == 'say \\"hi\\"\\\\\\nbye'


def test_fresh_telemetry_renders_zeroed_service_counters() -> None:
    families = parse_prometheus(Telemetry().render_prometheus())
    assert families["tracescore_spans_received_total"].samples == [
        ("tracescore_spans_received_total", {}, 0.0)
    ]
    assert "gen_ai_evaluation_score" not in families


def test_tool_names_are_capped_and_the_rest_folded_into_other() -> None:
    t = Telemetry(max_values=5)
    for i in range(20):
        t.record_run(run(tools=(f"tool_{i}",)))
    families = parse_prometheus(t.render_prometheus())
    samples = families["tracescore_tool_calls_total"].samples
    names = {s[1]["gen_ai_tool_name"] for s in samples}
    assert names == {f"tool_{i}" for i in range(5)} | {semconv.OTHER_VALUE}
    assert sum(s[2] for s in samples) == 20, "folding keeps every call counted"
    other = [s[2] for s in samples if s[1]["gen_ai_tool_name"] == semconv.OTHER_VALUE]
    assert other == [15.0]


def test_no_trace_id_ever_becomes_a_metric_attribute() -> None:
    t = Telemetry()
    t.record_run(run())
    text = t.render_prometheus()
    assert "ab" * 16 not in text
    assert "cd" * 8 not in text


def test_otlp_metrics_are_cumulative_with_exact_names_and_types() -> None:
    t = Telemetry(start_ns=1_000)
    t.record_run(run())
    t.spans_forwarded(7)
    t.set_runs_buffered(3)
    request = t.to_otlp()
    (rm,) = request.resource_metrics
    resource = {kv.key: kv.value.string_value for kv in rm.resource.attributes}
    assert resource[semconv.SERVICE_NAME] == "tracescore"
    (sm,) = rm.scope_metrics
    assert sm.scope.name == semconv.SCOPE_NAME
    metrics = {m.name: m for m in sm.metrics}

    score = metrics[semconv.METRIC_EVALUATION_SCORE]
    assert score.unit == "1"
    assert score.WhichOneof("data") == "histogram"
    cumulative = AggregationTemporality.AGGREGATION_TEMPORALITY_CUMULATIVE
    assert score.histogram.aggregation_temporality == cumulative
    points = {
        next(
            kv.value.string_value for kv in p.attributes if kv.key == semconv.GEN_AI_EVALUATION_NAME
        ): p
        for p in score.histogram.data_points
    }
    assert set(points) == {"tool_calls", "perfect"}
    p = points["tool_calls"]
    assert list(p.explicit_bounds) == list(SCORE_BOUNDS)
    assert sum(p.bucket_counts) == p.count == 1
    assert len(p.bucket_counts) == len(SCORE_BOUNDS) + 1
    assert (p.sum, p.min, p.max) == (0.5, 0.5, 0.5)
    assert p.start_time_unix_nano == 1_000 < p.time_unix_nano
    keys = [kv.key for kv in p.attributes]
    assert keys == [
        semconv.GEN_AI_EVALUATION_NAME,
        semconv.GEN_AI_AGENT_NAME,
        semconv.TRACESCORE_SCENARIO,
    ]
    assert all(kv.value.WhichOneof("value") == "string_value" for kv in p.attributes)

    fwd = metrics[semconv.METRIC_SPANS_FORWARDED]
    assert fwd.sum.is_monotonic
    assert fwd.sum.aggregation_temporality == cumulative
    assert fwd.sum.data_points[0].WhichOneof("value") == "as_int"
    assert fwd.sum.data_points[0].as_int == 7
    assert fwd.sum.data_points[0].start_time_unix_nano == 1_000
    buffered = metrics[semconv.METRIC_RUNS_BUFFERED]
    assert buffered.WhichOneof("data") == "gauge"
    assert buffered.gauge.data_points[0].as_int == 3

    runs = metrics[semconv.METRIC_RUNS].sum.data_points[0]
    assert {kv.key: kv.value.string_value for kv in runs.attributes} == {
        semconv.TRACESCORE_VERDICT: "scored",
        semconv.TRACESCORE_SCENARIO: "checkout",
        semconv.GEN_AI_AGENT_NAME: "shop",
    }


def test_a_run_without_verdict_or_agent_leaves_those_attributes_out() -> None:
    t = Telemetry()
    result = RunResult(Trajectory(trace_id="ab" * 16, span_id=None), scenario="s")
    t.record_run(result)
    assert t.value(semconv.METRIC_RUNS, {semconv.TRACESCORE_SCENARIO: "s"}) == 1


def test_runs_that_were_not_scored_are_not_counted() -> None:
    t = Telemetry()
    t.record_run(RunResult(Trajectory(trace_id="ab" * 16, span_id=None), scenario=None))
    t.record_run(RunResult(Trajectory(trace_id="ab" * 16, span_id=None), "s", sampled=False))
    assert "tracescore_runs_total" not in parse_prometheus(t.render_prometheus())


def test_counters_are_exact_under_concurrent_updates() -> None:
    t = Telemetry()

    def hammer() -> None:
        for _ in range(5_000):
            t.spans_received()
            t.spans_dropped("overloaded")
            t.observe_export_latency("traces", 0.001)

    threads = [threading.Thread(target=hammer) for _ in range(8)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert t.value(semconv.METRIC_SPANS_RECEIVED) == 40_000
    assert t.value(semconv.METRIC_SPANS_DROPPED, {semconv.REASON: "overloaded"}) == 40_000
    families = parse_prometheus(t.render_prometheus())
    counts = [
        s[2]
        for s in families["tracescore_export_duration_seconds"].samples
        if s[0].endswith("_count")
    ]
    assert counts == [40_000.0]


def test_a_counter_refuses_to_go_down() -> None:
    with pytest.raises(ValueError, match="cannot decrease"):
        Telemetry().spans_received(-1)


def test_late_scores_are_observed_without_counting_the_run_again() -> None:
    t = Telemetry()
    first = run()
    t.record_run(first)
    judge = Score("relevance", "llm_judge", 0.9, True, "on topic", "scorer-v1:j", label="pass")
    t.record_scores(RunResult(first.trajectory, "checkout", (judge,)))
    t.record_scores(RunResult(first.trajectory, None, (judge,)))  # not scored: ignored
    families = parse_prometheus(t.render_prometheus())
    assert sum(v for _, _, v in families["tracescore_runs_total"].samples) == 1
    counts = {
        labels["gen_ai_evaluation_name"]: v
        for name, labels, v in families["gen_ai_evaluation_score"].samples
        if name.endswith("_count")
    }
    assert counts == {"tool_calls": 1.0, "perfect": 1.0, "relevance": 1.0}


def test_sub_agents_tool_calls_count_with_their_run() -> None:
    t = Telemetry()
    sub = AgentStep("billing", steps=(ToolCall("refund", status="error"), ToolCall("lookup")))
    trajectory = Trajectory(
        trace_id="ab" * 16, span_id=None, agent="shop", steps=(ToolCall("lookup"), sub)
    )
    t.record_run(RunResult(trajectory, "s"))
    t.record_run(RunResult(Trajectory(trace_id="cd" * 16, span_id=None, steps=(sub,)), "s"))

    def calls(tool: str, status: str) -> float:
        attributes = {semconv.GEN_AI_TOOL_NAME: tool, semconv.TOOL_CALL_STATUS: status}
        return t.value(semconv.METRIC_TOOL_CALLS, attributes)

    assert (calls("lookup", "ok"), calls("refund", "error")) == (3, 2)


def test_runs_scored_together_observe_their_latency_once_each() -> None:
    t = Telemetry()
    t.observe_scoring_latency(0.004, 3)
    t.observe_scoring_latency(0.5)
    scoring = next(i for i in t.snapshot() if i.name == semconv.METRIC_SCORING_DURATION)
    point = scoring.points[()]
    assert point.count == 4
    assert point.sum == 0.004 + 0.004 + 0.004 + 0.5, "as if observed one by one"
    assert (point.min, point.max) == (0.004, 0.5)


def test_counts_do_not_depend_on_when_pending_calls_are_counted() -> None:
    # Tool calls wait in bulk and score series are kept per (agent, scenario): read after
    # every run, or once at the end with thousands waiting, the numbers and the folding of
    # capped names (first come, first kept) must be the same, scenarios and agents alternating.
    tools = [f"tool{i}" for i in range(7)] + ["charge_card"]
    results = []
    for i in range(1500):
        base = run(
            agent=f"agent{i % 5}",
            tools=tuple(tools[(i + j) % len(tools)] for j in range(i % 4)),
            verdict=("scored", "passed", "failed")[i % 3],
        )
        scenario = ("checkout", "refunds", "support")[i % 3]
        results.append(
            RunResult(base.trajectory, scenario, base.scores[: 1 + i % 3], verdict=base.verdict)
        )
    eager, lazy = Telemetry(max_values=4, start_ns=1), Telemetry(max_values=4, start_ns=1)
    for result in results:
        eager.record_run(result)
        eager.value(semconv.METRIC_TOOL_CALLS)  # counts what waits
        lazy.record_run(result)
    assert repr(eager.snapshot()) == repr(lazy.snapshot())
    assert eager.render_prometheus() == lazy.render_prometheus()
    assert lazy.value(
        semconv.METRIC_TOOL_CALLS,
        {semconv.GEN_AI_TOOL_NAME: semconv.OTHER_VALUE, semconv.TOOL_CALL_STATUS: "ok"},
    )
    # And what both counted is what the runs hold, names past the cap folded in call order.
    kept: list[str] = []
    expected: dict[tuple[str, str], int] = {}
    for result in results:
        for call in result.trajectory.steps:
            assert isinstance(call, ToolCall)
            if call.name not in kept and len(kept) < 4:
                kept.append(call.name)
            tool = call.name if call.name in kept else semconv.OTHER_VALUE
            expected[(tool, call.status)] = expected.get((tool, call.status), 0) + 1
    for (tool, status), n in expected.items():
        attributes = {semconv.GEN_AI_TOOL_NAME: tool, semconv.TOOL_CALL_STATUS: status}
        assert lazy.value(semconv.METRIC_TOOL_CALLS, attributes) == n


def test_score_values_in_bulk_are_the_values_observed_one_by_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Scores wait in their series and go into the histograms in bulk, on a read or when many
    # wait: counts, exact sums (added in the order the values came), min and max must be what
    # observing each value at once gives, whatever the grouping. (Scores are never NaN;
    # observe_all's own test covers it.)
    monkeypatch.setattr(metrics, "_PENDING_LIMIT", 7)
    rng = random.Random(5)
    values = [0.1, 0.7, 1 / 3, -0.0, 0.0, 1.0, 0.2, 0.30000000000000004]
    results = []
    for i in range(400):
        base = run(agent=f"agent{i % 3}")
        scores = tuple(dataclasses.replace(s, value=rng.choice(values)) for s in base.scores[:2])
        results.append(RunResult(base.trajectory, ("a", "b")[i % 2], scores, verdict="scored"))
    eager, bulk = Telemetry(start_ns=1), Telemetry(start_ns=1)
    for result in results:
        eager.record_run(result)
        eager.snapshot()  # a read observes what waits
        bulk.record_run(result)
        assert bulk._scores_pending < 7  # bounded: folded as the limit is reached
    by_hand: dict[tuple[str, str, str], HistogramPoint] = {}
    for result in results:
        for score in result.scores:
            point = by_hand.setdefault(
                (result.scenario or "", result.trajectory.agent or "", score.name),
                HistogramPoint([0] * (len(SCORE_BOUNDS) + 1)),
            )
            point.observe(float(score.value or 0.0), SCORE_BOUNDS)
    assert repr(eager.snapshot()) == repr(bulk.snapshot())
    histogram = next(i for i in bulk.snapshot() if i.name == semconv.METRIC_EVALUATION_SCORE)
    assert len(histogram.points) == len(by_hand) > 0
    for key, point in histogram.points.items():
        attributes = dict(key)
        expected = by_hand[
            (
                attributes[semconv.TRACESCORE_SCENARIO],
                attributes[semconv.GEN_AI_AGENT_NAME],
                attributes[semconv.GEN_AI_EVALUATION_NAME],
            )
        ]
        assert (point.counts, point.count, point.min, point.max) == (
            expected.counts,
            expected.count,
            expected.min,
            expected.max,
        )
        assert point.sum == expected.sum, "the sum adds up the values in the order they came"


def test_observe_all_is_observe_of_each_value() -> None:
    rng = random.Random(11)
    for _ in range(200):
        values = [rng.choice([rng.random(), 0.5, -0.0, math.nan, 2.0, -1.0]) for _ in range(9)]
        one, bulk = (HistogramPoint([0] * (len(SCORE_BOUNDS) + 1)) for _ in range(2))
        one.observe(0.25, SCORE_BOUNDS)
        bulk.observe(0.25, SCORE_BOUNDS)
        for value in values:
            one.observe(value, SCORE_BOUNDS)
        bulk.observe_all(values, SCORE_BOUNDS)
        assert repr(one) == repr(bulk)


def test_native_record_run_counts_what_the_python_path_counts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # otlp/_metrics.c records a run whose series are all known; anything else (a new series,
    # a failed score) it leaves untouched to the Python path. Fed the same runs, one Telemetry
    # recording natively and one in Python must hold the same numbers, in the same order,
    # with names folded past the cap alike and pending values flushed at the same limits.
    native = metrics._native_record
    if native is None:
        pytest.skip("the C extension was not built")
    monkeypatch.setattr(metrics, "_PENDING_LIMIT", 7)
    answers: list[int | None] = []

    def counted(state: tuple[object, ...], result: RunResult) -> int | None:
        answers.append(native(state, result))
        return answers[-1]

    rng = random.Random(3)
    results = []
    for _ in range(600):
        steps: list[ToolCall | AgentStep] = [
            ToolCall(rng.choice(["a", "b", "c", "d", "e", "f"]), status=rng.choice(["ok", "error"]))
            for _ in range(rng.randint(0, 4))
        ]
        if rng.random() < 0.2:
            steps.append(AgentStep("helper", steps=(ToolCall("g", status="paused"),)))
        trajectory = Trajectory(
            trace_id="ab" * 16,
            span_id=None,
            agent=rng.choice(["x", "y", "z", "w", "v", None]),
            steps=tuple(steps),
        )
        scores = tuple(
            Score(name, "check", rng.choice([0.0, 0.5, 1.0]), None, "", "d")
            if rng.random() < 0.9
            else Score(name, "check", None, None, "failed", "d", error=rng.choice([None, "E: x"]))
            for name in rng.sample(["s1", "s2", "s3", "s4", "s5"], rng.randint(0, 3))
        )
        results.append(
            RunResult(
                trajectory,
                rng.choice(["p", "q", "r", "t", "u", None]),
                scores,
                verdict=rng.choice(["passed", "failed", None]),
                sampled=rng.random() < 0.95,
            )
        )
    fast, slow = Telemetry(max_values=4, start_ns=1), Telemetry(max_values=4, start_ns=1)
    for result in results:
        monkeypatch.setattr(metrics, "_native_record", counted)
        fast.record_run(result)
        monkeypatch.setattr(metrics, "_native_record", None)
        slow.record_run(result)
        assert fast._scores_pending == slow._scores_pending
    assert repr(fast.snapshot()) == repr(slow.snapshot())
    assert fast.render_prometheus() == slow.render_prometheus()
    assert sum(isinstance(a, int) and a > 0 for a in answers) > len(results) / 4, "native ran"
    assert None in answers, "and left the new series to Python"


def test_native_record_run_refuses_what_it_cannot_read() -> None:
    native = metrics._native_record
    if native is None:
        pytest.skip("the C extension was not built")
    telemetry = Telemetry(start_ns=1)
    with pytest.raises(TypeError):
        native((), run())
    odd = dataclasses.replace(run(), scores=list(run().scores))  # type: ignore[arg-type]
    assert native(telemetry._native_state, odd) is None
