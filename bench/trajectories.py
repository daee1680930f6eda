"""Decode plus trajectory building, in spans per second, against plain protobuf parsing.

    .venv/bin/python bench/trajectories.py [--traces 100] [--repeat 7] [--number 5]

Payload: `--traces` realistic 20-span agent traces in one OTLP ExportTraceServiceRequest
(the shape of reference/performance.md B.1: one `invoke_agent` root, 9 `chat` spans whose
output messages hold the `tool_call` parts, 8 `execute_tool` spans with ~200 B arguments and
~300 B results, one of them failing, 2 HTTP client spans; plus the usual noise attributes),
serialised once before timing.

Timed on the same bytes, in the same process, rounds interleaved so machine load hits all alike:
- parse: `ExportTraceServiceRequest.ParseFromString` (the floor: the bytes must be parsed);
- decode: `decode_proto_request(bytes, key_filter=needed_attribute)` (SpanRecords, needed keys);
- decode+build: the same plus `build_trajectories` of every span (what the service does);
- build per run: `build_trajectories` of one trace's decoded spans at a time, as the service
  calls it once a run is complete (the builder's own cost, without decoding).
Each figure is the best of `--repeat` rounds of `--number` calls, in CPU time of this process
(`time.process_time`: other processes on a loaded machine do not count). Printed: spans/s for
each, the build's µs per 20-span run, and the ratios to parse time (performance.md: touching
every attribute costs about 18 times the parse; reading only what matters must stay well
below that).
"""

from __future__ import annotations

import argparse
import json
import random
import time
from collections.abc import Callable

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import Span, Status

from tracescore.model import SpanRecord
from tracescore.otlp import decode_proto_request
from tracescore.trajectory import build_trajectories, needed_attribute

TOOLS = ["search_docs", "read_file", "run_sql", "http_get", "calculator", "send_email"]


def _kv(key: str, value: object) -> KeyValue:
    kv = KeyValue(key=key)
    if isinstance(value, bool):
        kv.value.bool_value = value
    elif isinstance(value, int):
        kv.value.int_value = value
    elif isinstance(value, float):
        kv.value.double_value = value
    else:
        kv.value.string_value = str(value)
    return kv


def _blob(rng: random.Random, size: int) -> str:
    words = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"]
    data: dict[str, object] = {"query": " ".join(rng.choice(words) for _ in range(6))}
    data["note"] = "".join(rng.choice("abcdefgh ") for _ in range(max(0, size - 40)))
    return json.dumps(data, separators=(",", ":"))


def _trace(rng: random.Random, t0: int) -> list[Span]:
    trace_id, root_id = rng.randbytes(16), rng.randbytes(8)
    agent = rng.choice(["triage", "planner", "coder"])
    root = Span(trace_id=trace_id, span_id=root_id, name=f"invoke_agent {agent}", kind=1)
    root.start_time_unix_nano = t0
    root.attributes.extend(
        [
            _kv("gen_ai.operation.name", "invoke_agent"),
            _kv("gen_ai.agent.name", agent),
            _kv("gen_ai.agent.id", f"asst_{rng.getrandbits(48):012x}"),
            _kv("gen_ai.conversation.id", f"conv_{rng.getrandbits(64):016x}"),
            _kv("gen_ai.provider.name", "openai"),
            _kv("gen_ai.request.model", "gpt-4.1"),
        ]
    )
    spans, t = [root], t0 + 1_000_000
    for step in range(9):
        tool = rng.choice(TOOLS) if step < 8 else None
        call_id = f"call_{rng.getrandbits(96):024x}"
        chat_id, dur = rng.randbytes(8), rng.randint(300, 2500) * 1_000_000
        chat = Span(trace_id=trace_id, span_id=chat_id, parent_span_id=root_id, kind=3)
        chat.name, chat.start_time_unix_nano, chat.end_time_unix_nano = "chat gpt-4.1", t, t + dur
        part = (
            {"type": "tool_call", "id": call_id, "name": tool, "arguments": {"q": "x"}}
            if tool
            else {"type": "text", "content": "Here is the answer."}
        )
        chat.attributes.extend(
            [
                _kv("gen_ai.operation.name", "chat"),
                _kv("gen_ai.provider.name", "openai"),
                _kv("gen_ai.request.model", "gpt-4.1"),
                _kv("gen_ai.response.model", "gpt-4.1-2025-04-14"),
                _kv("gen_ai.response.id", f"chatcmpl-{rng.getrandbits(96):024x}"),
                _kv("gen_ai.request.temperature", 0.2),
                _kv("gen_ai.usage.input_tokens", rng.randint(500, 9000)),
                _kv("gen_ai.usage.output_tokens", rng.randint(20, 800)),
                _kv("gen_ai.output.messages", json.dumps([{"role": "assistant", "parts": [part]}])),
                _kv("server.address", "api.openai.com"),
                _kv("server.port", 443),
            ]
        )
        spans.append(chat)
        if step < 2:
            http = Span(trace_id=trace_id, span_id=rng.randbytes(8), parent_span_id=chat_id)
            http.name, http.kind = "POST", 3
            http.start_time_unix_nano, http.end_time_unix_nano = t + 100_000, t + dur - 100_000
            http.attributes.extend(
                [
                    _kv("http.request.method", "POST"),
                    _kv("url.full", "https://api.openai.com/v1/chat/completions"),
                    _kv("http.response.status_code", 200),
                ]
            )
            spans.append(http)
        t += dur + 200_000
        if tool is None:
            break
        dur = rng.randint(5, 900) * 1_000_000
        execution = Span(trace_id=trace_id, span_id=rng.randbytes(8), parent_span_id=root_id)
        execution.name, execution.kind = f"execute_tool {tool}", 1
        execution.start_time_unix_nano, execution.end_time_unix_nano = t, t + dur
        execution.attributes.extend(
            [
                _kv("gen_ai.operation.name", "execute_tool"),
                _kv("gen_ai.tool.name", tool),
                _kv("gen_ai.tool.type", "function"),
                _kv("gen_ai.tool.call.id", call_id),
                _kv("gen_ai.tool.description", f"Tool {tool} used by the agent"),
                _kv("gen_ai.tool.call.arguments", _blob(rng, 200)),
                _kv("gen_ai.tool.call.result", _blob(rng, 300)),
            ]
        )
        if step == 3:
            execution.status.code = Status.STATUS_CODE_ERROR
            execution.attributes.append(_kv("error.type", "TimeoutError"))
        spans.append(execution)
        t += dur + 200_000
    root.end_time_unix_nano = t + 1_000_000
    assert len(spans) == 20, len(spans)
    return spans


