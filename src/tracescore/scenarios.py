"""Scenarios: which runs get which scorers, and the verdicts that follow (pure).

Selection: scenarios are tried in config order and a run is scored by the **first** scenario
whose `match` holds (like a routing table: put specific scenarios before catch-alls). A run no
scenario matches is reported with no scores. A matched run is then sampled by trace id: a
sha256 of the id decides, so every replica and every re-run decides the same.

Per run (as Mastra's `runEvals`): verdict `failed` if a gate did not pass, else `scored` if a
threshold was missed, else `passed`; None when no gate or threshold produced a result (the
scenario has none, or every one was not scorable). A gate passes when its score `passed` is
true (the scorer's own notion, or its threshold). A scorer that failed (error score) fails its
gate and misses its threshold: a failure is never certified. A not-scorable score (value None)
is skipped and named in `RunResult.skipped`, as is an entry that was not run at all.

The verdict of a scenario over all its runs is `tracescore.summary`'s.
"""

from __future__ import annotations

import fnmatch
import functools
import hashlib
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Literal, TypeAlias

from tracescore.config.model import Config, Scenario, ScenarioMatch
from tracescore.model import record
from tracescore.model.score import Score
from tracescore.model.span import AttrValue
from tracescore.model.trajectory import Trajectory
from tracescore.scorers.base import ScorerBase, Threshold

__all__ = [
    "RunResult",
    "Verdict",
    "conclude",
    "evaluate_run",
    "is_sampled",
    "matches",
    "score_entries",
    "select_scenario",
]

Verdict: TypeAlias = Literal["passed", "scored", "failed"]


@record
class RunResult:
    """One agent run after scoring: the run, its scenario (or None), scores and verdict."""

    trajectory: Trajectory
    scenario: str | None
    scores: tuple[Score, ...] = ()
    gates: frozenset[str] = frozenset()
    """Names of the scores that are gates."""
    verdict: Verdict | None = None
    digest: str | None = None
    """Digest of the scenario's whole scoring config (`tracescore.digest`)."""
    sampled: bool = True
    """False when the scenario matched but sampling left the run out (then no scores)."""
    skipped: tuple[str, ...] = ()
    """Gates and thresholded scorers left out of the verdict: not scorable or not run."""


def matches(match: ScenarioMatch, trajectory: Trajectory) -> bool:
    """True when every condition of `match` holds for the run (no conditions: always)."""
    agent = None if match.agent is None else _glob(match.agent)
    return _holds(agent, match.pattern, match.attributes, trajectory)


def _holds(
    agent: Callable[[str], object] | None,
    pattern: re.Pattern[str] | None,
    attributes: Mapping[str, str | int | float | bool],
    trajectory: Trajectory,
) -> bool:
    # `match` unpacked, so a plan can pass what it read from the config once.
    if agent is not None and (trajectory.agent is None or not agent(trajectory.agent)):
        return False
    if pattern is not None and (trajectory.input is None or not pattern.search(trajectory.input)):
        return False
    for key, expected in attributes.items():
        if not (
            _same_value(trajectory.attributes.get(key), expected)
            or _same_value(trajectory.resource.get(key), expected)
        ):
            return False
    return True


@functools.lru_cache(maxsize=256)
def _glob(pattern: str) -> Callable[[str], object]:
    """A test for the agent glob, as `fnmatchcase` (case-sensitive) compiles it."""
    return re.compile(fnmatch.translate(pattern)).match


def _same_value(actual: AttrValue, expected: str | int | float | bool) -> bool:
    # bool before numbers: bool subclasses int, and `true` never equals 1.
    if isinstance(expected, bool) or isinstance(actual, bool):
        return isinstance(actual, bool) and isinstance(expected, bool) and actual == expected
    if isinstance(expected, int | float):
        return isinstance(actual, int | float) and actual == expected
    return isinstance(actual, str) and actual == expected


