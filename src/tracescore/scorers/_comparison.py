"""What `compare_steps` compares and returns: an expected step (`Expected`, prepared once per
scorer) and the result (`Comparison`), with its details and Mastra's sentences."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from tracescore.model import record
from tracescore.scorers._matching import fmt_score, js_json

__all__ = ["Comparison", "Expected"]


@dataclass(frozen=True, slots=True)
class Expected:
    """One expected step, prepared once per scorer: tool name, arguments, their JS JSON."""

    tool: str
    args: Mapping[str, Any] | None = None
    args_json: str | None = None

    @classmethod
    def of(cls, tool: str, args: Mapping[str, Any] | None) -> Expected:
        """Precompute the `JSON.stringify` text used under `compat: mastra`."""
        return cls(tool, args, None if args is None else js_json(args))


@record
class Comparison:
    """What matched and what did not; `score` is already clamped (and rounded under Mastra)."""

    score: float
    matched: int
    total_expected: int
    total_actual: int
    missing: tuple[str, ...] = ()
    extra: tuple[str, ...] = ()
    out_of_order: tuple[str, ...] = ()
    args_mismatch: tuple[str, ...] = ()
    repeated: tuple[str, ...] = ()

    def details(self) -> dict[str, Any]:
        """The structured form carried in `Score.details`."""
        return {
            "score": self.score,
            "matched": self.matched,
            "total_expected": self.total_expected,
            "total_actual": self.total_actual,
            "missing": list(self.missing),
            "extra": list(self.extra),
            "out_of_order": list(self.out_of_order),
            "args_mismatch": list(self.args_mismatch),
            "repeated": list(self.repeated),
        }

    def summary(self, *, mastra: bool, allow_repeated: bool = True) -> str:
        """Mastra's accuracy sentence; tracescore adds argument mismatches and penalised repeats."""
        parts = [f"{self.matched}/{self.total_expected} expected steps matched."]
        if self.missing:
            parts.append(f"missing: {', '.join(self.missing)}.")
        if self.extra:
            parts.append(f"extra: {', '.join(self.extra)}.")
        if self.out_of_order:
            parts.append(f"out of order: {', '.join(self.out_of_order)}.")
        if not mastra:
            if self.args_mismatch:
                parts.append(f"called with other arguments: {', '.join(self.args_mismatch)}.")
            if self.repeated and not allow_repeated:
                parts.append(f"repeated (0.1 off each): {', '.join(self.repeated)}.")
        return " ".join(parts)

    def line(self, *, mastra: bool, allow_repeated: bool = True) -> str:
        """`Accuracy (<score>): <summary>` as in Mastra's unified reason."""
        return f"Accuracy ({fmt_score(self.score)}): " + self.summary(
            mastra=mastra, allow_repeated=allow_repeated
        )
