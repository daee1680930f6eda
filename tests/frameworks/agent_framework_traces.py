"""Microsoft Agent Framework handoff workflows against the fake OpenAI server.

    python -m frameworks.agent_framework_traces --out DIR

Agent Framework instruments itself (GenAI spans: `invoke_agent`, `chat`, `execute_tool`) through
the global tracer provider, which this process points at its capture.

Cases:
  handoff   HandoffBuilder with triage_agent and billing_agent; triage calls the generated
            `handoff_to_billing_agent` tool, billing_agent calls lookup_invoice and answers.
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

FRAMEWORK = "agent_framework"
PROMPTS = cases.AGENT_FRAMEWORK_PROMPTS
ANSWERS = cases.AGENT_FRAMEWORK_ANSWERS
LLM_SCRIPT: dict[str, Any] = {
    "scenarios": [
        cases.billing_scenario(ANSWERS["handoff"]),
        {
            "name": "triage",
            "match": "[triage-agent]",
            "steps": [{"tool_calls": [{"name": "handoff_to_billing_agent", "id": "call_h1"}]}],
        },
    ]
}


async def generate(out_dir: Path) -> list[Path]:
    """Run every case against a fake server started here; return the files written."""
    os.environ.pop("OPENAI_API_KEY", None)
    from agent_framework import Agent, tool
    from agent_framework.observability import enable_instrumentation
    from agent_framework.openai import OpenAIChatCompletionClient
    from agent_framework.orchestrations import HandoffBuilder
    from opentelemetry import trace

    capture = Capture(FRAMEWORK, out_dir)
    trace.set_tracer_provider(capture.provider)
    enable_instrumentation(enable_sensitive_data=True)

    @tool(approval_mode="never_require")
    def lookup_invoice(invoice_id: str) -> dict[str, object]:
        """Look up an invoice."""
        return {"invoice_id": invoice_id, "total_cents": 12900}

    with start_fake_openai(LLM_SCRIPT, out_dir, name="agent_framework_llm") as llm:
        client = OpenAIChatCompletionClient(
            model="fake-gpt", api_key="sk-fake", base_url=llm.base_url
        )
        triage = Agent(
            client=client,
            name="triage_agent",
            require_per_service_call_history_persistence=True,
            instructions="[triage-agent] Hand billing questions to billing_agent.",
        )
        billing = Agent(
            client=client,
            name="billing_agent",
            require_per_service_call_history_persistence=True,
            instructions="[billing-agent] Answer billing questions.",
            tools=[lookup_invoice],
        )
        workflow = (
            HandoffBuilder(participants=[triage, billing])
            .with_start_agent(triage)
            .add_handoff(triage, [billing])
            .with_autonomous_mode()
            .with_termination_condition(
                lambda conversation: any(
                    m.role == "assistant" and ANSWERS["handoff"] in (m.text or "")
                    for m in conversation
                )
            )
            .build()
        )
        with capture.case("handoff"):
            await workflow.run(PROMPTS["handoff"])
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
