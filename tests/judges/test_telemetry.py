"""Judge counters: instruments on the service's meter, names from semconv, low-cardinality
attributes, every known error type at 0 from the start, read back from `/metrics` text."""

from __future__ import annotations

from export.prometheus_text import parse_prometheus
from tracescore import semconv
from tracescore.export.metrics import Telemetry
from tracescore.judges.telemetry import DURATION_BUCKETS, JudgeCounters


def test_judge_counters_reach_prometheus_with_semconv_names() -> None:
    telemetry = Telemetry()
    counters = JudgeCounters(telemetry.meter)
    counters.call("m", "ok", 0.05, 100, 10)
    counters.call("m", "timeout", 5.0)
    counters.error("timeout")
    counters.retry("timeout")
    counters.cache_hit()
    counters.skipped("budget", 3)
    counters.redacted(2)
    counters.redacted(0)
    counters.set_queue_items(7)
    families = parse_prometheus(telemetry.render_prometheus())

    def samples(name: str) -> dict[tuple[tuple[str, str], ...], float]:
        return {tuple(sorted(labels.items())): v for _, labels, v in families[name].samples}

    calls = samples("tracescore_judge_calls_total")
    assert calls == {
        (("gen_ai_request_model", "m"), ("tracescore_judge_outcome", "ok")): 1.0,
        (("gen_ai_request_model", "m"), ("tracescore_judge_outcome", "timeout")): 1.0,
    }
    errors = samples("tracescore_judge_errors_total")
    assert errors[(("error_type", "timeout"),)] == 1.0
    assert {dict(k)["error_type"] for k, v in errors.items() if v == 0} == (
        set(semconv.JUDGE_ERROR_TYPES) - {"timeout"}
    ), "every known error type exists at 0"
    assert samples("tracescore_judge_skipped_total")[(("reason", "budget"),)] == 3.0
    assert samples("tracescore_judge_cache_hits_total") == {(): 1.0}
    assert samples("tracescore_judge_redactions_total") == {(): 2.0}
    assert samples("tracescore_judge_queue_items") == {(): 7.0}
    assert families["tracescore_judge_queue_items"].type == "gauge"
    duration = families["gen_ai_client_operation_duration_seconds"]
    assert duration.type == "histogram"
    failed = {
        labels["le"]: v
        for name, labels, v in duration.samples
        if name.endswith("_bucket") and labels.get("error_type") == "timeout"
    }
    assert failed["2.56"] == 0.0
    assert failed["5.12"] == 1.0, "5.0 s falls in the 5.12 bucket"
    assert len(failed) == len(DURATION_BUCKETS) + 1
    tokens = families["gen_ai_client_token_usage"]
    sums = {
        labels["gen_ai_token_type"]: v
        for name, labels, v in tokens.samples
        if name.endswith("_sum")
    }
    assert sums == {"input": 100.0, "output": 10.0}
    assert counters.value(semconv.METRIC_JUDGE_SKIPPED, reason="budget") == 3


def test_without_a_meter_counts_are_still_kept() -> None:
    counters = JudgeCounters()
    counters.error("connection")
    counters.call("m", "ok", 0.1)
    assert counters.value(semconv.METRIC_JUDGE_ERRORS, **{semconv.ERROR_TYPE: "connection"}) == 1
    assert counters.value(semconv.METRIC_JUDGE_CALLS) == 1
