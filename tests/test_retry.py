"""The one retry policy and `Retry-After` parser, shared by the exporter and the judges."""

from __future__ import annotations

import random

import pytest

from tracescore.retry import RetryPolicy, parse_retry_after, retry_after_from_headers


@pytest.mark.parametrize(
    ("value", "expected"),
    [("1.5", 1.5), (" 3 ", 3.0), ("-2", 0.0), ("nan", None), ("inf", None), ("Tue, 99", None)],
)
def test_retry_after_values(value: str, expected: float | None) -> None:
    assert parse_retry_after(value) == expected


def test_an_http_date_without_a_zone_is_gmt() -> None:
    now = 1_800_000_000.0  # 2027-01-15 08:00:00 GMT
    assert parse_retry_after("Fri, 15 Jan 2027 08:00:30", now=now) == pytest.approx(30.0)


def test_milliseconds_win_over_seconds_and_a_bad_one_falls_back() -> None:
    assert retry_after_from_headers({"retry-after-ms": "250", "retry-after": "9"}) == 0.25
    assert retry_after_from_headers({"retry-after-ms": "soon", "retry-after": "9"}) == 9.0
    assert retry_after_from_headers({}) is None


def test_backoff_doubles_with_jitter_up_to_the_maximum() -> None:
    policy = RetryPolicy(initial=0.5, maximum=5.0)
    rng = random.Random(1)
    for attempt, base in enumerate([0.5, 1.0, 2.0, 4.0, 5.0, 5.0]):
        delays = [policy.delay(attempt, rng=rng) for _ in range(200)]
        assert min(delays) >= base * 0.5
        assert max(delays) <= min(5.0, base * 1.5)
        assert max(delays) - min(delays) > base * 0.3, "jittered, not fixed"


def test_the_servers_delay_replaces_the_backoff() -> None:
    policy = RetryPolicy(initial=0.5, maximum=5.0)
    assert policy.delay(3, server_delay=0.2) == 0.2
    assert policy.delay(0, server_delay=-1.0) == 0.0


def test_giving_up_after_max_elapsed_and_never_at_zero() -> None:
    assert RetryPolicy(0.5, 5.0, max_elapsed=10.0).gives_up(elapsed=9.0, delay=2.0)
    assert not RetryPolicy(0.5, 5.0, max_elapsed=10.0).gives_up(elapsed=5.0, delay=2.0)
    assert not RetryPolicy(0.5, 5.0, max_elapsed=0.0).gives_up(elapsed=1e9, delay=5.0)
