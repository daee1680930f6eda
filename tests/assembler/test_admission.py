"""Admission: when a full buffer says space frees, ticks that score in slices, and a bytes
estimate that matches what the process holds."""

from __future__ import annotations

import gc
import tracemalloc

import pytest

from assembler._harness import Harness
from support.agent_spans import agent_run, span_ids
from tracescore.errors import OverloadedError

WAIT = 2.0  # the default decision_wait
TICK = 0.25  # the longest the service waits between two ticks


def _refusal(h: Harness) -> OverloadedError:
    with pytest.raises(OverloadedError) as caught:
        h.assembler.check_capacity()
    return caught.value


def test_a_full_buffer_says_when_its_first_run_is_due() -> None:
    h = Harness(max_runs=2)
    h.send(agent_run(seed=1).spans)
    h.now = 0.5
    h.send(agent_run(seed=2).spans)
    # The first run is quiet since 0: due at WAIT, scored within a tick of that.
    assert _refusal(h).retry_after_s == pytest.approx(WAIT + TICK - 0.5)
    h.now = 1.9
    assert _refusal(h).retry_after_s == pytest.approx(WAIT + TICK - 1.9)
    h.now = WAIT + 0.1  # due, not scored yet: a tick away at most
    assert _refusal(h).retry_after_s == pytest.approx(TICK)
    h.tick(WAIT + 0.1)
    h.assembler.check_capacity()


def test_a_run_without_its_agent_span_frees_its_space_at_max_trace_age() -> None:
    h = Harness(max_runs=1, max_trace_age="10s")
    h.send(agent_run().children)  # no agent span: only its age decides
    h.now = 4.0
    assert _refusal(h).retry_after_s == pytest.approx(10.0 - 4.0 + TICK)


def test_a_full_export_queue_advises_a_second() -> None:
    h = Harness()
    h.accepting = False
    assert _refusal(h).retry_after_s == 1.0


def test_a_tick_with_a_limit_scores_the_oldest_due_runs_first_and_the_rest_later() -> None:
    h = Harness()
    runs = [agent_run(seed=i) for i in range(5)]
    for i, run in enumerate(runs):
        h.now = i * 0.01
        h.send(run.spans)
    h.now = 10.0
    assert h.assembler.tick(limit=2) == 2
    assert [r.trace_id for r in h.ready] == [run.agent.trace_id.hex() for run in runs[:2]]
    assert h.assembler.runs == 3
    assert h.assembler.tick(limit=2) == 2
    assert h.assembler.tick(limit=2) == 1
    assert h.assembler.tick(limit=2) == 0
    assert [r.trace_id for r in h.ready] == [run.agent.trace_id.hex() for run in runs]
    # Children went out at once, each agent span once its run was scored: all of them.
    assert sorted(span_ids(h.forwarded_spans())) == sorted(
        span_ids([s for r in runs for s in r.spans])
    )


@pytest.mark.parametrize("readings", ["names", "arguments"])
def test_the_bytes_estimate_is_within_a_quarter_of_what_is_held(readings: str) -> None:
    scenario = "scenarios:\n  - name: all\n    scorers:\n" + (
        "      - {type: tool_calls, expected_tools: [lookup_order],"
        " arguments: {lookup_order: {order_id: '1'}}}\n"
        "      - {type: trajectory_accuracy, steps: [{tool: lookup_order}]}\n"
        if readings == "arguments"
        else "      - {type: called_tool, tool: lookup_order}\n"
    )
    h = Harness(scenario, max_runs=100_000)
    runs = [agent_run(seed=i) for i in range(300)]
    bodies = [run.spans for run in runs]
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    for spans in bodies:
        h.send(spans)
    gc.collect()
    forwarded = sum(len(body) + 33 for body, _ in h.forwarded)  # kept by the harness, not held
    held = tracemalloc.get_traced_memory()[0] - before - forwarded
    tracemalloc.stop()
    estimate = h.assembler.buffered_bytes - sum(len(b) for b, _ in h.assembler._outbox._items)
    assert h.assembler.runs == len(runs)
    assert 0.75 * held <= estimate <= 1.25 * held, (estimate, held)
