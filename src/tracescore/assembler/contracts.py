"""What the assembler exchanges with the other stages: hooks in, ready traces out."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Literal, Protocol, TypeAlias

from opentelemetry.proto.trace.v1.trace_pb2 import Span

from tracescore.model.span import AttrValue, SpanRecord

__all__ = ["Annotations", "AssemblerHooks", "Counters", "Ingest", "ReadyTrace", "Reason"]

# Score attributes per agent span id (hex), as returned by the scoring hook.
Annotations: TypeAlias = Mapping[str, Mapping[str, AttrValue]]
# Why a trace is scored: it went quiet, it got too old, or the service is shutting down.
Reason: TypeAlias = Literal["quiet", "max_age", "shutdown"]


class Counters(Protocol):
    """The service metrics the assembler updates (`export.metrics.Telemetry` has them all)."""

    def spans_received(self, n: int = 1) -> None: ...
    def spans_rejected(self, n: int = 1) -> None: ...
    def spans_late(self, n: int = 1) -> None: ...
    def spans_dropped(self, reason: str, n: int = 1) -> None: ...
    def set_runs_buffered(self, n: int) -> None: ...
    def set_bytes_buffered(self, n: int) -> None: ...


@dataclass(frozen=True, slots=True)
class ReadyTrace:
    """A trace whose runs are due to be scored."""

    trace_id: str
    spans: tuple[SpanRecord, ...]
    complete: bool
    """An agent span or the trace root arrived; else runs are scored with complete: false."""
    reason: Reason


@dataclass(frozen=True, slots=True)
class AssemblerHooks:
    """What the assembler needs from the other stages; the pipeline wires them."""

    keep_key: Callable[[str], bool]
    """Span attribute keys to keep on records (what trajectories and scenarios read)."""
    agent_name: Callable[[SpanRecord], str | None]
    """The agent name when the span is an agent span ("" when unnamed), else None."""
    wants: Callable[[SpanRecord, str], bool]
    """Whether a scenario may match the run of this agent span: it is held if so."""
    score: Callable[[ReadyTrace], Annotations]
    """Score the trace's runs, emit their results, return attributes for held spans."""
    forward: Callable[[bytes, int], bool]
    """Enqueue a serialized request with n spans downstream; False when the queue is full."""
    downstream_ready: Callable[[], bool]
    """False when the export queue is full (receivers then push back)."""
    annotate: Callable[[Span, Mapping[str, AttrValue]], None]
    """Add score attributes to a held span before it is forwarded."""


@dataclass(slots=True)
class Ingest:
    """What happened to one request's spans."""

    accepted: int = 0
    rejected: int = 0
    problems: list[str] = field(default_factory=list)
