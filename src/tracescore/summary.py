"""A scenario over all its runs: pass rate, means and the scenario's verdict (pure).

Per scenario over its runs: `pass_rate` is n_passed / n_scored over runs with a verdict
(Agno's per-attempt view); `in_learning_zone` is 0 < n_passed < n_scored. The scenario verdict
follows `runEvals`' aggregate view: `failed` if any run failed a gate (a gate's mean must be
1.0), else `scored` if a thresholded scorer's mean over the runs misses its threshold (or the
scorer failed on a run), else `passed`; None when no run has a verdict.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from tracescore.config.model import Config, Scenario
from tracescore.scenarios import RunResult, Verdict

__all__ = ["ScenarioSummary", "summarize"]

# Means are rounded before they meet a threshold so that 0.7, 0.8, 0.9 average to 0.8, not
# 0.7999999999999999.
_MEAN_DIGITS = 9


@dataclass(frozen=True, slots=True)
class ScenarioSummary:
    """One scenario over all its runs (see the module docstring for the rules)."""

    name: str
    n_runs: int
    """Runs the scenario matched and sampled."""
    n_scored: int
    """Runs with a verdict."""
    n_passed: int
    """Runs whose verdict is `passed`."""
    pass_rate: float | None
    means: Mapping[str, float | None] = field(default_factory=dict)
    """Mean value per score name over the runs where it had a value."""
    in_learning_zone: bool = False
    verdict: Verdict | None = None
    n_sampled_out: int = 0
    missed_thresholds: tuple[str, ...] = ()
    """Thresholded scorers whose mean missed (or that failed on some run)."""
    errors: Mapping[str, int] = field(default_factory=dict)
    """Runs on which each scorer failed with an error (a dead judge, an exhausted budget)."""

    def to_dict(self) -> dict[str, Any]:
        """The `{"kind": "scenario", ...}` line of `tracescore score --output json`."""
        return {
            "kind": "scenario",
            "name": self.name,
            "n_runs": self.n_runs,
            "n_scored": self.n_scored,
            "n_passed": self.n_passed,
            "pass_rate": self.pass_rate,
            "in_learning_zone": self.in_learning_zone,
            "verdict": self.verdict,
            "n_errors": sum(self.errors.values()),
        }


def summarize(config: Config, results: Iterable[RunResult]) -> list[ScenarioSummary]:
    """One summary per scenario of `config`, in config order (scenarios with no runs too)."""
    by_name: dict[str, list[RunResult]] = {s.name: [] for s in config.scenarios}
    sampled_out: dict[str, int] = dict.fromkeys(by_name, 0)
    for result in results:
        if result.scenario not in by_name:
            continue
        if result.sampled:
            by_name[result.scenario].append(result)
        else:
            sampled_out[result.scenario] += 1
    return [_summary(s, by_name[s.name], sampled_out[s.name]) for s in config.scenarios]


def _summary(scenario: Scenario, runs: list[RunResult], n_sampled_out: int) -> ScenarioSummary:
    verdicts = [r.verdict for r in runs if r.verdict is not None]
    n_scored = len(verdicts)
    n_passed = sum(1 for v in verdicts if v == "passed")
    values: dict[str, list[float]] = {e.score_name: [] for e, _ in scenario.entries}
    errored: dict[str, int] = {}
    for run in runs:
        for score in run.scores:
            if score.value is not None:
                values.setdefault(score.name, []).append(score.value)
            elif score.error is not None:
                errored[score.name] = errored.get(score.name, 0) + 1
    means = {
        name: round(math.fsum(vs) / len(vs), _MEAN_DIGITS) if vs else None
        for name, vs in values.items()
    }
    missed: list[str] = []
    for entry in scenario.scorers:
        if entry.threshold is None:
            continue
        mean = means.get(entry.score_name)
        if entry.score_name in errored or (mean is not None and not entry.threshold.check(mean)):
            missed.append(entry.score_name)
    verdict: Verdict | None = None
    if verdicts:
        verdict = "failed" if "failed" in verdicts else "scored" if missed else "passed"
    return ScenarioSummary(
        name=scenario.name,
        n_runs=len(runs),
        n_scored=n_scored,
        n_passed=n_passed,
        pass_rate=n_passed / n_scored if n_scored else None,
        means=means,
        in_learning_zone=0 < n_passed < n_scored,
        verdict=verdict,
        n_sampled_out=n_sampled_out,
        missed_thresholds=tuple(missed),
        errors=errored,
    )
