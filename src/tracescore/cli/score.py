"""`tracescore score --config CONFIG [--output table|json] FILE...`: score trace files offline.

Reads OTLP JSON (one ExportTraceServiceRequest per file, or JSON Lines of them; `-` is
stdin), rebuilds the agent runs, scores them by scenario and prints one row (or JSON line) per
run, then one per scenario. Exit 1 when a run fails what `--fail-on` names (by default a gate, or
a scorer that failed with an error: a dead judge must not pass a CI gate), 2 on a usage, config
or input error (an input that holds no OTLP span included), else 0. Rejected spans and builder
warnings go to stderr with their counts.
"""

from __future__ import annotations

import argparse
import base64
import json
import math
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, TextIO

from tracescore.cli._inputs import read_runs
from tracescore.cli._score_table import render_table
from tracescore.config import Config, Scenario, load_config
from tracescore.errors import ConfigError
from tracescore.judges.settings import JudgeSettings
from tracescore.model.score import Score
from tracescore.model.trajectory import Trajectory
from tracescore.scenarios import (
    RunResult,
    conclude,
    is_sampled,
    score_entries,
    select_scenario,
)
from tracescore.scorers.base import ScorerBase
from tracescore.summary import ScenarioSummary, summarize

__all__ = [
    "PendingRun",
    "add_parser",
    "fails",
    "run",
    "run_to_dict",
    "score_deferred",
    "score_runs",
    "write_json",
]

_PROG = "tracescore score"


def add_parser(subparsers: Any) -> None:
    """Register the subcommand on the `tracescore` parser."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "score",
        help="score OTLP JSON trace files with a config's scenarios",
        description=(
            "Score agent runs from OTLP JSON trace files. Exit 1 when a run fails what "
            "--fail-on names, 2 on a usage, config or input error, else 0."
        ),
    )
    parser.add_argument("--config", required=True, metavar="CONFIG", help="the YAML config")
    parser.add_argument(
        "--output",
        choices=("table", "json"),
        default="table",
        help="table (default) or JSON Lines: one line per run, then one per scenario",
    )
    parser.add_argument(
        "--no-judge",
        action="store_true",
        help="skip LLM-judge scorers (no judge calls; gates on them are reported as skipped)",
    )
    parser.add_argument(
        "--fail-on",
        choices=FAIL_ON,
        default="error",
        help=(
            "what makes the command exit 1: `gate` a failed gate; `error` (default) a failed "
            "gate or a scorer that failed with an error (judge unreachable, budget exhausted); "
            "`scored` any run that did not pass (a missed threshold too)"
        ),
    )
    parser.add_argument(
        "files",
        nargs="+",
        metavar="FILE",
        help="OTLP JSON file (one request, or JSON Lines of them); `-` reads stdin",
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Score the files named in `args`; returns the exit code."""
    try:
        config = load_config(args.config)
    except ConfigError as exc:
        print(exc, file=sys.stderr)
        return 2
    built = read_runs(_PROG, args.files)
    if built is None:
        return 2
    if not built.trajectories:
        print(f"{_PROG}: no agent runs found in {', '.join(args.files)}", file=sys.stderr)
    try:
        results = score_runs(config, built.trajectories, no_judge=args.no_judge)
    except ConfigError as exc:  # a judge that cannot start, e.g. its API key variable is unset
        print(exc, file=sys.stderr)
        return 2
    summaries = summarize(config, results)
    code = 1 if any(fails(r, args.fail_on) for r in results) else 0
    try:
        if args.output == "json":
            write_json(results, summaries, sys.stdout)
        else:
            sys.stdout.write(render_table(results, summaries, config, sys.stdout))
        sys.stdout.flush()
    except BrokenPipeError:
        # `tracescore score ... | head`: the reader left; the verdict still decides the exit.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return code


FAIL_ON = ("gate", "error", "scored")


