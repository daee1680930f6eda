"""`tracescore validate-config [--no-env] FILE`: check a config without running anything.

Exit 0 with a one-line summary, or 2 with every problem, each as `<file>:<line>: <path>: ...`.
Environment variables the config names (judge API keys, receiver bearer tokens) are checked too,
since `score` and `serve` refuse to run without them; `--no-env` skips that for a machine that
does not hold the secrets (a lint step in CI).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from tracescore.config import load_config
from tracescore.config.environment import environment_problems
from tracescore.errors import ConfigError

__all__ = ["add_parser", "run"]


def add_parser(subparsers: Any) -> None:
    """Register the subcommand on the `tracescore` parser."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "validate-config",
        help="check a config file and list every problem in it",
        description="Check a tracescore config file. Exit 0 when valid, 2 with every problem.",
    )
    parser.add_argument(
        "--no-env",
        action="store_true",
        help="do not check the environment variables the config names (API keys, tokens)",
    )
    parser.add_argument("file", metavar="FILE", help="the YAML config file")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Validate `args.file`; returns the exit code."""
    try:
        config = load_config(args.file)
    except ConfigError as exc:
        print(exc, file=sys.stderr)
        return 2
    problems = [] if args.no_env else environment_problems(config)
    if problems:
        print(ConfigError(problems, args.file), file=sys.stderr)
        print(f"{args.file}: (--no-env skips the environment check)", file=sys.stderr)
        return 2
    n_gates = sum(len(s.gates) for s in config.scenarios)
    n_scorers = sum(len(s.scorers) for s in config.scenarios)
    print(
        f"{args.file}: ok: {_plural(len(config.scenarios), 'scenario')}, "
        f"{_plural(n_gates, 'gate')}, {_plural(n_scorers, 'scorer')}"
    )
    return 0


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"
