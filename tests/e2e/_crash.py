"""What the crash tests share: agent runs made by the real OpenTelemetry SDK, senders that
export them with the SDK's real OTLP exporters (gRPC and HTTP) and remember what each export
call returned, and a sink that stamps when each span arrived.

An export call answered OK is what a span's sender was told: the crash tests check those spans
against what reached the downstream.
"""

from __future__ import annotations

import json
import threading
import time
from collections import defaultdict
from dataclasses import dataclass, field

from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as GrpcExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter as HttpExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExportResult
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from support.otlp_sink import OtlpSink

__all__ = ["Export", "RunMaker", "Sender", "StampedSink"]

AGENT = "shop_agent"


class RunMaker:
    """Agent runs (an `invoke_agent` span over chat and tool spans) from a real SDK tracer."""

    def __init__(self) -> None:
        self._memory = InMemorySpanExporter()
        provider = TracerProvider(resource=Resource.create({"service.name": "shop"}))
        provider.add_span_processor(SimpleSpanProcessor(self._memory))
        self._tracer = provider.get_tracer("crash-test")
        self._lock = threading.Lock()

    def run(self, n: int) -> tuple[list[ReadableSpan], ReadableSpan]:
        """One run's children (three model calls each followed by a tool call, then a final
        model call) and its agent span, in the order a batch processor exports them: the
        agent span ends last."""
        span = self._tracer.start_as_current_span
        with self._lock:
            prompt = [{"role": "user", "parts": [{"type": "text", "content": f"order {n}?"}]}]
            agent_attrs = {
                "gen_ai.operation.name": "invoke_agent",
                "gen_ai.agent.name": AGENT,
                "gen_ai.input.messages": json.dumps(prompt),
            }
            with span(f"invoke_agent {AGENT}", attributes=agent_attrs):
                for step, tool in enumerate(("get_weather", "lookup_order", "get_weather")):
                    call_id = f"c{n}.{step}"
                    call = [{"type": "tool_call", "id": call_id, "name": tool, "arguments": {}}]
                    chat = {
                        "gen_ai.operation.name": "chat",
                        "gen_ai.output.messages": json.dumps(
                            [{"role": "assistant", "parts": call}]
                        ),
                    }
                    with span("chat gpt-4.1", attributes=chat):
                        pass
                    attributes = {
                        "gen_ai.operation.name": "execute_tool",
                        "gen_ai.tool.name": tool,
                        "gen_ai.tool.call.id": call_id,
                    }
                    with span(f"execute_tool {tool}", attributes=attributes):
                        pass
                with span("chat gpt-4.1", attributes={"gen_ai.operation.name": "chat"}):
                    pass
            spans = list(self._memory.get_finished_spans())
            self._memory.clear()
        return spans[:-1], spans[-1]


def span_key(span: ReadableSpan) -> bytes:
    """The span id as the sink sees it (8 bytes)."""
    assert span.context is not None
    return span.context.span_id.to_bytes(8, "big")


@dataclass
class Export:
    """One export call: what it carried, when it ran, what the SDK exporter returned."""

    spans: list[bytes]
    agent: bool
    started: float
    ended: float = 0.0
    ok: bool = False


@dataclass
class Sender:
    """Exports runs with one SDK exporter (gRPC or HTTP) in a thread until stopped."""

    protocol: str
    port: int
    maker: RunMaker
    first: int
    exports: list[Export] = field(default_factory=list)
    stop: threading.Event = field(default_factory=threading.Event)
    pause: float = 0.005

    def start(self) -> threading.Thread:
        thread = threading.Thread(target=self._main, name=f"sender-{self.protocol}", daemon=True)
        thread.start()
        return thread

    def _main(self) -> None:
        if self.protocol == "grpc":
            exporter: GrpcExporter | HttpExporter = GrpcExporter(
                endpoint=f"127.0.0.1:{self.port}", insecure=True, timeout=8
            )
        else:
            exporter = HttpExporter(endpoint=f"http://127.0.0.1:{self.port}/v1/traces", timeout=8)
        n = self.first
        while not self.stop.is_set():
            children, agent = self.maker.run(n)
            n += 1
            for batch, is_agent in ((children, False), ([agent], True)):
                record = Export([span_key(s) for s in batch], is_agent, time.monotonic())
                result = exporter.export(batch)
                record.ended = time.monotonic()
                record.ok = result is SpanExportResult.SUCCESS
                self.exports.append(record)
            time.sleep(self.pause)
        exporter.shutdown()


class StampedSink(OtlpSink):
    """The OTLP sink, remembering when each span arrived (monotonic seconds)."""

    def __init__(self, protocol: str = "http") -> None:
        super().__init__("http" if protocol == "http" else "grpc")
        self.arrivals: dict[bytes, list[float]] = defaultdict(list)

    def _record(self, signal: str, body: bytes) -> None:
        super()._record(signal, body)
        if signal != "traces":
            return
        now = time.monotonic()
        request = self.requests("traces")[-1]
        for rs in request.resource_spans:
            for ss in rs.scope_spans:
                for span in ss.spans:
                    self.arrivals[span.span_id].append(now)
