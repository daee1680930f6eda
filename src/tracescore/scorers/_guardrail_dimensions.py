"""The guardrail dimensions of `trajectory_guardrails`: efficiency, blacklist, tool failures.

Each follows Mastra 1.10.2's `checkTrajectoryEfficiency`, `checkTrajectoryBlacklist` and
`analyzeToolFailures`, over every tool call of the run (errored and paused ones included:
a wasted or forbidden call costs whether or not it succeeded). Under tracescore's defaults a
budget whose measurement is missing (no model call with token counts, no recorded run
duration) is NOT SCORABLE: reported and left out of the mean. Mastra 1.10.2 throws instead,
and `mastra=True` does the same (the run then gets an error score, never a silent 0).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from tracescore.errors import ScorerError
from tracescore.model.trajectory import ToolCall, Trajectory
from tracescore.scorers._matching import (
    args_equal,
    fmt_score,
    js_json,
    mastra_round2,
    mastra_tool_args,
)

__all__ = ["Blacklist", "Efficiency", "ToolFailures", "blacklist", "efficiency", "tool_failures"]


def _num(x: float) -> str:
    # A number as JavaScript prints it in a template string: 1200, not 1200.0.
    return str(int(x)) if float(x).is_integer() else repr(float(x))


def _budget(measured: float, limit: float) -> float:
    if measured <= limit:
        return 1.0
    if limit == 0:
        return 0.0  # JavaScript: 1 - x/0 is -Infinity, clamped to 0
    return max(0.0, 1.0 - (measured - limit) / limit)


@dataclass(frozen=True, slots=True)
class Efficiency:
    """Budgets and redundancy; `score` None when no part of it could be measured."""

    score: float | None
    total_steps: int
    over_step_budget: bool = False
    total_tokens: int | None = None
    over_token_budget: bool = False
    total_duration_ms: float | None = None
    over_duration_budget: bool = False
    redundant_calls: tuple[tuple[str, int], ...] = ()
    not_scorable: tuple[str, ...] = ()

    def line(self) -> str:
        """Mastra's `Efficiency (<score>): ...` sentence, plus what could not be measured."""
        if self.score is None:
            return "Efficiency: not scorable: " + "; ".join(self.not_scorable) + "."
        parts: list[str] = []
        if self.over_step_budget:
            parts.append(f"over step budget ({self.total_steps} steps).")
        if self.over_token_budget:
            parts.append(f"over token budget ({self.total_tokens} tokens).")
        if self.over_duration_budget and self.total_duration_ms is not None:
            parts.append(f"over duration budget ({_num(self.total_duration_ms)}ms).")
        if self.redundant_calls:
            parts.append(f"redundant calls: {', '.join(n for n, _ in self.redundant_calls)}.")
        text = " ".join(parts) or "all budgets met, no redundant calls."
        if self.not_scorable:
            text += " not scorable: " + "; ".join(self.not_scorable) + "."
        return f"Efficiency ({fmt_score(self.score)}): {text}"

    def details(self) -> dict[str, Any]:
        """The structured form carried in `Score.details`."""
        return {
            "score": self.score,
            "total_steps": self.total_steps,
            "over_step_budget": self.over_step_budget,
            "total_tokens": self.total_tokens,
            "over_token_budget": self.over_token_budget,
            "total_duration_ms": self.total_duration_ms,
            "over_duration_budget": self.over_duration_budget,
            "redundant_calls": [{"name": n, "index": i} for n, i in self.redundant_calls],
            "not_scorable": list(self.not_scorable),
        }


def _same_args(a: ToolCall, b: ToolCall, mastra: bool) -> bool:
    if mastra:
        ta, tb = mastra_tool_args(a.arguments), mastra_tool_args(b.arguments)
        return (ta is None and tb is None) or (
            ta is not None and tb is not None and js_json(ta) == js_json(tb)
        )
    return args_equal(a.arguments, b.arguments)


def _tokens(trajectory: Trajectory, mastra: bool) -> tuple[int | None, str]:
    model_calls = trajectory.model_calls()
    if not model_calls:
        why = "no model call was recorded, so the token budget cannot be checked"
    else:
        counts = [m.total_tokens for m in model_calls]
        lacking = sum(1 for t in counts if t is None)
        if not lacking:
            return sum(t for t in counts if t is not None), ""
        why = f"{lacking} of {len(model_calls)} model calls lack input or output token counts"
    if mastra:
        raise ScorerError(f"cannot evaluate token budget: {why} (compat mastra throws)")
    return None, f"token budget: {why}"


def _duration(trajectory: Trajectory, calls: Sequence[ToolCall], mastra: bool) -> float | None:
    if trajectory.duration_ms is not None:
        return trajectory.duration_ms
    if mastra:
        # Mastra falls back to the sum of the top-level step durations, all of them timed.
        durations = [c.duration_ms for c in calls]
        if durations and all(d is not None for d in durations):
            return sum(d for d in durations if d is not None)
        raise ScorerError(
            "cannot evaluate duration budget: the run's duration was not recorded "
            "(compat mastra throws)"
        )
    return None


