"""A scenario as scoring reads it (`ScenarioPlan`), read from the config once per scenario.

Scenarios are frozen, and every scored run would otherwise go through pydantic for the same
private attributes, score names and gate set.
"""

from __future__ import annotations

import fnmatch
import functools
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from tracescore.config.model import Scenario
from tracescore.model.run_result import RunResult, Verdict
from tracescore.model.score import Score
from tracescore.model.trajectory import Trajectory
from tracescore.scorers.base import ScorerBase

__all__ = ["PlanEntry", "ScenarioPlan", "glob_matcher"]


@functools.lru_cache(maxsize=256)
def glob_matcher(pattern: str) -> Callable[[str], object]:
    """A test for the agent glob, as `fnmatchcase` (case-sensitive) compiles it."""
    return re.compile(fnmatch.translate(pattern)).match


@dataclass(frozen=True, slots=True)
class PlanEntry:
    """One gate or scorer of a plan, with what the verdict reads of it."""

    scorer: ScorerBase
    name: str
    is_gate: bool
    within: Callable[[float], bool] | None
    """The test of the threshold the verdict checks (`Threshold.checker`; None for a gate:
    its score's `passed` decides)."""
    decides: bool
    """A gate or a thresholded scorer: its score takes part in the verdict."""


class ScenarioPlan:
    """A scenario as scoring reads it, read from the config once (measured: going through
    pydantic for the same attributes was about half of scoring a run with three checks)."""

    __slots__ = (
        "agent",
        "attributes",
        "deciding",
        "deterministic_scorers",
        "digest",
        "entries",
        "gates",
        "name",
        "pattern",
        "run_all",
        "run_deterministic",
        "sample",
        "scenario",
        "scorers",
    )

    def __init__(self, scenario: Scenario) -> None:
        self.scenario = scenario
        self.name = scenario.name
        self.digest = scenario.digest
        self.sample = scenario.sample
        match = scenario.match
        self.agent = None if match.agent is None else glob_matcher(match.agent)
        self.pattern = match.pattern
        self.attributes = match.attributes
        self.entries = tuple(
            PlanEntry(
                e,
                e.score_name,
                is_gate,
                None if is_gate or e.threshold is None else e.threshold.checker(),
                is_gate or e.threshold is not None,
            )
            for e, is_gate in scenario.entries
        )
        self.gates = frozenset(e.name for e in self.entries if e.is_gate)
        # What the verdict reads, per deciding entry: its place among the entries, its name
        # and its threshold's test (most entries of a plan decide nothing).
        self.deciding = tuple(
            (index, e.name, e.within) for index, e in enumerate(self.entries) if e.decides
        )
        # Per entry, in entry order, its `bound_score()`, and the same with None for the entries
        # that need a judge: bound once, so a run pays neither the method lookups nor the
        # `deterministic` test per entry.
        self.scorers = tuple(e.scorer.bound_score() for e in self.entries)
        self.deterministic_scorers = tuple(
            score if e.scorer.deterministic else None
            for e, score in zip(self.entries, self.scorers, strict=True)
        )
        # `run(trajectory, False)` and `run(trajectory, True)`.
        self.run_all = self._runner(self.scorers)
        self.run_deterministic = self._runner(self.deterministic_scorers)

    def _runner(
        self, scorers: tuple[Callable[[Trajectory], Score] | None, ...]
    ) -> Callable[[Trajectory], RunResult]:
        conclude = self._conclude
        if None not in scorers:
            # Every entry scores: its scores are the run's, in order, and only the deciding
            # ones are read again.
            every = tuple(score for score in scorers if score is not None)

            def run_every(trajectory: Trajectory) -> RunResult:
                scores = [score(trajectory) for score in every]
                return conclude(trajectory, scores, scores)

            return run_every

        def run(trajectory: Trajectory) -> RunResult:
            per_entry = [None if score is None else score(trajectory) for score in scorers]
            return conclude(trajectory, per_entry)

        return run

    def score(self, trajectory: Trajectory, deterministic_only: bool) -> dict[str, Score]:
        scorers = self.deterministic_scorers if deterministic_only else self.scorers
        return {
            e.name: score(trajectory)
            for e, score in zip(self.entries, scorers, strict=True)
            if score is not None
        }

    def run(self, trajectory: Trajectory, deterministic_only: bool) -> RunResult:
        """`conclude(trajectory, score(trajectory, deterministic_only))` without the mapping
        by name in between (the scorers run in the same order)."""
        return (self.run_deterministic if deterministic_only else self.run_all)(trajectory)

    def conclude(self, trajectory: Trajectory, scores: Mapping[str, Score]) -> RunResult:
        return self._conclude(trajectory, [scores.get(e.name) for e in self.entries])

    def _conclude(
        self,
        trajectory: Trajectory,
        per_entry: Sequence[Score | None],
        ordered: list[Score] | None = None,
    ) -> RunResult:
        """The run's result from its score per entry (None: not scored); `ordered`, its scores
        in entry order, when the caller has them (every entry scored)."""
        if ordered is None:
            ordered = [score for score in per_entry if score is not None]
        gate_failed = threshold_missed = has_result = False
        skipped: list[str] = []
        for index, name, within in self.deciding:
            score = per_entry[index]
            if score is None or (score.value is None and score.error is None):
                skipped.append(name)
                continue
            has_result = True
            if within is None:  # a gate
                gate_failed = gate_failed or score.error is not None or score.passed is not True
            elif score.value is None or not within(score.value):
                threshold_missed = True
        verdict: Verdict | None = None
        if has_result:
            verdict = "failed" if gate_failed else "scored" if threshold_missed else "passed"
        # Positional, in field order (trajectory, scenario, scores, gates, verdict, digest,
        # sampled, skipped): keyword arguments cost a fifth of concluding a run.
        return RunResult(
            trajectory,
            self.name,
            tuple(ordered),
            self.gates,
            verdict,
            self.digest,
            True,
            tuple(skipped),
        )
