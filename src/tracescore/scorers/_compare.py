"""Compare a run's tool calls with an expected trajectory (Mastra's `compareTrajectories`).

The shape of the result and the strict-ordering rule follow Mastra 1.10.2. Two things differ
under tracescore's default semantics (`mastra=False`), each for a reason:

- relaxed ordering aligns optimally (longest common subsequence with a match predicate), and
  unordered matching is a maximum matching: a greedy scan lets one early match block later
  ones, so expected `[X, A, B]` against calls `[A, B, X]` scores 1/3 in Mastra but 2/3 here;
- an unmatched expected step is reported as `out_of_order` only when a matching call exists
  that the alignment could not use, and as `args_mismatch` when the tool ran with other
  arguments (Mastra files both under "out of order"). Scores are exact fractions, not rounded.
"""

from __future__ import annotations

from collections.abc import Sequence, Set
from typing import Literal, TypeAlias

from tracescore.model.trajectory import ToolCall
from tracescore.scorers._comparison import Comparison, Expected
from tracescore.scorers._matching import (
    args_equal,
    args_subset,
    first_fit_pairs,
    greedy_relaxed_pairs,
    js_json,
    lcs_mask_pairs,
    lcs_pairs,
    mastra_round2,
    mastra_tool_args,
    max_matching_pairs,
)

__all__ = ["ArgsMatch", "Comparison", "Expected", "Ordering", "compare_named", "compare_steps"]

Ordering: TypeAlias = Literal["strict", "relaxed", "unordered"]
ArgsMatch: TypeAlias = Literal["subset", "exact"]


def _matrix(
    calls: Sequence[ToolCall], expected: Sequence[Expected], *, mastra: bool, args_match: ArgsMatch
) -> list[list[bool]]:
    names = [c.name for c in calls]
    if mastra:
        # JSON.stringify of each call's toolArgs, once per call; None stands for `undefined`.
        texts = [
            None if (a := mastra_tool_args(c.arguments)) is None else js_json(a) for c in calls
        ]
        return [
            [
                n == e.tool and (e.args_json is None or (t is not None and t == e.args_json))
                for n, t in zip(names, texts, strict=True)
            ]
            for e in expected
        ]
    rows: list[list[bool]] = []
    for e in expected:
        spec = e.args
        if spec is None:
            rows.append([n == e.tool for n in names])
        elif args_match == "subset":
            rows.append([c.name == e.tool and args_subset(spec, c.arguments) for c in calls])
        else:
            rows.append(
                [
                    c.name == e.tool
                    and args_equal(spec, {} if c.arguments is None else c.arguments)
                    for c in calls
                ]
            )
    return rows


def compare_steps(
    calls: Sequence[ToolCall],
    expected: Sequence[Expected],
    *,
    ordering: Ordering = "relaxed",
    allow_repeated: bool = True,
    args_match: ArgsMatch = "subset",
    mastra: bool = False,
) -> Comparison:
    """Compare calls (already selected by the scorer's policy) with the expected steps."""
    return compare_named(
        calls,
        [c.name for c in calls],
        expected,
        {e.tool for e in expected},
        ordering,
        allow_repeated,
        args_match,
        mastra,
    )


def compare_named(
    calls: Sequence[ToolCall],
    names: Sequence[str],
    expected: Sequence[Expected],
    expected_names: Set[str],
    ordering: Ordering,
    allow_repeated: bool,
    args_match: ArgsMatch,
    mastra: bool,
) -> Comparison:
    """`compare_steps`, given the calls' names and the expected tools (a scorer knows both)."""
    n_a, n_e = len(names), len(expected)
    if n_e == 0:
        # An explicit empty expectation means "expect nothing": any call is a failure.
        return Comparison(1.0 if n_a == 0 else 0.0, 0, 0, n_a, extra=tuple(names))
    if ordering == "relaxed" and not mastra:
        return _relaxed(calls, names, expected, expected_names, allow_repeated, args_match)
    return by_matrix(
        calls, names, expected, expected_names, ordering, allow_repeated, args_match, mastra
    )


