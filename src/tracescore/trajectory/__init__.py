"""Rebuild agent trajectories from spans, whatever instrumentation wrote them.

`build_trajectories(spans, options) -> BuildResult` is the one entry point. `needed_attribute`
tells a receiver which span attribute keys the builder reads, so it can decode only those.
"""

from tracescore.trajectory._build import build_trajectories
from tracescore.trajectory._classify import (
    NEEDED_KEYS,
    NEEDED_PREFIXES,
    READING_KEYS,
    attribute_filter,
    needed_attribute,
)
from tracescore.trajectory._options import BuildOptions, BuildResult, PauseMarkers

__all__ = [
    "NEEDED_KEYS",
    "NEEDED_PREFIXES",
    "READING_KEYS",
    "BuildOptions",
    "BuildResult",
    "PauseMarkers",
    "attribute_filter",
    "build_trajectories",
    "needed_attribute",
]
