"""`llm_trajectory`: were the agent's steps necessary, in a sensible order, and complete?

Mastra's LLM trajectory scorer (reference/scorers.md §3.7): per step {necessary, in_order},
plus missing and extra steps. Mastra scores 0.6·necessary + 0.3·in order − 0.1·missing share,
so a perfect run gets 0.9; under `compat: mastra` that is reproduced (rounded to 2 places).
By default the missing term is a completeness credit instead, 0.1·(1 − missing share), so the
score spans 0..1 and a perfect run gets 1. Every call is judged, sub-agents' included.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, model_validator

from tracescore.judges.answer_schema import keyed_answer_model, keyed_entries
from tracescore.judges.base import JudgeScorerBase, mastra_round2
from tracescore.judges.prompts import JudgeRequest
from tracescore.judges.render import render_run
from tracescore.model.trajectory import Trajectory
from tracescore.scorers.base import Outcome

if TYPE_CHECKING:
    from tracescore.judges.client import JudgeClient

__all__ = [
    "ExpectedStep",
    "LlmTrajectory",
    "StepEvaluation",
    "StepVerdict",
    "TrajectoryAnswer",
    "trajectory_value",
]


class ExpectedStep(BaseModel):
    """A step the agent should take: a bare tool name, or `{tool, args}`."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    tool: str
    args: dict[str, Any] | None = None

    @model_validator(mode="before")
    @classmethod
    def bare_name(cls, data: Any) -> Any:
        return {"tool": data} if isinstance(data, str) else data


class StepEvaluation(BaseModel):
    """The judge's verdict on one step."""

    model_config = ConfigDict(extra="forbid")

    call: int
    step: str
    necessary: bool
    in_order: bool
    reasoning: str


class StepVerdict(BaseModel):
    """The judge's verdict on one step, under the step's own key in the answer."""

    model_config = ConfigDict(extra="forbid")

    step: str
    necessary: bool
    in_order: bool
    reasoning: str


_KEYED_SHAPE = (
    "Return `evaluations` as an object with exactly one entry per listed step, under the key "
    "`call_<number>` (`step` = its tool name), `missing_steps`, `extra_steps` (tool names, or "
    "empty lists) and a short `overall_assessment`."
)
_LIST_SHAPE = (
    "Return one evaluation per listed step (field `call` = its number, `step` = its tool name), "
    "`missing_steps`, `extra_steps` (tool names, or empty lists) and a short "
    "`overall_assessment`."
)
_REST: tuple[tuple[str, Any], ...] = (
    ("missing_steps", list[str]),
    ("extra_steps", list[str]),
    ("overall_assessment", str),
)


class TrajectoryAnswer(BaseModel):
    """What the judge returns."""

    model_config = ConfigDict(extra="forbid")

    evaluations: list[StepEvaluation]
    missing_steps: list[str]
    extra_steps: list[str]
    overall_assessment: str


def trajectory_value(answer: TrajectoryAnswer, *, mastra: bool) -> float:
    """The score of an answer (pure, so the formula is tested without a judge)."""
    evaluations = answer.evaluations
    if not evaluations:
        if answer.missing_steps:
            return 0.0
        return 0.5 if answer.extra_steps else 1.0
    n = len(evaluations)
    necessary = sum(1 for e in evaluations if e.necessary) / n
    in_order = sum(1 for e in evaluations if e.in_order) / n
    missing = len(answer.missing_steps)
    missing_share = missing / (n + missing) if missing else 0.0
    if mastra:
        value = 0.6 * necessary + 0.3 * in_order - 0.1 * missing_share
        return mastra_round2(min(1.0, max(0.0, value)))
    return min(1.0, max(0.0, 0.6 * necessary + 0.3 * in_order + 0.1 * (1.0 - missing_share)))


class LlmTrajectory(JudgeScorerBase):
    """Judge the necessity, order and completeness of the agent's steps."""

    type: Literal["llm_trajectory"]
    template_name = "llm_trajectory"
    template_version = 2

    steps: tuple[ExpectedStep, ...] | None = None
    """The expected trajectory, as a guideline for the judge; an empty list expects no steps."""
    compat: Literal["mastra"] | None = None
    """`mastra`: Mastra's formula (0.9 ceiling), the judge's own step list, 2-place rounding."""

    async def ajudge(self, trajectory: Trajectory, judge: JudgeClient) -> Outcome:
        mastra = self.compat == "mastra"
        rendered = render_run(trajectory, value_limit=judge.value_limit)
        wanted = [n.number for n in rendered.calls]
        fields = {
            "call_numbers": ", ".join(map(str, wanted)) if wanted else "none (no steps taken)",
            "expected": _expected(self.steps),
            "expected_rules": (
                ""
                if self.steps is None
                else " Use the expected trajectory given as a guideline: its steps are needed, "
                "steps outside it are extra unless the run clearly needed them."
            ),
        }

        fields["answer_shape"] = _LIST_SHAPE if mastra else _KEYED_SHAPE
        digest = self.digest(judge.model, judge.temperature)
        data = {"run": rendered.text}
        if mastra:
            listed = await judge.ask(
                JudgeRequest(self.template(), TrajectoryAnswer, digest, fields, data)
            )
            result, cached = listed.value, listed.cached
        else:
            keys = tuple(wanted)
            keyed = keyed_answer_model("TrajectoryAnswer", StepVerdict, keys, _REST)
            answer = await judge.ask(JudgeRequest(self.template(), keyed, digest, fields, data))
            rest = answer.value.model_dump(exclude={"evaluations"})
            result = TrajectoryAnswer(
                evaluations=[
                    StepEvaluation(call=n, **entry)
                    for n, entry in keyed_entries(answer.value, keys)
                ],
                **rest,
            )
            cached = answer.cached
        value = trajectory_value(result, mastra=mastra)
        details = {
            "evaluations": [e.model_dump() for e in result.evaluations],
            "missing_steps": list(result.missing_steps),
            "extra_steps": list(result.extra_steps),
            "template": self.template().id,
            "cached": cached,
        }
        return Outcome(value, _explain(result, value), details=details)


def _expected(steps: tuple[ExpectedStep, ...] | None) -> str:
    if steps is None:
        return ""
    if not steps:
        return "\nExpected trajectory: no steps at all (the request needs no tool).\n"
    lines = ["", "Expected trajectory (a guideline):"]
    for index, step in enumerate(steps, 1):
        args = f" (args: {json.dumps(step.args, sort_keys=True)})" if step.args else ""
        lines.append(f"{index}. {step.tool}{args}")
    return "\n".join(lines) + "\n"


def _explain(answer: TrajectoryAnswer, value: float) -> str:
    parts = [f"{value:.2f}: {answer.overall_assessment.strip()}"]
    unneeded = [f"call {e.call} {e.step!r}" for e in answer.evaluations if not e.necessary]
    disordered = [f"call {e.call} {e.step!r}" for e in answer.evaluations if not e.in_order]
    if unneeded:
        parts.append(f"unnecessary: {', '.join(unneeded)}")
    if disordered:
        parts.append(f"out of order: {', '.join(disordered)}")
    if answer.missing_steps:
        parts.append(f"missing: {', '.join(answer.missing_steps)}")
    if answer.extra_steps:
        parts.append(f"extra: {', '.join(answer.extra_steps)}")
    return "; ".join(parts)
