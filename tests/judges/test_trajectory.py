"""`llm_trajectory`: Mastra's formula under `compat: mastra`, the full 0..1 range by default."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from judges._helpers import client_for, run, shop_run, trajectory_answer
from support.fake_openai_process import FakeOpenAI
from tracescore.config.scorers import parse_scorer
from tracescore.judges.trajectory import LlmTrajectory, TrajectoryAnswer, trajectory_value
from tracescore.model import Score, Trajectory

Factory = Callable[..., FakeOpenAI]


def scorer(**params: Any) -> LlmTrajectory:
    built = parse_scorer({"type": "llm_trajectory", **params})
    assert isinstance(built, LlmTrajectory)
    return built


def judge(server: FakeOpenAI, s: LlmTrajectory, trajectory: Trajectory) -> Score:
    client = client_for(server)

    async def go() -> Score:
        try:
            return await s.ascore(trajectory, client)
        finally:
            await client.aclose()

    return run(go())


ALL_GOOD = trajectory_answer((1, "a", True, True), (2, "b", True, True))
MIXED = trajectory_answer((1, "a", True, True), (2, "b", True, False), missing=("c",))


@pytest.mark.parametrize(
    ("answer", "mastra", "expected"),
    [
        (ALL_GOOD, True, 0.9),  # Mastra's ceiling
        (ALL_GOOD, False, 1.0),
        (MIXED, True, 0.72),  # 0.6 + 0.15 - 0.1/3, rounded half up
        (MIXED, False, 0.6 + 0.15 + 0.1 * 2 / 3),
        (trajectory_answer(extra=("x",)), True, 0.5),
        (trajectory_answer(missing=("x",)), False, 0.0),
        (trajectory_answer(), False, 1.0),
        (trajectory_answer((1, "a", False, False), missing=("b",)), False, 0.05),
    ],
)
def test_the_formula(answer: dict[str, Any], mastra: bool, expected: float) -> None:
    listed = {  # the scorer's own list, as it is made from the keyed answer
        **answer,
        "evaluations": [{"call": int(k[5:]), **v} for k, v in answer["evaluations"].items()],
    }
    value = trajectory_value(TrajectoryAnswer.model_validate(listed), mastra=mastra)
    assert value == pytest.approx(expected)


def test_every_call_is_judged_sub_agents_and_failures_included(
    fake_openai_factory: Factory,
) -> None:
    answer = trajectory_answer(
        (1, "lookup_order", True, True), (2, "get_weather", False, True), (3, "refund", True, True)
    )
    server = fake_openai_factory([{"json": answer}])
    score = judge(server, scorer(), shop_run())
    assert score.value == pytest.approx(0.6 * 2 / 3 + 0.3 + 0.1)
    assert "unnecessary: call 2 'get_weather'" in score.explanation
    user = server.chat_bodies()[0]["messages"][1]["content"]
    assert "by their call number: 1, 2, 3." in user
    assert "Expected trajectory" not in user


def test_expected_steps_are_given_to_the_judge_as_a_guideline(
    fake_openai_factory: Factory,
) -> None:
    answer = trajectory_answer(
        (1, "lookup_order", True, True),
        (2, "get_weather", False, True),
        (3, "refund", True, True),
        keyed=False,
    )
    server = fake_openai_factory([{"json": answer}])
    s = scorer(steps=["lookup_order", {"tool": "refund", "args": {"order_id": "A-42"}}],
               compat="mastra")  # fmt: skip
    score = judge(server, s, shop_run())
    assert score.value == 0.7  # 0.6·2/3 + 0.3, Mastra rounding
    system, user = (m["content"] for m in server.chat_bodies()[0]["messages"])
    assert "Use the expected trajectory given as a guideline" in system
    assert (
        'Expected trajectory (a guideline):\n1. lookup_order\n2. refund (args: {"order_id"' in user
    )


def test_an_empty_expected_list_means_no_steps_at_all(fake_openai_factory: Factory) -> None:
    answer = trajectory_answer(extra=("lookup_order",), keyed=False)
    server = fake_openai_factory([{"json": answer}])
    score = judge(server, scorer(steps=[], compat="mastra"), shop_run(steps=()))
    assert score.value == 0.5
    assert "no steps at all" in server.chat_bodies()[0]["messages"][1]["content"]
