"""`judge.judge_wait` > 0 end to end: `tracescore serve` holds a judged run's span for its judges.

`tracescore serve` runs as a subprocess; spans arrive over gRPC, the judge is the fake
OpenAI-compatible server process (its `delay` plays a fast or a slow judge), and spans, events
and metrics land in a real OTLP sink. Waits are compared with the judge's delay by generous
margins only, and what is asserted is order (span before event), never elapsed time.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import grpc
import pytest

from e2e._process import ServeProcess
from judges._helpers import MODEL, shop_run, tool_answer
from support.agent_spans import AgentRun, agent_run, request
from support.fake_openai_process import FakeOpenAI
from support.otlp_sink import OtlpSink, SinkSpan, attrs
from tracescore import semconv
from tracescore.assembler import Outbox
from tracescore.config import parse_config
from tracescore.export.attributes import score_attributes
from tracescore.export.metrics import Telemetry
from tracescore.judges.base import JudgeScorerBase
from tracescore.judges.runner import JudgeJob, JudgeResult
from tracescore.judges.telemetry import JudgeCounters
from tracescore.pipeline.judge_wait import JudgeWait
from tracescore.pipeline.live_judges import LiveJudges
from tracescore.scenarios import evaluate_run
from tracescore.scorers.base import Outcome

Factory = Callable[..., FakeOpenAI]
HALF = tool_answer((1, "get_weather", True), (2, "lookup_order", False))  # scores 0.5
JUDGE = "llm_tool_call_accuracy"


def config_text(
    sink: OtlpSink, server: FakeOpenAI, judge_wait: str, mode: str = "forward", grace: str = "10s"
) -> str:
    return f"""
judge: {{base_url: '{server.base_url}', model: {MODEL}, retry_backoff_s: 0.01,
         judge_wait: {judge_wait}}}
scenarios:
  - name: shop
    match: {{agent: shop_agent}}
    gates: [{{type: called_tool, tool: get_weather}}]
    scorers: [{{type: {JUDGE}}}]
