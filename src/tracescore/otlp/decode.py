"""What both decoders share: the result type, id normalisation and key filtering."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable
from dataclasses import dataclass, field

from tracescore.model.span import SpanRecord

__all__ = ["DecodeResult", "KeyFilter", "normalize_id"]

# Decides which attribute keys to keep; None keeps all. The receiver passes a filter so that
# only the attributes trajectories need are held in memory.
KeyFilter = Callable[[str], bool] | None


@dataclass(slots=True)
class DecodeResult:
    """Spans decoded from one request or file, and the spans rejected with why."""

    spans: list[SpanRecord] = field(default_factory=list)
    rejected: int = 0
    problems: list[str] = field(default_factory=list)

    def reject(self, problem: str) -> None:
        """Count one rejected span; keep the first problems to report them."""
        self.rejected += 1
        if len(self.problems) < 20:
            self.problems.append(problem)

    def extend(self, other: DecodeResult) -> None:
        """Add another result's spans and rejections to this one."""
        self.spans.extend(other.spans)
        self.rejected += other.rejected
        for problem in other.problems:
            if len(self.problems) < 20:
                self.problems.append(problem)


def normalize_id(raw: object, size: int, what: str) -> str:
    """An OTLP id as lowercase hex of `size` bytes.

    OTLP/JSON says hex, but protobuf's generic JSON mapping writes base64; both are accepted.
    Raises ValueError naming the value when it is neither, or all zeros.
    """
    if isinstance(raw, bytes):
        data = raw
    elif isinstance(raw, str):
        text = raw.strip()
        if len(text) == 2 * size:
            try:
                data = bytes.fromhex(text)
            except ValueError:
                data = b""
        else:
            try:
                data = base64.b64decode(text, validate=True)
            except (binascii.Error, ValueError):
                data = b""
    else:
        raise ValueError(f"{what} must be a hex string, got {type(raw).__name__}")
    if len(data) != size:
        raise ValueError(f"{what} must be {size} bytes as hex, got {raw!r}")
    if not any(data):
        raise ValueError(f"{what} is all zeros")
    return data.hex()