def fails(result: RunResult, fail_on: str) -> bool:
    """Whether `result` makes `tracescore score --fail-on <fail_on>` exit 1."""
    if result.verdict == "failed":
        return True
    if fail_on == "gate":
        return False
    if any(score.error is not None for score in result.scores):
        return True
    return fail_on == "scored" and result.verdict == "scored"


# --- scoring --------------------------------------------------------------------------------


@dataclass(slots=True)
class PendingRun:
    """A sampled run between its deterministic scores and its verdict.

    `deferred` holds the scorers that need a judge (`deterministic = False`); whoever scores
    them adds their scores to `scores` by score name before the run is concluded.
    """

    trajectory: Trajectory
    scenario: Scenario
    scores: dict[str, Score] = field(default_factory=dict)
    deferred: tuple[ScorerBase, ...] = ()
    judge: JudgeSettings | None = None
    """The config's top-level `judge:` section, for the deferred entries."""


def score_runs(
    config: Config, trajectories: Sequence[Trajectory], *, no_judge: bool = False
) -> list[RunResult]:
    """Score every run, in input order: deterministic scorers first, then deferred ones."""
    slots: list[RunResult | PendingRun] = []
    for trajectory in trajectories:
        scenario = select_scenario(config, trajectory)
        if scenario is None:
            slots.append(RunResult(trajectory=trajectory, scenario=None))
        elif not is_sampled(trajectory.trace_id, scenario.sample):
            slots.append(
                RunResult(
                    trajectory=trajectory,
                    scenario=scenario.name,
                    digest=scenario.digest,
                    sampled=False,
                )
            )
        else:
            slots.append(
                PendingRun(
                    trajectory=trajectory,
                    scenario=scenario,
                    scores=score_entries(scenario, trajectory, deterministic_only=True),
                    deferred=tuple(e for e, _ in scenario.entries if not e.deterministic),
                    judge=config.judge,
                )
            )
    if not no_judge:  # with --no-judge the deferred entries stay unscored (named as skipped)
        score_deferred([s for s in slots if isinstance(s, PendingRun) and s.deferred])
    return [
        conclude(s.scenario, s.trajectory, s.scores) if isinstance(s, PendingRun) else s
        for s in slots
    ]


def score_deferred(pending: Sequence[PendingRun]) -> None:
    """Score the entries that need a judge, for all runs at once (`cli._judges`).

    One async batch over every pending run: shared clients, concurrency, cache, budgets, and a
    progress bar on a TTY. Raises ConfigError when a judge cannot start (an unset API key
    variable).
    """
    if not pending:
        return
    # Imported here: the judge client pulls in `openai`, which runs without judges never need.
    from tracescore.cli._judges import judge_pending

    judge_pending(pending, next((p.judge for p in pending if p.judge is not None), None))


# --- output ---------------------------------------------------------------------------------


def run_to_dict(result: RunResult) -> dict[str, Any]:
    """The `{"kind": "run", ...}` line of `--output json`."""
    trajectory = result.trajectory
    return {
        "kind": "run",
        "trace_id": trajectory.trace_id,
        "span_id": trajectory.span_id,
        "agent": trajectory.agent,
        "scenario": result.scenario,
        "complete": trajectory.complete,
        "tool_calls": [
            {
                "name": call.name,
                "call_id": call.call_id,
                "status": call.status,
                "arguments": _jsonable(call.arguments),
            }
            for call in trajectory.tool_calls()
        ],
        "scores": [score.to_dict() for score in result.scores],
        "verdict": result.verdict,
    }


def write_json(
    results: Sequence[RunResult], summaries: Sequence[ScenarioSummary], out: TextIO
) -> None:
    """JSON Lines: one line per run, then one per scenario."""
    for result in results:
        out.write(json.dumps(run_to_dict(result), ensure_ascii=False, allow_nan=False) + "\n")
    for summary in summaries:
        out.write(json.dumps(summary.to_dict(), ensure_ascii=False, allow_nan=False) + "\n")


def _jsonable(value: Any) -> Any:
    """Decoded attribute values as strict JSON: tuples as lists, bytes as base64, no NaN."""
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    return value