receivers: {{grpc: {{endpoint: '127.0.0.1:0'}}, http: null}}
exporter: {{endpoint: '{sink.endpoint}'}}
mode: {mode}
assembly: {{decision_wait: 100ms}}
service: {{metrics_interval: 200ms, shutdown_grace_period: {grace}}}
"""


def send(serve: ServeProcess, run: AgentRun) -> None:
    with grpc.insecure_channel(f"127.0.0.1:{serve.ports['grpc']}") as channel:
        export = channel.unary_unary("/opentelemetry.proto.collector.trace.v1.TraceService/Export")
        export(request(run.spans).SerializeToString(), timeout=10)


def span_of(sink: OtlpSink, span_id: bytes) -> list[SinkSpan]:
    return [s for s in sink.spans() if s.span.span_id == span_id]


def evaluate_spans(sink: OtlpSink) -> list[SinkSpan]:
    return [s for s in sink.spans() if s.span.name.startswith(semconv.EVALUATE_SPAN_NAME)]


def judge_events(sink: OtlpSink) -> list[dict[str, Any]]:
    return [
        a
        for a in (attrs(r.attributes) for _, r in sink.log_records())
        if a[semconv.GEN_AI_EVALUATION_NAME] == JUDGE
    ]


def counter(sink: OtlpSink, name: str) -> int | None:
    """The last pushed value of a counter without attributes (None: never pushed)."""
    value: int | None = None
    for req in sink.requests("metrics"):
        for rm in req.resource_metrics:
            for sm in rm.scope_metrics:
                for metric in sm.metrics:
                    if metric.name == name:
                        points = metric.sum.data_points
                        value = int(sum(p.as_int or p.as_double for p in points))
    return value


def assert_both_scores(got: dict[str, Any]) -> None:
    assert got["eval.called_tool.score"] == 1.0
    assert got["eval.called_tool.label"] == "pass"
    assert got[f"eval.{JUDGE}.score"] == 0.5
    assert "lookup_order judged False" in got[f"eval.{JUDGE}.explanation"]
    assert got[semconv.TRACESCORE_SCENARIO] == "shop"
    assert got[semconv.TRACESCORE_VERDICT] == "passed"


@pytest.mark.slow
def test_a_judge_within_judge_wait_puts_its_scores_on_the_forwarded_agent_span(
    tmp_path: Path, fake_openai_factory: Factory
) -> None:
    server = fake_openai_factory([{"json": HALF, "delay": 0.3}])
    run = agent_run()
    with OtlpSink() as sink:
        with ServeProcess(config_text(sink, server, "30s"), tmp_path) as serve:
            send(serve, run)
            sink.wait_for(lambda: bool(span_of(sink, run.agent.span_id)))
            (agent,) = span_of(sink, run.agent.span_id)
            assert_both_scores(agent.attributes)
            sink.wait_for(lambda: bool(judge_events(sink)))  # and still as its own event
            assert serve.stop()[0] == 0
        assert len(span_of(sink, run.agent.span_id)) == 1
        assert {s.span.span_id for s in sink.spans()} == {s.span_id for s in run.spans}
        assert judge_events(sink)[0][semconv.GEN_AI_EVALUATION_SCORE_VALUE] == 0.5
        assert not counter(sink, semconv.METRIC_JUDGE_WAIT_EXPIRED)
    assert "judge_wait" not in serve.stderr  # no "ignored" warning any more


@pytest.mark.slow
def test_a_judge_slower_than_judge_wait_misses_the_span_and_is_counted(
    tmp_path: Path, fake_openai_factory: Factory
) -> None:
    server = fake_openai_factory([{"json": HALF, "delay": 4}])
    run = agent_run()
    with OtlpSink() as sink:
        with ServeProcess(config_text(sink, server, "500ms"), tmp_path) as serve:
            send(serve, run)
            sink.wait_for(lambda: bool(span_of(sink, run.agent.span_id)))
            # Released at its deadline, long before the judge's answer (4 s away).
            assert judge_events(sink) == []
            (agent,) = span_of(sink, run.agent.span_id)
            assert agent.attributes["eval.called_tool.score"] == 1.0
            assert not any(JUDGE in key for key in agent.attributes)
            sink.wait_for(lambda: bool(judge_events(sink)))  # the judge follows as an event
            sink.wait_for(lambda: counter(sink, semconv.METRIC_JUDGE_WAIT_EXPIRED) == 1)
            assert serve.stop()[0] == 0
        assert judge_events(sink)[0][semconv.GEN_AI_EVALUATION_SCORE_VALUE] == 0.5
        assert len(span_of(sink, run.agent.span_id)) == 1


@pytest.mark.slow
def test_fanout_the_evaluate_span_carries_the_judge_scores(
    tmp_path: Path, fake_openai_factory: Factory
) -> None:
    server = fake_openai_factory([{"json": HALF, "delay": 0.3}])
    run = agent_run()
    with OtlpSink() as sink:
        text = config_text(sink, server, "30s", mode="fanout")
        with ServeProcess(text, tmp_path) as serve:
            send(serve, run)
            sink.wait_for(lambda: bool(evaluate_spans(sink)))
            (evaluate,) = evaluate_spans(sink)
            assert evaluate.span.name == "evaluate shop_agent"
            (link,) = evaluate.span.links  # its own trace, linked to the agent span
            assert (link.trace_id, link.span_id) == (run.trace_id, run.agent.span_id)
            assert_both_scores(evaluate.attributes)
            sink.wait_for(lambda: bool(judge_events(sink)))
            assert serve.stop()[0] == 0
        assert [s.span.span_id for s in sink.spans()] == [evaluate.span.span_id]


@pytest.mark.slow
def test_sigterm_forwards_a_span_waiting_for_its_judge_with_the_judge_scores(
    tmp_path: Path, fake_openai_factory: Factory
) -> None:
    server = fake_openai_factory([{"json": HALF, "delay": 3}])
    run = agent_run()
    with OtlpSink() as sink:
        with ServeProcess(config_text(sink, server, "1h"), tmp_path) as serve:
            send(serve, run)
            sink.wait_for(lambda: len(sink.spans()) == len(run.children))
            sink.wait_for(lambda: len(server.chat_bodies()) == 1)  # judged now, span waiting
            assert span_of(sink, run.agent.span_id) == []
            code, _ = serve.stop()
        assert code == 0
        (agent,) = span_of(sink, run.agent.span_id)
        assert_both_scores(agent.attributes)
        assert {s.span.span_id for s in sink.spans()} == {s.span_id for s in run.spans}


@pytest.mark.slow
def test_sigterm_forwards_a_waiting_span_even_when_its_judge_never_answers(
    tmp_path: Path, fake_openai_factory: Factory
) -> None:
    server = fake_openai_factory([{"json": HALF, "delay": 60}])
    run = agent_run()
    with OtlpSink() as sink:
        with ServeProcess(config_text(sink, server, "1h", grace="3s"), tmp_path) as serve:
            send(serve, run)
            sink.wait_for(lambda: len(server.chat_bodies()) == 1)
            code, _ = serve.stop()
        assert code == 0
        (agent,) = span_of(sink, run.agent.span_id)
        got = agent.attributes
        assert got["eval.called_tool.score"] == 1.0
        # The judge was cut off by the shutdown: the span says so instead of staying silent.
        assert got[f"eval.{JUDGE}.label"] == semconv.LABEL_ERROR
        assert f"eval.{JUDGE}.score" not in got
        assert "shut down" in got[f"eval.{JUDGE}.explanation"]
        assert judge_events(sink)[0]["error.type"] == "skipped"


def test_judge_scores_join_in_scenario_order_and_a_missed_wait_is_counted() -> None:
    config = parse_config(
        f"""
