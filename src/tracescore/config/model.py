"""The root config model. Frozen pydantic, unknown keys refused, defaults on the fields."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from tracescore.config.judge import JudgeSettings
from tracescore.config.serve import (
    AssemblySettings,
    ExporterSettings,
    ReceiversSettings,
)
from tracescore.scorers.registry import AnyScorer

__all__ = ["Config", "Scenario", "ScenarioMatch"]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)


class ScenarioMatch(_Frozen):
    """Which agent runs a scenario applies to; every condition given must hold."""

    agent: str | None = None
    """Glob on the agent name, e.g. `support-*`."""
    input: str | None = None
    """Regular expression searched in the user input."""
    attributes: dict[str, str | int | float | bool] = Field(default_factory=dict)
    """Exact values of span or resource attributes."""


class Scenario(_Frozen):
    """Which scorers, gates and thresholds apply to which agent runs."""

    name: str
    match: ScenarioMatch = Field(default_factory=ScenarioMatch)
    sample: float = 1.0
    """Fraction of runs scored, decided by trace id so every replica decides the same."""
    gates: tuple[AnyScorer, ...] = ()
    """Scorers that must pass on every run; a failed gate fails the run."""
    scorers: tuple[AnyScorer, ...] = ()


class Config(_Frozen):
    """A tracescore config file."""

    scenarios: tuple[Scenario, ...] = ()
    receivers: ReceiversSettings = Field(default_factory=ReceiversSettings)
    exporter: ExporterSettings | None = None
    mode: str = "forward"
    assembly: AssemblySettings = Field(default_factory=AssemblySettings)
    judge: JudgeSettings | None = None