def select_scenario(config: Config, trajectory: Trajectory) -> Scenario | None:
    """The first scenario, in config order, whose match holds for the run."""
    plan = _select(config, trajectory)
    return None if plan is None else plan.scenario


def is_sampled(trace_id: str, rate: float) -> bool:
    """Whether a run is scored at sampling `rate`, decided by its trace id alone.

    A hash rather than the id's own low bits, so ids that are not random (test generators,
    sequential ids) still sample evenly.
    """
    if rate >= 1.0:
        return True
    if rate <= 0.0:
        return False
    digest = hashlib.sha256(trace_id.strip().lower().encode()).digest()
    return int.from_bytes(digest[:8], "big") < rate * 2.0**64


def score_entries(
    scenario: Scenario, trajectory: Trajectory, *, deterministic_only: bool = False
) -> dict[str, Score]:
    """Run the scenario's gates and scorers on one run, keyed by score name.

    With `deterministic_only`, scorers that need a judge (`deterministic = False`) are left
    out for the caller to score asynchronously and pass to `conclude` with the rest.
    """
    return _plan(scenario).score(trajectory, deterministic_only)


def conclude(scenario: Scenario, trajectory: Trajectory, scores: Mapping[str, Score]) -> RunResult:
    """The run's result from its scores: verdict, skipped entries, scores in config order."""
    return _plan(scenario).conclude(trajectory, scores)


def evaluate_run(
    config: Config, trajectory: Trajectory, *, deterministic_only: bool = False
) -> RunResult:
    """Select, sample, score and conclude one run in one call (synchronous).

    Scorers that need a judge run their synchronous fallback unless `deterministic_only`,
    in which case they are named in `skipped` (gates and thresholded ones) and left out.
    """
    plan = _select(config, trajectory)
    if plan is None:
        return RunResult(trajectory=trajectory, scenario=None)
    if plan.sample < 1.0 and not is_sampled(trajectory.trace_id, plan.sample):
        return RunResult(
            trajectory=trajectory, scenario=plan.name, digest=plan.digest, sampled=False
        )
    return (plan.run_deterministic if deterministic_only else plan.run_all)(trajectory)


@dataclass(frozen=True, slots=True)
class _Entry:
    scorer: ScorerBase
    name: str
    is_gate: bool
    threshold: Threshold | None
    """The threshold the verdict checks (None for a gate: its score's `passed` decides)."""
    decides: bool
    """A gate or a thresholded scorer: its score takes part in the verdict."""


