"""Scoring cost against building cost, per agent run, measured in the same process.

    .venv/bin/python bench/scorers.py [--repeat 7] [--number 500]

The run is a real pydantic-ai run of the customer-support agent (a scripted `FunctionModel`,
real tool execution, one refund failing on a `ModelRetry` before its clean retry) with 20
steps: 8 model calls and 12 tool calls. Its spans go through the SDK's own OTLP encoder and
tracescore's protobuf decoder (with the receiver's key filter), once, before timing starts.

Timed, per run:
- build: `build_trajectories(spans)` for the run's spans;
- score: the deterministic gates and scorers of the scenario the run matches in
  examples/support-agent/tracescore.yaml (`refunds`), through `scenarios.score_entries`;
- score all: every deterministic entry of every scenario in that config on the same run.

Each figure is the best of `--repeat` rounds of `--number` calls (the least disturbed
round); rounds interleave build and score so machine load affects both alike. The target
is score / build < 1: scoring costs less than building the trajectory. Exit 1 if missed.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from pydantic_ai import Agent, InstrumentationSettings, ModelRetry
from pydantic_ai.capabilities import Instrumentation
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from tracescore.config import load_config
from tracescore.model import SpanRecord, Trajectory
from tracescore.otlp import decode_proto_request
from tracescore.scenarios import score_entries, select_scenario
from tracescore.trajectory import build_trajectories, needed_attribute

ROOT = Path(__file__).resolve().parent.parent
CONFIG = ROOT / "examples" / "support-agent" / "tracescore.yaml"
QUESTION = "Please refund orders 1001 to 1005, they all arrived broken."
ORDERS = {str(n): 10.0 * n for n in range(1001, 1006)}


def _call(tool: str, call_id: str, **args: Any) -> ToolCallPart:
    return ToolCallPart(tool, args, tool_call_id=call_id)


# One model turn per list: 8 model calls, 12 tool calls (one refund fails, then is retried).
TURNS: list[list[ToolCallPart | TextPart]] = [
    [_call("lookup_order", "c1", order_id="1001")],
    [_call("process_refund", "c2", order_id="1001")],
    [_call("process_refund", "c3", order_id="1001", reason="arrived broken")],
    [_call("lookup_order", "c4", order_id="1002"), _call("lookup_order", "c5", order_id="1003")],
    [
        _call("process_refund", "c6", order_id="1002", reason="arrived broken"),
        _call("process_refund", "c7", order_id="1003", reason="arrived broken"),
    ],
    [_call("lookup_order", "c8", order_id="1004"), _call("lookup_order", "c9", order_id="1005")],
    [
        _call("process_refund", "c10", order_id="1004", reason="arrived broken"),
        _call("process_refund", "c11", order_id="1005", reason="arrived broken"),
        _call("lookup_order", "c12", order_id="1005"),
    ],
    [TextPart("All five orders are refunded. Sorry they arrived broken!")],
]


def _agent(provider: TracerProvider) -> Agent[None, str]:
    def play(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        step = sum(1 for m in messages if isinstance(m, ModelResponse))
        return ModelResponse(parts=list(TURNS[min(step, len(TURNS) - 1)]))

    agent: Agent[None, str] = Agent(
        FunctionModel(play, model_name="scripted-support"),
        name="support-agent",
        capabilities=[Instrumentation(settings=InstrumentationSettings(tracer_provider=provider))],
        retries=2,
    )

    @agent.tool_plain
    def lookup_order(order_id: str) -> dict[str, Any]:
        """Look up an order."""
        return {"order_id": order_id, "status": "delivered", "total": ORDERS[order_id]}

    @agent.tool_plain
    def process_refund(order_id: str, reason: str = "") -> dict[str, Any]:
        """Refund an order in full; a reason is required."""
        if not reason:
            raise ModelRetry("a refund needs a reason")
        return {"order_id": order_id, "refunded": ORDERS[order_id]}

    return agent


def record_run() -> list[SpanRecord]:
    """Run the agent once and decode its spans as the receiver would."""
    memory = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": "support-desk"}))
    provider.add_span_processor(SimpleSpanProcessor(memory))
    asyncio.run(_agent(provider).run(QUESTION))
    provider.force_flush()
    body = encode_spans(memory.get_finished_spans()).SerializeToString()
    provider.shutdown()
    return decode_proto_request(body, "bench", key_filter=needed_attribute).spans


def best_per_call(
    fns: dict[str, Callable[[], object]], repeat: int, number: int
) -> dict[str, float]:
    """Seconds per call of each function: the best of `repeat` rounds of `number` calls.

    Rounds interleave the functions, so a busy machine slows them alike and the ratios hold.
    """
    best = dict.fromkeys(fns, float("inf"))
    for _ in range(repeat):
        for name, fn in fns.items():
            start = time.perf_counter()
            for _ in range(number):
                fn()
            best[name] = min(best[name], (time.perf_counter() - start) / number)
    return best


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--number", type=int, default=500)
    args = parser.parse_args()

    spans = record_run()
    built = build_trajectories(spans).trajectories
    if len(built) != 1:
        print(f"expected one run, built {len(built)}", file=sys.stderr)
        return 1
    trajectory: Trajectory = built[0]
    config = load_config(str(CONFIG))
    scenario = select_scenario(config, trajectory)
    if scenario is None:
        print("the run matches no scenario of the support-agent config", file=sys.stderr)
        return 1
    entries = [e for e, _ in scenario.entries if e.deterministic]
    every = [e for s in config.scenarios for e, _ in s.entries if e.deterministic]
    tools = sum(1 for s in trajectory.steps if s.kind == "tool_call")
    print(
        f"run: {len(spans)} spans -> {len(trajectory.steps)} steps "
        f"({tools} tool calls, {len(trajectory.steps) - tools} model calls)"
    )

    def build() -> object:
        return build_trajectories(spans)

    def score() -> object:
        return score_entries(scenario, trajectory, deterministic_only=True)

    def score_all() -> object:
        return [e.score(trajectory) for e in every]

    for name, value in score().items():
        print(f"  {name}: {value.value} ({value.explanation.splitlines()[0]})")
    times = best_per_call(
        {"build": build, "score": score, "all": score_all}, args.repeat, args.number
    )
    t_build, t_score, t_all = times["build"], times["score"], times["all"]
    print(f"build      {t_build * 1e6:9.1f} µs/run")
    print(f"score      {t_score * 1e6:9.1f} µs/run  ({len(entries)} entries, '{scenario.name}')")
    print(f"score all  {t_all * 1e6:9.1f} µs/run  ({len(every)} entries, every scenario)")
    print(f"ratio score/build     {t_score / t_build:.3f}  (target < 1)")
    print(f"ratio score all/build {t_all / t_build:.3f}")
    return 0 if t_score < t_build else 1


if __name__ == "__main__":
    sys.exit(main())
