"""`answer_relevancy`: does the final answer address the user's request?

The judge gives a verdict (`fully`, `partially`, `not`) rather than a free number, and the
score follows from it (1, 0.5, 0), so the same judgement always means the same score. A run
with no recorded request or no final answer cannot be judged (no value, no judge call).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict

from tracescore.judges.base import JudgeScorerBase
from tracescore.judges.prompts import JudgeRequest
from tracescore.judges.render import render_run
from tracescore.model.trajectory import Trajectory
from tracescore.scorers.base import Outcome

if TYPE_CHECKING:
    from tracescore.judges.client import JudgeClient

__all__ = ["VERDICT_LABELS", "VERDICT_VALUES", "AnswerRelevancy", "RelevancyAnswer"]

VERDICT_VALUES: dict[str, float] = {"fully": 1.0, "partially": 0.5, "not": 0.0}
VERDICT_LABELS: dict[str, str] = {
    "fully": "relevant",
    "partially": "partially_relevant",
    "not": "irrelevant",
}


class RelevancyAnswer(BaseModel):
    """What the judge returns."""

    model_config = ConfigDict(extra="forbid")

    verdict: Literal["fully", "partially", "not"]
    reasoning: str


class AnswerRelevancy(JudgeScorerBase):
    """Judge whether the final answer responds to what the user asked."""

    type: Literal["answer_relevancy"]
    template_name = "answer_relevancy"

    async def ajudge(self, trajectory: Trajectory, judge: JudgeClient) -> Outcome:
        if not trajectory.input:
            return Outcome(None, "no user request recorded: nothing to judge the answer against")
        if not trajectory.output:
            return Outcome(None, "no final answer recorded: nothing to judge")
        rendered = render_run(trajectory, value_limit=judge.value_limit)
        request = JudgeRequest(
            self.template(), RelevancyAnswer, self.digest(judge.model, judge.temperature),
            data={"run": rendered.text},
        )  # fmt: skip
        answer = await judge.ask(request)
        verdict = answer.value.verdict
        return Outcome(
            VERDICT_VALUES[verdict],
            f"answer {VERDICT_LABELS[verdict].replace('_', ' ')}: {answer.value.reasoning}",
            label=VERDICT_LABELS[verdict],
            details={"template": self.template().id, "cached": answer.cached},
        )
