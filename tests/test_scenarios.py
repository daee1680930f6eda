"""Scenarios: selection, sampling and per-run verdicts (per-scenario aggregation: test_summary).

Verdict cases follow Mastra's runEvals tests (reference/scorers.md §3.9, §5.7) where tracescore
keeps their rule, and Agno's TaskResult (§2.6) for pass rate and learning zone.
"""

from __future__ import annotations

from typing import Any

import pytest

from support.scenarios import error, run, scenario, value
from tracescore.config import Config
from tracescore.model import Score, Trajectory
from tracescore.scenario_plan import ScenarioPlan
from tracescore.scenarios import (
    RunResult,
    conclude,
    evaluate_run,
    is_sampled,
    matches,
    run_evaluator,
    score_entries,
    select_scenario,
)

# --- matching ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("match", "trajectory", "expected"),
    [
        ({}, run(), True),
        ({"agent": "support-*"}, run(), True),
        ({"agent": "support-*"}, run(agent="Support-agent"), False),  # case-sensitive glob
        ({"agent": "support-agent"}, run(agent=None), False),
        ({"input": "order"}, run(), True),  # searched, not anchored
        ({"input": "^order"}, run(), False),
        ({"input": "(?i)WHERE"}, run(), True),
        ({"input": "order"}, run(user_input=None), False),
        ({"attributes": {"tier": "gold"}}, run(attributes={"tier": "gold"}), True),
        ({"attributes": {"tier": "gold"}}, run(resource={"tier": "gold"}), True),
        ({"attributes": {"tier": "gold"}}, run(attributes={"tier": "silver"}), False),
        ({"attributes": {"tier": "gold"}}, run(), False),
        ({"attributes": {"retries": 3}}, run(attributes={"retries": 3.0}), True),
        ({"attributes": {"retries": 3}}, run(attributes={"retries": "3"}), False),
        ({"attributes": {"beta": True}}, run(attributes={"beta": 1}), False),  # true is not 1
        ({"attributes": {"beta": 1}}, run(attributes={"beta": True}), False),
        ({"attributes": {"beta": True}}, run(resource={"beta": True}), True),
        # every condition given must hold
        ({"agent": "support-*", "input": "refund"}, run(), False),
        ({"agent": "support-*", "input": "order", "attributes": {"a": "b"}}, run(), False),
    ],
)
def test_match_conditions_all_hold(
    match: dict[str, Any], trajectory: Trajectory, expected: bool
) -> None:
    s = scenario(match=match, gates=[{"type": "no_tool_errors"}])
    assert matches(s.match, trajectory) is expected


def test_the_first_matching_scenario_scores_the_run() -> None:
    config = Config.model_validate(
        {
            "scenarios": [
                {
                    "name": "refunds",
                    "match": {"input": "refund"},
                    "gates": [{"type": "no_tool_errors"}],
                },
                {
                    "name": "support",
                    "match": {"agent": "support-*"},
                    "gates": [{"type": "no_tool_errors"}],
                },
                {"name": "all", "gates": [{"type": "no_tool_errors"}]},
            ]
        }
    )
    assert select_scenario(config, run(user_input="a refund please")).name == "refunds"  # type: ignore[union-attr]
    assert select_scenario(config, run()).name == "support"  # type: ignore[union-attr]
    assert select_scenario(config, run(agent="other")).name == "all"  # type: ignore[union-attr]
    assert select_scenario(Config(), run()) is None


def test_a_run_no_scenario_matches_has_no_scores_and_no_verdict() -> None:
    config = Config.model_validate(
        {
            "scenarios": [
                {"name": "x", "match": {"agent": "other"}, "gates": [{"type": "no_tool_errors"}]}
            ]
        }
    )
    result = evaluate_run(config, run(("lookup_order", "ok")))
    assert result == RunResult(trajectory=result.trajectory, scenario=None)


# --- sampling ------------------------------------------------------------------------------


def _ids(n: int) -> list[str]:
    # Sequential ids on purpose: sampling must not rely on ids being random.
    return [f"{i:032x}" for i in range(1, n + 1)]


def test_sampling_is_decided_by_trace_id_alone() -> None:
    ids = _ids(2000)
    first = [is_sampled(t, 0.3) for t in ids]
    assert first == [is_sampled(t, 0.3) for t in ids]
    assert [is_sampled(t.upper(), 0.3) for t in ids] == first  # hex case does not matter


@pytest.mark.parametrize("rate", [0.1, 0.3, 0.5, 0.9])
def test_sampling_keeps_about_the_rate_even_for_sequential_ids(rate: float) -> None:
    kept = sum(is_sampled(t, rate) for t in _ids(10_000)) / 10_000
    assert abs(kept - rate) < 0.02


