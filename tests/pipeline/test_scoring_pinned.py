"""Everything scoring a run emits, pinned byte for byte: results, metrics, log records, spans.

The scoring and re-emit path is full of memos and fast paths (scenario plans, check scorers,
metric series, encoded attribute pieces); this test runs the benchmark's stream and many odd
runs (errored, paused and sub-agent calls, failing scorers, judge scorers left out, sampling,
several scenarios, thresholds, Mastra compat, a span that already carries a score key) through
each stage and through `RunScorer`, and compares a digest of all of it with the digest the
straightforward code gave. A change of any emitted byte changes the digest; to see where,
compare `_outputs()` before and after.
"""

from __future__ import annotations

import hashlib
import importlib.util
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import Span

from support.results import UnreadableResult
from tracescore.assembler import ReadyTrace
from tracescore.config import parse_config
from tracescore.config.model import Config
from tracescore.export import events
from tracescore.export.attributes import score_attributes
from tracescore.export.events import encode_evaluation_logs
from tracescore.export.metrics import Telemetry
from tracescore.export.spans import annotate_span_bytes
from tracescore.model.trajectory import AgentStep, ModelCall, ToolCall, Trajectory
from tracescore.otlp.proto import decode_proto_request
from tracescore.pipeline.scoring import RunScorer
from tracescore.scenarios import conclude, evaluate_run, score_entries, select_scenario
from tracescore.trajectory import build_trajectories

BENCH = Path(__file__).resolve().parents[2] / "bench" / "throughput.py"
NOW_NS = 1_760_000_000_123_456_789

# Digests of `_outputs()` as the code gave them before the scoring fast paths (re-pinned when
# metrics moved to the OpenTelemetry SDK: every byte but `/metrics` checked unchanged; "varied"
# again when did_not_call's explanation named its statuses: with "(statuses: " read as "(",
# only the protobuf lengths around those 171 explanations differ).
PINNED = {
    "bench": "976a92f20d6a83bfbe87e694200bd5b3c460bfe4151b2d76c029baab9c5a3508",
    "varied": "f159bd0d94da6e34bd7549567e63a536950916956f1c0a9085adde3a59c1f256",
}

VARIED_CONFIG = """
judge: {base_url: "http://127.0.0.1:9/v1", model: judge-model}
scenarios:
  - name: refunds
    match: {agent: "shop*", input: "refund"}
    gates: [{type: max_tool_calls, max: 3}, {type: no_tool_errors}]
    scorers:
      - {type: called_tool, tool: lookup, threshold: {min: 0.5, max: 1.0}}
      - {type: tool_order, tools: [lookup, refund]}
      - {type: output_includes, text: "Refunded"}
      - {type: llm_rubric, criteria: "polite", threshold: 0.5}
  - name: mastra
    match: {agent: "m-*"}
    gates: [{type: no_tool_errors, compat: mastra}]
    scorers:
      - {type: called_tool, tool: lookup, compat: mastra, times: 2}
      - {type: did_not_call, tool: delete, name: no_delete}
      - {type: used_no_tools, threshold: {max: 0.5}}
      - {type: output_includes, text: "ß", compat: mastra}
  - name: sampled
    match: {agent: "half"}
    sample: 0.5
    scorers: [{type: no_tool_errors, include_subagents: true}, {type: max_tool_calls, max: 0}]
  - name: rest
    match: {agent: "*"}
    gates: [{type: max_tool_calls, max: 20, include_subagents: true}]
    scorers:
      - {type: no_tool_errors, threshold: 1.0}
      - {type: called_tool, tool: search_docs}
      - {type: called_tool, tool: lookup, name: clean_lookup, calls: clean}
"""


class _Exploding(UnreadableResult):
    """A tool result whose reading fails: the Mastra check on it becomes an error score."""


def _varied_runs() -> list[Trajectory]:
    agents = [None, "", "shop_agent", "shopper", "m-one", "m-two", "half", "other", "x" * 150]
    inputs = [None, "please refund me", "hello"]
    outputs = [None, "", "Refunded 10", "STRASSE", "Straße", "é" * 90]
    tools = ["lookup", "refund", "delete", "search_docs", "t" * 120]
    runs = []
    for i in range(240):
        calls: list[Any] = []
        for j in range(i % 7):
            status = ("ok", "ok", "error", "paused")[(i + j) % 4]
            result: Any = {"error": "boom"} if (i + j) % 5 == 0 else {"ok": True}
            if i % 37 == 3 and j == 0:
                result = _Exploding()
            calls.append(
                ToolCall(
                    name=tools[(i * 3 + j) % len(tools)],
                    call_id=f"c{j}",
                    result=result,
                    status=status,
                    error_type="E" if status == "error" else None,
                    span_id=f"{i:08x}{j:08x}",
                )
            )
            if j == 1:
                calls.append(ModelCall(model="m", input_tokens=i, output_tokens=j))
        if i % 5 == 1:
            sub = (ToolCall(name="lookup", status="ok"), ToolCall(name="delete", status="error"))
            calls.append(AgentStep(name="helper", span_id=f"{i:016x}", steps=sub))
        resource = {"service.name": f"svc{i % 3}"} if i % 4 else {}
        runs.append(
            Trajectory(
                trace_id=f"{i * 7919:032x}",
                span_id=None if i % 11 == 5 else f"{i + 1:016x}",
                agent=agents[i % len(agents)],
                input=inputs[i % len(inputs)],
                output=outputs[i % len(outputs)],
                steps=tuple(calls),
                complete=i % 6 != 2,
                resource=resource,
            )
        )
    return runs


