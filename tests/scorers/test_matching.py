"""Argument equality, alignments and rounding: the rules every tool scorer relies on."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tracescore.scorers._matching import (
    args_equal,
    args_subset,
    build_matrix,
    first_fit_pairs,
    fmt_score,
    greedy_relaxed_pairs,
    js_json,
    js_round2,
    lcs_mask_pairs,
    lcs_pairs,
    mastra_round2,
    max_matching_pairs,
)


@pytest.mark.parametrize(
    ("a", "b", "equal"),
    [
        pytest.param({"a": 1, "b": 2}, {"b": 2, "a": 1}, True, id="key order does not matter"),
        pytest.param({"a": True}, {"a": 1}, False, id="true never equals 1"),
        pytest.param({"a": False}, {"a": 0}, False, id="false never equals 0"),
        pytest.param({"a": 1}, {"a": 1.0}, True, id="1 equals 1.0 as in JSON"),
        pytest.param({"a": "5"}, {"a": 5}, False, id="a numeric string is not a number"),
        pytest.param({"q": {"x": [1, True]}}, {"q": {"x": [1, 1]}}, False, id="nested bool"),
        pytest.param({"q": {"x": [1, 2]}}, {"q": {"x": (1, 2)}}, True, id="list equals tuple"),
        pytest.param([1, 2], [2, 1], False, id="list order matters"),
        pytest.param({"a": 1}, {"a": 1, "b": None}, False, id="an extra key, even null"),
        pytest.param(None, None, True, id="no arguments equal no arguments"),
        pytest.param(None, {}, False, id="no arguments are not empty arguments"),
    ],
)
def test_args_equal(a: Any, b: Any, equal: bool) -> None:
    assert args_equal(a, b) is equal
    assert args_equal(b, a) is equal


@pytest.mark.parametrize(
    ("spec", "actual", "matches"),
    [
        pytest.param({"q": "x"}, {"q": "x", "limit": 5}, True, id="extra actual keys allowed"),
        pytest.param({"q": "x", "limit": 5}, {"q": "x"}, False, id="a missing spec key fails"),
        pytest.param({"limit": 5}, {"limit": "5"}, False, id="no type coercion"),
        pytest.param({"on": True}, {"on": 1}, False, id="true does not match 1"),
        pytest.param({"f": {"a": 1}}, {"f": {"a": 1, "b": 2}}, False, id="nested values whole"),
        pytest.param({}, None, True, id="an empty spec matches a call without arguments"),
        pytest.param({}, "raw text", True, id="an empty spec matches unparsed arguments"),
        pytest.param({"q": "x"}, "q=x", False, id="unparsed arguments match no key"),
    ],
)
def test_args_subset(spec: dict[str, Any], actual: Any, matches: bool) -> None:
    assert args_subset(spec, actual) is matches


def test_js_json_writes_what_json_stringify_writes() -> None:
    assert js_json({"b": 2, "a": 1}) != js_json({"a": 1, "b": 2})
    assert js_json({"a": 1.0}) == js_json({"a": 1}) == '{"a":1}'
    assert js_json({"a": True, "b": None, "c": [0.5, "é"]}) == '{"a":true,"b":null,"c":[0.5,"é"]}'
    assert js_json(float("nan")) == "null"


@pytest.mark.parametrize(
    ("x", "js", "mastra"),
    [
        pytest.param(0.125, 0.13, 0.13, id="halves round up as Math.round does"),
        pytest.param(1 / 3, 0.33, 0.33, id="a third"),
        pytest.param(0.55 / 0.7, 0.79, 0.79, id="the unified 0.79"),
        pytest.param(1.005, 1.0, 1.01, id="the epsilon of round2 tips 1.005 up"),
    ],
)
def test_rounding_matches_javascript(x: float, js: float, mastra: float) -> None:
    assert js_round2(x) == js
    assert mastra_round2(x) == mastra


@pytest.mark.parametrize(
    ("x", "text"), [(1.0, "1"), (0.0, "0"), (0.5, "0.5"), (0.7857, "0.79"), (0.9, "0.9")]
)
def test_scores_print_as_mastra_prints_them(x: float, text: str) -> None:
    assert fmt_score(x) == text


def _eq(a: str, b: str) -> bool:
    return a == b


def test_optimal_relaxed_alignment_beats_the_greedy_scan() -> None:
    expected, actual = ["X", "A", "B"], ["A", "B", "X"]
    m = build_matrix(expected, actual, _eq)
    assert greedy_relaxed_pairs(m, 3) == [(0, 2)]
    assert lcs_pairs(m, 3) == [(1, 0), (2, 1)]


def test_maximum_matching_does_not_strand_a_specific_expectation() -> None:
    # Expected 0 matches both calls, expected 1 only the first: first fit takes call 0 for
    # expected 0 and strands expected 1; a maximum matching serves both.
    m = [[True, True], [True, False]]
    assert first_fit_pairs(m, 2) == [(0, 0)]
    assert max_matching_pairs(m, 2) == [(0, 1), (1, 0)]


def _brute_lcs(m: list[list[bool]], n_actual: int) -> int:
    best = 0
    for k in range(len(m), 0, -1):
        for rows in itertools.combinations(range(len(m)), k):
            for cols in itertools.combinations(range(n_actual), k):
                if all(m[r][c] for r, c in zip(rows, cols, strict=True)):
                    return k
    return best


@given(
    st.lists(st.sampled_from("ABC"), max_size=5),
    st.lists(st.sampled_from("ABC"), max_size=6),
)
def test_lcs_alignment_is_optimal_in_order_and_never_worse_than_greedy(
    expected: list[str], actual: list[str]
) -> None:
    m = build_matrix(expected, actual, _eq)
    pairs = lcs_pairs(m, len(actual))
    assert all(m[i][j] for i, j in pairs)
    assert all(a[0] < b[0] and a[1] < b[1] for a, b in itertools.pairwise(pairs))
    assert len(pairs) == _brute_lcs(m, len(actual))
    assert len(pairs) >= len(greedy_relaxed_pairs(m, len(actual)))


@given(st.lists(st.lists(st.booleans(), min_size=4, max_size=4), max_size=4))
def test_maximum_matching_uses_each_call_once_and_is_never_worse_than_first_fit(
    m: list[list[bool]],
) -> None:
    pairs = max_matching_pairs(m, 4)
    assert all(m[i][j] for i, j in pairs)
    assert len({j for _, j in pairs}) == len(pairs) == len({i for i, _ in pairs})
    assert len(pairs) >= len(first_fit_pairs(m, 4))


def _masks(m: list[list[bool]], n_actual: int) -> list[int]:
    return [sum(1 << (n_actual - 1 - j) for j in range(n_actual) if row[j]) for row in m]


def test_lcs_on_bit_masks_gives_the_pairs_of_the_table_for_every_small_matrix() -> None:
    # Every matrix up to 3 expected steps x 4 calls: the same pairs, ties broken alike.
    for n, n_actual in itertools.product(range(4), range(5)):
        for cells in itertools.product([False, True], repeat=n * n_actual):
            m = [list(cells[i * n_actual : (i + 1) * n_actual]) for i in range(n)]
            assert lcs_mask_pairs(_masks(m, n_actual), n_actual) == lcs_pairs(m, n_actual), m


@given(
    st.integers(0, 30).flatmap(
        lambda n: st.lists(st.lists(st.booleans(), min_size=n, max_size=n), max_size=8)
    )
)
def test_lcs_on_bit_masks_gives_the_pairs_of_the_table(m: list[list[bool]]) -> None:
    n_actual = len(m[0]) if m else 0
    assert lcs_mask_pairs(_masks(m, n_actual), n_actual) == lcs_pairs(m, n_actual)
