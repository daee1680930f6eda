"""An agent instrumented with the real OpenTelemetry SDK, exporting over OTLP/gRPC.

Each run is an `invoke_agent` span over `chat` and `execute_tool` spans (OTel GenAI
conventions); every third run has a failing tool call, so scores differ between runs. Every
span is also kept in memory, so a test knows exactly what was sent. `flush()` after a run makes
it one export request of its own (the BatchSpanProcessor would otherwise send many runs at once).
"""

from __future__ import annotations

from collections import defaultdict

from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, Status, StatusCode

__all__ = ["AGENT", "SdkAgent"]

AGENT = "shop-assistant"
TOOLS = ("lookup_order", "charge_card")


class SdkAgent:
    """A TracerProvider with the OTLP gRPC exporter pointed at `endpoint` (host:port)."""

    def __init__(self, endpoint: str) -> None:
        """Build the provider; nothing is sent until a run ends and is flushed."""
        self._memory = InMemorySpanExporter()
        self._provider = TracerProvider(resource=Resource.create({"service.name": "shop"}))
        self._provider.add_span_processor(SimpleSpanProcessor(self._memory))
        exporter = OTLPSpanExporter(endpoint=endpoint, insecure=True, timeout=30)
        self._provider.add_span_processor(BatchSpanProcessor(exporter))
        self._tracer = self._provider.get_tracer("shop.agent")
        self.runs = 0

    def run(self) -> None:
        """One agent run: a tool call per tool, each after a chat turn, then a last chat."""
        failing = self.runs % 3 == 2
        self.runs += 1
        with self._tracer.start_as_current_span(
            f"invoke_agent {AGENT}",
            attributes={"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": AGENT},
        ):
            for n, tool in enumerate(TOOLS):
                call_id = f"call_{self.runs}_{n}"
                with self._tracer.start_as_current_span(
                    "chat scripted",
                    kind=SpanKind.CLIENT,
                    attributes={"gen_ai.operation.name": "chat"},
                ):
                    pass
                with self._tracer.start_as_current_span(
                    f"execute_tool {tool}",
                    attributes={
                        "gen_ai.operation.name": "execute_tool",
                        "gen_ai.tool.name": tool,
                        "gen_ai.tool.call.id": call_id,
                    },
                ) as span:
                    if failing and tool == "charge_card":
                        span.set_status(Status(StatusCode.ERROR, "card declined"))
                        span.set_attribute("error.type", "CardDeclined")
            with self._tracer.start_as_current_span(
                "chat scripted", kind=SpanKind.CLIENT, attributes={"gen_ai.operation.name": "chat"}
            ):
                pass

    def flush(self) -> None:
        """Send every ended span now (the exporter retries on UNAVAILABLE by itself)."""
        assert self._provider.force_flush(30_000), "the SDK could not flush its spans"

    def shutdown(self) -> None:
        """Flush and stop the exporter."""
        self._provider.shutdown()

    def sent(self) -> dict[str, set[str]]:
        """Trace id -> span ids of everything sent, as hex."""
        out: dict[str, set[str]] = defaultdict(set)
        for span in self._memory.get_finished_spans():
            out[f"{span.context.trace_id:032x}"].add(f"{span.context.span_id:016x}")
        return dict(out)

    def agent_spans(self) -> dict[str, str]:
        """Trace id -> the agent span's id, as hex."""
        return {
            f"{s.context.trace_id:032x}": f"{s.context.span_id:016x}"
            for s in self._memory.get_finished_spans()
            if s.name.startswith("invoke_agent")
        }

    def failing(self) -> set[str]:
        """Trace ids of the runs with a failed tool call, as hex."""
        return {
            f"{s.context.trace_id:032x}"
            for s in self._memory.get_finished_spans()
            if s.status.status_code is StatusCode.ERROR
        }
