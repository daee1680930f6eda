"""Refused requests are told to come back in turn, at the rate requests were getting in."""

from __future__ import annotations

import pytest

from tracescore.pipeline.retry_schedule import RetrySchedule


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _admit(schedule: RetrySchedule, clock: Clock, n: int, over_s: float) -> None:
    for _ in range(n):
        schedule.admitted()
        clock.now += over_s / n


def test_with_nothing_admitted_lately_the_buffers_estimate_is_all_that_is_said() -> None:
    clock = Clock()
    schedule = RetrySchedule(clock)
    assert [schedule.retry_in(0.25) for _ in range(3)] == [0.25, 0.25, 0.25]
    assert schedule.retry_in(90.0) == 30.0


def test_refusals_are_spaced_by_the_admission_interval_after_the_first() -> None:
    clock = Clock()
    schedule = RetrySchedule(clock)
    _admit(schedule, clock, 200, over_s=2.0)  # 100 requests a second
    assert schedule.rate() == pytest.approx(100.0, rel=0.02)
    delays = [schedule.retry_in(0.25) for _ in range(50)]
    assert delays[0] == pytest.approx(0.25)
    assert delays[1] - delays[0] == pytest.approx(0.01, rel=0.02)
    assert delays[-1] == pytest.approx(0.25 + 49 * 0.01, rel=0.02)


def test_the_turns_run_out_with_time_and_the_queue_starts_over() -> None:
    clock = Clock()
    schedule = RetrySchedule(clock)
    _admit(schedule, clock, 100, over_s=1.0)
    for _ in range(20):
        schedule.retry_in(0.1)
    clock.now += 0.5  # every turn handed out (the last at +0.29 s) has passed
    _admit(schedule, clock, 10, over_s=0.1)
    assert schedule.retry_in(0.1) == pytest.approx(0.1)


def test_a_refusal_waits_for_its_turn_even_when_the_buffer_would_free_sooner() -> None:
    clock = Clock()
    schedule = RetrySchedule(clock)
    _admit(schedule, clock, 20, over_s=2.0)  # 10 a second
    first, second = schedule.retry_in(2.0), schedule.retry_in(0.0)
    assert (first, second) == (pytest.approx(2.0), pytest.approx(2.1, rel=0.05))


def test_no_turn_is_further_than_thirty_seconds() -> None:
    clock = Clock()
    schedule = RetrySchedule(clock)
    _admit(schedule, clock, 4, over_s=2.0)  # 2 a second
    delays = [schedule.retry_in(1.0) for _ in range(200)]
    assert max(delays) == 30.0
    assert delays[:3] == [1.0, pytest.approx(1.5, rel=0.05), pytest.approx(2.0, rel=0.05)]


def test_admissions_a_window_ago_no_longer_count() -> None:
    clock = Clock()
    schedule = RetrySchedule(clock)
    _admit(schedule, clock, 100, over_s=1.0)
    clock.now += 5.0
    assert schedule.rate() == 0.0
    assert [schedule.retry_in(0.3) for _ in range(2)] == [0.3, 0.3]