def efficiency(
    trajectory: Trajectory,
    calls: Sequence[ToolCall],
    *,
    max_steps: int | None,
    max_total_tokens: int | None,
    max_duration_ms: float | None,
    no_redundant_calls: bool,
    mastra: bool,
) -> Efficiency:
    """Mean of the configured budgets and the redundancy check (0.2 off per redundant call)."""
    dims: list[float] = []
    not_scorable: list[str] = []
    total_steps = len(calls)
    over_steps = max_steps is not None and total_steps > max_steps
    if max_steps is not None:
        dims.append(_budget(total_steps, max_steps))
    total_tokens: int | None = None
    over_tokens = False
    if max_total_tokens is not None:
        total_tokens, why = _tokens(trajectory, mastra)
        if total_tokens is None:
            not_scorable.append(why)
        else:
            over_tokens = total_tokens > max_total_tokens
            dims.append(_budget(total_tokens, max_total_tokens))
    total_ms: float | None = None
    over_ms = False
    if max_duration_ms is not None:
        total_ms = _duration(trajectory, calls, mastra)
        if total_ms is None:
            not_scorable.append("duration budget: the run's duration was not recorded")
        else:
            over_ms = total_ms > max_duration_ms
            dims.append(_budget(total_ms, max_duration_ms))
    redundant: list[tuple[str, int]] = []
    if no_redundant_calls:
        for i in range(1, len(calls)):
            prev, cur = calls[i - 1], calls[i]
            if prev.name == cur.name and _same_args(prev, cur, mastra):
                redundant.append((cur.name, i))
        dims.append(max(0.0, 1.0 - 0.2 * len(redundant)))
    score: float | None = None
    if dims:
        score = min(1.0, max(0.0, sum(dims) / len(dims)))
        if mastra:
            score = mastra_round2(score)
    return Efficiency(
        score=score,
        total_steps=total_steps,
        over_step_budget=over_steps,
        total_tokens=total_tokens,
        over_token_budget=over_tokens,
        total_duration_ms=total_ms,
        over_duration_budget=over_ms,
        redundant_calls=tuple(redundant),
        not_scorable=tuple(not_scorable),
    )


@dataclass(frozen=True, slots=True)
class Blacklist:
    """Forbidden tools and contiguous sequences found; score 0 on any violation, else 1."""

    violated_tools: tuple[str, ...] = ()
    violated_sequences: tuple[tuple[str, ...], ...] = ()

    @property
    def score(self) -> float:
        """0 on any violation, else 1."""
        return 0.0 if self.violated_tools or self.violated_sequences else 1.0

    def line(self) -> str:
        """Mastra's `Blacklist violation: ...` sentence."""
        parts = []
        if self.violated_tools:
            parts.append(f"forbidden tools used: {', '.join(self.violated_tools)}.")
        if self.violated_sequences:
            seqs = "; ".join(" → ".join(s) for s in self.violated_sequences)
            parts.append(f"forbidden sequences: {seqs}.")
        return "Blacklist violation: " + " ".join(parts)

    def details(self) -> dict[str, Any]:
        """The structured form carried in `Score.details`."""
        return {
            "score": self.score,
            "violated_tools": list(self.violated_tools),
            "violated_sequences": [list(s) for s in self.violated_sequences],
        }


def blacklist(
    calls: Sequence[ToolCall],
    tools: Sequence[str],
    sequences: Sequence[Sequence[str]],
) -> Blacklist:
    """Which forbidden tools were called, which forbidden sequences ran back to back."""
    names = [c.name for c in calls]
    present = set(names)
    violated = tuple(t for t in tools if t in present)
    found: list[tuple[str, ...]] = []
    for seq in sequences:
        k = len(seq)
        if k and any(names[i : i + k] == list(seq) for i in range(len(names) - k + 1)):
            found.append(tuple(seq))
    return Blacklist(violated, tuple(found))


@dataclass(frozen=True, slots=True)
class ToolFailures:
    """Retry patterns: runs of consecutive calls to one tool after failures."""

    score: float
    patterns: tuple[dict[str, Any], ...] = ()
    total_retries: int = 0
    excessive: tuple[str, ...] = ()

    def line(self) -> str:
        """Mastra's `Tool failures (<score>): ...` sentence."""
        text = f"Tool failures ({fmt_score(self.score)}): {self.total_retries} total retries."
        if self.excessive:
            text += f" excessive retries: {', '.join(self.excessive)}."
        return text

    def details(self) -> dict[str, Any]:
        """The structured form carried in `Score.details`."""
        return {
            "score": self.score,
            "patterns": [dict(p) for p in self.patterns],
            "total_retries": self.total_retries,
            "excessive_retry_tools": list(self.excessive),
        }


def tool_failures(calls: Sequence[ToolCall], *, max_retries: int, mastra: bool) -> ToolFailures:
    """0.2 off per retry beyond `max_retries` in any run of same-tool calls.

    A retry is a call that follows a failed call to the same tool. A failure is status
    `error`; under Mastra also `paused` (Mastra marks a requested-but-unfinished call as
    unsuccessful). A single failed call with no same-tool retry is no pattern at all.
    """
    failed = [c.status == "error" or (mastra and c.status == "paused") for c in calls]
    patterns: list[dict[str, Any]] = []
    total = 0
    i = 0
    while i < len(calls):
        retries = 0
        j = i + 1
        while j < len(calls) and calls[j].name == calls[i].name:
            retries += failed[j - 1]
            j += 1
        if retries:
            succeeded = not failed[j - 1]
            fell_back = j < len(calls) and not succeeded
            patterns.append(
                {
                    "tool": calls[i].name,
                    "retry_count": retries,
                    "eventually_succeeded": succeeded,
                    "fell_back_to_alternative": fell_back,
                    "alternative_tool": calls[j].name if fell_back else None,
                }
            )
            total += retries
        i = j
    excess = sum(max(0, p["retry_count"] - max_retries) for p in patterns)
    score = max(0.0, 1.0 - 0.2 * excess)
    if mastra:
        score = mastra_round2(score)
    excessive = tuple(p["tool"] for p in patterns if p["retry_count"] > max_retries)
    return ToolFailures(score, tuple(patterns), total, excessive)
