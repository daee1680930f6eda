"""What the generated agent runs are asked and answer: shared by generators and tests.

Kept apart from the generators so tests can state expectations without importing a framework.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "AGNO_ANSWERS",
    "AGNO_PROMPTS",
    "OPENAI_AGENTS_ANSWERS",
    "OPENAI_AGENTS_PROMPTS",
    "PYDANTIC_AI_ANSWERS",
    "PYDANTIC_AI_PROMPTS",
    "TRACELOOP_ANSWERS",
    "TRACELOOP_PROMPTS",
]

PYDANTIC_AI_PROMPTS = {
    "clean": "Where is order A-42 and what is the weather in Paris?",
    "tool_retry": "Charge my card for order A-42.",
    "tool_invalid_args": "Charge five dollars.",
    "tool_exception": "Delete user 7 if it is cold in Oslo.",
    "deferred": "Refund A-42, ship B-7 and close my account.",
    "subagent": "Why was invoice INV-9 so high?",
}
PYDANTIC_AI_ANSWERS = {
    "clean": "Order A-42 has shipped; it is sunny in Paris.",
    "tool_retry": "Charged 500 cents.",
    "tool_invalid_args": "Charged 500 cents.",
    "billing": "INV-9 includes a one-off setup fee.",
    "subagent": "Billing says INV-9 includes a one-off setup fee.",
}

AGNO_PROMPTS = {
    "tool_error": "What is the weather in Paris, and charge my card 0 cents.",
    "paused": "What is the weather in Paris? Then close my account 7.",
    "team": "Why is invoice INV-9 so high?",
}
AGNO_ANSWERS = {
    "tool_error": "It is sunny in Paris; the card charge failed.",
    "billing": "INV-9 includes a one-off setup fee.",
    "team": "Billing says INV-9 includes a one-off setup fee.",
}

OPENAI_AGENTS_PROMPTS = {
    "tool_error": "What is the weather in Paris, and charge my card 0 cents.",
    "handoff": "Why is invoice INV-9 so high?",
    "approval_approved": "Refund order A-1 please.",
    "approval_rejected": "Refund order A-2 please.",
    "approval_pending": "Refund order A-3 please.",
}
OPENAI_AGENTS_ANSWERS = {
    "tool_error": "It is sunny in Paris; the card charge failed.",
    "handoff": "INV-9 includes a one-off setup fee.",
    "approval_approved": "Order A-1 is refunded.",
    "approval_rejected": "The refund of A-2 was not approved.",
}

TRACELOOP_PROMPTS = {
    "clean": "Where is order A-42 and what is the weather in Paris?",
    "tool_error": "What is the weather in Paris, and charge my card 0 cents.",
    "paused": "What is the weather in Paris? Then close my account 7.",
    "subagent": "Why is invoice INV-9 so high?",
    "billing": "Explain INV-9",
}
TRACELOOP_ANSWERS = {
    "clean": "Order A-42 has shipped; it is sunny in Paris.",
    "tool_error": "It is sunny in Paris; the card charge failed.",
    "paused": "close_account is waiting for approval.",
    "billing": "INV-9 includes a one-off setup fee.",
    "subagent": "Billing says INV-9 includes a one-off setup fee.",
}

AGENT_FRAMEWORK_PROMPTS = {"handoff": "Why is invoice INV-9 so high?"}
AGENT_FRAMEWORK_ANSWERS = {"handoff": "INV-9 includes a one-off setup fee."}


def billing_scenario(answer: str) -> dict[str, Any]:
    """The fake model's billing agent, the same in every framework's runs: it looks up invoice
    INV-9, then answers `answer`."""
    return {
        "name": "billing",
        "match": "[billing-agent]",
        "steps": [
            {
                "tool_calls": [
                    {
                        "name": "lookup_invoice",
                        "arguments": {"invoice_id": "INV-9"},
                        "id": "call_b1",
                    }
                ]
            },
            {"content": answer},
        ],
    }
