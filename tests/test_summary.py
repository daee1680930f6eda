"""A scenario over all its runs: verdict, pass rate, learning zone and means.

Verdict cases follow Mastra's runEvals tests (reference/scorers.md §3.9, §5.7) where tracescore
keeps their rule, and Agno's TaskResult (§2.6) for pass rate and learning zone.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import pytest

from support.scenarios import error, run, scenario, value
from tracescore.config import Config, Scenario
from tracescore.scenarios import RunResult, conclude
from tracescore.summary import summarize


def results_for(s: Scenario, per_run: Sequence[dict[str, Any]]) -> list[RunResult]:
    """Conclude one run per dict of score name -> value (or 'error', or (value, passed))."""
    out = []
    for index, spec in enumerate(per_run):
        scores = {}
        for name, v in spec.items():
            if v == "error":
                scores[name] = error(s, name)
            elif isinstance(v, tuple):
                scores[name] = value(s, name, *v)
            else:
                scores[name] = value(s, name, v)
        out.append(conclude(s, run(trace_id=f"{index + 1:032x}"), scores))
    return out


def summary_of(s: Scenario, per_run: Sequence[dict[str, Any]]) -> Any:
    (only,) = summarize(Config(scenarios=(s,)), results_for(s, per_run))
    return only


GATE = [{"type": "no_tool_errors", "name": "gate"}]


@pytest.mark.parametrize(
    ("gates", "scorers", "per_run", "verdict"),
    [
        # runEvals "gates and verdict" cases, one item each unless noted
        (GATE, [], [{"gate": 1.0}], "passed"),
        (GATE, [], [{"gate": 0.5}], "failed"),
        (
            GATE,
            [{"type": "used_no_tools", "name": "q", "threshold": 0.7}],
            [{"gate": 1.0, "q": 0.3}],
            "scored",
        ),
        ([], [{"type": "used_no_tools", "name": "q"}], [{"q": 0.3}], None),
        ([], [{"type": "used_no_tools", "name": "q", "threshold": 0.7}], [{"q": 0.9}], "passed"),
        (GATE, [], [{"gate": "error"}], "failed"),  # a throwing gate fails
        (GATE, [], [{"gate": 1.0}, {"gate": 0.0}, {"gate": 1.0}], "failed"),
        (
            [],
            [{"type": "used_no_tools", "name": "q", "threshold": {"max": 0.3}}],
            [{"q": 0.9}],
            "scored",
        ),
        (
            [],
            [{"type": "used_no_tools", "name": "q", "threshold": {"max": 0.3}}],
            [{"q": 0.1}],
            "passed",
        ),
        (
            [],
            [{"type": "used_no_tools", "name": "q", "threshold": {"min": 0.3, "max": 0.7}}],
            [{"q": 0.5}],
            "passed",
        ),
        (
            [],
            [{"type": "used_no_tools", "name": "q", "threshold": {"min": 0.3, "max": 0.7}}],
            [{"q": 0.9}],
            "scored",
        ),
        (
            GATE,
            [{"type": "used_no_tools", "name": "q", "threshold": 0.7}],
            [{"gate": 0.0, "q": 0.9}],
            "failed",
        ),
        # thresholds judge the mean over runs: 0.7, 0.8, 0.9 average exactly 0.8
        (
            [],
            [{"type": "used_no_tools", "name": "q", "threshold": 0.8}],
            [{"q": 0.7}, {"q": 0.8}, {"q": 0.9}],
            "passed",
        ),
        (
            [],
            [{"type": "used_no_tools", "name": "q", "threshold": 0.8}],
            [{"q": 0.6}, {"q": 0.8}, {"q": 0.9}],
            "scored",
        ),
        # a scorer that failed on any run is never certified
        (
            [],
            [{"type": "used_no_tools", "name": "q", "threshold": 0.5}],
            [{"q": 1.0}, {"q": "error"}],
            "scored",
        ),
        # not-scorable runs are skipped, not counted as 0
        (GATE, [], [{"gate": 1.0}, {"gate": None}], "passed"),
        (GATE, [], [{"gate": None}], None),
    ],
)
def test_scenario_verdict(
    gates: list[dict[str, Any]],
    scorers: list[dict[str, Any]],
    per_run: list[dict[str, Any]],
    verdict: str | None,
) -> None:
    s = scenario(gates=gates, scorers=scorers)
    assert summary_of(s, per_run).verdict == verdict


def test_pass_rate_and_learning_zone_count_only_runs_with_a_verdict() -> None:
    s = scenario(gates=GATE)
    summary = summary_of(s, [{"gate": 1.0}, {"gate": 0.0}, {"gate": None}, {"gate": 1.0}])
    assert (summary.n_runs, summary.n_scored, summary.n_passed) == (4, 3, 2)
    assert summary.pass_rate == pytest.approx(2 / 3)
    assert summary.in_learning_zone is True


@pytest.mark.parametrize(
    ("gate_values", "zone"),
    [([1.0, 1.0], False), ([0.0, 0.0], False), ([1.0, 0.0], True), ([1.0], False)],
)
def test_learning_zone_needs_some_passes_and_some_failures(
    gate_values: list[float], zone: bool
) -> None:
    summary = summary_of(scenario(gates=GATE), [{"gate": v} for v in gate_values])
    assert summary.in_learning_zone is zone


def test_a_scored_run_is_not_a_passed_run() -> None:
    s = scenario(scorers=[{"type": "used_no_tools", "name": "q", "threshold": 0.8}])
    summary = summary_of(s, [{"q": 1.0}, {"q": 0.6}, {"q": 1.0}])
    assert (summary.n_scored, summary.n_passed, summary.verdict) == (3, 2, "passed")  # mean 0.87


def test_means_skip_runs_without_a_value() -> None:
    s = scenario(gates=GATE, scorers=[{"type": "used_no_tools", "name": "q"}])
    summary = summary_of(
        s, [{"gate": 1.0, "q": 0.5}, {"gate": None, "q": "error"}, {"gate": 0.0, "q": 1.0}]
    )
    assert summary.means == {"gate": 0.5, "q": 0.75}


def test_a_scenario_no_run_matched_is_still_summarized() -> None:
    s = scenario(gates=GATE)
    summary = summary_of(s, [])
    assert (summary.n_runs, summary.n_scored, summary.pass_rate, summary.verdict) == (
        0,
        0,
        None,
        None,
    )
    assert summary.means == {"gate": None}
    assert summary.to_dict() == {
        "kind": "scenario",
        "name": "s",
        "n_runs": 0,
        "n_scored": 0,
        "n_passed": 0,
        "pass_rate": None,
        "in_learning_zone": False,
        "verdict": None,
        "n_errors": 0,
    }


def test_sampled_out_runs_are_counted_apart_from_the_runs() -> None:
    s = scenario(gates=GATE)
    config = Config(scenarios=(s,))
    results = [*results_for(s, [{"gate": 1.0}]), RunResult(run(), scenario="s", sampled=False)]
    (summary,) = summarize(config, results)
    assert (summary.n_runs, summary.n_sampled_out) == (1, 1)


def test_pass_rate_is_exact_for_whole_runs() -> None:
    summary = summary_of(scenario(gates=GATE), [{"gate": 1.0}] * 3 + [{"gate": 0.0}])
    assert summary.pass_rate == 0.75
    assert not math.isnan(summary.pass_rate)
