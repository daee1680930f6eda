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

import re
from collections.abc import Callable, Mapping

from tracescore.config.model import Config, Scenario, ScenarioMatch
from tracescore.model.run_result import RunResult, Verdict
from tracescore.model.sampling import is_sampled
from tracescore.model.score import Score
from tracescore.model.span import AttrValue
from tracescore.model.trajectory import Trajectory
from tracescore.scenario_plan import ScenarioPlan, glob_matcher

__all__ = [
    "RunResult",
    "Verdict",
    "conclude",
    "evaluate_run",
    "is_sampled",
    "matches",
    "run_evaluator",
    "score_entries",
    "select_scenario",
]


def matches(match: ScenarioMatch, trajectory: Trajectory) -> bool:
    """True when every condition of `match` holds for the run (no conditions: always)."""
    agent = None if match.agent is None else glob_matcher(match.agent)
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
    return _evaluated(_select(config, trajectory), trajectory, deterministic_only)


def run_evaluator(
    config: Config, *, deterministic_only: bool = False
) -> Callable[[Trajectory], RunResult]:
    """`evaluate_run` with `config` and `deterministic_only` bound, for a caller that evaluates
    every run with one config (`serve`): the config's selection memo is found once, and a
    run of a known agent whose scenario samples every run goes straight to its plan."""
    by_agent = _by_agent(config)[1]
    if by_agent is None:  # some scenario matches on more than the agent name
        return lambda trajectory: _evaluated(
            _first_match(config, trajectory), trajectory, deterministic_only
        )

    def evaluate(trajectory: Trajectory) -> RunResult:
        agent = trajectory.agent
        plan = by_agent[agent] if agent in by_agent else _select_in(config, by_agent, trajectory)
        if plan is not None and plan.sample >= 1.0:  # `_evaluated`'s commonest case, inline
            return (plan.run_deterministic if deterministic_only else plan.run_all)(trajectory)
        return _evaluated(plan, trajectory, deterministic_only)

    return evaluate


def _evaluated(
    plan: ScenarioPlan | None, trajectory: Trajectory, deterministic_only: bool
) -> RunResult:
    """The run's result under its selected plan (None: no scenario matched)."""
    if plan is None:
        return RunResult(trajectory=trajectory, scenario=None)
    if plan.sample < 1.0 and not is_sampled(trajectory.trace_id, plan.sample):
        return RunResult(
            trajectory=trajectory, scenario=plan.name, digest=plan.digest, sampled=False
        )
    return (plan.run_deterministic if deterministic_only else plan.run_all)(trajectory)


# Plans by scenario identity; the scenario is kept with its plan so that its id cannot be
# reused by another object while the entry exists. Bounded: tests and `validate-config`
# build many configs, a service only one.
_PLANS: dict[int, tuple[Scenario, ScenarioPlan]] = {}
_PLANS_LIMIT = 256


def _plan(scenario: Scenario) -> ScenarioPlan:
    known = _PLANS.get(id(scenario))
    if known is not None and known[0] is scenario:
        return known[1]
    plan = ScenarioPlan(scenario)
    if len(_PLANS) >= _PLANS_LIMIT:
        _PLANS.clear()
    _PLANS[id(scenario)] = (scenario, plan)
    return plan


def _select(config: Config, trajectory: Trajectory) -> ScenarioPlan | None:
    known = _BY_AGENT.get(id(config))
    if known is None or known[0] is not config:
        known = _by_agent(config)
    by_agent = known[1]
    if by_agent is None:  # some scenario matches on more than the agent name
        return _first_match(config, trajectory)
    agent = trajectory.agent
    if agent in by_agent:
        return by_agent[agent]
    return _select_in(config, by_agent, trajectory)


def _select_in(
    config: Config, by_agent: dict[str | None, ScenarioPlan | None], trajectory: Trajectory
) -> ScenarioPlan | None:
    """The plan for a run of an agent not yet in `by_agent`, remembered there."""
    agent = trajectory.agent
    plan = _first_match(config, trajectory)
    if len(by_agent) >= _AGENTS_LIMIT:
        by_agent.clear()
    by_agent[agent] = plan
    return plan


def _first_match(config: Config, trajectory: Trajectory) -> ScenarioPlan | None:
    for scenario in config.scenarios:
        plan = _plan(scenario)
        if _holds(plan.agent, plan.pattern, plan.attributes, trajectory):
            return plan
    return None


# Per config (kept with its entry, as in _PLANS), the plan selected for each agent name, when
# no scenario matches on the input or on attributes: then the agent name alone decides, and
# trying the scenarios' globs in turn is done once per name. None: selection reads more.
# Bounded: configs as _PLANS, agent names because they come from traffic.
_BY_AGENT: dict[int, tuple[Config, dict[str | None, ScenarioPlan | None] | None]] = {}
_AGENTS_LIMIT = 4096


def _by_agent(config: Config) -> tuple[Config, dict[str | None, ScenarioPlan | None] | None]:
    plans = [_plan(s) for s in config.scenarios]
    agent_only = all(p.pattern is None and not p.attributes for p in plans)
    by_agent: dict[str | None, ScenarioPlan | None] | None = {} if agent_only else None
    known = (config, by_agent)
    if len(_BY_AGENT) >= _PLANS_LIMIT:
        _BY_AGENT.clear()
    _BY_AGENT[id(config)] = known
    return known