def _bench() -> Any:
    spec = importlib.util.spec_from_file_location("bench_throughput", BENCH)
    assert spec is not None
    assert spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    return bench


def _span_bytes(trajectory: Trajectory, index: int) -> bytes:
    span = Span(name="invoke_agent", trace_id=bytes.fromhex(trajectory.trace_id))
    span.attributes.append(KeyValue(key="gen_ai.agent.name"))
    span.attributes[0].value.string_value = trajectory.agent or ""
    if index % 9 == 4:  # already scored upstream: the key is replaced, not duplicated
        span.attributes.append(KeyValue(key="tracescore.scenario"))
        span.attributes[1].value.string_value = "upstream"
    return span.SerializeToString()


def _outputs(config: Config, runs: list[Trajectory]) -> bytes:
    out: list[bytes] = []
    telemetry = Telemetry(max_values=5)
    for index, trajectory in enumerate(runs):
        for deterministic_only in (True, False):
            result = evaluate_run(config, trajectory, deterministic_only=deterministic_only)
            out.append(repr(result).encode())
            scenario = select_scenario(config, trajectory)
            if scenario is not None and result.sampled:
                scores = score_entries(scenario, trajectory, deterministic_only=deterministic_only)
                assert conclude(scenario, trajectory, scores) == result
        telemetry.record_run(result)
        attributes = score_attributes(result, "ev" if index % 10 == 7 else "eval")
        out.append(repr(attributes).encode())
        out.append(encode_evaluation_logs([result], now_ns=NOW_NS))
        out.append(annotate_span_bytes(_span_bytes(trajectory, index), attributes))
    batch = [evaluate_run(config, t, deterministic_only=True) for t in runs[:50]]
    out.append(encode_evaluation_logs(batch, {"service.name": "x"}, now_ns=NOW_NS))
    out.append(metrics_text(telemetry).encode())
    return b"\n".join(out)


# Left out of the digest: the scoring latency (it depends on the machine) and the receivers'
# refusal counter (added after the pins; scoring never touches it).
_UNPINNED = ("scoring_duration", "requests_refused")


def metrics_text(telemetry: Telemetry) -> str:
    """`/metrics` without the series scoring does not decide."""
    text = telemetry.render_prometheus()
    return "\n".join(
        line for line in text.splitlines() if not any(name in line for name in _UNPINNED)
    )


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_varied_runs_emit_the_pinned_bytes() -> None:
    config = parse_config(VARIED_CONFIG)
    assert _digest(_outputs(config, _varied_runs())) == PINNED["varied"]


def _bench_runs(bench: Any) -> tuple[list[ReadyTrace], dict[str, bytes]]:
    batches, _, _ = bench.make_stream(60)
    by_trace: dict[str, list[Any]] = {}
    agent_spans: dict[str, bytes] = {}
    for body in batches:
        for record in decode_proto_request(body).spans:
            by_trace.setdefault(record.trace_id, []).append(record)
        for rs in ExportTraceServiceRequest.FromString(body).resource_spans:
            for span in rs.scope_spans[0].spans:
                if not span.parent_span_id:
                    agent_spans[span.span_id.hex()] = span.SerializeToString()
    ready = [
        ReadyTrace(trace_id, tuple(spans), index % 8 != 3, "complete")
        for index, (trace_id, spans) in enumerate(by_trace.items())
    ]
    return ready, agent_spans


class _Sink:
    def __init__(self) -> None:
        self.sent: list[bytes] = []

    def send(self, body: bytes, n: int) -> None:
        self.sent.append(body + str(n).encode())


def test_the_bench_stream_emits_the_pinned_bytes(monkeypatch: pytest.MonkeyPatch) -> None:
    bench = _bench()
    config = parse_config(bench.SCENARIOS)
    ready, agent_spans = _bench_runs(bench)
    runs = [t for r in ready for t in build_trajectories(r.spans).trajectories]
    out = [_outputs(config, runs)]
    # And through the live scorer, as `serve` calls it (log timestamps fixed).
    monkeypatch.setattr(events.time, "time_ns", lambda: NOW_NS)
    logs = _Sink()
    telemetry = Telemetry()
    scorer = RunScorer(config, telemetry, logs, None)  # type: ignore[arg-type]
    for trace in ready:
        for span_id, attributes in scorer(trace).items():
            assert isinstance(attributes, Mapping)
            out.append(annotate_span_bytes(agent_spans[span_id], attributes))
    out += logs.sent
    out.append(metrics_text(telemetry).encode())
    assert _digest(b"\n".join(out)) == PINNED["bench"]


if __name__ == "__main__":  # print the digests, to pin them after an intended change
    import sys

    print(_digest(_outputs(parse_config(VARIED_CONFIG), _varied_runs())))
    sys.exit(0)
