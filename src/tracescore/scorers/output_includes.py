"""`output_includes`, 0 or 1: Mastra's `checks.includes` over the run's final output.

A check of the output, not of tool calls, so none of the call policies of the tool checks
(`checks`) applies to it. Refused at construction: an empty `text`, which could never fail.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import StringConstraints

from tracescore.model.trajectory import Reading, Trajectory
from tracescore.scorers._common import Compat
from tracescore.scorers.base import Outcome, ScorerBase

__all__ = ["OutputIncludes"]


class OutputIncludes(ScorerBase):
    """1 when the run's final output contains `text` (`checks.includes`).

    A run whose output was not recorded cannot be scored (value None) by default; Mastra reads
    an empty text there, so under `compat: mastra` it scores 0.
    """

    type: Literal["output_includes"] = "output_includes"
    text: Annotated[str, StringConstraints(min_length=1)]
    ignore_case: bool = True
    compat: Compat = "tracescore"

    def readings(self) -> frozenset[Reading]:
        """None: only the run's final output is read."""
        return frozenset()

    def evaluate(self, trajectory: Trajectory) -> Outcome:
        """Substring test, case-insensitive by default."""
        output = trajectory.output
        details: dict[str, object] = {"text": self.text, "ignore_case": self.ignore_case}
        if output is None:
            if self.compat != "mastra":
                return Outcome(None, "the run's final output was not recorded", details=details)
            output = ""
        needle, hay = self.text, output
        if self.ignore_case:
            # Mastra lower-cases; casefold also folds ß/ss and similar pairs.
            fold = str.lower if self.compat == "mastra" else str.casefold
            needle, hay = fold(needle), fold(hay)
        found = needle in hay
        verb = "contains" if found else "does not contain"
        explanation = f"the final output {verb} {self.text!r}"
        return Outcome(1.0 if found else 0.0, explanation, None, details)
