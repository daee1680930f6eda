"""`select_calls` natively (otlp/_select.c) answers exactly as `python_select_calls` does: the
same step objects, in order, for every policy, with and without sub-agents."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scorers._build import agent, call, model, run, unreadable_call
from tracescore.model import Step, ToolCall, Trajectory
from tracescore.scorers import base
from tracescore.scorers.base import python_select_calls

native = pytest.importorskip("tracescore.otlp._scan", reason="the C extension was not built")

ASKS = [(p, s) for p in ("attempted", "clean") for s in (False, True)]


def _same(left: tuple[ToolCall, ...], right: tuple[ToolCall, ...]) -> bool:
    return len(left) == len(right) and all(a is b for a, b in zip(left, right, strict=True))


def test_the_service_uses_the_native_function() -> None:
    assert base.select_calls is native.select_calls


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["call", "model"]),
            st.sampled_from(["ok", "error", "paused"]),
            st.integers(0, 3),  # 0: at the top, else inside sub-agent n (nested in n - 1)
        ),
        max_size=12,
    ),
    st.permutations(ASKS),
)
def test_generated_runs_select_alike(spec: list[Any], order: list[tuple[str, bool]]) -> None:
    levels: dict[int, list[Step]] = {}
    for kind, status, where in spec:
        step = call(f"t{len(spec)}", status=status) if kind == "call" else model(1, 2)
        levels.setdefault(where, []).append(step)
    steps = levels.get(3, [])
    for depth in (2, 1):
        steps = [*levels.get(depth, []), agent(f"helper{depth}", *steps)] if steps else []
        steps = steps or levels.get(depth, [])
    trajectory = run(*levels.get(0, []), *steps)
    for policy, subagents in order:  # any order of questions: the memo derives slots
        got = base.select_calls(trajectory, policy, subagents)  # type: ignore[arg-type]
        assert _same(got, python_select_calls(trajectory, policy, subagents))  # type: ignore[arg-type]
        assert base.select_calls(trajectory, policy, subagents) is got  # remembered  # type: ignore[arg-type]


def test_another_run_is_not_answered_from_the_memo() -> None:
    first, second = run(call("a"), call("b", status="error")), run(call("c"))
    assert [c.name for c in base.select_calls(first, "clean")] == ["a"]
    assert [c.name for c in base.select_calls(second, "clean")] == ["c"]
    assert [c.name for c in base.select_calls(first, "attempted")] == ["a", "b"]


def test_arguments_as_python_takes_them() -> None:
    trajectory = run(call("a"), agent("helper", call("b")))
    names = [c.name for c in base.select_calls(trajectory, "attempted", include_subagents=True)]
    assert names == ["a", "b"]
    keyword = base.select_calls(trajectory=trajectory, policy="clean")  # type: ignore[call-arg]
    assert [c.name for c in keyword] == ["a"]
    assert base.select_calls(trajectory, "anything else") == (trajectory.steps[0],)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        base.select_calls(trajectory)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        base.select_calls(trajectory, "clean", True, 1)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        base.select_calls(trajectory, "clean", policy="clean")  # type: ignore[misc]
    with pytest.raises(TypeError):
        base.select_calls(trajectory, "clean", unknown=True)  # type: ignore[call-arg]


def test_unusual_runs_go_to_the_python_twin() -> None:
    class Run(Trajectory):  # not the plain record: read by Python
        pass

    plain = run(call("a"), call("b", status="paused"))
    subclassed = Run(trace_id=plain.trace_id, span_id=None, steps=plain.steps)
    listed = Trajectory(trace_id=plain.trace_id, span_id=None, steps=list(plain.steps))  # type: ignore[arg-type]
    for trajectory in (subclassed, listed):
        for policy, subagents in ASKS:
            got = base.select_calls(trajectory, policy, subagents)  # type: ignore[arg-type]
            assert _same(got, python_select_calls(trajectory, policy, subagents))  # type: ignore[arg-type]


def test_a_status_that_fails_to_compare_raises_as_in_python() -> None:
    odd = unreadable_call("a")
    for select in (base.select_calls, python_select_calls):
        with pytest.raises(RuntimeError, match="unreadable status"):
            select(run(odd), "clean")
