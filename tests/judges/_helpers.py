"""Shared pieces of the judge tests: runs, clients against the fake server, answer scripts.

The judge is the fake OpenAI-compatible server process from `tests/support` (the one allowed
stand-in); everything on our side is the real client, runner and scorers.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Coroutine
from dataclasses import replace
from pathlib import Path
from typing import Any, TypeVar

from support.fake_openai_process import FakeOpenAI
from tracescore.judges.client import JudgeClient, JudgeShared
from tracescore.judges.endpoint import ResolvedEndpoint
from tracescore.model import AgentStep, ToolCall, Trajectory
from tracescore.otlp import read_trace_files
from tracescore.trajectory import build_trajectories

__all__ = [
    "MODEL",
    "TESTDATA",
    "bodies_text",
    "client_for",
    "real_runs",
    "run",
    "shop_run",
    "tool_answer",
    "trajectory_answer",
]

T = TypeVar("T")

MODEL = "judge-model"
TESTDATA = Path(__file__).resolve().parent.parent / "testdata" / "judges"


def run(coro: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine to completion in a fresh event loop."""
    return asyncio.run(coro)


def client_for(
    server: FakeOpenAI,
    shared: JudgeShared | None = None,
    *,
    environ: dict[str, str] | None = None,
    **endpoint: Any,
) -> JudgeClient:
    """A real client of the fake server; fast backoff so retry tests stay short."""
    options: dict[str, Any] = {"timeout_s": 5.0, "max_retries": 2, **endpoint}
    resolved = ResolvedEndpoint(base_url=server.base_url, model=MODEL, **options)
    return JudgeClient(resolved, shared or JudgeShared(retry_backoff_s=0.01), environ=environ)


def bodies_text(server: FakeOpenAI) -> str:
    """Every chat request body the server received, as one JSON string."""
    return json.dumps(server.chat_bodies(), ensure_ascii=False)


REFUND = ToolCall(
    "refund", "c3", {"order_id": "A-42"}, status="paused", pause_reason="approval_required"
)


def shop_run(**changes: Any) -> Trajectory:
    """A run with a clean call, an errored call and a sub-agent with a paused call."""
    base = Trajectory(
        trace_id="0af7651916cd43dd8448eb211c80319c",
        span_id="b7ad6b7169203331",
        agent="shop",
        input="Where is my order A-42?",
        output="Order A-42 ships tomorrow.",
        available_tools=("lookup_order", "get_weather", "refund"),
        steps=(
            ToolCall("lookup_order", "c1", {"order_id": "A-42"}, {"eta": "tomorrow"}),
            ToolCall(
                "get_weather",
                "c2",
                {"city": "Paris"},
                status="error",
                error_type="TimeoutError",
                error_message="weather service timed out",
            ),
            AgentStep("billing", steps=(REFUND,)),
        ),
    )
    return replace(base, **changes)


def real_runs(name: str) -> list[Trajectory]:
    """The runs of a recorded trace in tests/testdata/judges (real pydantic-ai spans)."""
    decoded = read_trace_files([str(TESTDATA / name)])
    return list(build_trajectories(decoded.spans).trajectories)


def tool_answer(
    *verdicts: tuple[int, str, bool], missing: tuple[str, ...] = (), keyed: bool = True
) -> dict[str, Any]:
    """A `llm_tool_call_accuracy` answer: (call number, tool, appropriate) per call.

    Keyed by `call_<n>` as the default schema asks; `keyed=False` is `compat: mastra`'s list.
    """
    entries = [
        (n, {"tool": tool, "appropriate": ok, "reasoning": f"{tool} judged {ok}"})
        for n, tool, ok in verdicts
    ]
    return {"evaluations": _evaluations(entries, keyed), "missing_tools": list(missing)}


def _evaluations(entries: list[tuple[int, dict[str, Any]]], keyed: bool) -> Any:
    if keyed:
        return {f"call_{n}": entry for n, entry in entries}
    return [{"call": n, **entry} for n, entry in entries]


def trajectory_answer(
    *steps: tuple[int, str, bool, bool],
    missing: tuple[str, ...] = (),
    extra: tuple[str, ...] = (),
    keyed: bool = True,
) -> dict[str, Any]:
    """A `llm_trajectory` answer: (call number, step, necessary, in order) per step."""
    entries = [
        (n, {"step": s, "necessary": nec, "in_order": order, "reasoning": "r"})
        for n, s, nec, order in steps
    ]
    return {
        "evaluations": _evaluations(entries, keyed),
        "missing_steps": list(missing),
        "extra_steps": list(extra),
        "overall_assessment": "assessed",
    }