def payload(traces: int, seed: int = 42) -> tuple[bytes, int]:
    """(serialised request, span count)."""
    rng = random.Random(seed)
    request = ExportTraceServiceRequest()
    resource_spans = request.resource_spans.add()
    resource_spans.resource.attributes.extend(
        [_kv("service.name", "support-agent"), _kv("telemetry.sdk.language", "python")]
    )
    scope_spans = resource_spans.scope_spans.add()
    scope_spans.scope.name = "bench"
    spans = [s for i in range(traces) for s in _trace(rng, 1_760_000_000_000_000_000 + i * 10**9)]
    rng.shuffle(spans)  # an SDK batch interleaves traces
    scope_spans.spans.extend(spans)
    return request.SerializeToString(), len(spans)


def main() -> None:
    """Print spans/s of parse, decode and decode+build, and their ratios."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--traces", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--number", type=int, default=5)
    args = parser.parse_args()
    body, n_spans = payload(args.traces)

    def parse() -> None:
        ExportTraceServiceRequest().ParseFromString(body)

    def decode() -> None:
        decode_proto_request(body, key_filter=needed_attribute)

    def decode_build() -> None:
        result = build_trajectories(decode_proto_request(body, key_filter=needed_attribute).spans)
        assert len(result.trajectories) == args.traces

    runs: dict[str, list[SpanRecord]] = {}
    for record in decode_proto_request(body, key_filter=needed_attribute).spans:
        runs.setdefault(record.trace_id, []).append(record)

    def build_per_run() -> None:
        for spans in runs.values():
            build_trajectories(spans)

    timed: dict[str, Callable[[], None]] = {
        "parse": parse,
        "decode": decode,
        "decode+build": decode_build,
        "build per run": build_per_run,
    }
    best = dict.fromkeys(timed, float("inf"))
    for _ in range(args.repeat):
        for name, fn in timed.items():
            start = time.process_time()
            for _ in range(args.number):
                fn()
            best[name] = min(best[name], (time.process_time() - start) / args.number)
    print(f"payload: {args.traces} traces x 20 spans, {len(body) / n_spans:.0f} B/span protobuf")
    for name, seconds in best.items():
        per_span = seconds * 1e6 / n_spans
        print(f"{name:>13}: {n_spans / seconds:>10,.0f} spans/s  ({per_span:.2f} µs/span)")
    print(f"build: {best['build per run'] * 1e6 / len(runs):.1f} µs per 20-span run")
    parse_s = best["parse"]
    print(f"ratio decode / parse:       {best['decode'] / parse_s:.1f}x")
    print(f"ratio decode+build / parse: {best['decode+build'] / parse_s:.1f}x")
    print(f"ratio build / parse:        {best['build per run'] / parse_s:.1f}x")


if __name__ == "__main__":
    main()
