"""Command line: `tracescore score | trajectories | validate-config | serve`.

Each subcommand lives in its own module exposing `add_parser(subparsers)` and `run(args) -> int`.
Exit codes: 0 success, 1 a gate failed, 2 usage, config or input error.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from tracescore import __version__

__all__ = ["main"]

# Subcommand modules, in help order. A module that does not exist yet is skipped.
_SUBCOMMANDS = ("score", "trajectories", "validate_config", "serve")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tracescore",
        description="Score AI agents' tool calls and trajectories from OpenTelemetry traces.",
    )
    parser.add_argument("--version", action="version", version=f"tracescore {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in _SUBCOMMANDS:
        try:
            module = importlib.import_module(f"tracescore.cli.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"tracescore.cli.{name}":
                raise
            continue
        module.add_parser(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code."""
    parser = _parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse exits 2 on usage errors, 0 on --help
        return int(exc.code or 0)
    if args.command is None:
        parser.print_help(sys.stderr)
        return 2
    code: int = args.run(args)
    return code
