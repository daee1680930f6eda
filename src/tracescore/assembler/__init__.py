"""Forward-first assembly of spans into runs: hold agent spans, decide when runs are scored."""

from tracescore.assembler.assembler import Assembler
from tracescore.assembler.contracts import (
    Annotations,
    AssemblerHooks,
    Counters,
    Ingest,
    Pending,
    ReadyTrace,
    Reason,
)
from tracescore.assembler.outbox import Outbox

__all__ = [
    "Annotations",
    "Assembler",
    "AssemblerHooks",
    "Counters",
    "Ingest",
    "Outbox",
    "Pending",
    "ReadyTrace",
    "Reason",
]
