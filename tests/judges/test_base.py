"""What every judge scorer shares: digest, sync refusal, never-raising `ascore`."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from judges._helpers import client_for, run, shop_run
from support.fake_openai_process import FakeOpenAI
from tracescore.config.scorers import parse_scorer
from tracescore.judges.base import JudgeScorerBase, mastra_round2

Factory = Callable[..., FakeOpenAI]
JUDGE_TYPES = ("llm_tool_call_accuracy", "llm_trajectory", "llm_rubric", "answer_relevancy")


def build(type_: str, **params: object) -> JudgeScorerBase:
    if type_ == "llm_rubric":
        params.setdefault("criteria", "polite")
    scorer = parse_scorer({"type": type_, **params})
    assert isinstance(scorer, JudgeScorerBase)
    return scorer


@pytest.mark.parametrize("type_", JUDGE_TYPES)
def test_judge_scorers_are_registered_as_not_deterministic(type_: str) -> None:
    assert build(type_).deterministic is False


@pytest.mark.parametrize("type_", JUDGE_TYPES)
def test_the_sync_score_says_a_judge_is_required(type_: str) -> None:
    score = build(type_).score(shop_run())
    assert score.value is None
    assert score.error is not None
    assert score.error.startswith("judge_required: scorer")


def test_the_digest_covers_model_temperature_and_parameters_but_not_the_connection() -> None:
    base = build("llm_rubric")
    digests = {
        base.digest("m1", 0.0),
        base.digest("m2", 0.0),
        base.digest("m1", 0.5),
        build("llm_rubric", criteria="terse").digest("m1", 0.0),
    }
    assert len(digests) == 4
    moved = build("llm_rubric", judge={"base_url": "http://other:1/v1", "timeout_s": 3})
    assert moved.digest("m1", 0.0) == base.digest("m1", 0.0)
    assert base.digest("m1", 0.0).startswith("scorer-v1:")
    named = build("llm_rubric", name="tone", threshold=0.5)
    assert named.digest("m1", 0.0) == base.digest("m1", 0.0)


def test_a_per_scorer_model_is_in_the_digest_without_a_client() -> None:
    own = build("llm_rubric", judge={"model": "m9"})
    assert own.digest() == own.digest("m9", None)


def test_a_score_carries_the_digest_of_the_model_that_judged(fake_openai_factory: Factory) -> None:
    server = fake_openai_factory([{"json": {"score": 1, "explanation": "e"}}])
    scorer = build("llm_rubric")
    client = client_for(server)

    async def go() -> object:
        try:
            return await scorer.ascore(shop_run(), client)
        finally:
            await client.aclose()

    score = run(go())
    assert score.digest == scorer.digest("judge-model", 0.0)  # type: ignore[attr-defined]


def test_a_judge_that_cannot_be_reached_gives_an_error_score_not_an_exception() -> None:
    scorer = build("answer_relevancy")

    class Closed:  # any address nobody listens on
        base_url = "http://127.0.0.1:9/v1"

    client = client_for(Closed(), max_retries=0, timeout_s=2)  # type: ignore[arg-type]

    async def go() -> object:
        try:
            return await scorer.ascore(shop_run(), client)
        finally:
            await client.aclose()

    score = run(go())
    assert score.value is None  # type: ignore[attr-defined]
    assert score.error.startswith("connection: judge 'judge-model'")  # type: ignore[attr-defined]


@pytest.mark.parametrize(("value", "rounded"), [(0.125, 0.13), (0.725, 0.73), (2 / 3, 0.67)])
def test_mastra_rounding_is_half_up(value: float, rounded: float) -> None:
    assert mastra_round2(value) == rounded
