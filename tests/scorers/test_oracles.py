"""Every recorded result of the real Mastra and Agno scorers, reproduced (tests/testdata/oracles).

Mastra-family scorers run under `compat: mastra` and must give Mastra's numbers, details and
reason strings exactly. Each case is then scored again under tracescore's default semantics,
and where the answer differs the expected default value is written down with the reason.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from scorers import agno_oracle
from scorers._build import call, run, score
from scorers.mastra_oracle import mastra_oracle_output
from tracescore.config.scorers import parse_scorer
from tracescore.model import ToolStatus, Trajectory

__all__ = ["mastra_oracle_output"]  # the fixture, imported for pytest

ORACLES = Path(__file__).resolve().parent.parent / "testdata" / "oracles"


def _lines(name: str) -> list[dict[str, Any]]:
    with (ORACLES / name).open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


# --- Mastra -------------------------------------------------------------------------------

_EXPECTED_STEPS = [{"tool": "get_weather", "args": {"city": "Paris"}}, {"tool": "lookup_order"}]

# The scorer labels of mastra_score.mjs and the tracescore config that means the same thing.
MASTRA_CONFIGS: dict[str, dict[str, Any]] = {
    "toolCallAccuracy(expectedTool=get_weather)": {
        "type": "tool_call_accuracy",
        "expected_tool": "get_weather",
    },
    "toolCallAccuracy(get_weather,strict)": {
        "type": "tool_call_accuracy",
        "expected_tool": "get_weather",
        "strict_mode": True,
    },
    "toolCallAccuracy(order=[get_weather,lookup_order])": {
        "type": "tool_call_accuracy",
        "expected_tool_order": ["get_weather", "lookup_order"],
    },
    "checks.calledTool(lookup_order)": {"type": "called_tool", "tool": "lookup_order"},
    "checks.didNotCall(delete_account)": {"type": "did_not_call", "tool": "delete_account"},
    "checks.toolOrder([get_weather,lookup_order])": {
        "type": "tool_order",
        "tools": ["get_weather", "lookup_order"],
    },
    "checks.maxToolCalls(2)": {"type": "max_tool_calls", "max": 2},
    "checks.noToolErrors()": {"type": "no_tool_errors"},
    "checks.usedNoTools()": {"type": "used_no_tools"},
    "checks.includes(sunny)": {"type": "output_includes", "text": "sunny"},
    "trajectoryAccuracy(relaxed)": {
        "type": "trajectory_accuracy",
        "steps": _EXPECTED_STEPS,
        "ordering": "relaxed",
    },
    "trajectoryAccuracy(strict)": {
        "type": "trajectory_accuracy",
        "steps": _EXPECTED_STEPS,
        "ordering": "strict",
    },
    "trajectory(unified)": {
        "type": "trajectory_guardrails",
        "steps": _EXPECTED_STEPS,
        "ordering": "relaxed",
        "max_steps": 3,
        "no_redundant_calls": True,
        "blacklisted_tools": ["delete_account"],
    },
}

# Where tracescore's defaults give another value than Mastra, and why.
_NO_TEXT = (
    None,
    "the run recorded no final text, so there is nothing to search: not scorable (Mastra: 0, "
    "the empty text does not include it)",
)
_SCORES_ANYWAY = "tracescore scores the recorded calls whatever messages were captured"
DEFAULT_DIFFERS: dict[tuple[str, str], tuple[float | None, str]] = {
    ("tool_error", "trajectoryAccuracy(strict)"): (
        1.0,
        "the thrown charge_card call is not a clean execution, so it is not counted and the "
        "counted calls are exactly the expected sequence (Mastra: 0.25, a positional mismatch)",
    ),
    ("paused", "checks.noToolErrors()"): (
        1.0,
        "refund_order waits for an approval: it did not fail (Mastra counts state 'call' as an "
        "error)",
    ),
    ("error_end", "toolCallAccuracy(get_weather,strict)"): (
        1.0,
        "the thrown charge_card is not counted, so get_weather is the one counted call",
    ),
    **{(r, "checks.includes(sunny)"): _NO_TEXT for r in ("paused", "error_end", "tools_only")},
    ("no_output", "checks.includes(sunny)"): _NO_TEXT,
    ("no_output", "toolCallAccuracy(expectedTool=get_weather)"): (0.0, _SCORES_ANYWAY),
    ("no_output", "toolCallAccuracy(get_weather,strict)"): (0.0, _SCORES_ANYWAY),
    ("no_output", "toolCallAccuracy(order=[get_weather,lookup_order])"): (0.0, _SCORES_ANYWAY),
    ("no_input", "toolCallAccuracy(expectedTool=get_weather)"): (1.0, _SCORES_ANYWAY),
    ("no_input", "toolCallAccuracy(get_weather,strict)"): (1.0, _SCORES_ANYWAY),
    ("no_input", "toolCallAccuracy(order=[get_weather,lookup_order])"): (0.0, _SCORES_ANYWAY),
}


# A tool invocation's state in Mastra and the status of the same call in a trajectory: `call`
# is a call that was requested and never ran (a run stopped for an approval ends so).
_STATUS: dict[str, ToolStatus] = {"result": "ok", "output-error": "error", "call": "paused"}


def _mastra_runs() -> dict[str, Trajectory]:
    texts = json.loads((ORACLES / "mastra_runs_text.json").read_text(encoding="utf-8"))
    runs: dict[str, Trajectory] = {}
    for line in _lines("mastra_scores.jsonl"):
        if "trajectory" in line:
            steps = [
                call(name, args, _STATUS[state])
                for (_kind, name, args, _success), state in zip(
                    line["trajectory"], line["states"], strict=True
                )
            ]
            text = texts[line["run"]]
            runs[line["run"]] = run(*steps, input=text["input"], output=text["output"])
    return runs


MASTRA_RUNS = _mastra_runs()
MASTRA_CASES = [
    pytest.param(line, id=f"{line['run']}: {line['scorer']}")
    for line in _lines("mastra_scores.jsonl")
    if "scorer" in line
]
_STOPPED_EARLY = {"paused", "error_end", "tools_only", "no_output", "no_input"}


def test_the_mastra_oracle_was_recorded_with_mastra_1_10_2() -> None:
    assert _lines("mastra_scores.jsonl")[0]["versions"]["evals"] == "1.10.2"
    assert len(MASTRA_CASES) == 104
    assert set(MASTRA_RUNS) == {"good", "tool_error", "bad"} | _STOPPED_EARLY


def test_the_recorded_mastra_oracle_is_what_mastra_gives_today(mastra_oracle_output: str) -> None:
    """The committed oracle is exactly what `@mastra/evals` 1.10.2 prints now (node may differ)."""
    live = [json.loads(line) for line in mastra_oracle_output.splitlines() if line.strip()]
    recorded = _lines("mastra_scores.jsonl")
    for versions in (live[0]["versions"], recorded[0]["versions"]):
        versions.pop("node")
    assert live == recorded


def test_mastra_throws_only_without_a_user_message_or_any_assistant_message() -> None:
    """A run that stopped early (paused, errored, no text) is scored: Mastra's run output is
    every assistant message, tool invocations included; only an empty side throws."""
    thrown = {line["run"] for line in _lines("mastra_scores.jsonl") if "error" in line}
    assert thrown == {"no_output", "no_input"}


@pytest.mark.parametrize("line", MASTRA_CASES)
def test_compat_mastra_reproduces_mastra(line: dict[str, Any]) -> None:
    config = {**MASTRA_CONFIGS[line["scorer"]], "compat": "mastra"}
    result = score(config, MASTRA_RUNS[line["run"]])
    if "error" in line:
        assert result.value is None
        assert result.error is not None
        assert line["error"].removeprefix("Scorer Run Failed: ").lower() in result.error
        return
    assert result.error is None
    assert result.value == line["score"]
    d, want = result.details, line["detail"]
    if "actualTools" in want and "actual_tools" in d:
        assert d["actual_tools"] == want["actualTools"]
    if "correctToolCalled" in want:
        assert d["correct_tool_called"] == want["correctToolCalled"]
        assert d["correct_order_called"] == want["correctOrderCalled"]
    if "passed" in want:
        assert result.passed is want["passed"]
    for theirs, ours in (("count", "count"), ("actualCount", "actual_count")):
        if theirs in want:
            assert d[ours] == want[theirs]
    if "errorCount" in want:
        assert d["error_count"] == want["errorCount"]
    if "comparison" in want:
        c = want["comparison"]
        assert d["actual_step_names"] == want["actualStepNames"]
        assert d["expected_step_names"] == want["expectedStepNames"]
        assert (d["score"], d["missing"], d["extra"], d["out_of_order"]) == (
            c["score"],
            c["missingSteps"],
            c["extraSteps"],
            c["outOfOrderSteps"],
        )
    if "reason" in line:
        assert result.explanation == line["reason"]
        assert d["accuracy"]["score"] == want["accuracy"]
        assert d["efficiency"]["score"] == want["efficiency"]
        assert d["blacklist"]["score"] == want["blacklist"]["score"]
        assert d["blacklist"]["violated_tools"] == want["blacklist"]["violated"]
        assert d["tool_failures"]["score"] == want["toolFailures"]


@pytest.mark.parametrize("line", MASTRA_CASES)
def test_default_semantics_on_the_mastra_runs(line: dict[str, Any]) -> None:
    result = score(MASTRA_CONFIGS[line["scorer"]], MASTRA_RUNS[line["run"]])
    expected, why = DEFAULT_DIFFERS.get((line["run"], line["scorer"]), (line.get("score"), ""))
    assert result.value == expected, why


def test_default_relaxed_accuracy_reports_no_extra_step_for_an_errored_call() -> None:
    # Mastra lists the thrown charge_card as an extra step; by default it is not counted, and
    # the explanation says so instead.
    result = score(MASTRA_CONFIGS["trajectoryAccuracy(relaxed)"], MASTRA_RUNS["tool_error"])
    assert result.details["extra"] == []
    assert "not counted (calls: clean): charge_card (error)" in result.explanation


def test_default_accuracy_calls_a_data_mismatch_an_argument_mismatch() -> None:
    # Mastra files get_weather(Oslo) against an expected get_weather(Paris) as "out of order".
    result = score(MASTRA_CONFIGS["trajectoryAccuracy(relaxed)"], MASTRA_RUNS["bad"])
    assert result.details["out_of_order"] == []
    assert result.details["args_mismatch"] == ["get_weather"]
    assert "called with other arguments: get_weather" in result.explanation


# --- Agno ---------------------------------------------------------------------------------

AGNO = _lines("agno_toolcallscorer_cases.jsonl")


def test_the_recorded_agno_oracle_is_what_agno_gives_today() -> None:
    """The committed oracle is exactly what agno's ToolCallScorer answers now (agno is pinned
    by the `frameworks` extra), the runs that stopped early without a text included."""
    assert agno_oracle.lines() == AGNO
    stopped = {c["case"] for c in AGNO if "case" in c and c["content"] is None}
    assert stopped == {
        "paused_no_text",
        "paused_no_text_strict",
        "error_end_no_text",
        "tools_only_no_text",
        "no_text_no_tools",
    }


def _agno_status(error: bool | None, paused: bool) -> ToolStatus:
    if paused:
        return "paused"
    return "error" if error else "ok"


@pytest.mark.parametrize("case", [pytest.param(c, id=c["case"]) for c in AGNO if "case" in c])
def test_tool_calls_reproduces_agno(case: dict[str, Any]) -> None:
    config: dict[str, Any] = {
        "type": "tool_calls",
        "expected_tools": case["expected_tools"],
        "allow_additional": case["allow_additional"],
    }
    if case["arguments"] is not None:
        config["arguments"] = case["arguments"]
    steps = [call(n, args, _agno_status(err, paused)) for n, args, err, paused in case["tools"]]
    result = score(config, run(*steps, output=case["content"]))
    assert result.value == pytest.approx(case["value"], abs=1e-4)
    assert result.passed is case["passed"]
    assert result.details["reason"] == case["reason"]
    if case["reason"]:
        assert case["reason"] in result.explanation


@pytest.mark.parametrize(
    ("config", "message"),
    [
        pytest.param(
            {"expected_tools": "get_weather"},
            "the bare string 'get_weather'",
            id="a bare string is not a list of tool names",
        ),
        pytest.param(
            {"expected_tools": []},
            "needs expected_tools and/or arguments; with neither there is no check",
            id="no expected tools and no argument specs check nothing",
        ),
        pytest.param(
            {"expected_tools": [], "arguments": {"x": []}},
            "argument specs for 'x' are empty; an empty list checks nothing",
            id="an empty spec list checks nothing",
        ),
    ],
)
def test_tool_calls_refuses_what_agno_refuses(config: dict[str, Any], message: str) -> None:
    agno_errors = [c["constructor_error"] for c in AGNO if "constructor_error" in c]
    assert any(message.split(";")[0].split("'")[0] in e for e in agno_errors)
    with pytest.raises(ValidationError, match=message.replace("(", r"\(")):
        parse_scorer({"type": "tool_calls", **config})


def test_tool_calls_digest_ignores_name_order_and_duplicates_as_agno_does() -> None:
    # Agno's digest hashes the sorted, de-duplicated names (the recorded value proves it);
    # ours is versioned and covers more fields, but is insensitive to the same things.
    (recorded,) = [c["digest"] for c in AGNO if "digest" in c]
    payload = {"expected_tools": ["a", "b"], "arguments": None, "allow_additional": True}
    canonical = json.dumps(payload, sort_keys=True, ensure_ascii=True, separators=(",", ":"))
    assert hashlib.sha256(canonical.encode()).hexdigest() == recorded
    ab = parse_scorer({"type": "tool_calls", "expected_tools": ["a", "b"]}).digest()
    assert parse_scorer({"type": "tool_calls", "expected_tools": ["b", "a", "b"]}).digest() == ab
    assert ab.startswith("scorer-v1:")