def test_sampling_uses_the_whole_id_not_only_its_low_bits() -> None:
    # Ids that differ only in their first half (the low 64 bits, which OTel's ratio sampler
    # reads, are all equal) must still sample at about the rate, not all or nothing.
    ids = [f"{i:016x}{'0' * 15}1" for i in range(1, 5001)]
    kept = sum(is_sampled(t, 0.5) for t in ids) / len(ids)
    assert abs(kept - 0.5) < 0.03


def test_a_higher_rate_keeps_every_run_a_lower_rate_kept() -> None:
    ids = _ids(2000)
    low = {t for t in ids if is_sampled(t, 0.2)}
    high = {t for t in ids if is_sampled(t, 0.6)}
    assert low <= high


@pytest.mark.parametrize(("rate", "expected"), [(0.0, False), (1.0, True)])
def test_sample_zero_and_one_are_exact(rate: float, expected: bool) -> None:
    assert all(is_sampled(t, rate) is expected for t in _ids(500))


def test_a_run_sampled_out_names_its_scenario_but_has_no_scores() -> None:
    config = Config.model_validate(
        {"scenarios": [{"name": "x", "sample": 0.0, "gates": [{"type": "no_tool_errors"}]}]}
    )
    result = evaluate_run(config, run())
    assert (result.scenario, result.sampled, result.scores, result.verdict) == (
        "x",
        False,
        (),
        None,
    )
    assert result.digest == config.scenarios[0].digest


# --- per-run verdicts ----------------------------------------------------------------------

GATED = scenario(
    gates=[{"type": "called_tool", "name": "g", "tool": "lookup_order"}],
    scorers=[
        {"type": "no_tool_errors", "name": "t", "threshold": 0.7},
        {"type": "used_no_tools", "name": "plain"},
    ],
)


@pytest.mark.parametrize(
    ("gate", "thresholded", "verdict", "skipped"),
    [
        ((1.0,), (1.0,), "passed", ()),
        ((0.0,), (1.0,), "failed", ()),  # a failed gate fails the run
        ((1.0,), (0.3,), "scored", ()),  # a missed threshold marks it scored
        ((0.0,), (0.3,), "failed", ()),  # failed wins over scored
        ((1.0,), (0.7,), "passed", ()),  # thresholds are inclusive
        ("error", (1.0,), "failed", ()),  # a gate whose scorer failed does not pass
        ((1.0,), "error", "scored", ()),  # nor is a failed thresholded scorer certified
        ((None,), (1.0,), "passed", ("g",)),  # a not-scorable gate is skipped and named
        ((None,), (None,), None, ("g", "t")),  # nothing produced a result: no verdict
        ((None,), (0.3,), "scored", ("g",)),
        ((1.0, False), (1.0,), "failed", ()),  # the scorer's own notion of passing counts
        ("missing", (1.0,), "passed", ("g",)),  # an entry that was not run is named too
    ],
)
def test_run_verdict(
    gate: Any, thresholded: Any, verdict: str | None, skipped: tuple[str, ...]
) -> None:
    scores: dict[str, Score] = {"plain": value(GATED, "plain", 0.0)}
    for name, spec in (("g", gate), ("t", thresholded)):
        if spec == "error":
            scores[name] = error(GATED, name)
        elif spec != "missing":
            scores[name] = value(GATED, name, *spec)
    result = conclude(GATED, run(), scores)
    assert result.verdict == verdict
    assert result.skipped == skipped
    assert result.gates == frozenset({"g"})
    assert result.digest == GATED.digest


def test_a_scenario_without_gates_or_thresholds_has_no_verdict() -> None:
    s = scenario(scorers=[{"type": "no_tool_errors"}, {"type": "used_no_tools"}])
    result = evaluate_run(Config(scenarios=(s,)), run(("lookup_order", "error")))
    assert result.verdict is None
    assert [(x.name, x.value) for x in result.scores] == [
        ("no_tool_errors", 0.0),
        ("used_no_tools", 0.0),
    ]


def test_scores_come_in_config_order_gates_first() -> None:
    s = scenario(
        scorers=[{"type": "used_no_tools"}, {"type": "max_tool_calls", "max": 1}],
        gates=[{"type": "no_tool_errors"}],
    )
    result = evaluate_run(Config(scenarios=(s,)), run(("lookup_order", "ok")))
    assert [x.name for x in result.scores] == ["no_tool_errors", "used_no_tools", "max_tool_calls"]


