"""A `scenarios:` entry: which runs it matches, its gates and scorers, and its digest.

Cross-entry rules (unique names) are plain functions here so that the loader can also apply
them to raw YAML when other problems keep pydantic from reaching the model validators: every
problem is reported at once.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from typing import Any

from pydantic import Field, PrivateAttr, field_validator, model_validator

from tracescore.config._base import Frozen, LocatedError
from tracescore.config.scorers import AnyScorer
from tracescore.judges.base import JudgeScorerBase
from tracescore.judges.endpoint import ResolvedEndpoint
from tracescore.judges.settings import JudgeFields, JudgeSettings
from tracescore.scorers.base import ScorerBase

__all__ = [
    "CHECKS_NOTHING",
    "SCENARIO_DIGEST_VERSION",
    "Scenario",
    "ScenarioMatch",
    "duplicate_entry_names",
]

SCENARIO_DIGEST_VERSION = "scenario-v1"

CHECKS_NOTHING = "a scenario needs at least one gate or scorer: this checks nothing"

# Score names end up in attribute keys (`eval.<name>.score`) and metric attributes, so they
# are restricted to characters every backend keeps as they are.
_NAME_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*$")


class ScenarioMatch(Frozen):
    """Which agent runs a scenario applies to; every condition given must hold."""

    agent: str | None = Field(default=None, min_length=1)
    """Glob on the agent name (`fnmatch`, case-sensitive), e.g. `support-*`."""
    input: str | None = None
    """Regular expression searched (not anchored) in the user input."""
    attributes: dict[str, str | int | float | bool] = Field(default_factory=dict)
    """Exact values of agent-span attributes, or else resource attributes."""

    _pattern: re.Pattern[str] | None = PrivateAttr(default=None)

    @field_validator("input")
    @classmethod
    def input_is_a_regex(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                re.compile(value)
            except re.error as exc:
                raise ValueError(f"invalid regular expression {value!r}: {exc}") from None
        return value

    def model_post_init(self, context: Any, /) -> None:
        # Compiled once here so matching a run costs no regex compilation.
        if self.input is not None:
            self._pattern = re.compile(self.input)

    @property
    def pattern(self) -> re.Pattern[str] | None:
        """The compiled `input` regex, or None."""
        return self._pattern


class Scenario(Frozen):
    """Which scorers, gates and thresholds apply to which agent runs."""

    name: str = Field(min_length=1)
    match: ScenarioMatch = Field(default_factory=ScenarioMatch)
    sample: float = Field(default=1.0, ge=0.0, le=1.0)
    """Fraction of runs scored, decided by trace id so every replica decides the same."""
    gates: tuple[AnyScorer, ...] = ()
    """Scorers that must pass on every run; a failed gate fails the run."""
    scorers: tuple[AnyScorer, ...] = ()
    """Scorers whose values are reported; a `threshold` on one makes a miss `scored`."""
    judge_sample: float = Field(default=1.0, ge=0.0, le=1.0)
    """Fraction of the scored runs that also get the LLM judges, decided by trace id (a judged
    run gets every judge of the scenario); at most `sample` in effect."""
    judge_fields: JudgeFields = Field(default_factory=JudgeFields)
    """Parts of a run withheld from LLM judges (e.g. `exclude: [results]`)."""

    _digest: str = PrivateAttr(default="")
    _entries: tuple[tuple[ScorerBase, bool], ...] = PrivateAttr(default=())

    @field_validator("sample", mode="before")
    @classmethod
    def sample_is_a_number(cls, value: Any) -> Any:
        # bool before float: bool subclasses int, and `true` is not a fraction.
        if isinstance(value, bool):
            raise ValueError(f"expected a number between 0 and 1, got {str(value).lower()}")
        return value

    @model_validator(mode="after")
    def checks_something(self) -> Scenario:
        if not self.gates and not self.scorers:
            raise ValueError(CHECKS_NOTHING)
        return self

    @model_validator(mode="after")
    def entry_names_are_unique(self) -> Scenario:
        problems = duplicate_entry_names(
            ("gates", [e.score_name for e in self.gates]),
            ("scorers", [e.score_name for e in self.scorers]),
        )
        if problems:
            loc, message = problems[0]
            raise LocatedError(message, loc)
        return self

    def model_post_init(self, context: Any, /) -> None:
        self._digest = _scenario_digest(self.gates, self.scorers)
        # Built once: every scored run walks the entries.
        self._entries = tuple((g, True) for g in self.gates) + tuple(
            (s, False) for s in self.scorers
        )

    @property
    def entries(self) -> tuple[tuple[ScorerBase, bool], ...]:
        """Every gate and scorer in config order, gates first, with `is_gate`."""
        return self._entries

    @property
    def digest(self) -> str:
        """`scenario-v1:<sha256>` of the whole scoring config (entries, names, thresholds).

        The scenario's own name, `match` and `sample` are left out: they decide which runs
        are scored, not how, so renaming a scenario keeps its scores comparable. Its LLM
        judges count with the judge that answers them (see `with_judge`).
        """
        return self._digest

    def with_judge(self, judge: JudgeSettings | None) -> Scenario:
        """This scenario with a digest covering the config's top-level `judge:` section.

        Only what changes a judge's answers counts: the effective model, temperature and
        base URL of each judge entry (not keys, headers, timeouts or limits). A scenario
        without judges is returned as it is, its digest unchanged; otherwise a copy, so a
        scenario shared by two configs keeps each config's digest apart.
        """
        digest = _scenario_digest(self.gates, self.scorers, judge)
        if digest == self._digest:
            return self
        copy = self.model_copy()
        copy._digest = digest
        return copy


def duplicate_entry_names(
    *sections: tuple[str, Sequence[object]],
) -> list[tuple[tuple[str | int, ...], str]]:
    """Problems with the score names of one scenario: `(loc, message)` pairs.

    `sections` are `(section, names)` with names already defaulted to the type; gates and
    scorers share one namespace because their scores sit side by side on the run.
    """
    problems: list[tuple[tuple[str | int, ...], str]] = []
    seen: dict[str, str] = {}
    for section, names in sections:
        for index, name in enumerate(names):
            if not isinstance(name, str):
                continue
            where = f"{section}[{index}]"
            if not _NAME_RE.match(name):
                problems.append(
                    (
                        (section, index, "name"),
                        f"name {name!r} may only hold letters, digits, '_', '-' and '.'",
                    )
                )
            elif name in seen:
                problems.append(
                    (
                        (section, index, "name"),
                        f"duplicate name {name!r} (also {seen[name]}); give one entry a "
                        "distinct `name`",
                    )
                )
            else:
                seen[name] = where
    return problems


def _scenario_digest(
    gates: Sequence[ScorerBase],
    scorers: Sequence[ScorerBase],
    judge: JudgeSettings | None = None,
) -> str:
    def entry(scorer: ScorerBase) -> dict[str, Any]:
        threshold = scorer.threshold.model_dump(mode="json") if scorer.threshold else None
        out = {"name": scorer.score_name, "threshold": threshold, "digest": scorer.digest()}
        if isinstance(scorer, JudgeScorerBase):
            try:
                endpoint = ResolvedEndpoint.merge(judge, scorer.judge)
            except ValueError:  # no judge yet: the config refuses it, or adds one later
                return out
            # The digest its scores carry (model and temperature), and where it runs.
            out["digest"] = scorer.digest(endpoint.model, endpoint.temperature)
            out["base_url"] = endpoint.base_url
        return out

    payload = {"gates": [entry(g) for g in gates], "scorers": [entry(s) for s in scorers]}
    canonical = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return f"{SCENARIO_DIGEST_VERSION}:{hashlib.sha256(canonical.encode()).hexdigest()}"
