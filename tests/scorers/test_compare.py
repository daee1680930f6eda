"""`compare_steps`' relaxed alignment on bit masks against the match-matrix path it replaces
for tracescore's rules: the same Comparison, field by field, for any calls and expectations."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from scorers._build import call
from tracescore.scorers._compare import Expected, by_matrix, compare_steps

ARGS: list[Any] = [None, {"q": 1}, {"q": "x"}, {"q": True}, {"q": 1, "r": [1, 2]}, "text"]
SPECS: list[Any] = [None, {}, {"q": 1}, {"q": "x"}, {"q": 1.0}, {"r": [1, 2]}]

calls_st = st.lists(st.tuples(st.sampled_from("ABCD"), st.sampled_from(ARGS)), max_size=9)
expected_st = st.lists(
    st.tuples(st.sampled_from("ABCE"), st.sampled_from(SPECS)), min_size=1, max_size=5
)


@given(
    calls_st,
    expected_st,
    st.sampled_from(["subset", "exact"]),
    st.booleans(),
)
def test_relaxed_on_masks_is_the_matrix_comparison(
    made: list[tuple[str, Any]],
    wanted: list[tuple[str, Any]],
    args_match: Any,
    allow_repeated: bool,
) -> None:
    calls = tuple(call(name, args) for name, args in made)
    expected = tuple(Expected.of(tool, args) for tool, args in wanted)
    fast = compare_steps(
        calls, expected, ordering="relaxed", allow_repeated=allow_repeated, args_match=args_match
    )
    names = [c.name for c in calls]
    tools = {e.tool for e in expected}
    slow = by_matrix(calls, names, expected, tools, "relaxed", allow_repeated, args_match, False)
    assert fast == slow