def by_matrix(
    calls: Sequence[ToolCall],
    names: Sequence[str],
    expected: Sequence[Expected],
    expected_names: Set[str],
    ordering: Ordering,
    allow_repeated: bool,
    args_match: ArgsMatch,
    mastra: bool,
) -> Comparison:
    """`compare_named` on a match matrix, for every ordering (at least one expected step)."""
    n_a, n_e = len(names), len(expected)
    counts: dict[str, int] = {}
    for n in names:
        counts[n] = counts.get(n, 0) + 1
    repeated = tuple(n for n, k in counts.items() if k > 1)
    match = _matrix(calls, expected, mastra=mastra, args_match=args_match)
    out_of_order: list[str] = []
    args_mismatch: list[str] = []
    matched_idx: set[int] = set()
    if ordering == "strict":
        for i in range(max(n_a, n_e)):
            a_name = names[i] if i < n_a else None
            if a_name is not None and i < n_e and a_name == expected[i].tool:
                if match[i][i]:
                    matched_idx.add(i)
                elif not mastra:
                    args_mismatch.append(a_name)
            elif a_name is not None and a_name in expected_names:
                out_of_order.append(a_name)
        raw = len(matched_idx) / n_e
        if n_a > n_e:
            raw = max(0.0, raw - 0.5 * (n_a - n_e) / n_e)
    else:
        if ordering == "relaxed":
            pairs = greedy_relaxed_pairs(match, n_a) if mastra else lcs_pairs(match, n_a)
        else:
            pairs = first_fit_pairs(match, n_a) if mastra else max_matching_pairs(match, n_a)
        matched_idx = {i for i, _ in pairs}
        used = {j for _, j in pairs}
        present = set(names)
        for i, e in enumerate(expected):
            if i in matched_idx:
                continue
            if mastra:
                if ordering == "relaxed" and e.tool in present:
                    out_of_order.append(e.tool)
            elif any(match[i][j] and j not in used for j in range(n_a)):
                if ordering == "relaxed":
                    out_of_order.append(e.tool)
            elif e.tool in present and not any(match[i]):
                args_mismatch.append(e.tool)
        raw = len(matched_idx) / n_e
    if not allow_repeated and repeated:
        raw = max(0.0, raw - 0.1 * len(repeated))
    score = min(1.0, max(0.0, raw))
    if mastra:
        score = mastra_round2(score)
    return Comparison(
        score=score,
        matched=len(matched_idx),
        total_expected=n_e,
        total_actual=n_a,
        missing=tuple(e.tool for i, e in enumerate(expected) if i not in matched_idx),
        extra=tuple(n for n in names if n not in expected_names),
        out_of_order=tuple(out_of_order),
        args_mismatch=tuple(args_mismatch),
        repeated=repeated,
    )


def _relaxed(
    calls: Sequence[ToolCall],
    names: Sequence[str],
    expected: Sequence[Expected],
    expected_names: Set[str],
    allow_repeated: bool,
    args_match: ArgsMatch,
) -> Comparison:
    """Relaxed ordering under tracescore's rules, on bit masks (`lcs_mask_pairs`): the same
    Comparison as the matrix path, for the default and commonest configuration."""
    n_a, n_e = len(names), len(expected)
    # Per name, its calls as bits (call j: bit n_a-1-j), in order of first call.
    by_name: dict[str, int] = {}
    bit = 1 << n_a
    for n in names:
        bit >>= 1
        by_name[n] = by_name.get(n, 0) | bit
    rows: list[int] = []
    for e in expected:
        row = by_name.get(e.tool, 0)
        spec = e.args
        if row and spec is not None:  # only this tool's calls have their arguments read
            for j, c in enumerate(calls):
                if c.name == e.tool and not (
                    args_subset(spec, c.arguments)
                    if args_match == "subset"
                    else args_equal(spec, {} if c.arguments is None else c.arguments)
                ):
                    row &= ~(1 << (n_a - 1 - j))
        rows.append(row)
    matched: set[int] = set()
    used = 0
    for i, j in lcs_mask_pairs(rows, n_a):
        matched.add(i)
        used |= 1 << (n_a - 1 - j)
    out_of_order: list[str] = []
    args_mismatch: list[str] = []
    missing: list[str] = []
    for i, e in enumerate(expected):
        if i in matched:
            continue
        missing.append(e.tool)
        row = rows[i]
        if row & ~used:  # a matching call exists that the alignment could not use
            out_of_order.append(e.tool)
        elif not row and e.tool in by_name:
            args_mismatch.append(e.tool)
    repeated = tuple([n for n, calls_of in by_name.items() if calls_of & (calls_of - 1)])
    raw = len(matched) / n_e
    if not allow_repeated and repeated:
        raw = max(0.0, raw - 0.1 * len(repeated))
    return Comparison(
        min(1.0, max(0.0, raw)),
        len(matched),
        n_e,
        n_a,
        tuple(missing),
        tuple([n for n in names if n not in expected_names]),
        tuple(out_of_order),
        tuple(args_mismatch),
        repeated,
    )
