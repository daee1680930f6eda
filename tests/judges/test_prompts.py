"""Versioned templates and the messages of one judge call."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from tracescore.judges.prompts import JudgeRequest, build_messages, load_template
from tracescore.judges.relevancy import AnswerRelevancy
from tracescore.judges.rubric import LlmRubric
from tracescore.judges.sanitize import Fence
from tracescore.judges.tool_call_accuracy import LlmToolCallAccuracy
from tracescore.judges.trajectory import LlmTrajectory

JUDGES = (LlmToolCallAccuracy, LlmTrajectory, LlmRubric, AnswerRelevancy)


class Answer(BaseModel):
    verdict: str


@pytest.mark.parametrize("scorer", JUDGES, ids=lambda c: c.template_name)
def test_every_judge_ships_a_versioned_template_with_both_sections(
    scorer: type[LlmRubric],
) -> None:
    template = scorer.template()
    assert template.id == f"{scorer.template_name}.v{scorer.template_version}"
    assert template.system
    assert template.user
    assert "run" in template.placeholders()
    assert "tracescore judge template" not in template.system  # the header is not sent
    assert len(template.sha256) == 64


def test_a_missing_template_version_is_an_error() -> None:
    with pytest.raises(FileNotFoundError):
        load_template("llm_rubric", 99)


def _request(data: str) -> JudgeRequest[Answer]:
    template = load_template("answer_relevancy", 1)
    return JudgeRequest(template, Answer, "digest", data={"run": data})


def test_data_is_fenced_and_never_expanded_as_a_template() -> None:
    fence = Fence.fresh()
    system, user = build_messages(
        _request("costs $run and ${criteria}"), fence, schema_in_prompt=False
    )
    assert system["role"] == "system"
    assert fence.rules() in system["content"]
    assert f"{fence.begin} name=run\ncosts $run and ${{criteria}}\n{fence.end}" in user["content"]


def test_the_schema_goes_in_the_prompt_only_when_the_server_does_not_enforce_it() -> None:
    fence = Fence.fresh()
    enforced, _ = build_messages(_request("x"), fence, schema_in_prompt=False)
    in_prompt, _ = build_messages(_request("x"), fence, schema_in_prompt=True)
    assert '"verdict"' not in enforced["content"]
    assert '"verdict"' in in_prompt["content"]


def test_a_template_field_left_unfilled_is_refused() -> None:
    template = load_template("llm_rubric", 1)
    request = JudgeRequest(template, Answer, "d", data={"run": "x"})
    with pytest.raises(KeyError, match="criteria"):
        build_messages(request, Fence.fresh(), schema_in_prompt=False)


def test_the_cache_key_covers_digest_template_fields_and_data() -> None:
    base = _request("x")
    keys = {
        base.content_key(),
        _request("y").content_key(),
        JudgeRequest(base.template, Answer, "other", data={"run": "x"}).content_key(),
        JudgeRequest(base.template, Answer, "digest", {"f": "1"}, {"run": "x"}).content_key(),
    }
    assert len(keys) == 4
    assert base.content_key() == _request("x").content_key()
