"""The order of a run's steps: requested calls in request order, the rest by time, merged.

Tool calls follow the order the model requested them (tool_call parts across the run's model
spans), so a paused call keeps its place between its neighbours. Executions with no recorded
request, model calls and sub-agent runs follow start time, then end time, then span id. The two
sequences are merged like merge sort, so neither loses its own order.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence

from tracescore.model.trajectory import ModelCall, Step

__all__ = ["merge_steps"]


def merge_steps(
    requested: Sequence[tuple[int, Step]], starts: list[int], others: list[Step]
) -> tuple[Step, ...]:
    """Merge sort's merge of the requested calls (each with its anchor time) into the other
    steps (in (start, end, span id) order, `starts` their start times): each sequence keeps its
    order; on a tie a requested call goes after model calls (a call never precedes the model
    call that requested it; clocks of millisecond resolution, as in JavaScript SDKs, start both
    in the same millisecond) and before the rest (a tool that wraps a sub-agent starts with it).

    Before each requested call go all remaining others that start earlier: found by bisection,
    and copied in C rather than one comparison at a time.
    """
    if not requested:
        return tuple(others)
    out: list[Step] = []
    j = 0
    n = len(others)
    for anchor, call in requested:
        k = bisect_left(starts, anchor, j)
        while k < n and starts[k] == anchor and others[k].__class__ is ModelCall:
            k += 1
        if k > j:
            out.extend(others[j:k])
            j = k
        out.append(call)
    out.extend(others[j:])
    return tuple(out)
