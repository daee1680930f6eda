"""The native kernels of `max_tool_calls`, `no_tool_errors` and `called_tool` (otlp/_checks.c)
give exactly the Scores of the Python checks, and leave to them only what they must."""

from __future__ import annotations

import functools
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scorers._build import agent, call, run, unreadable_call
from scorers.test_bound_score import _runs
from tracescore.model import Score, Step, Trajectory
from tracescore.scorers._native_checks import native_score
from tracescore.scorers.checks import _Check
from tracescore.scorers.registry import parse_scorer

native = pytest.importorskip("tracescore.otlp._scan", reason="the C extension was not built")

CONFIGS: list[dict[str, Any]] = [
    {"type": "called_tool", "tool": "lookup"},
    {"type": "called_tool", "tool": "lookup", "calls": "attempted", "times": 2},
    {"type": "called_tool", "tool": "lookup", "times": 2, "threshold": {"max": 0.5}},
    {"type": "called_tool", "tool": "lookup", "compat": "mastra", "name": "m"},
    {"type": "called_tool", "tool": "é", "include_subagents": True, "calls": "attempted"},
    {"type": "max_tool_calls", "max": 2, "include_subagents": True},
    {"type": "max_tool_calls", "max": 0, "calls": "clean"},
    {"type": "max_tool_calls", "max": 1, "threshold": {"min": 0.0}},  # 0 passes too
    {"type": "no_tool_errors"},
    {"type": "no_tool_errors", "threshold": 1.0, "include_subagents": True},
]


def _check(config: dict[str, Any]) -> _Check:
    scorer = parse_scorer(config)
    assert isinstance(scorer, _Check)
    return scorer


def _python(scorer: _Check) -> Any:
    """The Python path `bound_score` binds the kernel to (its fallback)."""
    digest = scorer.digest()
    binary = scorer.bound_binary_score()

    def score(trajectory: Trajectory) -> Score:
        return binary(*scorer.check(trajectory), digest)

    return score


def _native(scorer: _Check, fallback: Any) -> Any:
    kernel = scorer.kernel()
    assert kernel is not None
    made = native_score(kernel, scorer.binary_constants(), fallback, scorer.digest())
    assert made is not None
    return made


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: str(sorted(c.items())))
def test_kernels_give_the_python_scores_without_falling_back(config: dict[str, Any]) -> None:
    scorer = _check(config)
    python = _python(scorer)
    asked: list[Trajectory] = []

    def fallback(trajectory: Trajectory) -> Score:
        asked.append(trajectory)
        return python(trajectory)

    kernel = _native(scorer, fallback)
    runs = _runs()
    for trajectory in runs:
        assert kernel(trajectory) == python(trajectory)
    assert asked == []
    # A called_tool that failed counting clean calls names the calls left out, natively too.
    notes = [kernel(t).explanation for t in runs if "not counted" in python(t).explanation]
    if config["type"] == "called_tool" and scorer.calls == "clean":
        assert notes
        assert all("; not counted (calls: clean): " in note for note in notes)


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from(CONFIGS),
    st.lists(
        st.tuples(
            st.sampled_from(["lookup", "refund", "é", "", "lookup "]),
            st.sampled_from(["ok", "error", "paused"]),
            st.integers(0, 3),  # 0: at the top, else inside sub-agent n
        ),
        max_size=12,
    ),
)
def test_generated_runs_score_alike(config: dict[str, Any], spec: list[Any]) -> None:
    top: list[Step] = []
    nested: dict[int, list[Step]] = {}
    for name, status, where in spec:
        step = call(name, status=status)
        (top if where == 0 else nested.setdefault(where, [])).append(step)
    top += [agent(f"helper{n}", *steps) for n, steps in nested.items()]
    scorer = _check(config)
    trajectory = run(*top)
    assert scorer.bound_score()(trajectory) == _python(scorer)(trajectory)


def test_bound_score_is_the_kernel_where_there_is_one() -> None:
    for config in CONFIGS:
        assert isinstance(_check(config).bound_score(), functools.partial), config
    # Under compat: mastra, no_tool_errors reads results too: Python alone scores it.
    mastra = _check({"type": "no_tool_errors", "compat": "mastra"})
    assert mastra.kernel() is None
    assert not isinstance(mastra.bound_score(), functools.partial)


def test_what_a_kernel_cannot_do_goes_to_the_python_check() -> None:
    # A limit past a C integer: the kernel declines, Python compares big ints.
    scorer = _check({"type": "max_tool_calls", "max": 2**70})
    asked: list[Trajectory] = []

    def fallback(trajectory: Trajectory) -> Score:
        asked.append(trajectory)
        return _python(scorer)(trajectory)

    trajectory = run(call("lookup"))
    assert _native(scorer, fallback)(trajectory) == _python(scorer)(trajectory)
    assert asked == [trajectory]

    # A failure while scoring stays the Python path's: an error score, not an exception.
    odd = unreadable_call("lookup")
    score = _check({"type": "no_tool_errors"}).bound_score()(run(odd))
    assert score.error == "RuntimeError: unreadable status"
    assert score.value is None
