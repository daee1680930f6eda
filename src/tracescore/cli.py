"""Command line: `tracescore score | trajectories | validate-config | serve`."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the exit code."""
    del argv
    sys.stderr.write("tracescore: not yet wired\n")
    return 2
