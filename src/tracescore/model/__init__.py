"""Pure data models: spans, trajectories and scores. No I/O happens here."""

from tracescore.model._record import record
from tracescore.model.score import Score
from tracescore.model.span import AttrValue, SpanEvent, SpanRecord, StatusCode
from tracescore.model.trajectory import (
    HANDOFF_PREFIX,
    READINGS,
    AgentStep,
    Handoff,
    ModelCall,
    Reading,
    Step,
    ToolCall,
    ToolStatus,
    Trajectory,
)

__all__ = [
    "HANDOFF_PREFIX",
    "READINGS",
    "AgentStep",
    "AttrValue",
    "Handoff",
    "ModelCall",
    "Reading",
    "Score",
    "SpanEvent",
    "SpanRecord",
    "StatusCode",
    "Step",
    "ToolCall",
    "ToolStatus",
    "Trajectory",
    "record",
]
