"""A small shop assistant, instrumented with the OpenTelemetry SDK, that sends its traces to
tracescore. It runs offline: the language model is a pydantic-ai `FunctionModel` playing a fixed
script, so the agent, its tool calls, its retries and its spans are all real.

    python examples/live/agent.py --endpoint http://127.0.0.1:4318

Three conversations: a weather question (one clean tool call), an order question (one clean
tool call) and a purchase whose first charge fails and is retried (one errored tool call, so
tracescore's `no_tool_errors` scorer marks that run `scored`, not `passed`).
"""

from __future__ import annotations

import argparse
import sys

from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from pydantic_ai import Agent, InstrumentationSettings, ModelRetry
from pydantic_ai.capabilities import Instrumentation
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

AGENT_NAME = "shop-assistant"

Turn = list[ToolCallPart | TextPart]

# The user's message and the model's turns, one per model request; the last one answers.
CONVERSATIONS: list[tuple[str, list[Turn]]] = [
    (
        "What's the weather in Paris?",
        [
            [ToolCallPart("get_weather", {"city": "Paris"}, tool_call_id="w1")],
            [TextPart("It is 18°C and sunny in Paris.")],
        ],
    ),
    (
        "Where is my order 42?",
        [
            [ToolCallPart("lookup_order", {"order_id": "42"}, tool_call_id="o1")],
            [TextPart("Order 42 shipped yesterday and arrives on Friday.")],
        ],
    ),
    (
        "Please buy the blue mug for me.",
        [
            [ToolCallPart("charge_card", {"amount": -5.0}, tool_call_id="c1")],  # fails
            [ToolCallPart("charge_card", {"amount": 12.5}, tool_call_id="c2")],
            [TextPart("Done: the blue mug is yours, $12.50 was charged.")],
        ],
    ),
]


def build_agent(turns: list[Turn], settings: InstrumentationSettings) -> Agent[None, str]:
    """The shop assistant with three tools, driven by one conversation's script."""

    def play(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        step = sum(1 for m in messages if isinstance(m, ModelResponse))
        return ModelResponse(parts=list(turns[min(step, len(turns) - 1)]))

    agent: Agent[None, str] = Agent(
        FunctionModel(play, model_name="scripted-shop"),
        name=AGENT_NAME,
        instructions="You help customers of a small shop with the weather, orders and purchases.",
        capabilities=[Instrumentation(settings=settings)],
        retries=2,
    )

    @agent.tool_plain
    def get_weather(city: str) -> str:
        """Current weather in a city."""
        return f"18°C and sunny in {city}"

    @agent.tool_plain
    def lookup_order(order_id: str) -> dict[str, str]:
        """Status of an order."""
        return {"order_id": order_id, "status": "shipped", "eta": "Friday"}

    @agent.tool_plain
    def charge_card(amount: float) -> str:
        """Charge the customer's card on file."""
        if amount <= 0:
            raise ModelRetry(f"cannot charge a non-positive amount: {amount}")
        return f"charged ${amount:.2f}"

    return agent


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--endpoint",
        default="http://127.0.0.1:4318",
        help="tracescore's OTLP/HTTP receiver (the SDK posts to <endpoint>/v1/traces)",
    )
    args = parser.parse_args(argv)

    provider = TracerProvider(resource=Resource.create({"service.name": AGENT_NAME}))
    exporter = OTLPSpanExporter(endpoint=args.endpoint.rstrip("/") + "/v1/traces")
    provider.add_span_processor(BatchSpanProcessor(exporter))
    settings = InstrumentationSettings(tracer_provider=provider)

    for prompt, turns in CONVERSATIONS:
        result = build_agent(turns, settings).run_sync(prompt)
        print(f"user: {prompt}\nagent: {result.output}\n", flush=True)
    # Shutting the provider down flushes the batch processor: every span is sent before exit.
    provider.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
