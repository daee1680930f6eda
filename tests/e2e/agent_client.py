"""A real pydantic-ai agent exporting its spans with the real OpenTelemetry SDK OTLP exporter.

    python tests/e2e/agent_client.py --protocol grpc --endpoint 127.0.0.1:4317 --out sent.json

The model is a scripted FunctionModel (no network). Every span is also kept in memory and
written to `--out` as OTLP JSON, so the test knows exactly what was sent. Runs in its own
process: pydantic-ai and the SDK keep global state the test process should not share.
"""

from __future__ import annotations

import argparse
import json
import sys

from google.protobuf.json_format import MessageToDict
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from pydantic_ai import Agent, InstrumentationSettings, ModelRetry
from pydantic_ai.capabilities import Instrumentation
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

AGENT = "shop-assistant"

# (user prompt, model turns): a clean lookup, and a purchase whose first charge fails.
CONVERSATIONS: list[tuple[str, list[list[ToolCallPart | TextPart]]]] = [
    (
        "Where is my order 42?",
        [
            [ToolCallPart("lookup_order", {"order_id": "42"}, tool_call_id="o1")],
            [TextPart("Order 42 arrives Friday.")],
        ],
    ),
    (
        "Please buy the blue mug.",
        [
            [ToolCallPart("charge_card", {"amount": -5.0}, tool_call_id="c1")],
            [ToolCallPart("charge_card", {"amount": 12.5}, tool_call_id="c2")],
            [TextPart("Done.")],
        ],
    ),
]


def _agent(turns: list[list[ToolCallPart | TextPart]], settings: InstrumentationSettings) -> Agent:
    def play(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        step = sum(1 for m in messages if isinstance(m, ModelResponse))
        return ModelResponse(parts=list(turns[min(step, len(turns) - 1)]))

    agent: Agent[None, str] = Agent(
        FunctionModel(play, model_name="scripted"),
        name=AGENT,
        capabilities=[Instrumentation(settings=settings)],
        retries=2,
    )

    @agent.tool_plain
    def lookup_order(order_id: str) -> dict[str, str]:
        """Status of an order."""
        return {"order_id": order_id, "status": "shipped"}

    @agent.tool_plain
    def charge_card(amount: float) -> str:
        """Charge the card on file."""
        if amount <= 0:
            raise ModelRetry(f"cannot charge {amount}")
        return f"charged {amount}"

    return agent


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--protocol", choices=["grpc", "http"], required=True)
    parser.add_argument("--endpoint", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--project", help="openinference.project.name (the Phoenix project)")
    args = parser.parse_args()
    if args.protocol == "grpc":
        from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter

        exporter = OTLPSpanExporter(endpoint=args.endpoint, insecure=True)
    else:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import (
            OTLPSpanExporter as HttpExporter,
        )

        exporter = HttpExporter(endpoint=f"http://{args.endpoint}/v1/traces")
    resource = {"service.name": "shop"}
    if args.project:
        resource["openinference.project.name"] = args.project
    provider = TracerProvider(resource=Resource.create(resource))
    memory = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    provider.add_span_processor(BatchSpanProcessor(exporter))
    settings = InstrumentationSettings(tracer_provider=provider)
    for _ in range(args.repeat):
        for prompt, turns in CONVERSATIONS:
            _agent(turns, settings).run_sync(prompt)
    provider.shutdown()  # flushes the batch processor: every span is sent before exit
    doc = MessageToDict(encode_spans(memory.get_finished_spans()), use_integers_for_enums=True)
    with open(args.out, "w") as handle:
        json.dump(doc, handle)
    return 0


if __name__ == "__main__":
    sys.exit(main())
