"""OpenAI Agents SDK agents against the fake OpenAI server, traced two ways at once.

    python -m frameworks.openai_agents_traces --out DIR

Each run is seen by two instrumentations, each with its own tracer provider:
opentelemetry-instrumentation-openai-agents-v2 (`openai_agents_otel-<case>`, GenAI spans) and
openinference-instrumentation-openai-agents (`openai_agents_openinference-<case>`).

Cases:
  tool_error  get_weather and charge_card requested together; charge_card raises ValueError
              (the SDK catches it and tells the model), then a text answer.
  handoff     triage_agent hands off to billing_agent (transfer_to_billing_agent), which calls
              lookup_invoice and answers.
  approval_*  refund_agent calls refund_order, a tool with `needs_approval=True`: the run stops
              with an interruption. `approved` and `rejected` then answer it and resume the run
              from its state (a second trace in the same file); `pending` never answers.
"""

from __future__ import annotations

import argparse
import asyncio
import os
from pathlib import Path
from typing import Any

from frameworks import cases
from frameworks._capture import Capture
from support.fake_openai_process import start_fake_openai

OTEL = "openai_agents_otel"
OPENINFERENCE = "openai_agents_openinference"
PROMPTS = cases.OPENAI_AGENTS_PROMPTS
ANSWERS = cases.OPENAI_AGENTS_ANSWERS
LLM_SCRIPT: dict[str, Any] = {
    "scenarios": [
        cases.billing_scenario(ANSWERS["handoff"]),
        {
            "name": "triage",
            "match": "[triage-agent]",
            "steps": [{"tool_calls": [{"name": "transfer_to_billing_agent", "id": "call_h1"}]}],
        },
        *(
            {
                "name": case,
                "match": f"order {order}",
                # The resumed run is the scenario's second request: it gets the answer.
                "steps": [
                    {
                        "tool_calls": [
                            {
                                "name": "refund_order",
                                "arguments": {"order_id": order},
                                "id": f"call_r{order[-1]}",
                            }
                        ]
                    },
                    {"content": ANSWERS.get(case, "unused")},
                ],
            }
            for case, order in (
                ("approval_approved", "A-1"),
                ("approval_rejected", "A-2"),
                ("approval_pending", "A-3"),
            )
        ),
        {
            "name": "tool_error",
            "match": "charge my card",
            "steps": [
                {
                    "tool_calls": [
                        {"name": "get_weather", "arguments": {"city": "Paris"}, "id": "call_e1"},
                        {"name": "charge_card", "arguments": {"amount_cents": 0}, "id": "call_e2"},
                    ]
                },
                {"content": ANSWERS["tool_error"]},
            ],
        },
    ]
}


async def generate(out_dir: Path) -> list[Path]:
    """Run every case against a fake server started here; return the files written."""
    # No key may reach a real provider, and message content is opt-in for the GenAI
    # instrumentation. Set before the imports below read them, not at module import.
    os.environ.pop("OPENAI_API_KEY", None)
    os.environ["OTEL_SEMCONV_STABILITY_OPT_IN"] = "gen_ai_latest_experimental"
    os.environ["OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"] = "true"
    from agents import (
        Agent,
        OpenAIChatCompletionsModel,
        RunConfig,
        Runner,
        function_tool,
        set_trace_processors,
    )
    from agents.tracing import get_trace_provider
    from openai import AsyncOpenAI
    from openinference.instrumentation.openai_agents import (
        OpenAIAgentsInstrumentor as OpenInferenceInstrumentor,
    )
    from opentelemetry.instrumentation.openai_agents import OpenAIAgentsInstrumentor

    otel, openinference = Capture(OTEL, out_dir), Capture(OPENINFERENCE, out_dir)
    # Drop the SDK's default processor (it exports to the vendor) before adding ours; the
    # OpenInference one would otherwise replace every processor, the GenAI one included.
    set_trace_processors([])
    OpenAIAgentsInstrumentor().instrument(tracer_provider=otel.provider)
    OpenInferenceInstrumentor().instrument(
        tracer_provider=openinference.provider, exclusive_processor=False
    )

    @function_tool
    def get_weather(city: str) -> str:
        """Get the weather for a city."""
        return f"sunny in {city}"

    @function_tool
    def charge_card(amount_cents: int) -> str:
        """Charge the customer's card."""
        if amount_cents <= 0:
            raise ValueError("amount_cents must be positive")
        return f"charged {amount_cents}"

    @function_tool
    def lookup_invoice(invoice_id: str) -> dict[str, object]:
        """Look up an invoice."""
        return {"invoice_id": invoice_id, "total_cents": 12900}

    @function_tool(needs_approval=True)
    def refund_order(order_id: str) -> str:
        """Refund an order (a person must approve each refund)."""
        return f"refunded {order_id}"

    with start_fake_openai(LLM_SCRIPT, out_dir, name="openai_agents_llm") as llm:
        client = AsyncOpenAI(base_url=llm.base_url, api_key="sk-fake", max_retries=0)
        model = OpenAIChatCompletionsModel(model="fake-gpt", openai_client=client)
        shop = Agent(
            name="shop_agent",
            instructions="You are a shop assistant. Use tools.",
            model=model,
            tools=[get_weather, charge_card],
        )
        billing = Agent(
            name="billing_agent",
            instructions="[billing-agent] Answer billing questions.",
            model=model,
            tools=[lookup_invoice],
        )
        triage = Agent(
            name="triage_agent",
            instructions="[triage-agent] Hand billing questions to billing_agent.",
            model=model,
            handoffs=[billing],
        )
        refunds = Agent(
            name="refund_agent",
            instructions="You refund orders with refund_order.",
            model=model,
            tools=[refund_order],
        )
        for case, agent in (
            ("tool_error", shop),
            ("handoff", triage),
            ("approval_approved", refunds),
            ("approval_rejected", refunds),
            ("approval_pending", refunds),
        ):
            with otel.case(case), openinference.case(case):
                config = RunConfig(workflow_name=f"{case}_workflow")
                # Each run in its own task, as a server would: the GenAI instrumentation
                # leaves a span attached to the context, which would parent the next trace.
                result = await asyncio.create_task(
                    Runner.run(agent, PROMPTS[case], run_config=config)
                )
                if case in ("approval_approved", "approval_rejected"):
                    (interruption,) = result.interruptions
                    state = result.to_state()
                    if case == "approval_approved":
                        state.approve(interruption)
                    else:
                        state.reject(interruption)
                    await asyncio.create_task(Runner.run(agent, state, run_config=config))
                get_trace_provider().force_flush()
    otel.provider.shutdown()
    openinference.provider.shutdown()
    return otel.written + openinference.written


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    for path in asyncio.run(generate(args.out)):
        print(path)


if __name__ == "__main__":
    main()
