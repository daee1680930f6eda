"""Flat runs whose model spans record the calls they asked for: the fast path joins them.

The shape SDKs with message capture send: chat spans carrying `gen_ai.output.messages` with
`tool_call` parts, whose ids the `execute_tool` spans repeat. Each case is built with and
without the fast path (`both`), and the two results must be equal. Generated runs vary what a
join meets in real traces (parallel calls, requests never executed and what their responses
or decision events made of them, executions nobody asked for, a call recorded twice, one id
executed twice, errors, tools that start with or before the model call, denials told to a
resumed run, approvals, output tools); each of those must take the fast path, and each
variation that needs the general path (a request or execution without an id, a handoff span,
any odd structure) must decline it. A fast path with a deliberately broken join must fail here.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import pytest

from tracescore import semconv
from tracescore.model.span import SpanRecord
from tracescore.model.trajectory import READINGS
from tracescore.trajectory import BuildOptions, _build, _flat, attribute_filter
from tracescore.trajectory._flat_steps import FlatParts
from tracescore.trajectory._options import PauseMarkers
from trajectory.corpora import capacity_spans
from trajectory.request_runs import DECLINED, JOINED, messages_run
from trajectory.test_flat import STRUCTURE_ODD, both

_OPTIONS = [
    BuildOptions(),
    BuildOptions(include_output_tools=True),
    BuildOptions(output_tool_names=("lookup", "write", "")),
    BuildOptions(max_value_chars=16),
    BuildOptions(
        pause=PauseMarkers(unexecuted_request=False, denied_responses=False, awaiting_approval=None)
    ),
]


@pytest.mark.parametrize("seed", range(400))
def test_generated_runs_with_requests_build_the_same(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = random.Random(seed)
    spans = messages_run(rng)
    mutations = rng.sample(JOINED, rng.randint(0, 4))
    for mutate in mutations:
        spans = mutate(spans, rng)
    names = [m.__name__ for m in mutations]
    assert both(spans, monkeypatch, rng.choice(_OPTIONS)) == [True], names


@pytest.mark.parametrize("seed", range(150))
def test_runs_with_requests_that_need_the_general_path_decline(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = random.Random(seed)
    spans = messages_run(rng, rounds=rng.randint(1, 4))
    for mutate in rng.sample(JOINED[:8], rng.randint(0, 2)):
        spans = mutate(spans, rng)
    odd = rng.choice([*DECLINED, *DECLINED, *STRUCTURE_ODD])
    spans = odd(spans, rng)
    assert both(spans, monkeypatch, rng.choice(_OPTIONS)) == [False], odd.__name__


def test_every_variation_meets_the_join(monkeypatch: pytest.MonkeyPatch) -> None:
    # The generated runs hold each case the join must get right, somewhere.
    seen: set[str] = set()
    for seed in range(400):
        rng = random.Random(seed)
        spans = messages_run(rng)
        for mutate in rng.sample(JOINED, rng.randint(0, 4)):
            spans = mutate(spans, rng)
        (run,) = _build.build_trajectories(spans).trajectories
        for step in run.steps:
            status = getattr(step, "status", None)
            seen.add(f"{step.kind}:{status}:{getattr(step, 'pause_reason', None)}")
            if step.kind == "tool_call" and step.span_id is None:
                seen.add("unexecuted")
    expected = {
        "model_call:None:None",
        "tool_call:ok:None",
        "tool_call:error:None",
        "tool_call:paused:no_execution",
        "tool_call:paused:denied",
        "tool_call:paused:approval_required",
        "handoff:None:None",
        "unexecuted",
    }
    assert expected <= seen, expected - seen


def test_the_capacity_benchmark_runs_take_the_fast_path(monkeypatch: pytest.MonkeyPatch) -> None:
    # Both shapes, decoded with every key the builder reads and with what a service whose
    # scorers read no arguments, results or usage keeps.
    for keep in (None, attribute_filter(unread=READINGS)):
        traces: dict[str, list[SpanRecord]] = {}
        for record in capacity_spans(8, keep):
            traces.setdefault(record.trace_id, []).append(record)
        assert len(traces) == 8
        shapes = set()
        for trace in traces.values():
            assert both(trace, monkeypatch) == [True]
            shapes.add(any(semconv.GEN_AI_OUTPUT_MESSAGES in s.attributes for s in trace))
        assert shapes == {True, False}


Sabotage = Callable[[FlatParts], None]


def _join_nothing(parts: FlatParts) -> None:
    parts.by_id.clear()


def _join_the_next_request(parts: FlatParts) -> None:
    count = len(parts.requests)
    for call_id, index in parts.by_id.items():
        parts.by_id[call_id] = (index + 1) % count


def _anchor_at_zero(parts: FlatParts) -> None:
    parts.anchors[:] = [0] * len(parts.anchors)


def _last_request_first(parts: FlatParts) -> None:
    if parts.requests:
        parts.requests.insert(0, parts.requests.pop())
        parts.anchors.insert(0, parts.anchors.pop())


@pytest.mark.parametrize(
    "sabotage", [_join_nothing, _join_the_next_request, _anchor_at_zero, _last_request_first]
)
def test_a_broken_join_fails_the_comparison(
    sabotage: Sabotage, monkeypatch: pytest.MonkeyPatch
) -> None:
    original = _flat.flat_steps

    def broken(parts: FlatParts, options: BuildOptions) -> Any:
        sabotage(parts)
        return original(parts, options)

    monkeypatch.setattr(_flat, "flat_steps", broken)
    failed = 0
    for seed in range(60):
        rng = random.Random(seed)
        spans = messages_run(rng, rounds=3)
        try:
            both(spans, monkeypatch)
        except AssertionError:
            failed += 1
    assert failed > 0
