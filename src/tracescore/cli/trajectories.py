"""`tracescore trajectories [--output json|table] FILE...`: show the runs tracescore rebuilds.

The debugging view users reach for when a score surprises them: one JSON object per agent run
(JSON Lines), or the same as an indented tree. Exit 0, or 2 when a file cannot be read or
decoded. Rejected spans and builder warnings go to stderr with their counts, never to stdout,
so the JSON Lines stay machine-readable.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import Any, TextIO

from tracescore.cli._inputs import read_runs
from tracescore.model.trajectory import AgentStep, Handoff, ModelCall, Step, ToolCall, Trajectory

__all__ = ["add_parser", "render_table", "run", "write_json"]

_PROG = "tracescore trajectories"
_WIDTH = 100


def add_parser(subparsers: Any) -> None:
    """Register the subcommand on the `tracescore` parser."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "trajectories",
        help="print the agent runs rebuilt from OTLP JSON trace files",
        description=(
            "Rebuild agent runs (tool calls, model calls, sub-agents) from OTLP JSON trace "
            "files and print them. Exit 0, or 2 when a file cannot be read."
        ),
    )
    parser.add_argument(
        "--output",
        choices=("json", "table"),
        default="json",
        help="JSON Lines, one object per run (default), or an indented tree",
    )
    parser.add_argument(
        "files",
        nargs="+",
        metavar="FILE",
        help="OTLP JSON file (one request, or JSON Lines of them); `-` reads stdin",
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Print the runs in the files named in `args`; returns the exit code."""
    result = read_runs(_PROG, args.files)
    if result is None:
        return 2
    if args.output == "table":
        render_table(result.trajectories, sys.stdout)
    else:
        write_json(result.trajectories, sys.stdout)
    return 0


def write_json(trajectories: Sequence[Trajectory], out: TextIO) -> None:
    """One JSON object per run; non-ASCII kept as is when the stream is UTF-8."""
    encoding = (getattr(out, "encoding", None) or "utf-8").lower().replace("-", "")
    ascii_only = encoding != "utf8"
    for trajectory in trajectories:
        out.write(json.dumps(trajectory.to_dict(), ensure_ascii=ascii_only) + "\n")


def render_table(trajectories: Sequence[Trajectory], out: TextIO) -> None:
    """Each run as an indented tree: header, input, tools, steps (sub-agents nested), output."""
    if not trajectories:
        out.write("no agent runs found\n")
        return
    for index, t in enumerate(trajectories):
        if index:
            out.write("\n")
        state = "complete" if t.complete else "incomplete"
        out.write(f"run {t.agent or '(no agent name)'}  trace {t.trace_id}  span {t.span_id}")
        out.write(f"  {_ms(t.duration_ms)}  {state}\n")
        out.write(f"  input:  {_short(t.input)}\n")
        if t.available_tools:
            out.write(f"  tools:  {', '.join(t.available_tools)}\n")
        _steps(t.steps, out, depth=1)
        out.write(f"  output: {_short(t.output)}\n")
        for warning in t.warnings:
            out.write(f"  warning: {warning}\n")


def _steps(steps: Sequence[Step], out: TextIO, depth: int) -> None:
    # Iterative over depth would be overkill: the builder caps agent nesting.
    pad = "  " * depth
    for step in steps:
        if isinstance(step, ToolCall):
            status: str = step.status
            if step.status == "error":
                detail = ": ".join(x for x in (step.error_type, step.error_message) if x)
                status = f"error {detail}".rstrip()
            elif step.status == "paused":
                status = f"paused ({step.pause_reason})"
            out.write(f"{pad}- tool {step.name}({_short(step.arguments, 60)}) -> {status}")
            if step.status == "ok" and step.result is not None:
                out.write(f"  = {_short(step.result, 60)}")
            out.write("\n")
        elif isinstance(step, ModelCall):
            tokens = f"{step.input_tokens if step.input_tokens is not None else '?'}"
            tokens += f"/{step.output_tokens if step.output_tokens is not None else '?'} tokens"
            out.write(f"{pad}- model {step.model or '?'}  {tokens}  {_ms(step.duration_ms)}\n")
        elif isinstance(step, Handoff):
            out.write(f"{pad}- handoff to {step.target}  via {step.tool_name or '?'}\n")
        elif isinstance(step, AgentStep):
            out.write(f"{pad}- agent {step.name}  span {step.span_id}  {_ms(step.duration_ms)}\n")
            _steps(step.steps, out, depth + 1)


def _ms(value: float | None) -> str:
    return "?" if value is None else f"{value:.1f} ms"


def _short(value: object, width: int = _WIDTH) -> str:
    if value is None:
        return "-"
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"
