"""Regenerate traces.jsonl by running the customer-support agent on scripted model turns.

The agent is the one of Mastra's customer-support guide: it answers order questions with three
tools, `lookup_order`, `process_refund` and `escalate_to_human`. The language model is a
pydantic-ai `FunctionModel` playing a fixed script per conversation, so the runs are real
pydantic-ai runs (real tool execution, real retries, real OpenTelemetry spans) without a
network. Each run is written as one OTLP JSON ExportTraceServiceRequest per line, the format
of the OpenTelemetry Collector's `file` exporter.

    python examples/support-agent/generate_traces.py [--out traces.jsonl]

Ids come from a seeded generator so regenerating gives the same ids; times are real.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from pydantic_ai import Agent, InstrumentationSettings, ModelRetry
from pydantic_ai.capabilities import Instrumentation
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # examples/: recording.py
from recording import recording_provider, spans_to_otlp_json

AGENT_NAME = "support-agent"
HERE = Path(__file__).resolve().parent

ORDERS = {
    "1001": {"status": "shipped", "carrier": "UPS", "eta": "Friday", "total": 59.0},
    "1002": {"status": "delivered", "carrier": "DHL", "eta": None, "total": 120.0},
    "1003": {"status": "delivered", "carrier": "UPS", "eta": None, "total": 35.5},
    "1004": {"status": "delivered", "carrier": "USPS", "eta": None, "total": 80.0},
    "1005": {"status": "in transit", "carrier": "FedEx", "eta": "Monday", "total": 42.0},
}

Turn = list[ToolCallPart | TextPart]

# Each conversation: the user's message and the model's turns, one per model request. A turn
# of tool calls is followed by the tools' results; the last turn is the final answer.
CONVERSATIONS: list[tuple[str, str, list[Turn]]] = [
    (
        "status: looks the order up, then answers",
        "Where is my order 1001?",
        [
            [ToolCallPart("lookup_order", {"order_id": "1001"}, tool_call_id="c1")],
            [TextPart("Order 1001 shipped with UPS and should arrive on Friday.")],
        ],
    ),
    (
        "refund: looks the order up before refunding",
        "I'd like a refund for order 1002, it arrived broken.",
        [
            [ToolCallPart("lookup_order", {"order_id": "1002"}, tool_call_id="c1")],
            [
                ToolCallPart(
                    "process_refund",
                    {"order_id": "1002", "reason": "arrived broken"},
                    tool_call_id="c2",
                )
            ],
            [TextPart("I've refunded $120.00 for order 1002. Sorry it arrived broken!")],
        ],
    ),
    (
        "refund without a lookup (bad)",
        "Please refund order 1003, I changed my mind.",
        [
            [
                ToolCallPart(
                    "process_refund",
                    {"order_id": "1003", "reason": "changed mind"},
                    tool_call_id="c1",
                )
            ],
            [TextPart("Done: order 1003 is refunded.")],
        ],
    ),
    (
        "refund that errors once, then a clean retry",
        "Can I get a refund on order 1004? Wrong size.",
        [
            [ToolCallPart("lookup_order", {"order_id": "1004"}, tool_call_id="c1")],
            [ToolCallPart("process_refund", {"order_id": "1004"}, tool_call_id="c2")],
            [
                ToolCallPart(
                    "process_refund",
                    {"order_id": "1004", "reason": "wrong size"},
                    tool_call_id="c3",
                )
            ],
            [TextPart("Your refund of $80.00 for order 1004 is on its way.")],
        ],
    ),
    (
        "off-topic question: no tool is needed",
        "What's the capital of France?",
        [[TextPart("Paris. I can also help with your orders, refunds or deliveries.")]],
    ),
    (
        "routine status question escalated without a lookup (bad)",
        "Where is my order 1005? It's taking a while.",
        [
            [
                ToolCallPart(
                    "escalate_to_human", {"reason": "customer asks about a late order"}, "c1"
                )
            ],
            [TextPart("I've passed your question to a colleague who will get back to you.")],
        ],
    ),
    (
        "the customer asks for a person: escalation is right",
        "I want to talk to a human about a billing dispute.",
        [
            [ToolCallPart("escalate_to_human", {"reason": "billing dispute"}, "c1")],
            [TextPart("A member of our team will contact you shortly about the dispute.")],
        ],
    ),
]


def build_agent(turns: list[Turn], settings: InstrumentationSettings) -> Agent[None, str]:
    """The support agent with its three tools, driven by one conversation's script."""

    def play(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        step = sum(1 for m in messages if isinstance(m, ModelResponse))
        return ModelResponse(parts=list(turns[min(step, len(turns) - 1)]))

    agent: Agent[None, str] = Agent(
        FunctionModel(play, model_name="scripted-support"),
        name=AGENT_NAME,
        instructions=(
            "You are a customer support agent. Look an order up before answering about it or "
            "refunding it. Escalate to a human only when the customer asks for one."
        ),
        capabilities=[Instrumentation(settings=settings)],
        retries=2,
    )

    @agent.tool_plain
    def lookup_order(order_id: str) -> dict[str, Any]:
        """Look up an order's status, carrier, delivery estimate and total."""
        if order_id not in ORDERS:
            raise ModelRetry(f"no order {order_id!r}")
        return {"order_id": order_id, **ORDERS[order_id]}

    @agent.tool_plain
    def process_refund(order_id: str, reason: str = "") -> dict[str, Any]:
        """Refund an order in full; a reason is required."""
        if not reason:
            raise ModelRetry("a refund needs a reason")
        return {"order_id": order_id, "refunded": ORDERS[order_id]["total"], "reason": reason}

    @agent.tool_plain
    def escalate_to_human(reason: str) -> str:
        """Hand the conversation to a human colleague."""
        return f"ticket opened: {reason}"

    return agent


async def generate(out: Path) -> int:
    """Run every conversation; write one OTLP JSON line per run. Returns the number of runs."""
    lines = []
    for seed, (_, question, turns) in enumerate(CONVERSATIONS, start=1):
        # A fixed instance id: the SDK would otherwise draw a new one every time.
        provider, memory = recording_provider(
            {"service.name": "support-desk", "service.instance.id": "support-desk-1"}, seed
        )
        agent = build_agent(turns, InstrumentationSettings(tracer_provider=provider))
        await agent.run(question)
        provider.force_flush()
        lines.append(json.dumps(spans_to_otlp_json(memory.get_finished_spans()), sort_keys=True))
        provider.shutdown()
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return len(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=HERE / "traces.jsonl")
    args = parser.parse_args()
    count = asyncio.run(generate(args.out))
    print(f"{count} runs -> {args.out}")


if __name__ == "__main__":
    main()
