"""Telemetry: exact metric names, attribute keys and value types; Prometheus text that a strict
parser accepts; bounded cardinality; thread safety. (The OTLP push: test_metrics_push.py.)"""

from __future__ import annotations

import threading

import pytest

from export.prometheus_text import parse_prometheus
from tracescore import semconv
from tracescore.export.metrics import Telemetry
from tracescore.model import AgentStep, Score, ToolCall, Trajectory
from tracescore.model.run_result import RunResult


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
    t.request_refused(semconv.REFUSED_MAX_BYTES)
    t.set_runs_buffered(4)
    t.set_bytes_buffered(2048)
    t.set_export_queue(2, 512)
    t.observe_scoring_latency(0.004)
    t.observe_export_latency("traces", 0.02)
    t.export_failure("traces", "unavailable")
    families = parse_prometheus(t.render_prometheus())

    assert {name: f.type for name, f in families.items()} == {
        "gen_ai_evaluation_score": "histogram",
        "tracescore_evaluation_results_total": "counter",
        "tracescore_evaluation_errors_total": "counter",
        "tracescore_runs_total": "counter",
        "tracescore_tool_calls_total": "counter",
        "tracescore_spans_received_total": "counter",
        "tracescore_spans_rejected_total": "counter",
        "tracescore_spans_forwarded_total": "counter",
        "tracescore_spans_late_total": "counter",
        "tracescore_spans_dropped_total": "counter",
        "tracescore_requests_refused_total": "counter",
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
    dropped = {s[1]["reason"]: s[2] for s in families["tracescore_spans_dropped_total"].samples}
    assert dropped == dict.fromkeys(semconv.DROP_REASONS, 0.0) | {"export_rejected": 3.0}
    refused = families["tracescore_requests_refused_total"].samples
    assert {s[1]["reason"]: s[2] for s in refused} == dict.fromkeys(
        semconv.REFUSED_REASONS, 0.0
    ) | {"assembly.max_bytes": 1.0}
    results = {
        (s[1]["gen_ai_evaluation_name"], s[1]["tracescore_evaluation_result"]): s[2]
        for s in families["tracescore_evaluation_results_total"].samples
    }
    assert results == {("tool_calls", "failed"): 1.0, ("perfect", "passed"): 1.0,
                       ("judge", "error"): 1.0}  # fmt: skip


def test_label_values_are_escaped() -> None:
    t = Telemetry()
    t.record_run(run(agent='say "hi"\\\nbye'))
    families = parse_prometheus(t.render_prometheus())
    (sample,) = families["tracescore_runs_total"].samples
    assert sample[1]["gen_ai_agent_name"] == 'say \\"hi\\"\\\\\\nbye'


def test_every_service_counter_exists_at_zero_from_the_start() -> None:
    # An alert on a loss can be written before the first loss: every tracescore.spans.*
    # counter, and drops by each known reason, are series from start-up.
    families = parse_prometheus(Telemetry().render_prometheus())
    for name in ("received", "rejected", "forwarded", "late"):
        family = f"tracescore_spans_{name}_total"
        assert families[family].samples == [(family, {}, 0.0)]
    dropped = families["tracescore_spans_dropped_total"].samples
    assert sorted(s[1]["reason"] for s in dropped) == sorted(semconv.DROP_REASONS)
    assert all(s[2] == 0.0 for s in dropped)
    refused = families["tracescore_requests_refused_total"].samples
    assert sorted(s[1]["reason"] for s in refused) == sorted(semconv.REFUSED_REASONS)
    assert all(s[2] == 0.0 for s in refused)
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


def test_counts_read_between_runs_fold_and_add_up_as_counted_at_once() -> None:
    # A run's counts wait until a read settles them: reads in between change nothing.
    tools = [f"tool_{i % 9}" for i in range(30)]
    at_once, read_often = Telemetry(max_values=5), Telemetry(max_values=5)
    for i, tool in enumerate(tools):
        at_once.record_run(run(agent=f"agent_{i % 3}", tools=(tool, "charge_card")))
        read_often.record_run(run(agent=f"agent_{i % 3}", tools=(tool, "charge_card")))
        if i % 4 == 0:
            read_often.render_prometheus()
            read_often.value(semconv.METRIC_RUNS)
    assert read_often.render_prometheus() == at_once.render_prometheus()
    # Five names kept, in the order first counted: tool_0, charge_card, tool_1, tool_2, tool_3.
    ok = {semconv.TOOL_CALL_STATUS: "ok"}
    first = at_once.value(semconv.METRIC_TOOL_CALLS, {semconv.GEN_AI_TOOL_NAME: "tool_0"} | ok)
    assert first == 4  # calls 0, 9, 18, 27
    other = {semconv.GEN_AI_TOOL_NAME: semconv.OTHER_VALUE} | ok
    assert at_once.value(semconv.METRIC_TOOL_CALLS, other) == 5 * 3  # tool_4 to tool_8


def test_counts_survive_the_series_memos_filling_up() -> None:
    # Memos of series (and of waiting tool calls) are bounded and cleared when full; what
    # waits in them is settled first.
    t = Telemetry(max_values=10)
    for i in range(5_000):
        t.record_run(run(agent=f"agent_{i}", tools=(f"tool_{i}",)))
    families = parse_prometheus(t.render_prometheus())
    assert sum(s[2] for s in families["tracescore_runs_total"].samples) == 5_000
    assert sum(s[2] for s in families["tracescore_tool_calls_total"].samples) == 5_000
    results = families["tracescore_evaluation_results_total"].samples
    assert sum(s[2] for s in results) == 3 * 5_000


def test_no_trace_id_ever_becomes_a_metric_attribute() -> None:
    t = Telemetry()
    t.record_run(run())
    text = t.render_prometheus()
    assert "ab" * 16 not in text
    assert "cd" * 8 not in text


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
    samples = parse_prometheus(t.render_prometheus())["tracescore_scoring_duration_seconds"]
    by_name = {name: v for name, labels, v in samples.samples if "le" not in labels}
    assert by_name["tracescore_scoring_duration_seconds_count"] == 4
    assert by_name["tracescore_scoring_duration_seconds_sum"] == pytest.approx(0.512)
    le = {labels["le"]: v for _, labels, v in samples.samples if "le" in labels}
    assert (le["0.0025"], le["0.005"], le["0.25"], le["0.5"]) == (0, 3, 3, 4)


def test_scores_are_counted_by_result() -> None:
    t = Telemetry()
    scores = (
        Score("a", "x", 1.0, True, "", "d"),
        Score("a", "x", 0.0, False, "", "d"),
        Score("b", "x", None, None, "nothing to check", "d"),
        Score("c", "x", None, None, "boom", "d", error="TimeoutError: slow"),
        Score("d", "x", 0.7, None, "no threshold", "d"),
    )
    trajectory = Trajectory(trace_id="ab" * 16, span_id=None, agent="shop")
    t.record_run(RunResult(trajectory, "checkout", scores, verdict="failed"))
    t.record_scores(RunResult(trajectory, "checkout", (Score("a", "x", 0.9, True, "", "d"),)))

    def results(name: str, result: str) -> float:
        return t.value(
            semconv.METRIC_EVALUATION_RESULTS,
            {semconv.GEN_AI_EVALUATION_NAME: name, semconv.TRACESCORE_SCENARIO: "checkout",
             semconv.EVALUATION_RESULT: result},
        )  # fmt: skip

    assert results("a", semconv.RESULT_PASSED) == 2
    assert results("a", semconv.RESULT_FAILED) == 1
    assert results("b", semconv.RESULT_UNSCORABLE) == 1
    assert results("c", semconv.RESULT_ERROR) == 1
    assert results("d", semconv.RESULT_SCORED) == 1
    families = parse_prometheus(t.render_prometheus())
    counts = {
        labels["gen_ai_evaluation_name"]: v
        for name, labels, v in families["gen_ai_evaluation_score"].samples
        if name.endswith("_count")
    }
    assert counts == {"a": 3.0, "d": 1.0}, "only values are observed"


def test_prometheus_text_passes_the_strict_parser_with_folded_and_odd_values() -> None:
    t = Telemetry(max_values=2)
    for i in range(5):
        t.record_run(run(agent=f"agent {i}", tools=(f"tool-{i}", "charge_card")))
    t.spans_dropped("a reason nobody knew")
    families = parse_prometheus(t.render_prometheus())
    agents = {s[1]["gen_ai_agent_name"] for s in families["tracescore_runs_total"].samples}
    assert agents == {"agent 0", "agent 1", semconv.OTHER_VALUE}


def test_declared_evaluations_start_at_zero_for_every_result() -> None:
    t = Telemetry()
    t.declare_evaluations("checkout", ["tool_calls", "judge"])
    results = parse_prometheus(t.render_prometheus())["tracescore_evaluation_results_total"]
    series = {
        (labels["gen_ai_evaluation_name"], labels["tracescore_evaluation_result"]): value
        for _, labels, value in results.samples
    }
    assert set(series) == {
        (name, result)
        for name in ("tool_calls", "judge")
        for result in ("passed", "failed", "error", "unscorable", "scored")
    }
    assert set(series.values()) == {0.0}
    t.record_run(run())  # the same series count on
    assert t.value(
        semconv.METRIC_EVALUATION_RESULTS,
        {semconv.GEN_AI_EVALUATION_NAME: "tool_calls", semconv.TRACESCORE_SCENARIO: "checkout",
         semconv.EVALUATION_RESULT: "failed"},
    ) == 1  # fmt: skip
