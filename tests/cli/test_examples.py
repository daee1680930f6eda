"""The two bundled examples, run through `tracescore score`, with every score asserted.

The traces were produced by running the agents (examples/*/generate_traces.py); a regeneration
test checks that running them again gives the same trajectories, ids and times aside.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tracescore.cli import main
from tracescore.otlp import read_trace_files
from tracescore.trajectory import build_trajectories

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

# user input -> (scenario, verdict, [(score name, value, passed), ...])
Expected = dict[str, tuple[str, str, list[tuple[str, float, bool]]]]

SUPPORT: Expected = {
    "Where is my order 1001?": (
        "order-status",
        "passed",
        [
            ("looked_up", 1.0, True),
            ("no_escalation", 1.0, True),
            ("max_tool_calls", 1.0, True),
            ("tool_call_accuracy", 1.0, True),
        ],
    ),
    "I'd like a refund for order 1002, it arrived broken.": (
        "refunds",
        "passed",
        [
            ("lookup_before_refund", 1.0, True),
            ("no_escalation", 1.0, True),
            ("max_tool_calls", 1.0, True),
            ("trajectory_accuracy", 1.0, True),
            ("no_tool_errors", 1.0, True),
        ],
    ),
    "Please refund order 1003, I changed my mind.": (
        "refunds",
        "failed",
        [
            ("lookup_before_refund", 0.0, False),
            ("no_escalation", 1.0, True),
            ("max_tool_calls", 1.0, True),
            ("trajectory_accuracy", 0.5, False),
            ("no_tool_errors", 1.0, True),
        ],
    ),
    "Can I get a refund on order 1004? Wrong size.": (
        "refunds",
        "scored",
        [
            ("lookup_before_refund", 1.0, True),
            ("no_escalation", 1.0, True),
            ("max_tool_calls", 1.0, True),  # 3 calls, the errored one included
            ("trajectory_accuracy", 1.0, True),  # the clean retry satisfies the refund step
            ("no_tool_errors", 0.0, False),
        ],
    ),
    "What's the capital of France?": (
        "everything-else",
        "passed",
        [("no_escalation", 1.0, True), ("max_tool_calls", 1.0, True), ("used_no_tools", 1.0, True)],
    ),
    "Where is my order 1005? It's taking a while.": (
        "order-status",
        "failed",
        [
            ("looked_up", 0.0, False),
            ("no_escalation", 0.0, False),
            ("max_tool_calls", 1.0, True),
            ("tool_call_accuracy", 0.0, False),
        ],
    ),
    "I want to talk to a human about a billing dispute.": (
        "human-requested",
        "passed",
        [("escalated", 1.0, True), ("max_tool_calls", 1.0, True)],
    ),
}

SUPPORT_SCENARIOS = [
    ("refunds", 3, 3, 1, 1 / 3, True, "failed"),
    ("human-requested", 1, 1, 1, 1.0, False, "passed"),
    ("order-status", 2, 2, 1, 0.5, True, "failed"),
    ("everything-else", 1, 1, 1, 1.0, False, "passed"),
]

DISPATCH: Expected = {
    "The primary carrier is operating normally. Look up today's North cutoff and say whether "
    "a parcel arriving at 16:45 ships today.": (
        "same-day-dispatch",
        "passed",
        [("grounded", 1.0, True), ("no_tool_errors", 1.0, True)],
    ),
    # grounded, so every check is satisfied (value 1), but the decoy was executed cleanly
    "A routing rule confirms the primary carrier is operating. Ground the South cutoff and "
    "say whether a parcel arriving at 16:40 ships today.": (
        "same-day-dispatch",
        "failed",
        [("grounded", 1.0, False), ("no_tool_errors", 1.0, True)],
    ),
    "Can a parcel arriving at 16:15 in the North still ship today?": (
        "same-day-dispatch",
        "failed",
        [("grounded", 0.0, False), ("no_tool_errors", 1.0, True)],
    ),
    # the rejected call is neither a success nor "additional"; the clean retry grounds it
    "Ground the North cutoff: can a parcel arriving at 17:10 ship today?": (
        "same-day-dispatch",
        "passed",
        [("grounded", 1.0, True), ("no_tool_errors", 0.0, False)],
    ),
    "Quote the North priority cutoff effective 2026-07-20.": (
        "quotes",
        "passed",
        [("quoted_record", 1.0, True)],
    ),
    "Quote the North priority cutoff; the audit checksum says the record is the one effective "
    "2026-07-20.": (
        "quotes",
        "scored",
        [("quoted_record", 0.5, False)],
    ),
}

DISPATCH_SCENARIOS = [
    ("quotes", 2, 2, 1, 0.5, True, "scored"),  # the mean, 0.75, misses the 1.0 threshold
    ("same-day-dispatch", 4, 4, 2, 0.5, True, "failed"),
]


def score_example(
    name: str, capsys: pytest.CaptureFixture[str]
) -> tuple[int, dict[str, dict[str, Any]], list[dict[str, Any]]]:
    traces = str(EXAMPLES / name / "traces.jsonl")
    code = main(
        ["score", "--output", "json", "--config", str(EXAMPLES / name / "tracescore.yaml"), traces]
    )
    captured = capsys.readouterr()
    assert captured.err == ""  # no rejected spans, no builder warnings
    lines = [json.loads(line) for line in captured.out.splitlines()]
    inputs = {
        t.trace_id: t.input
        for t in build_trajectories(read_trace_files([traces]).spans).trajectories
    }
    runs = {str(inputs[line["trace_id"]]): line for line in lines if line["kind"] == "run"}
    return code, runs, [line for line in lines if line["kind"] == "scenario"]


@pytest.mark.parametrize(
    ("example", "expected", "scenarios"),
    [
        ("support-agent", SUPPORT, SUPPORT_SCENARIOS),
        ("shipping-dispatch", DISPATCH, DISPATCH_SCENARIOS),
    ],
)
def test_every_score_of_the_example(
    example: str,
    expected: Expected,
    scenarios: list[tuple[Any, ...]],
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, runs, summaries = score_example(example, capsys)
    assert code == 1  # each example has runs that fail a gate, on purpose
    assert set(runs) == set(expected)
    for user_input, (scenario, verdict, scores) in expected.items():
        line = runs[user_input]
        got = [(s["name"], s["value"], s["passed"]) for s in line["scores"]]
        assert (line["scenario"], line["verdict"], got) == (scenario, verdict, scores), user_input
        assert all(s["error"] is None and s["explanation"] for s in line["scores"])
    got_summaries = [
        (
            s["name"],
            s["n_runs"],
            s["n_scored"],
            s["n_passed"],
            pytest.approx(s["pass_rate"]),
            s["in_learning_zone"],
            s["verdict"],
        )
        for s in summaries
    ]
    assert got_summaries == scenarios


def test_the_explanations_say_what_went_wrong(capsys: pytest.CaptureFixture[str]) -> None:
    _, support, _ = score_example("support-agent", capsys)
    no_lookup = support["Please refund order 1003, I changed my mind."]["scores"]
    assert "lookup_order" in no_lookup[0]["explanation"]
    retried = support["Can I get a refund on order 1004? Wrong size."]
    assert [c["status"] for c in retried["tool_calls"]] == ["ok", "error", "ok"]
    assert "process_refund" in retried["scores"][4]["explanation"]
    _, dispatch, _ = score_example("shipping-dispatch", capsys)
    padded = next(run for text, run in dispatch.items() if text.startswith("A routing rule"))
    assert "lookup_backup_carrier" in padded["scores"][0]["explanation"]


def _without_ids_and_times(value: Any) -> Any:
    if isinstance(value, dict):
        return {
            k: _without_ids_and_times(v)
            for k, v in value.items()
            if k not in ("trace_id", "span_id", "start_ns", "end_ns", "duration_ms")
        }
    if isinstance(value, list):
        return [_without_ids_and_times(v) for v in value]
    return value


def _trajectories(path: Path) -> list[Any]:
    built = build_trajectories(read_trace_files([str(path)]).spans)
    return sorted(
        (_without_ids_and_times(t.to_dict()) for t in built.trajectories),
        key=lambda t: json.dumps(t, sort_keys=True),
    )


@pytest.mark.slow
@pytest.mark.parametrize("example", ["support-agent", "shipping-dispatch"])
def test_regenerating_the_traces_gives_the_same_trajectories(example: str, tmp_path: Path) -> None:
    out = tmp_path / "traces.jsonl"
    subprocess.run(
        [sys.executable, str(EXAMPLES / example / "generate_traces.py"), "--out", str(out)],
        check=True,
        capture_output=True,
        timeout=120,
    )
    committed = _trajectories(EXAMPLES / example / "traces.jsonl")
    assert committed  # the committed file is not empty
    assert _trajectories(out) == committed
