"""The table output of `tracescore score`: one row per run, one per scenario.

Readable at a glance: the verdict is a word (and a colour on a terminal), each score shows its
value and a mark, and under a run only what went wrong is spelled out (failed gates, missed
thresholds, scorer errors, skipped entries), with the scorer's explanation.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Sequence
from typing import TextIO

from tracescore.config import Config
from tracescore.model.score import Score
from tracescore.scenarios import RunResult
from tracescore.summary import ScenarioSummary

__all__ = ["render_table", "use_colour"]

_COLOURS = {"passed": "32", "scored": "33", "failed": "31", "dim": "2", "bold": "1"}


def use_colour(out: TextIO) -> bool:
    """Colour only on a terminal, and never when NO_COLOR is set (https://no-color.org)."""
    if os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return False
    isatty = getattr(out, "isatty", None)
    return bool(isatty and isatty())


class _Style:
    def __init__(self, out: TextIO) -> None:
        isatty = getattr(out, "isatty", None)
        self.tty = bool(isatty and isatty())
        self.colour = use_colour(out)
        encoding = getattr(out, "encoding", None) or "ascii"
        try:
            "✓✗–…".encode(encoding)
            self.ok, self.bad, self.skip, self.more = "✓", "✗", "–", "…"
        except (UnicodeEncodeError, LookupError):
            self.ok, self.bad, self.skip, self.more = "ok", "x", "-", "..."

    def paint(self, text: str, what: str | None) -> str:
        if not self.colour or what not in _COLOURS:
            return text
        return f"\x1b[{_COLOURS[what]}m{text}\x1b[0m"


def render_table(
    results: Sequence[RunResult],
    summaries: Sequence[ScenarioSummary],
    config: Config,
    out: TextIO,
) -> str:
    """The whole table as text, styled for `out`."""
    style = _Style(out)
    width = shutil.get_terminal_size((120, 24)).columns
    thresholds = {
        (s.name, e.score_name) for s in config.scenarios for e in s.scorers if e.threshold
    }
    lines: list[str] = []
    rows = [["RUN", "AGENT", "SCENARIO", "VERDICT", "SCORES"]]
    details: list[list[str]] = [[]]
    for result in results:
        rows.append(_run_row(result, style))
        details.append(_run_details(result, thresholds, style, width))
    lines.extend(_grid(rows, details, style, verdict_column=3))
    if summaries:
        lines.append("")
        rows = [["SCENARIO", "RUNS", "SCORED", "PASSED", "PASS RATE", "ZONE", "VERDICT", "MEANS"]]
        rows.extend(_scenario_row(s, style) for s in summaries)
        lines.extend(_grid(rows, [[] for _ in rows], style, verdict_column=6))
    failed = sum(1 for r in results if r.verdict == "failed")
    matched = sum(1 for r in results if r.scenario is not None)
    tail = f"{len(results)} run(s), {matched} matched a scenario"
    if failed:
        tail += ", " + style.paint(f"{failed} failed a gate", "failed")
    errored = [r for r in results if any(s.error is not None for s in r.scores)]
    if errored:
        n_scores = sum(1 for r in errored for s in r.scores if s.error is not None)
        tail += ", " + style.paint(
            f"{len(errored)} had a scorer error ({n_scores} score(s))", "failed"
        )
    lines.append("")
    lines.append(tail)
    return "\n".join(lines) + "\n"


def _run_row(result: RunResult, style: _Style) -> list[str]:
    trajectory = result.trajectory
    if result.scenario is None:
        scores = "(no scenario matched)"
    elif not result.sampled:
        scores = "(not sampled)"
    else:
        scores = "  ".join(_score_cell(s, style) for s in result.scores)
    return [
        trajectory.trace_id[:8],
        trajectory.agent or "-",
        result.scenario or "-",
        result.verdict or "-",
        scores,
    ]


def _score_cell(score: Score, style: _Style) -> str:
    if score.error is not None:
        return f"{score.name} {style.paint('error', 'failed')}"
    if score.value is None:
        return f"{score.name} n/a"
    mark = style.ok if score.passed else style.bad
    mark = style.paint(mark, "passed" if score.passed else "failed")
    return f"{score.name} {_number(score.value)} {mark}"


def _run_details(
    result: RunResult, thresholds: set[tuple[str, str]], style: _Style, width: int
) -> list[str]:
    out: list[str] = []
    for score in result.scores:
        is_gate = score.name in result.gates
        has_threshold = (result.scenario or "", score.name) in thresholds
        if score.name in result.skipped:
            what, mark = "not scorable", style.skip
        elif score.error is not None:
            what, mark = "error", style.bad
        elif score.passed is False and (is_gate or has_threshold):
            what, mark = "gate failed" if is_gate else "below threshold", style.bad
        else:
            continue
        explanation = " ".join(score.explanation.split())
        out.append(_clip(f"    {mark} {score.name} ({what}): {explanation}", width, style))
    scored = {s.name for s in result.scores}
    for name in result.skipped:
        if name not in scored:
            out.append(f"    {style.skip} {name}: not run")
    return out


def _scenario_row(summary: ScenarioSummary, style: _Style) -> list[str]:
    runs = str(summary.n_runs)
    if summary.n_sampled_out:
        runs += f" (+{summary.n_sampled_out} not sampled)"
    means = []
    for name, mean in summary.means.items():
        text = f"{name} {'n/a' if mean is None else _number(mean)}"
        if errors := summary.errors.get(name):
            text += " " + style.paint(f"({errors} error{'s' if errors > 1 else ''})", "failed")
        if name in summary.missed_thresholds:
            text += " " + style.paint(style.bad, "failed")
        means.append(text)
    return [
        summary.name,
        runs,
        str(summary.n_scored),
        str(summary.n_passed),
        "-" if summary.pass_rate is None else _number(summary.pass_rate),
        "yes" if summary.in_learning_zone else "no",
        summary.verdict or "-",
        ", ".join(means),
    ]


def _grid(
    rows: list[list[str]], details: list[list[str]], style: _Style, verdict_column: int
) -> list[str]:
    """Left-aligned columns sized to their widest plain cell; the last column runs free."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]) - 1)]
    lines = []
    for index, (row, extra) in enumerate(zip(rows, details, strict=True)):
        cells = []
        for column, cell in enumerate(row[:-1]):
            padded = cell.ljust(widths[column])
            if index == 0:
                padded = style.paint(padded, "bold")
            elif column == verdict_column:
                padded = style.paint(padded, cell)
            cells.append(padded)
        last = style.paint(row[-1], "bold") if index == 0 else row[-1]
        lines.append("  ".join([*cells, last]).rstrip())
        lines.extend(extra)
    return lines


def _number(value: float) -> str:
    return f"{value:.2f}"


def _clip(text: str, width: int, style: _Style) -> str:
    # Only a terminal is clipped; a file or pipe keeps every word of the explanation.
    if not style.tty or len(text) <= max(width, 40):
        return text
    return text[: max(width, 40) - len(style.more)] + style.more
