"""Pure data models: spans, trajectories and scores. No I/O happens here."""

from tracescore.model._record import record
from tracescore.model.score import Score
from tracescore.model.span import AttrValue, SpanEvent, SpanRecord, StatusCode
from tracescore.model.trajectory import (
    AgentStep,
    ModelCall,
    Step,
    ToolCall,
    ToolStatus,
    Trajectory,
)

__all__ = [
    "AgentStep",
    "AttrValue",
    "ModelCall",
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
