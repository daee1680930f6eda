"""The service's heartbeat: a tick that scores what is due, a slice at a time, and hands what
waits in the outboxes to the exporter."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable

from tracescore.assembler import Assembler

__all__ = ["TICK_SLICE", "tick_interval", "tick_loop"]

log = logging.getLogger("tracescore.pipeline.service")  # the service's messages, as before

_TICK_MIN_S = 0.01
_TICK_MAX_S = 0.25
# Runs scored between two yields to the event loop: about 5-10 ms of scoring at 0.1-0.2 ms a
# run, so a request arriving meanwhile waits that long, not a whole tick's scoring.
TICK_SLICE = 48


def tick_interval(decision_wait: float) -> float:
    """Seconds between ticks: a quarter of the decision wait, within 10-250 ms."""
    return min(_TICK_MAX_S, max(_TICK_MIN_S, decision_wait / 4))


async def tick_loop(assembler: Assembler, flush: Callable[[], bool], interval: float) -> None:
    """Tick every `interval` seconds until cancelled; `flush` empties the outboxes.

    Ticks start `interval` apart, not `interval` after the last one ended: under load a tick
    takes hundreds of milliseconds (its slices share the loop with the receivers), and a full
    interval of sleep after it left the core idle while runs came due, so the lag from due to
    scored grew with the load (bench/capacity.py: at 0.7 of a core, 84k spans/s, the service
    fell behind with a third of its core unused)."""
    due = time.monotonic()
    while True:
        due += interval
        await asyncio.sleep(max(_TICK_MIN_S, due - time.monotonic()))
        due = max(due, time.monotonic() - interval)  # after a long tick, no burst of ticks
        try:
            await tick(assembler, flush)
        except Exception:  # a bug in one tick must not stop the service's heartbeat
            log.exception("tracescore: periodic step failed")


async def tick(assembler: Assembler, flush: Callable[[], bool]) -> None:
    """Score what is due in slices, yielding to the event loop between them; what becomes due
    meanwhile waits for the next tick (`now` is fixed), so a tick ends."""
    now = time.monotonic()
    while True:
        async with assembler.exclusive:  # never between the slices of a request's ingest
            scored = assembler.tick(now, limit=TICK_SLICE)
        if scored < TICK_SLICE:
            break
        flush()
        await asyncio.sleep(0)
    flush()
