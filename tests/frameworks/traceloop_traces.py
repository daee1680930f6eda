"""Hand-written agents traced by OpenLLMetry (traceloop-sdk) against the fake OpenAI server.

    python -m frameworks.traceloop_traces --out DIR

The agents are plain Python, as Traceloop's decorators expect: an `@agent` function loops over
chat completions (the `openai` client, instrumented by Traceloop's OpenAI instrumentation, so
each request is a `openai.chat` span holding the model's tool calls) and runs the `@tool`
functions the model asks for. Cases (each one trace, `traceloop-<case>.otlp.json`):
  clean       get_weather and lookup_order requested together, both run, then an answer.
  tool_error  get_weather and charge_card requested together; charge_card raises ValueError
              (the tool span is ERROR with an exception event; the agent tells the model),
              then an answer.
  paused      get_weather and close_account requested together; close_account needs a person's
              approval, so the agent runs get_weather and stops without running close_account.
  subagent    a `@workflow` runs support_agent, which calls billing_agent (another `@agent`);
              billing_agent calls lookup_invoice and answers; support_agent answers with it.
"""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from frameworks import cases
from frameworks._capture import Capture
from support.fake_openai_process import start_fake_openai

FRAMEWORK = "traceloop"
PROMPTS = cases.TRACELOOP_PROMPTS
ANSWERS = cases.TRACELOOP_ANSWERS
LLM_SCRIPT: dict[str, Any] = {
    "scenarios": [
        cases.billing_scenario(ANSWERS["billing"]),
        {
            "name": "support",
            "match": "[support-agent]",
            "steps": [{"content": ANSWERS["subagent"]}],
        },
        {
            "name": "clean",
            "match": "order A-42",
            "steps": [
                {
                    "tool_calls": [
                        {"name": "get_weather", "arguments": {"city": "Paris"}, "id": "call_w1"},
                        {
                            "name": "lookup_order",
                            "arguments": {"order_id": "A-42"},
                            "id": "call_o1",
                        },
                    ]
                },
                {"content": ANSWERS["clean"]},
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
    ]
}
SHOP_SYSTEM = "You are a shop assistant. Use tools."
NEEDS_APPROVAL = frozenset({"close_account"})


def _schema(name: str, **params: str) -> dict[str, Any]:
    """An OpenAI function-tool definition with string/integer parameters."""
    return {
        "type": "function",
        "function": {
            "name": name,
            "parameters": {
                "type": "object",
                "properties": {p: {"type": t} for p, t in params.items()},
                "required": list(params),
            },
        },
    }


SHOP_TOOLS = [
    _schema("get_weather", city="string"),
    _schema("lookup_order", order_id="string"),
    _schema("charge_card", amount_cents="integer"),
    _schema("close_account", user_id="integer"),
]
BILLING_TOOLS = [_schema("lookup_invoice", invoice_id="string")]


def generate(out_dir: Path) -> list[Path]:
    """Run every case against a fake server started here; return the files written."""
    # Everything stays on loopback: no Traceloop backend, metrics or telemetry. Set here, not
    # at import, so importing this module for its constants changes nothing.
    os.environ.pop("OPENAI_API_KEY", None)
    os.environ.update(
        {
            "TRACELOOP_TELEMETRY": "false",
            "TRACELOOP_METRICS_ENABLED": "false",
            "TRACELOOP_LOGGING_ENABLED": "false",
            "TRACELOOP_TRACE_CONTENT": "true",
        }
    )
    capture = Capture(FRAMEWORK, out_dir)
    from openai import OpenAI
    from opentelemetry import trace
    from opentelemetry.sdk.trace import SpanProcessor
    from traceloop.sdk import Traceloop
    from traceloop.sdk.decorators import agent, tool, workflow
    from traceloop.sdk.instruments import Instruments

    # Traceloop adopts an already-set global provider (ours, with the in-memory exporter). It
    # adds the processor given here, chaining its own on_start (workflow name, entity path);
    # an empty SpanProcessor keeps spans from being exported twice.
    trace.set_tracer_provider(capture.provider)
    Traceloop.init(
        app_name="tracescore-test-traceloop",
        api_endpoint="http://127.0.0.1:9",  # never used: spans go to the processor below
        processor=SpanProcessor(),
        telemetry_enabled=False,
        instruments={Instruments.OPENAI},
        disable_batch=True,
    )

    @tool(name="get_weather")
    def get_weather(city: str) -> str:
        return f"sunny in {city}"

    @tool(name="lookup_order")
    def lookup_order(order_id: str) -> dict[str, str]:
        return {"order_id": order_id, "status": "shipped"}

    @tool(name="charge_card")
    def charge_card(amount_cents: int) -> str:
        if amount_cents <= 0:
            raise ValueError("amount_cents must be positive")
        return f"charged {amount_cents}"

    @tool(name="close_account")
    def close_account(user_id: int) -> str:
        return f"closed {user_id}"

    @tool(name="lookup_invoice")
    def lookup_invoice(invoice_id: str) -> dict[str, object]:
        return {"invoice_id": invoice_id, "total_cents": 12900}

    shop_functions: dict[str, Callable[..., Any]] = {
        "get_weather": get_weather,
        "lookup_order": lookup_order,
        "charge_card": charge_card,
        "close_account": close_account,
    }

    with start_fake_openai(LLM_SCRIPT, out_dir, name="traceloop_llm") as llm:
        client = OpenAI(base_url=llm.base_url, api_key="sk-fake", max_retries=0)

        def loop(
            system: str,
            prompt: str,
            tools: list[dict[str, Any]],
            functions: dict[str, Callable[..., Any]],
        ) -> str:
            """Chat until the model answers; run the tools it asks for on the way."""
            messages: list[Any] = [
                {"role": "system", "content": system},
                {"role": "user", "content": prompt},
            ]
            while True:
                # No `tools` key at all when there are none, as the API requires.
                offered: dict[str, Any] = {"tools": tools} if tools else {}
                reply = client.chat.completions.create(
                    model="fake-gpt", messages=messages, **offered
                )
                message = reply.choices[0].message
                if not message.tool_calls:
                    return message.content or ""
                messages.append(message.model_dump(exclude_none=True))
                for requested in message.tool_calls:
                    name = requested.function.name  # type: ignore[union-attr]
                    if name in NEEDS_APPROVAL:
                        # A person must approve this call first: stop before running it.
                        return f"{name} is waiting for approval."
                    args = json.loads(requested.function.arguments)  # type: ignore[union-attr]
                    try:
                        result = functions[name](**args)
                        content = result if isinstance(result, str) else json.dumps(result)
                    except ValueError as exc:
                        content = f"error: {exc}"
                    messages.append(
                        {"role": "tool", "tool_call_id": requested.id, "content": content}
                    )

        @agent(name="shop_agent")
        def shop_agent(prompt: str) -> str:
            return loop(SHOP_SYSTEM, prompt, SHOP_TOOLS, shop_functions)

        @agent(name="billing_agent")
        def billing_agent(question: str) -> str:
            system = "[billing-agent] You answer billing questions."
            return loop(system, question, BILLING_TOOLS, {"lookup_invoice": lookup_invoice})

        @agent(name="support_agent")
        def support_agent(prompt: str) -> str:
            billing = billing_agent(PROMPTS["billing"])
            system = f"[support-agent] Answer using the billing team's note: {billing}"
            return loop(system, prompt, [], {})

        @workflow(name="support_workflow")
        def support_workflow(prompt: str) -> str:
            return support_agent(prompt)

        for case in ("clean", "tool_error", "paused"):
            with capture.case(case):
                shop_agent(PROMPTS[case])
        with capture.case("subagent"):
            support_workflow(PROMPTS["subagent"])
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
