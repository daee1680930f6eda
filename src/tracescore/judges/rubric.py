"""`llm_rubric`: a custom criterion in plain words, judged into a score, a label, a reason.

`labels` as a list lets the judge pick a label next to its score; as a mapping
(`{good: 1.0, poor: 0.0}`) the judge only picks a label and the score comes from the mapping,
which keeps scores on the scale the author chose. Examples (few-shot) are the author's.
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, create_model, field_validator, model_validator

from tracescore.judges.base import JudgeScorerBase
from tracescore.judges.prompts import JudgeRequest
from tracescore.judges.render import render_run
from tracescore.model.trajectory import Trajectory
from tracescore.scorers.base import Outcome

if TYPE_CHECKING:
    from tracescore.judges.client import JudgeClient

__all__ = ["LlmRubric", "RubricExample", "rubric_answer_model"]


class RubricExample(BaseModel):
    """A worked example for the judge: a request and/or answer, and its score or label."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    input: str | None = None
    output: str | None = None
    score: float | None = Field(default=None, ge=0.0, le=1.0)
    label: str | None = None
    explanation: str | None = None

    @model_validator(mode="after")
    def says_something(self) -> RubricExample:
        if self.input is None and self.output is None:
            raise ValueError("an example needs an input, an output or both")
        if self.score is None and self.label is None:
            raise ValueError("an example needs a score, a label or both")
        return self


@lru_cache(maxsize=64)
def rubric_answer_model(labels: tuple[str, ...] | None, scored_by_label: bool) -> type[BaseModel]:
    """The judge's answer schema: score and/or a label restricted to `labels`, explanation."""
    fields: dict[str, Any] = {}
    if not scored_by_label:
        fields["score"] = (float, Field(ge=0.0, le=1.0))
    if labels:
        label_type: Any = Literal.__getitem__(labels)  # built at run time from the config
        fields["label"] = (label_type, ...)
    fields["explanation"] = (str, ...)
    model: type[BaseModel] = create_model(
        "RubricAnswer", __config__=ConfigDict(extra="forbid"), **fields
    )
    return model


class LlmRubric(JudgeScorerBase):
    """Judge a run against a criterion written in plain words."""

    type: Literal["llm_rubric"]
    template_name = "llm_rubric"

    criteria: str
    """What a good run does, in plain words (the only thing the judge checks)."""
    examples: tuple[RubricExample, ...] = ()
    """Worked examples shown to the judge (few-shot)."""
    labels: dict[str, float] | tuple[str, ...] | None = None
    """Labels the judge picks from: a list, or a mapping from label to score."""

    @field_validator("criteria")
    @classmethod
    def criteria_not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("criteria is empty: a rubric needs a criterion to check")
        return value

    @field_validator("labels")
    @classmethod
    def labels_are_usable(
        cls, value: dict[str, float] | tuple[str, ...] | None
    ) -> dict[str, float] | tuple[str, ...] | None:
        if value is None:
            return None
        if not value:
            raise ValueError("labels is empty; leave it out or give at least two labels")
        names = list(value)
        if any(not n.strip() for n in names):
            raise ValueError("labels must not be blank")
        if len(set(names)) != len(names):
            raise ValueError(f"duplicate labels in {names}")
        if isinstance(value, dict):
            for name, score in value.items():
                if not 0.0 <= score <= 1.0:
                    raise ValueError(f"label {name!r} maps to {score!r}; scores lie in [0, 1]")
        return value

    @model_validator(mode="after")
    def example_labels_known(self) -> LlmRubric:
        if self.labels is not None:
            for index, example in enumerate(self.examples):
                if example.label is not None and example.label not in self.labels:
                    raise ValueError(
                        f"examples[{index}].label {example.label!r} is not one of the labels "
                        f"{list(self.labels)}"
                    )
        return self

    async def ajudge(self, trajectory: Trajectory, judge: JudgeClient) -> Outcome:
        by_label = isinstance(self.labels, dict)
        labels = tuple(self.labels) if self.labels is not None else None
        output = rubric_answer_model(labels, by_label)
        rendered = render_run(trajectory, value_limit=judge.value_limit)
        fields = {
            "criteria": self.criteria.strip(),
            "answer_rule": self._answer_rule(),
            "examples": self._examples(),
        }
        request = JudgeRequest(
            self.template(), output, self.digest(judge.model, judge.temperature),
            fields=fields, data={"run": rendered.text},
        )  # fmt: skip
        answer = await judge.ask(request)
        result = answer.value.model_dump()
        label: str | None = result.get("label")
        if isinstance(self.labels, dict):
            assert label is not None  # the schema requires it when labels are given
            value = float(self.labels[label])
        else:
            value = float(result["score"])
        details = {"template": self.template().id, "cached": answer.cached}
        return Outcome(value, str(result["explanation"]), label=label, details=details)

    def _answer_rule(self) -> str:
        scale = "Give a score between 0 and 1 (1: fully meets the criterion, 0: not at all)"
        if self.labels is None:
            return scale + "."
        if isinstance(self.labels, dict):
            options = ", ".join(f"{json.dumps(k)} (score {v:g})" for k, v in self.labels.items())
            return f"Choose the one label that fits best, from: {options}."
        options = ", ".join(json.dumps(k) for k in self.labels)
        return f"{scale}, and the one label that fits best, from: {options}."

    def _examples(self) -> str:
        if not self.examples:
            return ""
        lines = ["", "Examples of how to judge:"]
        for index, example in enumerate(self.examples, 1):
            lines.append(f"Example {index}:")
            if example.input is not None:
                lines.append(f"  request: {example.input}")
            if example.output is not None:
                lines.append(f"  answer: {example.output}")
            verdict = [f"score {example.score:g}"] if example.score is not None else []
            if example.label is not None:
                verdict.append(f"label {json.dumps(example.label)}")
            lines.append(f"  judgement: {', '.join(verdict)}")
            if example.explanation:
                lines.append(f"  because: {example.explanation}")
        return "\n".join(lines)
