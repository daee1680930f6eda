"""Spans waiting for judge scores (`judge.judge_wait` > 0): counted, released, never lost.

The assembler runs on a hand-driven clock (deadlines are on it) inside a real event loop, with
the real `LiveJudges` and runner; the judge is the fake OpenAI-compatible server process.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Coroutine
from typing import Any

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.trace.v1.trace_pb2 import Span

from assembler._harness import Harness
from judges._helpers import MODEL, tool_answer
from support.agent_spans import agent_run
from support.fake_openai_process import FakeOpenAI
from support.otlp_sink import attrs
from tracescore import semconv
from tracescore.errors import OverloadedError
from tracescore.pipeline.live_judges import LiveJudges

WAIT = 2.0  # the default decision_wait
HALF = tool_answer((1, "get_weather", True), (2, "lookup_order", False))  # scores 0.5
JUDGE = "llm_tool_call_accuracy"

Factory = Callable[..., FakeOpenAI]


def setup(server: FakeOpenAI, judge_wait: str, mode: str = "forward", **assembly: object) -> Any:
    yaml = f"""
judge: {{base_url: '{server.base_url}', model: {MODEL}, retry_backoff_s: 0.01,
         judge_wait: {judge_wait}}}
scenarios:
  - name: shop
    match: {{agent: shop_agent}}
    gates: [{{type: called_tool, tool: get_weather}}]
    scorers: [{{type: {JUDGE}}}]
