"""Agno agents against the fake OpenAI server, traced by openinference-instrumentation-agno.

    python -m frameworks.agno_traces --out DIR

Cases (each one trace, `agno-<case>.otlp.json`):
  tool_error  get_weather and charge_card requested together; charge_card raises ValueError
              (Agno catches it, the tool span is ERROR), then a text answer.
  paused      get_weather and close_account (requires_confirmation) requested together; the
              run pauses before close_account executes, so it has no tool span.
  team        support_team's leader delegates to its member billing_agent, which calls
              lookup_invoice; the leader answers.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from frameworks import cases
from frameworks._capture import Capture
from support.fake_openai_process import start_fake_openai

FRAMEWORK = "agno"
PROMPTS = cases.AGNO_PROMPTS
ANSWERS = cases.AGNO_ANSWERS
# Scenarios are picked by text in the system or user messages; members come first because
# the leader's system prompt lists its members.
LLM_SCRIPT: dict[str, Any] = {
    "scenarios": [
        {
            "name": "billing_member",
            "match": "[billing-member]",
            "steps": [
                {
                    "tool_calls": [
                        {
                            "name": "lookup_invoice",
                            "arguments": {"invoice_id": "INV-9"},
                            "id": "call_m1",
                        }
                    ]
                },
                {"content": ANSWERS["billing"]},
            ],
        },
        {
            "name": "team_leader",
            "match": "[team-leader]",
            "steps": [
                {
                    "tool_calls": [
                        {
                            "name": "delegate_task_to_member",
                            "arguments": {"member_id": "billing_agent", "task": "Explain INV-9"},
                            "id": "call_t1",
                        }
                    ]
                },
                {"content": ANSWERS["team"]},
            ],
        },
        {
            "name": "paused",
            "match": "close my account",
            "steps": [
                {
                    "tool_calls": [
                        {"name": "get_weather", "arguments": {"city": "Paris"}, "id": "call_p1"},
                        {"name": "close_account", "arguments": {"user_id": 7}, "id": "call_p2"},
                    ]
                },
            ],
        },
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


def get_weather(city: str) -> str:
    """Get the weather for a city."""
    return f"sunny in {city}"


def charge_card(amount_cents: int) -> str:
    """Charge the customer's card."""
    if amount_cents <= 0:
        raise ValueError("amount_cents must be positive")
    return f"charged {amount_cents}"


def lookup_invoice(invoice_id: str) -> dict[str, object]:
    """Look up an invoice."""
    return {"invoice_id": invoice_id, "total_cents": 12900}


def generate(out_dir: Path) -> list[Path]:
    """Run every case against a fake server started here; return the files written."""
    # Agno reports usage to its vendor by default; everything here must stay on loopback.
    # Set here, not at import, so importing this module for its constants changes nothing.
    os.environ["AGNO_TELEMETRY"] = "false"
    capture = Capture(FRAMEWORK, out_dir)
    # Instrument before importing agno's classes, so the wrappers are in place.
    from openinference.instrumentation.agno import AgnoInstrumentor

    AgnoInstrumentor().instrument(tracer_provider=capture.provider)
    from agno.agent import Agent
    from agno.models.openai import OpenAIChat
    from agno.team import Team
    from agno.tools import tool

    @tool(requires_confirmation=True)
    def close_account(user_id: int) -> str:
        """Close a user account (a person must confirm it first)."""
        return f"closed {user_id}"

    with start_fake_openai(LLM_SCRIPT, out_dir, name="agno_llm") as llm:

        def model() -> OpenAIChat:
            return OpenAIChat(
                id="fake-gpt", base_url=llm.base_url, api_key="sk-fake", max_retries=0
            )

        shop = Agent(
            name="shop_agent",
            model=model(),
            tools=[get_weather, charge_card, close_account],
            instructions="You are a shop assistant. Use tools.",
            telemetry=False,
        )
        with capture.case("tool_error"):
            shop.run(PROMPTS["tool_error"])
        with capture.case("paused"):
            run = shop.run(PROMPTS["paused"])
            if not run.is_paused:
                raise RuntimeError(f"agno paused case did not pause: {run.status}")
        billing = Agent(
            name="billing_agent",
            id="billing_agent",
            role="Answers billing questions",
            model=model(),
            tools=[lookup_invoice],
            instructions="[billing-member] You answer billing questions.",
            telemetry=False,
        )
        team = Team(
            name="support_team",
            members=[billing],
            model=model(),
            instructions="[team-leader] Route billing questions to billing_agent.",
            telemetry=False,
        )
        with capture.case("team"):
            team.run(PROMPTS["team"])
    capture.provider.shutdown()
    return capture.written


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    for path in generate(args.out):
        print(path)


if __name__ == "__main__":
    main()
