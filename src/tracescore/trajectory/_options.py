"""What the builder can be told (`BuildOptions`) and what it hands back (`BuildResult`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from tracescore import semconv
from tracescore.model.trajectory import Trajectory

__all__ = ["BuildOptions", "BuildResult", "PauseMarkers"]


def _frozen(mapping: dict[str, str]) -> Mapping[str, str]:
    return MappingProxyType(mapping)


@dataclass(frozen=True, slots=True)
class PauseMarkers:
    """Which markers make a tool call `paused`, and the `pause_reason` each one gives.

    No convention defines "paused" yet (conventions.md §1.8), so every marker is a choice a
    user may need to undo: e.g. a framework whose tools are never instrumented would see every
    requested call as `no_execution` unless `unexecuted_request` is switched off.
    """

    unexecuted_request: bool = True
    """A requested call with no execution span and no response is paused (`no_execution`)."""
    deferrals: Mapping[str, str] = field(
        default_factory=lambda: _frozen(
            {
                semconv.PYDANTIC_AI_DEFERRED: "deferred",
                semconv.PYDANTIC_AI_APPROVAL_REQUIRED: "approval_required",
            }
        )
    )
    """pydantic-ai `pydantic_ai.tool.deferral.name` values and their reasons."""
    other_deferral_reason: str | None = "deferred"
    """Reason for a deferral name not listed above; None ignores unknown deferrals."""
    denied_responses: bool = True
    """A tool response `{"denied": true}` or `execution-denied` is paused (`denied`)."""
    decisions: Mapping[str, str] = field(
        default_factory=lambda: _frozen(
            {
                semconv.DECISION_DENY: "denied",
                semconv.DECISION_REQUIRE_APPROVAL: "approval_required",
            }
        )
    )
    """Outcomes of the proposed `gen_ai.tool.call.decision` event that pause an unexecuted call."""
    awaiting_approval: str | None = "approval_required"
    """Reason for an OpenAI Agents SDK tool span that stopped its run for an approval (status OK,
    arguments, no result, nothing after it); None reads such a span as the clean execution its
    status claims."""
    rejection_texts: tuple[str, ...] = (semconv.OPENAI_AGENTS_REJECTION_MESSAGE,)
    """Tool responses that mean "the user rejected this call" (the OpenAI Agents SDK tells the
    model this text). In a resumed run, a call of the conversation answered so and not executed
    in the run is a paused call (`denied`); add your `tool_error_formatter`'s texts here."""


@dataclass(frozen=True, slots=True)
class BuildOptions:
    """Knobs of `build_trajectories`; the defaults follow the issue and conventions.md §8."""

    pause: PauseMarkers = field(default_factory=PauseMarkers)
    max_value_chars: int = 8192
    """Longer strings (arguments, results, input, output) are cut, with a visible marker."""
    output_tool_names: tuple[str, ...] = (semconv.PYDANTIC_AI_OUTPUT_TOOL,)
    """Output tools (and `<name>_<suffix>` variants) that return the answer, not function tools."""
    include_output_tools: bool = False
    """Keep output-tool calls as steps (pydantic-ai's `final_result`)."""
    max_agent_depth: int = 32
    """Agent spans nested deeper than this are read as part of their parent run (warned)."""

    def __post_init__(self) -> None:
        # A list given by a caller is kept as the tuple the type says (the flat path caches by
        # these names, and a tuple hashes).
        if not isinstance(self.output_tool_names, tuple):
            object.__setattr__(self, "output_tool_names", tuple(self.output_tool_names))
        if self.max_value_chars < 16:
            raise ValueError(f"max_value_chars must be at least 16, got {self.max_value_chars!r}")
        if self.max_agent_depth < 1:
            raise ValueError(f"max_agent_depth must be at least 1, got {self.max_agent_depth!r}")


@dataclass(slots=True)
class BuildResult:
    """Trajectories in a deterministic order, and warnings that each name the trace."""

    trajectories: list[Trajectory] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
