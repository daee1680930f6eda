"""The one closed registry of scorer types, keyed by `type`.

Adding a scorer means: one module with one `ScorerBase` subclass whose `type` is a Literal, and
one entry in `SCORER_CLASSES` below. Config validation builds a discriminated union from it.
"""

from __future__ import annotations

import typing
from typing import Annotated, Any

from pydantic import Field, TypeAdapter

from tracescore.judges.relevancy import AnswerRelevancy
from tracescore.judges.rubric import LlmRubric
from tracescore.judges.tool_call_accuracy import LlmToolCallAccuracy
from tracescore.judges.trajectory import LlmTrajectory
from tracescore.scorers.base import ScorerBase
from tracescore.scorers.checks import (
    CalledTool,
    DidNotCall,
    MaxToolCalls,
    NoToolErrors,
    ToolOrder,
    UsedNoTools,
)
from tracescore.scorers.output_includes import OutputIncludes
from tracescore.scorers.tool_call_accuracy import ToolCallAccuracy
from tracescore.scorers.tool_calls import ToolCalls
from tracescore.scorers.trajectory_accuracy import TrajectoryAccuracy
from tracescore.scorers.trajectory_guardrails import TrajectoryGuardrails

__all__ = ["SCORER_CLASSES", "AnyScorer", "parse_scorer", "scorer_types"]

SCORER_CLASSES: tuple[type[ScorerBase], ...] = (
    # deterministic scorers (Mastra and Agno semantics)
    ToolCallAccuracy,
    ToolCalls,
    TrajectoryAccuracy,
    TrajectoryGuardrails,
    CalledTool,
    NoToolErrors,
    UsedNoTools,
    ToolOrder,
    DidNotCall,
    MaxToolCalls,
    OutputIncludes,
    # LLM judges (deterministic = False: scored off the ingestion path, see judges/)
    LlmToolCallAccuracy,
    LlmTrajectory,
    LlmRubric,
    AnswerRelevancy,
)


def _type_of(cls: type[ScorerBase]) -> str:
    (value,) = typing.get_args(cls.model_fields["type"].annotation)
    return str(value)


def scorer_types() -> dict[str, type[ScorerBase]]:
    """Every registered type name and its class."""
    return {_type_of(cls): cls for cls in SCORER_CLASSES}


def _any_scorer() -> Any:
    if not SCORER_CLASSES:
        return ScorerBase
    if len(SCORER_CLASSES) == 1:
        return SCORER_CLASSES[0]
    union: Any = typing.Union.__getitem__(SCORER_CLASSES)  # built at run time from the registry
    return Annotated[union, Field(discriminator="type")]


# The pydantic type of one scorer entry in a config: a discriminated union over the registry.
AnyScorer: Any = _any_scorer()
_ADAPTER: TypeAdapter[ScorerBase] = TypeAdapter(AnyScorer)


def parse_scorer(data: Any) -> ScorerBase:
    """Build a scorer from its config mapping; raises pydantic.ValidationError when invalid."""
    return _ADAPTER.validate_python(data)
