"""Budgets over sliding windows, moved by an injected clock (no sleeping, no timing)."""

from __future__ import annotations

from tracescore.judges.budget import JudgeBudget


def test_calls_per_minute_slide() -> None:
    now = [0.0]
    budget = JudgeBudget(max_calls_per_minute=2, clock=lambda: now[0])
    assert [budget.try_call(), budget.try_call()] == [None, None]
    assert budget.try_call() == "max_calls_per_minute=2 reached"
    now[0] = 59.9
    assert budget.try_call() is not None
    now[0] = 60.0  # the first call is now a minute old
    assert budget.try_call() is None


def test_tokens_per_hour_slide_and_a_refused_call_is_not_recorded() -> None:
    now = [0.0]
    budget = JudgeBudget(max_tokens_per_hour=100, clock=lambda: now[0])
    assert budget.try_call() is None
    budget.spend_tokens(100)
    assert budget.try_call() == "max_tokens_per_hour=100 reached (100 tokens in the last hour)"
    now[0] = 3600.0
    assert budget.tokens_last_hour == 0
    assert budget.try_call() is None


def test_no_limits_never_refuse() -> None:
    budget = JudgeBudget()
    for _ in range(1000):
        assert budget.try_call() is None
    budget.spend_tokens(10**9)
    assert budget.try_call() is None
