"""`bound_score()`, which scenario plans score with, against `score` and `evaluate` + `finish`.

The checks' bound scorers read their config once, and decide once what their threshold makes
of 1 and 0 (`binary_constants`); the matching scorers' read theirs once too (`assessor`,
`bound_finish`). These tests give every such scorer many runs (clean, errored, paused,
sub-agent calls, arguments, a result that cannot be read), with and without thresholds (one
that passes 0 too), and compare scores field by field.
"""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from scorers._build import agent, call, run
from support.results import UnreadableResult
from tracescore.config.scorers import parse_scorer
from tracescore.model import Step, Trajectory
from tracescore.model.deferred import Deferred
from tracescore.scorers.base import select_calls

CONFIGS: list[dict[str, Any]] = [
    {"type": "called_tool", "tool": "lookup"},
    {"type": "called_tool", "tool": "lookup", "times": 2, "threshold": {"max": 0.5}},
    {"type": "called_tool", "tool": "lookup", "compat": "mastra", "name": "m"},
    {"type": "tool_order", "tools": ["lookup", "refund"]},
    {"type": "did_not_call", "tool": "delete"},
    {"type": "did_not_call", "tool": "delete", "threshold": {"min": 0.0}},  # 0 passes too
    {"type": "used_no_tools", "threshold": 0.5},
    {"type": "max_tool_calls", "max": 2, "include_subagents": True},
    {"type": "max_tool_calls", "max": 0, "calls": "clean"},
    {"type": "no_tool_errors"},
    {"type": "no_tool_errors", "threshold": 1.0, "include_subagents": True},
    {"type": "no_tool_errors", "compat": "mastra"},
    {"type": "output_includes", "text": "done"},
    {
        "type": "tool_calls",
        "expected_tools": ["lookup", "refund"],
        "arguments": {"lookup": [{"id": 1}, {"id": 2}], "refund": {"id": 1}},
        "allow_additional": False,
    },
    {
        "type": "tool_calls",
        "expected_tools": ["lookup"],
        "include_subagents": True,
        "threshold": 0.5,
    },
    {
        "type": "trajectory_accuracy",
        "steps": [{"tool": "lookup"}, {"tool": "refund", "args": {"id": 1}}],
    },
    {
        "type": "trajectory_accuracy",
        "steps": [{"tool": "lookup"}, {"tool": "delete"}],
        "ordering": "strict",
        "allow_repeated_steps": False,
    },
    {"type": "trajectory_accuracy", "steps": [{"tool": "refund"}], "ordering": "unordered"},
    {"type": "trajectory_accuracy", "steps": [], "compat": "mastra", "threshold": 1.0},
    {"type": "tool_call_accuracy", "expected_tool": "lookup"},
    {
        "type": "tool_call_accuracy",
        "expected_tool_order": ["lookup", "refund"],
        "strict_mode": True,
        "threshold": {"max": 0.5},
    },
    {"type": "tool_call_accuracy", "expected_tool": "lookup", "compat": "mastra"},
]


def _runs() -> list[Trajectory]:
    pool: list[Step] = [
        call("lookup"),
        call("refund"),
        call("delete", status="error"),
        call("lookup", status="paused"),
        call("lookup", result={"error": "boom"}),
        call("refund", result=UnreadableResult()),
        agent("helper", call("lookup"), call("delete", status="error")),
        call("lookup", {"id": 1}),
        call("refund", {"id": 1}, status="error"),
    ]
    runs = [run()]
    for size in (1, 2, 3):
        runs += [run(*steps) for steps in itertools.permutations(pool, size)]
    return runs


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: str(sorted(c.items())))
def test_bound_score_gives_the_scores_of_score(config: dict[str, Any]) -> None:
    scorer = parse_scorer(config)
    bound = scorer.bound_score()
    runs = _runs()
    errors = 0
    for trajectory in runs:
        expected = scorer.score(trajectory)
        assert bound(trajectory) == expected
        errors += expected.error is not None
        if expected.error is None:  # the Outcome path gives the same score
            assert scorer.finish(scorer.evaluate(trajectory), scorer.digest()) == expected
    if config.get("compat") == "mastra" and config["type"] == "no_tool_errors":
        assert errors  # a scorer that fails is among the runs


def test_select_calls_answers_in_any_order_of_asking() -> None:
    # Its memo derives some answers from others' slots: every order of the four questions
    # must give the calls the trajectory itself lists.
    asks = [("attempted", False), ("clean", False), ("attempted", True), ("clean", True)]
    for trajectory in _runs():
        want = {
            (policy, sub): tuple(
                c
                for c in trajectory.tool_calls(include_subagents=sub)
                if policy == "attempted" or c.status == "ok"
            )
            for policy, sub in asks
        }
        for order in itertools.permutations(asks):
            select_calls(run(), "attempted")  # another run first: the memo starts afresh
            for policy, sub in order:
                assert select_calls(trajectory, policy, sub) == want[(policy, sub)]  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "config",
    [
        {"type": "no_tool_errors"},
        {"type": "tool_calls", "expected_tools": ["lookup"], "arguments": {"lookup": {"id": 1}}},
        {"type": "trajectory_accuracy", "steps": [{"tool": "lookup"}, {"tool": "refund"}]},
        {"type": "tool_call_accuracy", "expected_tool_order": ["lookup", "refund"]},
    ],
    ids=lambda c: str(c["type"]),
)
def test_bound_scores_build_their_details_when_first_read(config: dict[str, Any]) -> None:
    # `serve` reads no score's details: these scorers' bound forms leave them to be built.
    scorer = parse_scorer(config)
    trajectory = run(call("lookup", {"id": 1}), call("delete", status="error"), call("refund"))
    score = scorer.bound_score()(trajectory)
    assert type(score._stored_details) is Deferred  # type: ignore[attr-defined]
    details = score.details
    assert type(details) is dict
    assert score.details is details  # built once, then stored
    assert details == scorer.score(trajectory).details
    assert details == scorer.evaluate(trajectory).details