mode: {mode}
"""
    live: list[LiveJudges] = []
    h = Harness(yaml, judges=lambda result: live[0].submit(result), **assembly)
    live.append(LiveJudges(h.config, h.telemetry, h.logs, spans=h.spans))
    return h, live[0]


def run_loop(coro: Coroutine[Any, Any, None]) -> None:
    asyncio.run(coro)


async def until(predicate: Callable[[], bool], timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"condition not met within {timeout}s"
        await asyncio.sleep(0.01)


def agent_spans(h: Harness, span_id: bytes) -> list[Span]:
    return [s for s in h.forwarded_spans() if s.span_id == span_id]


def fanout_spans(h: Harness) -> list[Span]:
    return [
        s
        for body in h.fanout_out
        for rs in ExportTraceServiceRequest.FromString(body).resource_spans
        for ss in rs.scope_spans
        for s in ss.spans
    ]


def judge_events(h: Harness) -> list[dict[str, Any]]:
    return [
        a
        for a in (attrs(r.attributes) for r in h.log_records())
        if a[semconv.GEN_AI_EVALUATION_NAME] == JUDGE
    ]


def expired(live: LiveJudges) -> int:
    return live.runner.counters.value(semconv.METRIC_JUDGE_WAIT_EXPIRED)


def test_a_waiting_span_counts_in_the_buffer_and_leaves_with_its_judge_scores(
    fake_openai_factory: Factory,
) -> None:
    server = fake_openai_factory([{"json": HALF, "delay": 0.3}])

    async def main() -> None:
        h, live = setup(server, "1h", max_spans=1)
        await live.start()
        run = agent_run()
        h.send(run.spans)
        assert h.tick(WAIT) == 1
        assert agent_spans(h, run.agent.span_id) == [], "the agent span waits for its judge"
        # Deterministic events went out at once; the waiting span is buffered and counted.
        assert {attrs(r.attributes)[semconv.GEN_AI_EVALUATION_NAME] for r in h.log_records()} == {
            "called_tool"
        }
        assert h.assembler.spans == 1
        assert h.assembler.buffered_bytes > len(run.agent.SerializeToString())
        with pytest.raises(OverloadedError, match="max_spans"):
            h.assembler.check_capacity()
        # The judge's answer releases it without any tick (the clock never moves).
        await until(lambda: bool(agent_spans(h, run.agent.span_id)))
        (agent,) = agent_spans(h, run.agent.span_id)
        got = attrs(agent.attributes)
        assert got["eval.called_tool.score"] == 1.0
        assert got[f"eval.{JUDGE}.score"] == 0.5
        assert got[f"eval.{JUDGE}.label"] == "fail"  # no threshold: the judge's own verdict
        assert "lookup_order judged False" in got[f"eval.{JUDGE}.explanation"]
        assert got[semconv.TRACESCORE_VERDICT] == "passed"  # decided without the judge
        assert list(got).index("eval.called_tool.score") < list(got).index(f"eval.{JUDGE}.score")
        assert (h.assembler.spans, h.assembler.buffered_bytes) == (0, 0)
        h.assembler.check_capacity()
        await until(lambda: bool(judge_events(h)))
        await live.shutdown(timeout=1.0)
        assert expired(live) == 0
        assert len(agent_spans(h, run.agent.span_id)) == 1

    run_loop(main())


def test_a_judge_slower_than_judge_wait_misses_the_span_and_follows_as_an_event(
    fake_openai_factory: Factory,
) -> None:
    server = fake_openai_factory([{"json": HALF, "delay": 1.5}])

    async def main() -> None:
        h, live = setup(server, "1s")
        await live.start()
        run = agent_run()
        h.send(run.spans)
        assert h.tick(WAIT) == 1
        h.tick(WAIT + 0.99)
        assert agent_spans(h, run.agent.span_id) == []
        h.tick(WAIT + 1.0)  # the deadline, on the assembler's clock
        (agent,) = agent_spans(h, run.agent.span_id)
        got = attrs(agent.attributes)
        assert got["eval.called_tool.score"] == 1.0
        assert not any(JUDGE in key for key in got)
        assert expired(live) == 1
        assert h.assembler.spans == 0
        assert judge_events(h) == [], "the judge has not answered yet"
        await until(lambda: bool(judge_events(h)))
        assert judge_events(h)[0][semconv.GEN_AI_EVALUATION_SCORE_VALUE] == 0.5
        await live.shutdown(timeout=1.0)
        assert len(agent_spans(h, run.agent.span_id)) == 1, "released once"

    run_loop(main())


def test_fanout_the_evaluate_span_waits_for_the_judge(fake_openai_factory: Factory) -> None:
    server = fake_openai_factory([{"json": HALF, "delay": 0.3}])

    async def main() -> None:
        h, live = setup(server, "1h", mode="fanout")
        await live.start()
        run = agent_run()
        h.send(run.spans)
        assert h.tick(WAIT) == 1
        assert fanout_spans(h) == []
        assert h.assembler.spans == 1
        assert h.assembler.buffered_bytes > 0
        await until(lambda: bool(fanout_spans(h)))
        (evaluate,) = fanout_spans(h)
        assert evaluate.name == "evaluate shop_agent"
        (link,) = evaluate.links
        assert (link.trace_id, link.span_id) == (run.trace_id, run.agent.span_id)
        got = attrs(evaluate.attributes)
        assert (got["eval.called_tool.score"], got[f"eval.{JUDGE}.score"]) == (1.0, 0.5)
        assert (h.assembler.spans, h.assembler.buffered_bytes) == (0, 0)
        assert h.forwarded_spans() == []  # fanout forwards nothing
        await live.shutdown(timeout=1.0)
        assert len(fanout_spans(h)) == 1

    run_loop(main())


def test_drain_waits_releases_what_still_waits_with_what_is_ready(
    fake_openai_factory: Factory,
) -> None:
    server = fake_openai_factory([{"json": HALF, "delay": 5}])

    async def main() -> None:
        h, live = setup(server, "1h")
        await live.start()
        run = agent_run()
        h.send(run.spans)
        assert h.assembler.drain() == 1  # shutdown: scored, and the span now waits
        assert agent_spans(h, run.agent.span_id) == []
        assert h.assembler.drain_waits() == 1
        (agent,) = agent_spans(h, run.agent.span_id)
        assert attrs(agent.attributes)["eval.called_tool.score"] == 1.0
        assert expired(live) == 1
        assert h.assembler.spans == 0
        await live.shutdown(timeout=0.1)  # the judge's own score still says why it is missing
        assert judge_events(h)[0][semconv.ERROR_TYPE] == "skipped"

    run_loop(main())


def test_with_judge_wait_0_the_span_leaves_at_once(fake_openai_factory: Factory) -> None:
    server = fake_openai_factory([{"json": HALF, "delay": 0.3}])

    async def main() -> None:
        h, live = setup(server, "0s")
        await live.start()
        run = agent_run()
        h.send(run.spans)
        assert h.tick(WAIT) == 1
        (agent,) = agent_spans(h, run.agent.span_id)
        assert not any(JUDGE in key for key in attrs(agent.attributes))
        assert h.assembler.spans == 0
        await until(lambda: bool(judge_events(h)))
        await live.shutdown(timeout=1.0)
        assert expired(live) == 0

    run_loop(main())
