"""The root config model. Frozen pydantic, unknown keys refused, defaults on the fields.

Its sections live beside it, one module per component family: `scenario.py` (a scenario, its
digest and the cross-entry name rules), `receivers.py`, `exporter.py`, `serve.py` (mode,
assembly, service), `storage.py`, `annotations.py`; the judge section is `judges/settings.py`.
Cross-entry rules are plain functions so that the loader can also apply them to raw YAML when
other problems keep pydantic from reaching the model validators: every problem is reported at
once.
"""

from __future__ import annotations

from collections.abc import Iterable

from pydantic import Field, model_validator

from tracescore.config._base import Frozen, LocatedError
from tracescore.config.annotations import AnnotationsSettings
from tracescore.config.scenario import (
    CHECKS_NOTHING,
    SCENARIO_DIGEST_VERSION,
    Scenario,
    ScenarioMatch,
    duplicate_entry_names,
)
from tracescore.config.serve import (
    AssemblySettings,
    ExporterSettings,
    ReceiversSettings,
    ServeMode,
    ServiceSettings,
)
from tracescore.config.storage import StorageSettings
from tracescore.judges.settings import JudgeSettings

__all__ = [
    "CHECKS_NOTHING",
    "SCENARIO_DIGEST_VERSION",
    "Config",
    "LocatedError",
    "Scenario",
    "ScenarioMatch",
    "duplicate_entry_names",
    "duplicate_scenario_names",
]


class Config(Frozen):
    """A tracescore config file."""

    scenarios: tuple[Scenario, ...] = ()
    """Tried in order; a run is scored by the first scenario whose `match` holds."""
    receivers: ReceiversSettings = Field(default_factory=ReceiversSettings)
    exporter: ExporterSettings | None = None
    mode: ServeMode = "forward"
    """`forward`: every span goes downstream, the agent span with its scores; `fanout`:
    nothing is forwarded, each scored run adds an `evaluate {agent}` span (tracescore serve)."""
    assembly: AssemblySettings = Field(default_factory=AssemblySettings)
    service: ServiceSettings = Field(default_factory=ServiceSettings)
    """Score attribute prefix, metrics interval and shutdown grace of tracescore serve."""
    judge: JudgeSettings | None = None
    annotations: AnnotationsSettings = Field(default_factory=AnnotationsSettings)
    """Scores sent to viewers' own annotation APIs (Phoenix), beside attributes and events."""
    storage: StorageSettings | None = None
    """Write-ahead storage of what tracescore serve holds (off when absent)."""

    @model_validator(mode="after")
    def scenario_names_are_unique(self) -> Config:
        problems = duplicate_scenario_names([s.name for s in self.scenarios])
        if problems:
            loc, message = problems[0]
            raise LocatedError(message, loc)
        return self

    @model_validator(mode="after")
    def judge_in_digests(self) -> Config:
        # A scenario's digest covers the judge that answers its judge entries, which the
        # scenario alone does not know when it uses the top-level section.
        if self.judge is not None:
            scenarios = tuple(s.with_judge(self.judge) for s in self.scenarios)
            if any(a is not b for a, b in zip(scenarios, self.scenarios, strict=True)):
                object.__setattr__(self, "scenarios", scenarios)  # frozen: set once, here
        return self

    @model_validator(mode="after")
    def judges_have_an_endpoint(self) -> Config:
        # An LLM-judge entry needs a base_url and model, from `judge:` or its own block.
        if self.judge is not None:
            return self
        for i, scenario in enumerate(self.scenarios):
            for section in ("gates", "scorers"):
                for j, entry in enumerate(getattr(scenario, section)):
                    own = getattr(entry, "judge", None)
                    if not entry.deterministic and (
                        own is None or own.base_url is None or own.model is None
                    ):
                        raise LocatedError(
                            f"{entry.type!r} is an LLM judge: add a top-level `judge:` section "
                            "(base_url, model) or a `judge:` block with both on this entry",
                            ("scenarios", i, section, j),
                        )
        return self


def duplicate_scenario_names(names: Iterable[object]) -> list[tuple[tuple[str | int, ...], str]]:
    """Problems with scenario names: `(loc, message)` pairs for each repeated name."""
    problems: list[tuple[tuple[str | int, ...], str]] = []
    seen: dict[str, int] = {}
    for index, name in enumerate(names):
        if not isinstance(name, str):
            continue
        if name in seen:
            problems.append(
                (
                    ("scenarios", index, "name"),
                    f"duplicate scenario name {name!r} (also scenarios[{seen[name]}])",
                )
            )
        else:
            seen[name] = index
    return problems
