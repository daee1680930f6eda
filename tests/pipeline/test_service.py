"""The pipeline's lifecycle: safe start/shutdown, and a shutdown that forwards what it holds."""

from __future__ import annotations

import asyncio
import json

import grpc

from support.agent_spans import agent_run, request
from support.otlp_sink import OtlpSink, attrs
from support.serve_thread import ServeThread
from tracescore import semconv
from tracescore.config import parse_config
from tracescore.pipeline import Pipeline
from tracescore.scenarios import evaluate_run
from tracescore.trajectory import build_trajectories

SHOP = """
scenarios:
  - name: shop
    match: {agent: shop_agent}
    gates: [{type: called_tool, tool: get_weather}]
receivers: {grpc: {endpoint: '127.0.0.1:0'}, http: {endpoint: '127.0.0.1:0'}}
"""


def _config(sink: OtlpSink, extra: str = "") -> str:
    return f"{SHOP}exporter: {{endpoint: '{sink.endpoint}'}}\n{extra}"


def test_shutdown_is_safe_without_start_and_twice() -> None:
    with OtlpSink() as sink:
        pipeline = Pipeline(parse_config(_config(sink)))

        async def go() -> None:
            await pipeline.shutdown()
            await pipeline.shutdown()
            await pipeline.start()  # after shutdown: stays stopped
            assert not pipeline.is_ready()

        asyncio.run(go())


def test_start_then_shutdown_twice() -> None:
    with OtlpSink() as sink:
        pipeline = Pipeline(parse_config(_config(sink)))

        async def go() -> None:
            await pipeline.start()
            await pipeline.start()
            assert pipeline.is_ready()
            await pipeline.shutdown()
            assert not pipeline.is_ready()
            await pipeline.shutdown()

        asyncio.run(go())


def test_shutdown_scores_and_forwards_held_spans_and_pushes_metrics() -> None:
    with OtlpSink() as sink:
        config = parse_config(_config(sink, "assembly: {decision_wait: 1h}\n"))
        run = agent_run()
        with ServeThread(config) as serve:
            with grpc.insecure_channel(f"127.0.0.1:{serve.grpc_port}") as channel:
                export = channel.unary_unary(
                    "/opentelemetry.proto.collector.trace.v1.TraceService/Export"
                )
                export(request(run.spans).SerializeToString(), timeout=10)
            sink.wait_for(lambda: len(sink.spans()) == len(run.children))
            assert run.agent.span_id not in {s.span.span_id for s in sink.spans()}
            serve.stop()  # what SIGTERM does
        got = {s.span.span_id: s for s in sink.spans()}
        assert set(got) == {s.span_id for s in run.spans}
        agent = attrs(got[run.agent.span_id].span.attributes)
        assert agent["eval.called_tool.score"] == 1.0
        assert agent[semconv.TRACESCORE_VERDICT] == "passed"
        assert len(sink.log_records()) == 1
        assert semconv.METRIC_RUNS in sink.metric_names()
        assert semconv.METRIC_SPANS_RECEIVED in sink.metric_names()


def test_buffered_runs_keep_tool_arguments_only_when_a_scorer_reads_them() -> None:
    # SHOP's gate checks tool names: arguments and model usage stay undecoded while runs wait.
    reads_arguments = (
        "scenarios:\n  - name: shop\n    match: {agent: shop_agent}\n"
        "    scorers: [{type: trajectory_accuracy, steps: [{tool: get_weather}]}]\n"
    )
    body = request(agent_run().spans).SerializeToString()
    kept: dict[str, set[str]] = {}
    nbytes: dict[str, int] = {}
    with OtlpSink() as sink:
        exporter = f"exporter: {{endpoint: '{sink.endpoint}'}}\n"
        for label, text in (("checks", _config(sink)), ("accuracy", reads_arguments + exporter)):
            pipeline = Pipeline(parse_config(text))
            pipeline.consume(None, body)
            traces = pipeline.assembler._traces.values()
            kept[label] = {k for t in traces for r in t.records for k in r.attributes}
            nbytes[label] = pipeline.assembler.buffered_bytes
    assert semconv.GEN_AI_TOOL_NAME in kept["checks"]
    assert semconv.GEN_AI_TOOL_CALL_ARGUMENTS not in kept["checks"]
    assert semconv.GEN_AI_USAGE_INPUT_TOKENS not in kept["checks"]
    assert semconv.GEN_AI_TOOL_CALL_ARGUMENTS in kept["accuracy"]
    assert semconv.GEN_AI_USAGE_INPUT_TOKENS in kept["accuracy"]
    assert nbytes["checks"] < nbytes["accuracy"]


def test_results_stay_undecoded_unless_they_may_fail_their_call() -> None:
    # Checks of names and statuses read no tool results: the plain ones are left out while runs
    # wait, but an MCP result with isError (on a span that did not fail) is still read, so its
    # call counts as failed. A scorer that reads results keeps them all.
    run = agent_run(tools=("get_weather", "lookup_order"))
    mcp_error = json.dumps(
        {"isError": True, "content": [{"type": "text", "text": "no such order"}]}
    )
    for span in run.spans:
        for kv in span.attributes:
            if kv.key == semconv.GEN_AI_TOOL_CALL_RESULT and span.name.endswith("lookup_order"):
                kv.value.string_value = mcp_error
    body = request(run.spans).SerializeToString()
    gates = "    gates: [{type: no_tool_errors}]\n"
    checks = "scenarios:\n  - name: shop\n    match: {agent: shop_agent}\n" + gates
    mastra = checks.replace("{type: no_tool_errors}", "{type: no_tool_errors, compat: mastra}")
    results: dict[str, list[object]] = {}
    verdicts: dict[str, str | None] = {}
    with OtlpSink() as sink:
        exporter = f"exporter: {{endpoint: '{sink.endpoint}'}}\n"
        for label, text in (("checks", checks), ("mastra", mastra)):
            pipeline = Pipeline(parse_config(text + exporter))
            pipeline.consume(None, body)
            (trace,) = pipeline.assembler._traces.values()
            results[label] = [
                r.attributes.get(semconv.GEN_AI_TOOL_CALL_RESULT)
                for r in trace.records
                if r.name.startswith("execute_tool")
            ]
            (run_result,) = [
                evaluate_run(pipeline.config, t, deterministic_only=True)
                for t in build_trajectories(trace.records).trajectories
            ]
            verdicts[label] = run_result.verdict
    assert results["checks"] == [None, mcp_error]  # the plain result was left out
    assert results["mastra"] == [json.dumps({"ok": True}), mcp_error]
    assert verdicts == {"checks": "failed", "mastra": "failed"}


def test_a_tick_scores_in_slices_and_lets_requests_in_between() -> None:
    with OtlpSink() as sink:
        pipeline = Pipeline(parse_config(_config(sink, "assembly: {decision_wait: 1ms}\n")))
        runs = [agent_run(agent="shop_agent", seed=i) for i in range(150)]
        for run in runs:
            pipeline.consume(None, request(run.spans).SerializeToString())
        seen: list[int] = []

        async def go() -> None:
            await asyncio.sleep(0.01)  # every run is due

            async def another_request() -> None:  # what a receiver does between slices
                while True:
                    seen.append(pipeline.assembler.runs)
                    await asyncio.sleep(0)

            probe = asyncio.create_task(another_request())
            await asyncio.sleep(0)
            await pipeline._tick()
            probe.cancel()

        asyncio.run(go())
        assert pipeline.assembler.runs == 0, "one tick scored every run due"
        # The other task ran while runs were still waiting to be scored: the tick yielded.
        assert any(0 < n < len(runs) for n in seen), seen
