"""Reading trace files for the offline subcommands, with problems reported on stderr."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from tracescore.errors import InputError
from tracescore.otlp import read_trace_files
from tracescore.trajectory import BuildResult, build_trajectories

__all__ = ["read_runs"]

_MAX_LISTED = 20  # problems listed on stderr before "... and N more"


def read_runs(prog: str, files: Sequence[str]) -> BuildResult | None:
    """The agent runs in `files`, or None (after saying why) when a file cannot be read.

    Rejected spans and builder warnings are counted and listed on stderr: nothing is dropped
    without a word.
    """
    try:
        decoded = read_trace_files(files)
    except InputError as exc:
        print(f"{prog}: {exc}", file=sys.stderr)
        return None
    _report(prog, f"{decoded.rejected} span(s) rejected", decoded.rejected, decoded.problems)
    built = build_trajectories(decoded.spans)
    _report(prog, f"{len(built.warnings)} warning(s)", len(built.warnings), built.warnings)
    return built


def _report(prog: str, headline: str, count: int, problems: Sequence[str]) -> None:
    if not count:
        return
    print(f"{prog}: {headline}", file=sys.stderr)
    listed = min(len(problems), _MAX_LISTED)
    for problem in problems[:listed]:
        print(f"  {problem}", file=sys.stderr)
    if count > listed:
        print(f"  ... and {count - listed} more", file=sys.stderr)
