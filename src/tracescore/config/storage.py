"""The `storage:` section: where `tracescore serve` writes what it holds, and its limits."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from tracescore.config._base import Frozen
from tracescore.units import MIB, ByteSize, Duration

__all__ = ["StorageSettings"]


class StorageSettings(Frozen):
    """Write-ahead storage: every accepted request is on disk before it is answered.

    Off when the section is absent. With it, a crash (SIGKILL, OOM, power loss after the
    fsync) loses nothing that was answered OK: the next start recovers it before the
    receivers open.
    """

    directory: str = Field(min_length=1)
    """Where the log's segment files live; created if missing; one serve process per folder."""
    max_bytes: ByteSize = Field(default=1024 * MIB, ge=1024 * 1024)
    """Disk the log may use; at the limit receivers answer with a retryable status."""
    segment_bytes: ByteSize = Field(default=16 * MIB, ge=64 * 1024)
    """A segment file is closed past this size; one whose requests were all delivered (and
    every older one too) is deleted."""
    sync: Literal["always", "batch"] = "always"
    """`always`: a request is answered once its records are fsync'd; requests that arrive
    during one fsync share the next (group commit). `batch`: the committer also waits
    `sync_interval` to gather more requests into each fsync (fewer fsyncs, later answers)."""
    sync_interval: Duration = 0.005
    """With `sync: batch`, how long the committer gathers before each fsync."""

    @model_validator(mode="after")
    def _segments_fit(self) -> StorageSettings:
        if self.segment_bytes * 2 > self.max_bytes:
            raise ValueError(
                f"storage.max_bytes ({self.max_bytes}) must be at least twice "
                f"storage.segment_bytes ({self.segment_bytes})"
            )
        return self
