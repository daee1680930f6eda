"""Identical questions in flight are asked once; every waiter gets the answer (or the error)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

from judges._helpers import client_for, run, shop_run, tool_answer
from support.fake_openai_process import FakeOpenAI
from tracescore.config.scorers import parse_scorer
from tracescore.judges.client import JudgeShared
from tracescore.judges.inflight import InFlight
from tracescore.model import Score

Factory = Callable[..., FakeOpenAI]

ANSWER = tool_answer((1, "lookup_order", True), (2, "get_weather", False))


def judge_all(server: FakeOpenAI, n: int, shared: JudgeShared, **endpoint: Any) -> list[Score]:
    """`n` identical runs judged at once through one client, as a burst of live runs is."""
    scorer = parse_scorer({"type": "llm_tool_call_accuracy", "calls": "attempted"})
    client = client_for(server, shared, **endpoint)

    async def go() -> list[Score]:
        try:
            trajectory = shop_run()
            return list(
                await asyncio.gather(*(scorer.ascore(trajectory, client) for _ in range(n)))
            )  # type: ignore[attr-defined]
        finally:
            await client.aclose()

    return run(go())


def counting_hits(shared: JudgeShared, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    hits = [0]
    original = shared.counters.cache_hit

    def hit() -> None:
        hits[0] += 1
        original()

    monkeypatch.setattr(shared.counters, "cache_hit", hit)
    return hits


def test_identical_questions_at_once_send_one_request(
    fake_openai_factory: Factory, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = fake_openai_factory([{"json": ANSWER, "delay": 0.3}])
    shared = JudgeShared(retry_backoff_s=0.01)
    hits = counting_hits(shared, monkeypatch)
    scores = judge_all(server, 5, shared)
    assert len(server.chat_bodies()) == 1
    assert [s.value for s in scores] == [0.5] * 5
    assert sorted(s.details["cached"] for s in scores) == [False] + [True] * 4
    assert hits == [4]
    assert len(shared.inflight) == 0


def test_the_leaders_error_reaches_every_waiter_once_asked(
    fake_openai_factory: Factory, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = fake_openai_factory([{"status": 401, "error": "bad key", "delay": 0.3}])
    shared = JudgeShared(retry_backoff_s=0.01)
    scores = judge_all(server, 3, shared)
    assert len(server.chat_bodies()) == 1
    assert all(s.error is not None and s.error.startswith("http_401") for s in scores)
    assert len(shared.inflight) == 0


def test_a_cancelled_leader_hands_the_question_to_a_waiter() -> None:
    async def go() -> tuple[Any, int]:
        inflight = InFlight()
        future = inflight.lead("k")
        waiter = asyncio.ensure_future(asyncio.shield(future))
        inflight.finish("k", future, None, asyncio.CancelledError())
        return await waiter, len(inflight)

    assert run(go()) == (None, 0)  # None: ask again, and nothing is left in flight
