"""Agno's own `ToolCallScorer.score()` on hand-built RunOutputs: the Agno oracle.

    python -m scorers.agno_oracle        (from tests/, with the `frameworks` extra installed)

Prints one JSON line per case (name, scorer config, executions, value, passed, reason), then
the constructor errors and a digest: `tests/testdata/oracles/agno_toolcallscorer_cases.jsonl`,
which tests/scorers/test_oracles.py checks is what agno prints today. No model, no network.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from importlib.metadata import version
from typing import Any

from agno.models.response import ToolExecution
from agno.run.agent import RunOutput
from agno.scorer import Score, ToolCallScorer


def run(*tools: ToolExecution, content: str | None = "done") -> RunOutput:
    """A finished run; `content=None` is a run that stopped without a final text."""
    return RunOutput(run_id="r1", agent_name="shop_agent", content=content, tools=list(tools))


def te(name: str, args: Any = None, error: bool | None = None, **kw: Any) -> ToolExecution:
    """One tool execution as Agno records it."""
    return ToolExecution(
        tool_call_id=f"call_{name}",
        tool_name=name,
        tool_args=args or {},
        tool_call_error=error,
        **kw,
    )


weather = te("get_weather", {"city": "Paris", "units": "C"})
order = te("lookup_order", {"order_id": "A-42"})
charge_err = te("charge_card", {"amount_cents": -5}, error=True)
charge_ok = te("charge_card", {"amount_cents": 500}, error=False)
paused = te("delete_account", {"user_id": 7}, requires_confirmation=True)  # is_paused -> True

CASES = [
    ("all_expected_clean", ToolCallScorer(["get_weather", "lookup_order"]), run(weather, order)),
    ("expected_errored", ToolCallScorer(["get_weather", "charge_card"]), run(weather, charge_err)),
    ("retry_then_clean", ToolCallScorer(["charge_card"]), run(charge_err, charge_ok)),
    (
        "args_subset_match",
        ToolCallScorer(["get_weather"], arguments={"get_weather": {"city": "Paris"}}),
        run(weather),
    ),
    (
        "args_mismatch",
        ToolCallScorer([], arguments={"get_weather": {"city": "Oslo"}}),
        run(weather),
    ),
    (
        "args_list_of_specs",
        ToolCallScorer(
            [], arguments={"charge_card": [{"amount_cents": 500}, {"amount_cents": -5}]}
        ),
        run(charge_err, charge_ok),
    ),
    (
        "no_type_coercion",
        ToolCallScorer([], arguments={"lookup_order": {"order_id": "A-42"}}),
        run(te("lookup_order", {"order_id": "a-42"})),
    ),
    (
        "strict_extra_call",
        ToolCallScorer(["get_weather"], allow_additional=False),
        run(weather, order),
    ),
    (
        "strict_extra_errored_ok",
        ToolCallScorer(["get_weather"], allow_additional=False),
        run(weather, charge_err),
    ),
    ("paused_not_clean", ToolCallScorer(["delete_account"]), run(paused)),
    (
        "none_error_is_clean",
        ToolCallScorer(["lookup_order"]),
        run(te("lookup_order", {"order_id": "A-42"}, error=None)),
    ),
    ("empty_run", ToolCallScorer(["get_weather"]), run()),
    # Runs that stopped early: no final text (content None).
    (
        "paused_no_text",
        ToolCallScorer(["get_weather", "delete_account"]),
        run(weather, paused, content=None),
    ),
    (
        "paused_no_text_strict",
        ToolCallScorer(["get_weather"], allow_additional=False),
        run(weather, paused, content=None),
    ),
    (
        "error_end_no_text",
        ToolCallScorer(["get_weather", "charge_card"]),
        run(weather, charge_err, content=None),
    ),
    (
        "tools_only_no_text",
        ToolCallScorer(["get_weather", "lookup_order"], allow_additional=False),
        run(weather, order, content=None),
    ),
    ("no_text_no_tools", ToolCallScorer(["get_weather"]), run(content=None)),
]


def lines() -> list[dict[str, Any]]:
    """The oracle's lines, as `main` prints them."""
    out: list[dict[str, Any]] = [{"agno": version("agno")}]
    for name, scorer, r in CASES:
        s: Score = scorer.score(r)
        out.append(
            {
                "case": name,
                "expected_tools": scorer.expected_tools,
                "arguments": scorer.arguments,
                "allow_additional": scorer.allow_additional,
                "tools": [
                    [t.tool_name, t.tool_args, t.tool_call_error, t.is_paused]
                    for t in r.tools or []
                ],
                "content": r.content,
                "value": round(s.value, 4),
                "passed": s.passed,
                "reason": s.reason,
            }
        )
    bad: list[Callable[[], object]] = [
        lambda: ToolCallScorer("get_weather"),
        lambda: ToolCallScorer([]),
        lambda: ToolCallScorer([], arguments={"x": []}),
    ]
    for make in bad:
        try:
            make()
        except Exception as e:  # any constructor error is the oracle's answer
            out.append({"constructor_error": f"{type(e).__name__}: {e}"})
    out.append({"digest": ToolCallScorer(["a", "b"]).digest()})
    return out


def main() -> None:
    for line in lines():
        print(json.dumps(line))


if __name__ == "__main__":
    main()
