"""What the assembler exchanges with the other stages: hooks in, ready traces out."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, TypeAlias

from tracescore.model import record
from tracescore.model.span import AttrValue, SpanRecord
from tracescore.otlp.scan import CandidateRule
from tracescore.storage.records import HeldSpan

__all__ = [
    "Annotations",
    "AssemblerHooks",
    "Counters",
    "Ingest",
    "Journal",
    "Pending",
    "ReadyTrace",
    "Reason",
]


class Pending:
    """Score attributes that are not final yet: more (judge scores) may come within `wait` s.

    The scoring hook returns one in place of a span's attributes when that span should wait
    (`judge.judge_wait` > 0). The assembler keeps the held span (or, in fanout mode, just this
    object) counted in its buffer until `done()` or `wait` seconds after scoring, whichever
    comes first, then calls `finish()` exactly once and forwards the span with what it returns.
    """

    wait: float
    """Seconds the span may wait, counted from when its run was scored."""
    nbytes: int
    """Estimated bytes this object keeps alive while waiting (besides a held span)."""

    # A plain base class, not an ABC: the assembler tests `isinstance` on every released
    # span, judge_wait 0 included, and ABCMeta's check is ~5x slower (195 vs 41 ns measured).

    def done(self) -> bool:
        """Whether the attributes are final (the span need not wait)."""
        raise NotImplementedError

    def add_done_callback(self, callback: Callable[[], None]) -> None:
        """Call `callback()` on the event loop once `done()` (soon if it already is)."""
        raise NotImplementedError

    def finish(self) -> Mapping[str, AttrValue]:
        """The span's attributes now: final if done, else what is known at the deadline."""
        raise NotImplementedError


# Score attributes per agent span id (hex), as returned by the scoring hook; a `Pending`
# makes that span wait for more.
Annotations: TypeAlias = Mapping[str, Mapping[str, AttrValue] | Pending]
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


class Journal(Protocol):
    """Write-ahead storage as the assembler sees it (`storage.Journal` is one)."""

    def accepted(
        self, body: bytes, held: Sequence[HeldSpan], traces: Sequence[str], forwarded: bool
    ) -> int:
        """Write a request ahead; returns its id (parts are keyed `(id, part)`)."""
        ...

    def hold(self, trace_hex: str, span_hex: str, key: tuple[int, int]) -> None: ...
    def take_held(self, trace_hex: str, span_hex: str) -> tuple[int, int] | None: ...
    def released(self, key: tuple[int, int], held: tuple[bytes, bytes, bytes]) -> None: ...
    def scored(self, trace_hex: str) -> None: ...


@record  # built for every scored trace: a frozen dataclass's __init__ cost 4x as much
class ReadyTrace:
    """A trace whose runs are due to be scored."""

    trace_id: str
    spans: Sequence[SpanRecord]
    complete: bool
    """An agent span or the trace root arrived; else runs are scored with complete: false."""
    reason: Reason


@dataclass(frozen=True, slots=True)
class AssemblerHooks:
    """What the assembler needs from the other stages; the pipeline wires them."""

    keep_key: Callable[[str], bool | tuple[str, ...]]
    """Span attribute keys to keep on records (what trajectories and scenarios read); texts:
    only string values holding one of them (see `trajectory.KeepKey`)."""
    agent_name: Callable[[SpanRecord], str | None]
    """The agent name when the span is an agent span ("" when unnamed), else None."""
    wants: Callable[[SpanRecord, str], bool]
    """Whether a scenario may match the run of this agent span: it is held if so."""
    score: Callable[[list[ReadyTrace]], list[Annotations]]
    """Score the traces' runs (the traces due at once), emit their results, return per trace
    attributes for held spans (or a `Pending` for a span, or in fanout mode a run, that waits
    for its judge scores)."""
    forward: Callable[[bytes, int], bool]
    """Enqueue a serialized request with n spans downstream; False when the queue is full."""
    downstream_ready: Callable[[], bool]
    """False when the export queue is full (receivers then push back)."""
    annotate: Callable[[bytes, Mapping[str, AttrValue]], bytes]
    """A held span's bytes with score attributes added, before it is forwarded."""
    forward_tracked: Callable[[bytes, int, Any], bool] | None = None
    """Like `forward`, for a body written ahead in storage: the token names its parts, and
    the exporter reports it back once they are delivered (None without storage)."""
    agent_candidates: CandidateRule | None = None
    """Spans `agent_name` can say yes to (a superset, tested by the scanner): the others are
    never asked. None asks of every span."""


@dataclass(slots=True)
class Ingest:
    """What happened to one request's spans."""

    accepted: int = 0
    rejected: int = 0
    problems: list[str] = field(default_factory=list)
    committed: Awaitable[None] | None = None
    """With storage: done once the request is on disk; receivers answer after it."""