def test_evaluate_run_scores_a_real_run_end_to_end() -> None:
    s = scenario(
        gates=[
            {
                "type": "tool_order",
                "name": "lookup_first",
                "tools": ["lookup_order", "process_refund"],
            },
        ],
        scorers=[{"type": "no_tool_errors", "threshold": 1}],
    )
    config = Config(scenarios=(s,))
    good = evaluate_run(config, run(("lookup_order", "ok"), ("process_refund", "ok")))
    retried = evaluate_run(
        config, run(("lookup_order", "ok"), ("process_refund", "error"), ("process_refund", "ok"))
    )
    bad = evaluate_run(config, run(("process_refund", "ok")))
    assert (good.verdict, retried.verdict, bad.verdict) == ("passed", "scored", "failed")


def test_score_entries_can_leave_judge_scorers_for_later() -> None:
    s = scenario(gates=[{"type": "no_tool_errors"}], scorers=[{"type": "used_no_tools"}])
    assert set(score_entries(s, run(), deterministic_only=True)) == {
        "no_tool_errors",
        "used_no_tools",
    }


def test_a_plan_runs_every_entry_in_order_and_concludes() -> None:
    planned = scenario(
        gates=[
            {"type": "called_tool", "name": "g1", "tool": "lookup_order"},
            {"type": "no_tool_errors", "name": "g2"},
        ],
        scorers=[
            {"type": "no_tool_errors", "name": "low", "threshold": 0.7},
            {"type": "used_no_tools", "name": "high", "threshold": {"max": 0.5}},
            {"type": "max_tool_calls", "name": "both", "max": 3, "threshold": {"min": 0, "max": 1}},
            {"type": "used_no_tools", "name": "free"},
        ],
    )
    result = evaluate_run(Config(scenarios=(planned,)), run(("lookup_order", "ok")))
    assert [s.name for s in result.scores] == ["g1", "g2", "low", "high", "both", "free"]
    assert result.verdict == "passed"


@pytest.mark.parametrize(
    "calls",
    [(), (("lookup_order", "ok"),), (("lookup_order", "error"),), (("a", "ok"),) * 5],
)
def test_a_plan_whose_entries_all_score_concludes_as_from_its_scores_by_name(
    calls: tuple[tuple[str, str], ...],
) -> None:
    # Every entry scores, so the plan reads back only the deciding entries' scores: the same
    # result as concluding from the scores by name. The output check is unscorable (the run
    # recorded no output): skipped, as a gate.
    planned = ScenarioPlan(
        scenario(
            gates=[
                {"type": "called_tool", "name": "g1", "tool": "lookup_order"},
                {"type": "output_includes", "name": "g2", "text": "done"},
            ],
            scorers=[
                {"type": "no_tool_errors", "name": "low", "threshold": 0.7},
                {"type": "max_tool_calls", "name": "both", "max": 3, "threshold": 1},
                {"type": "used_no_tools", "name": "free"},
            ],
        )
    )
    trajectory = run(*calls)
    by_name = planned.conclude(trajectory, planned.score(trajectory, False))
    assert planned.run(trajectory, False) == by_name
    assert planned.run(trajectory, True) == by_name
    assert by_name.skipped == ("g2",)


@pytest.mark.parametrize(
    "matches_on",
    [{"agent": "support-*"}, {"input": "refund"}, {"attributes": {"tier": "gold"}}],
)
def test_a_bound_evaluator_gives_what_evaluate_run_gives(matches_on: dict[str, Any]) -> None:
    # `serve` evaluates through `run_evaluator`: selected by agent name alone, or (an input or
    # attribute condition) scenario by scenario; sampled out, unmatched, or scored.
    config = Config.model_validate(
        {
            "scenarios": [
                {"name": "first", "match": matches_on, "gates": [{"type": "no_tool_errors"}]},
                {
                    "name": "half",
                    "match": {"agent": "other"},
                    "sample": 0.5,
                    "scorers": [{"type": "used_no_tools"}],
                },
            ]
        }
    )
    runs = [
        run(),
        run(("lookup_order", "error"), user_input="a refund please", attributes={"tier": "gold"}),
        run(agent="nobody"),
        *(run(agent="other", trace_id=trace_id) for trace_id in _ids(20)),
    ]
    for deterministic_only in (False, True):
        evaluate = run_evaluator(config, deterministic_only=deterministic_only)
        for trajectory in runs * 2:  # the second time, the agent's plan is remembered
            assert evaluate(trajectory) == evaluate_run(
                config, trajectory, deterministic_only=deterministic_only
            )