class _Plan:
    """A scenario as scoring reads it, read from the config once.

    Scenarios are frozen, and every scored run would otherwise go through pydantic for the
    same private attributes, score names and gate set (measured: about half of scoring a run
    with three simple checks).
    """

    __slots__ = (
        "agent",
        "attributes",
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
        self.agent = None if match.agent is None else _glob(match.agent)
        self.pattern = match.pattern
        self.attributes = match.attributes
        self.entries = tuple(
            _Entry(
                e,
                e.score_name,
                is_gate,
                None if is_gate else e.threshold,
                is_gate or e.threshold is not None,
            )
            for e, is_gate in scenario.entries
        )
        self.gates = frozenset(e.name for e in self.entries if e.is_gate)
        # Per entry, in entry order, its `bound_score()`, and the same with None for the entries
        # that need a judge: bound once, so a run pays neither the method lookups nor the
        # `deterministic` test per entry.
        self.scorers = tuple(e.scorer.bound_score() for e in self.entries)
        self.deterministic_scorers = tuple(
            score if e.scorer.deterministic else None
            for e, score in zip(self.entries, self.scorers, strict=True)
        )
        # `run(trajectory, False)` and `run(trajectory, True)`, natively where the extension
        # was built (otlp/_plan.c): a call per run rather than three Python frames.
        self.run_all = self._runner(self.scorers)
        self.run_deterministic = self._runner(self.deterministic_scorers)

    def _runner(
        self, scorers: tuple[Callable[[Trajectory], Score] | None, ...]
    ) -> Callable[[Trajectory], RunResult]:
        if _run_plan is None:
            return lambda trajectory: self._conclude(
                trajectory, [None if score is None else score(trajectory) for score in scorers]
            )
        entries = tuple(
            (
                e.name,
                e.decides,
                e.is_gate,
                None if e.threshold is None or e.threshold.min is None else float(e.threshold.min),
                None if e.threshold is None or e.threshold.max is None else float(e.threshold.max),
            )
            for e in self.entries
        )
        plan = (scorers, entries, self.name, self.gates, self.digest, self._conclude)
        return functools.partial(_run_plan, plan)

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

    def _conclude(self, trajectory: Trajectory, per_entry: list[Score | None]) -> RunResult:
        gate_failed = threshold_missed = has_result = False
        skipped: list[str] = []
        ordered: list[Score] = []
        for entry, score in zip(self.entries, per_entry, strict=True):
            if score is not None:
                ordered.append(score)
            if not entry.decides:
                continue
            if score is None or (score.value is None and score.error is None):
                skipped.append(entry.name)
                continue
            has_result = True
            threshold = entry.threshold
            if threshold is None:  # a gate
                gate_failed = gate_failed or score.error is not None or score.passed is not True
            elif score.value is None or not threshold.check(score.value):
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


# Plans by scenario identity; the scenario is kept with its plan so that its id cannot be
# reused by another object while the entry exists. Bounded: tests and `validate-config`
# build many configs, a service only one.
_PLANS: dict[int, tuple[Scenario, _Plan]] = {}
_PLANS_LIMIT = 256


def _plan(scenario: Scenario) -> _Plan:
    known = _PLANS.get(id(scenario))
    if known is not None and known[0] is scenario:
        return known[1]
    plan = _Plan(scenario)
    if len(_PLANS) >= _PLANS_LIMIT:
        _PLANS.clear()
    _PLANS[id(scenario)] = (scenario, plan)
    return plan


def _select(config: Config, trajectory: Trajectory) -> _Plan | None:
    known = _BY_AGENT.get(id(config))
    if known is None or known[0] is not config:
        known = _by_agent(config)
    by_agent = known[1]
    if by_agent is None:  # some scenario matches on more than the agent name
        return _first_match(config, trajectory)
    agent = trajectory.agent
    if agent in by_agent:
        return by_agent[agent]
    plan = _first_match(config, trajectory)
    if len(by_agent) >= _AGENTS_LIMIT:
        by_agent.clear()
    by_agent[agent] = plan
    return plan


def _first_match(config: Config, trajectory: Trajectory) -> _Plan | None:
    for scenario in config.scenarios:
        plan = _plan(scenario)
        if _holds(plan.agent, plan.pattern, plan.attributes, trajectory):
            return plan
    return None


# Per config (kept with its entry, as in _PLANS), the plan selected for each agent name, when
# no scenario matches on the input or on attributes: then the agent name alone decides, and
# trying the scenarios' globs in turn is done once per name. None: selection reads more.
# Bounded: configs as _PLANS, agent names because they come from traffic.
_BY_AGENT: dict[int, tuple[Config, dict[str | None, _Plan | None] | None]] = {}
_AGENTS_LIMIT = 4096


def _by_agent(config: Config) -> tuple[Config, dict[str | None, _Plan | None] | None]:
    plans = [_plan(s) for s in config.scenarios]
    agent_only = all(p.pattern is None and not p.attributes for p in plans)
    by_agent: dict[str | None, _Plan | None] | None = {} if agent_only else None
    known = (config, by_agent)
    if len(_BY_AGENT) >= _PLANS_LIMIT:
        _BY_AGENT.clear()
    _BY_AGENT[id(config)] = known
    return known


_run_plan: Callable[..., RunResult] | None
try:
    from tracescore.otlp import _scan  # type: ignore[attr-defined,unused-ignore]
except ImportError:  # built without a C compiler
    _run_plan = None
else:
    _scan.bind_plan(RunResult, Score)
    _run_plan = _scan.run_plan
