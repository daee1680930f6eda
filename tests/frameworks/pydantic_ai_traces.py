"""pydantic-ai agents, scripted with FunctionModel (no network), traced with the real OTel SDK.

    python -m frameworks.pydantic_ai_traces --out DIR

Cases (each one trace, `pydantic_ai-<case>.otlp.json`; InstrumentationSettings default v5):
  clean             get_weather + lookup_order requested together, then a text answer.
  tool_retry        charge_card raises ModelRetry (an errored call the model sees), the model
                    calls it again correctly, then answers.
  tool_invalid_args charge_card is called with arguments that fail validation, then correctly.
  tool_exception    get_weather, then delete_account raises RuntimeError: the run fails.
  deferred          five calls in one response: refund_order raises ApprovalRequired,
                    get_weather runs, ship_order raises CallDeferred, lookup_order runs,
                    close_account (requires_approval=True) never executes; the run ends with
                    DeferredToolRequests.
  subagent          support_agent's ask_billing tool runs billing_agent, which calls
                    lookup_invoice and answers through its output tool (final_result).
"""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from pydantic_ai import (
    Agent,
    ApprovalRequired,
    CallDeferred,
    DeferredToolRequests,
    InstrumentationSettings,
    ModelRetry,
    RunContext,
)
from pydantic_ai.capabilities import Instrumentation
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from frameworks import cases
from frameworks._capture import Capture

FRAMEWORK = "pydantic_ai"
PROMPTS = cases.PYDANTIC_AI_PROMPTS
ANSWERS = cases.PYDANTIC_AI_ANSWERS


class InvoiceAnswer(BaseModel):
    """billing_agent's structured output; it makes the model answer through `final_result`."""

    invoice_id: str
    explanation: str


def _scripted(steps: list[list[ToolCallPart] | str]) -> FunctionModel:
    """A model that answers step k of the conversation (k = responses so far) from `steps`."""

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        step = steps[sum(isinstance(m, ModelResponse) for m in messages)]
        if isinstance(step, str):
            return ModelResponse(parts=[TextPart(step)])
        return ModelResponse(parts=list(step))

    return FunctionModel(respond, model_name="scripted")


def _call(name: str, args: dict[str, Any], call_id: str) -> ToolCallPart:
    return ToolCallPart(name, args, tool_call_id=call_id)


def _shop_agent(model: FunctionModel, settings: InstrumentationSettings) -> Agent[None, Any]:
    agent: Agent[None, Any] = Agent(
        model,
        name="shop_agent",
        instructions="You are a shop assistant. Use tools.",
        output_type=[str, DeferredToolRequests],
        capabilities=[Instrumentation(settings=settings)],
    )

    @agent.tool_plain
    def get_weather(city: str) -> str:
        """Get the weather for a city."""
        return f"sunny in {city}"

    @agent.tool_plain
    def lookup_order(order_id: str) -> dict[str, str]:
        """Look up an order."""
        return {"order_id": order_id, "status": "shipped"}

    @agent.tool_plain
    def charge_card(amount_cents: int) -> str:
        """Charge the customer's card."""
        if amount_cents <= 0:
            raise ModelRetry("amount_cents must be positive")
        return f"charged {amount_cents}"

    @agent.tool_plain
    def delete_account(user_id: int) -> str:
        """Delete a user account."""
        raise RuntimeError(f"permission denied for user {user_id}")

    @agent.tool_plain
    def refund_order(order_id: str) -> str:
        """Refund an order; a person must approve it."""
        raise ApprovalRequired({"order_id": order_id})

    @agent.tool_plain
    def ship_order(order_id: str) -> str:
        """Ship an order; the warehouse system does it later."""
        raise CallDeferred({"queue": "warehouse"})

    @agent.tool_plain(requires_approval=True)
    def close_account(user_id: int) -> str:
        """Close an account (always needs approval, so it never runs unapproved)."""
        return f"closed {user_id}"

    return agent


SHOP_SCRIPTS: dict[str, list[list[ToolCallPart] | str]] = {
    "clean": [
        [
            _call("get_weather", {"city": "Paris"}, "call_w1"),
            _call("lookup_order", {"order_id": "A-42"}, "call_o1"),
        ],
        ANSWERS["clean"],
    ],
    "tool_retry": [
        [_call("charge_card", {"amount_cents": -5}, "call_c1")],
        [_call("charge_card", {"amount_cents": 500}, "call_c2")],
        ANSWERS["tool_retry"],
    ],
    "tool_invalid_args": [
        [_call("charge_card", {"amount_cents": "five dollars"}, "call_v1")],
        [_call("charge_card", {"amount_cents": 500}, "call_v2")],
        ANSWERS["tool_invalid_args"],
    ],
    "tool_exception": [
        [_call("get_weather", {"city": "Oslo"}, "call_x1")],
        [_call("delete_account", {"user_id": 7}, "call_x2")],
        "unreachable",
    ],
    "deferred": [
        [
            _call("refund_order", {"order_id": "A-42"}, "call_d1"),
            _call("get_weather", {"city": "Paris"}, "call_d2"),
            _call("ship_order", {"order_id": "B-7"}, "call_d3"),
            _call("lookup_order", {"order_id": "B-7"}, "call_d4"),
            _call("close_account", {"user_id": 7}, "call_d5"),
        ],
    ],
}


def _subagent_pair(settings: InstrumentationSettings) -> Agent[None, str]:
    def billing_model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if not any(isinstance(m, ModelResponse) for m in messages):
            return ModelResponse(
                parts=[_call("lookup_invoice", {"invoice_id": "INV-9"}, "call_b1")]
            )
        answer = {"invoice_id": "INV-9", "explanation": ANSWERS["billing"]}
        return ModelResponse(parts=[_call(info.output_tools[0].name, answer, "call_b2")])

    billing: Agent[None, InvoiceAnswer] = Agent(
        FunctionModel(billing_model, model_name="scripted"),
        name="billing_agent",
        output_type=InvoiceAnswer,
        capabilities=[Instrumentation(settings=settings)],
    )

    @billing.tool_plain
    def lookup_invoice(invoice_id: str) -> dict[str, object]:
        """Look up an invoice."""
        return {"invoice_id": invoice_id, "lines": ["plan", "setup fee"], "total_cents": 12900}

    support = Agent(
        _scripted(
            [
                [_call("ask_billing", {"question": "Why is INV-9 high?"}, "call_s1")],
                ANSWERS["subagent"],
            ]
        ),
        name="support_agent",
        capabilities=[Instrumentation(settings=settings)],
    )

    @support.tool
    async def ask_billing(ctx: RunContext[None], question: str) -> str:
        """Ask the billing specialist agent."""
        result = await billing.run(question, usage=ctx.usage)
        return result.output.explanation

    return support


async def generate(out_dir: Path) -> list[Path]:
    """Run every case; return the files written."""
    capture = Capture(FRAMEWORK, out_dir)
    settings = InstrumentationSettings(tracer_provider=capture.provider)
    for case, steps in SHOP_SCRIPTS.items():
        with capture.case(case):
            try:
                await _shop_agent(_scripted(steps), settings).run(PROMPTS[case])
            except RuntimeError:
                if case != "tool_exception":
                    raise
    with capture.case("subagent"):
        await _subagent_pair(settings).run(PROMPTS["subagent"])
    capture.provider.shutdown()
    return capture.written


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    for path in asyncio.run(generate(args.out)):
        print(path)


if __name__ == "__main__":
    main()
