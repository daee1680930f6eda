"""Regenerate traces.jsonl by running the shipping-dispatch agent on scripted model turns.

The agent is the dispatch planner of Agno's tool-call scorer cookbook: it must ground every
answer with `lookup_shipping_cutoff`, must not pad the run with the decoy
`lookup_backup_carrier` when the primary carrier is operating, and quotes cutoffs with
`quote_shipping_cutoff(region, service, effective_date)`. The language model is a pydantic-ai
`FunctionModel` playing a fixed script per task, so the runs are real pydantic-ai runs (real
tool execution, real retries, real OpenTelemetry spans) without a network. Each run is one
OTLP JSON ExportTraceServiceRequest per line, the OpenTelemetry Collector `file` exporter's
format.

    python examples/shipping-dispatch/generate_traces.py [--out traces.jsonl]

Ids come from a seeded generator so regenerating gives the same ids; times are real.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path

from pydantic_ai import Agent, InstrumentationSettings, ModelRetry
from pydantic_ai.capabilities import Instrumentation
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # examples/: recording.py
from recording import recording_provider, spans_to_otlp_json

AGENT_NAME = "dispatch-agent"
HERE = Path(__file__).resolve().parent

CUTOFFS = {"north": "17:00", "south": "16:30"}
BACKUP_CARRIERS = {"north": "NorthEx", "south": "SouthLink"}

Turn = list[ToolCallPart | TextPart]

QUOTE = "quote_shipping_cutoff"

# Each task: the dispatcher's question and the model's turns, one per model request.
TASKS: list[tuple[str, str, list[Turn]]] = [
    (
        "grounded with the cutoff lookup, nothing else",
        "The primary carrier is operating normally. Look up today's North cutoff and say "
        "whether a parcel arriving at 16:45 ships today.",
        [
            [ToolCallPart("lookup_shipping_cutoff", {"region": "north"}, "c1")],
            [TextPart("Yes: the North cutoff is 17:00, so a parcel at 16:45 ships today.")],
        ],
    ),
    (
        "grounded, but padded with the decoy backup-carrier lookup (bad)",
        "A routing rule confirms the primary carrier is operating. Ground the South cutoff "
        "and say whether a parcel arriving at 16:40 ships today.",
        [
            [
                ToolCallPart("lookup_shipping_cutoff", {"region": "south"}, "c1"),
                ToolCallPart("lookup_backup_carrier", {"region": "south"}, "c2"),
            ],
            [TextPart("No: the South cutoff is 16:30. SouthLink is on standby.")],
        ],
    ),
    (
        "answered from memory without grounding the cutoff (bad)",
        "Can a parcel arriving at 16:15 in the North still ship today?",
        [[TextPart("Yes, the North cutoff is usually 17:00.")]],
    ),
    (
        "a lookup rejected for its region slug, then a clean lookup",
        "Ground the North cutoff: can a parcel arriving at 17:10 ship today?",
        [
            [ToolCallPart("lookup_shipping_cutoff", {"region": "North"}, "c1")],
            [ToolCallPart("lookup_shipping_cutoff", {"region": "north"}, "c2")],
            [TextPart("No: the North cutoff is 17:00, so a parcel at 17:10 ships tomorrow.")],
        ],
    ),
    (
        "quote with the required arguments",
        "Quote the North priority cutoff effective 2026-07-20.",
        [
            [
                ToolCallPart(
                    QUOTE,
                    {"region": "north", "service": "priority", "effective_date": "2026-07-20"},
                    "c1",
                )
            ],
            [TextPart("The North priority cutoff effective 2026-07-20 is 17:00.")],
        ],
    ),
    (
        "quote with the wrong effective date (bad)",
        "Quote the North priority cutoff; the audit checksum says the record is the one "
        "effective 2026-07-20.",
        [
            [
                ToolCallPart(
                    QUOTE,
                    {"region": "north", "service": "priority", "effective_date": "2026-07-21"},
                    "c1",
                )
            ],
            [TextPart("The North priority cutoff effective 2026-07-21 is 17:00.")],
        ],
    ),
]


def build_agent(turns: list[Turn], settings: InstrumentationSettings) -> Agent[None, str]:
    """The dispatch agent with its tools, driven by one task's script."""

    def play(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        step = sum(1 for m in messages if isinstance(m, ModelResponse))
        return ModelResponse(parts=list(turns[min(step, len(turns) - 1)]))

    agent: Agent[None, str] = Agent(
        FunctionModel(play, model_name="scripted-dispatch"),
        name=AGENT_NAME,
        instructions=(
            "You plan same-day dispatch. Always call lookup_shipping_cutoff to ground the "
            "official cutoff. Call lookup_backup_carrier only when the primary carrier is down."
        ),
        capabilities=[Instrumentation(settings=settings)],
        retries=2,
    )

    @agent.tool_plain
    def lookup_shipping_cutoff(region: str) -> str:
        """Return today's official dispatch cutoff for a lower-case region slug."""
        if region not in CUTOFFS:
            raise ModelRetry(f"unknown region {region!r}; use a lower-case slug")
        return json.dumps({"region": region, "cutoff": CUTOFFS[region]})

    @agent.tool_plain
    def lookup_backup_carrier(region: str) -> str:
        """Return the standby carrier, needed only when the primary carrier is down."""
        return json.dumps({"region": region, "backup": BACKUP_CARRIERS.get(region)})

    @agent.tool_plain
    def quote_shipping_cutoff(region: str, service: str, effective_date: str = "latest") -> str:
        """Quote a cutoff using lower-case slugs and either YYYY-MM-DD or 'latest'."""
        return json.dumps(
            {
                "region": region,
                "service": service,
                "effective_date": effective_date,
                "cutoff": CUTOFFS.get(region),
            }
        )

    return agent


async def generate(out: Path) -> int:
    """Run every task; write one OTLP JSON line per run. Returns the number of runs."""
    lines = []
    for seed, (_, question, turns) in enumerate(TASKS, start=101):
        # A fixed instance id: the SDK would otherwise draw a new one every time.
        provider, memory = recording_provider(
            {"service.name": "dispatch-planner", "service.instance.id": "dispatch-1"}, seed
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
