"""Rebuild agent trajectories from spans, whatever instrumentation wrote them.

`build_trajectories(spans, options) -> BuildResult` is the one entry point. `needed_attribute`
tells a receiver which span attribute keys the builder reads, so it can decode only those.
"""

from tracescore.trajectory._attribute_filter import (
    NEEDED_KEYS,
    NEEDED_PREFIXES,
    READING_CONDITIONS,
    READING_KEYS,
    KeepKey,
    attribute_filter,
    needed_attribute,
    value_kept,
)
from tracescore.trajectory._build import build_trajectories
from tracescore.trajectory._classify import agent_name_of, classify
from tracescore.trajectory._options import BuildOptions, BuildResult, PauseMarkers

__all__ = [
    "NEEDED_KEYS",
    "NEEDED_PREFIXES",
    "READING_CONDITIONS",
    "READING_KEYS",
    "BuildOptions",
    "BuildResult",
    "KeepKey",
    "PauseMarkers",
    "agent_name_of",
    "attribute_filter",
    "build_trajectories",
    "classify",
    "needed_attribute",
    "value_kept",
]