judge: {{base_url: 'http://127.0.0.1:9/v1', model: {MODEL}, judge_wait: 1s}}
scenarios:
  - name: shop
    gates: [{{type: llm_rubric, name: polite, criteria: The answer is polite.}}]
    scorers: [{{type: no_tool_errors, threshold: 1.0}}]
"""
    )
    scenario = config.scenarios[0]
    trajectory = shop_run()
    base = evaluate_run(config, trajectory, deterministic_only=True)
    rubric = scenario.gates[0]
    assert isinstance(rubric, JudgeScorerBase)
    polite = rubric.finish(Outcome(1.0, "polite enough", label="good"), rubric.digest(MODEL, 0.0))

    async def main() -> None:
        loop = asyncio.get_running_loop()
        counters = JudgeCounters()
        future: asyncio.Future[JudgeResult] = loop.create_future()
        wait = JudgeWait(base, future, scenario, 1.0, prefix="eval", counters=counters)
        assert (wait.wait, wait.done()) == (1.0, False)
        assert wait.nbytes > 0
        woken: list[bool] = []
        wait.add_done_callback(lambda: woken.append(True))
        future.set_result(JudgeResult(JudgeJob(trajectory, (rubric,)), (polite,)))
        await asyncio.sleep(0)  # done-callbacks run on the loop
        assert woken == [True]
        got = wait.finish()
        # The gate (a judge) comes first, as in the scenario; the verdict is the one sent.
        assert [k for k in got if k.endswith(".explanation")] == [
            "eval.polite.explanation",
            "eval.no_tool_errors.explanation",
        ]
        assert (got["eval.polite.score"], got["eval.polite.label"]) == (1.0, "good")
        assert got[semconv.TRACESCORE_VERDICT] == base.verdict == "scored"
        assert counters.value(semconv.METRIC_JUDGE_WAIT_EXPIRED) == 0

        late = JudgeWait(
            base, loop.create_future(), scenario, 1.0, prefix="eval", counters=counters
        )
        assert late.finish() == score_attributes(base, "eval")
        assert counters.value(semconv.METRIC_JUDGE_WAIT_EXPIRED) == 1

    asyncio.run(main())


def test_with_judge_wait_0_submit_returns_nothing_to_wait_on(fake_openai_factory: Factory) -> None:
    server = fake_openai_factory({"steps": [], "exhausted": {"json": HALF}})

    async def submit(judge_wait: str) -> JudgeWait | None:
        config = parse_config(
            f"""
judge: {{base_url: '{server.base_url}', model: {MODEL}, judge_wait: {judge_wait}}}
scenarios:
  - name: shop
    match: {{agent: shop}}
    scorers: [{{type: {JUDGE}}}]
"""
        )
        telemetry = Telemetry()
        live = LiveJudges(config, telemetry, Outbox(lambda body, n: True, telemetry))
        await live.start()
        try:
            return live.submit(evaluate_run(config, shop_run(), deterministic_only=True))
        finally:
            await live.shutdown(timeout=5.0)

    assert asyncio.run(submit("0s")) is None
    assert isinstance(asyncio.run(submit("2s")), JudgeWait)
