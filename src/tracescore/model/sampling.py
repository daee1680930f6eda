"""Sampling by trace id: every replica and every re-run makes the same choice."""

from __future__ import annotations

import hashlib

__all__ = ["is_sampled"]


def is_sampled(trace_id: str, rate: float) -> bool:
    """Whether a run is scored at sampling `rate`, decided by its trace id alone.

    A hash rather than the id's own low bits, so ids that are not random (test generators,
    sequential ids) still sample evenly.
    """
    if rate >= 1.0:
        return True
    if rate <= 0.0:
        return False
    digest = hashlib.sha256(trace_id.strip().lower().encode()).digest()
    return int.from_bytes(digest[:8], "big") < rate * 2.0**64
