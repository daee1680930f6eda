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
from dataclasses import replace
from typing import Any

import pytest

from tracescore import semconv
from tracescore.model.span import SpanRecord
from tracescore.model.trajectory import READINGS
from tracescore.trajectory import BuildOptions, _build, _flat, attribute_filter
from tracescore.trajectory._flat_parts import FlatParts
from tracescore.trajectory._options import PauseMarkers
from tracescore.trajectory._views import TOOL_CALL_ID
from trajectory.corpora import capacity_spans
from trajectory.request_runs import DECLINED, JOINED, messages_run
from trajectory.spans import agent, assistant, call, chat, response, text, tool, user
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
            with monkeypatch.context() as patch:  # in one pass: the two are not needed
                patch.setattr(_flat, "flat_steps", _unexpected)
                assert both(trace, monkeypatch) == [True]
            shapes.add(any(semconv.GEN_AI_OUTPUT_MESSAGES in s.attributes for s in trace))
        assert shapes == {True, False}


def _unexpected(parts: FlatParts, options: BuildOptions) -> Any:
    raise AssertionError("built in two passes")


def test_generated_runs_meet_one_pass_and_two(monkeypatch: pytest.MonkeyPatch) -> None:
    # The runs above are built in one pass, in two after one that could not finish, and in two
    # from the start (tied starts): the comparisons cover all three.
    passes: list[tuple[bool, bool]] = []
    original = _flat._pass

    def recording(ordered: Any, options: Any, read: Any, parts: FlatParts) -> Any:
        steps = original(ordered, options, read, parts)
        passes.append((parts.one_pass, steps is False))
        return steps

    monkeypatch.setattr(_flat, "_pass", recording)
    for seed in range(100):
        rng = random.Random(seed)
        spans = messages_run(rng)
        for mutate in rng.sample(JOINED, rng.randint(0, 4)):
            spans = mutate(spans, rng)
        _build.build_trajectories(spans)
    assert {(True, False), (True, True), (False, False)} <= set(passes)


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
    assert _failures(monkeypatch) > 0


def _failures(monkeypatch: pytest.MonkeyPatch, seeds: int = 60) -> int:
    """How many runs build otherwise with the fast path (generated ones, and `_ORDERS`)."""
    runs = list(_ORDERS)
    for seed in range(seeds):
        rng = random.Random(seed)
        spans = messages_run(rng, rounds=3)
        for mutate in rng.sample(JOINED, rng.randint(0, 2)):
            spans = mutate(spans, rng)
        runs.append(spans)
    failed = 0
    for spans in runs:
        try:
            both(spans, monkeypatch)
        except AssertionError:
            failed += 1
    return failed


_OAI_SCOPE = "opentelemetry.instrumentation.openai_agents"
_DENIED_BEFORE = [
    user("go"),
    assistant(call("c0", "delete")),
    response("c0", {"type": "execution-denied"}),
]
_ASK = chat(2, 1, 10, [assistant(call("c1", "lookup", q=1))])
_ORDERS = [
    # Executed (without its arguments) before it was asked, as clock skew shows it, and again
    # after: the first execution answers the request.
    [
        agent(1, "triage"),
        tool(3, 1, 5, "lookup", "c1"),
        _ASK,
        tool(4, 1, 20, "lookup", "c1"),
        chat(5, 1, 30, [assistant(text("done"))]),
    ],
    # Two calls asked at once, executed in the other order: steps in the order asked.
    [
        agent(1, "triage"),
        chat(2, 1, 10, [assistant(call("c1", "lookup", q=1), call("c2", "lookup", q=2))]),
        tool(3, 1, 15, "lookup", "c2"),
        tool(4, 1, 20, "lookup", "c1"),
        chat(5, 1, 30, [assistant(text("done"))]),
    ],
    # A resumed run, whose first model call is told of a call of the earlier run the user
    # denied: a paused call before that model call.
    [agent(1, "triage"), chat(2, 1, 10, [assistant(text("done"))], _DENIED_BEFORE)],
    # The OpenAI Agents SDK's last call, after the last model call: stopped for an approval.
    [agent(1, "triage"), _ASK, replace(tool(3, 1, 20, "lookup", "c1"), scope=_OAI_SCOPE)],
]
"""Runs in orders the one pass does not assume: built right, in two passes."""


def test_runs_in_orders_one_pass_does_not_assume_build_the_same(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for spans in _ORDERS:
        assert both(spans, monkeypatch) == [True]


def _join_out_of_order(patch: pytest.MonkeyPatch) -> None:
    original = FlatParts.execute

    def execute(parts: FlatParts, span: SpanRecord, values: Any) -> bool:
        found = parts.by_id.get(values[TOOL_CALL_ID])
        if found is not None and found > parts.joined:  # as if asked next
            parts.joined = found
        return original(parts, span, values)

    patch.setattr(FlatParts, "execute", execute)


_REASONS = ["late", "unexecuted", "approval", "denials"]


def _finish_anyway(forget: str) -> Callable[[pytest.MonkeyPatch], None]:
    """A sabotage: `joined_steps` blind to one reason to build in two passes."""

    def sabotage(patch: pytest.MonkeyPatch) -> None:
        original = FlatParts.joined_steps

        def joined_steps(
            parts: FlatParts, first: Any, first_start: int, ordered: Any, last: Any
        ) -> Any:
            if forget == "late":
                parts.late = False
            elif forget == "unexecuted":
                parts.joined = len(parts.requests)
            elif forget == "approval":
                last = ordered[-1]
            else:  # denials
                first = None
            return original(parts, first, first_start, ordered, last)

        patch.setattr(FlatParts, "joined_steps", joined_steps)

    return sabotage


@pytest.mark.parametrize(
    "sabotage",
    [_join_out_of_order, *map(_finish_anyway, _REASONS)],
    ids=["out of order", *_REASONS],
)
def test_a_one_pass_that_ignores_an_order_fails_the_comparison(
    sabotage: Callable[[pytest.MonkeyPatch], None], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Each reason `FlatParts` has to build a run in two passes is needed.
    sabotage(monkeypatch)
    assert _failures(monkeypatch) > 0
