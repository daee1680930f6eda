"""Argument equality, alignments and rounding shared by the tool scorers (pure, no pydantic).

Two families of rules live here side by side, so differential tests can pin both:

- tracescore's defaults: deep, key-order-insensitive argument equality in which `true` never
  equals `1` (but `1 == 1.0`, as in JSON), and optimal alignments (LCS for relaxed ordering,
  maximum bipartite matching for unordered) so a score never depends on which of two equally
  good readings a greedy scan happened to try first.
- Mastra 1.10.2 (`compat: mastra`): arguments equal when their `JSON.stringify` texts are equal
  (key order matters, no subset), greedy relaxed ordering, first-fit unordered matching, and
  JavaScript's `Math.round` rounding.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

__all__ = [
    "MatchMatrix",
    "args_equal",
    "args_subset",
    "build_matrix",
    "first_fit_pairs",
    "fmt_score",
    "greedy_relaxed_pairs",
    "js_json",
    "js_round2",
    "lcs_mask_pairs",
    "lcs_pairs",
    "mastra_round2",
    "mastra_tool_args",
    "max_matching_pairs",
]

# A boolean matrix: rows are expected steps, columns are actual calls.
MatchMatrix = Sequence[Sequence[bool]]


def args_equal(a: Any, b: Any) -> bool:
    """Deep equality for tool arguments, the tracescore way.

    Mappings compare by key set and value (insertion order ignored); lists and tuples compare
    element by element; numbers compare by value (`1 == 1.0`, as JSON has one number type); a
    boolean equals only a boolean, so `true` never matches `1` the way Python's `==` would.
    """
    if type(a) is str and type(b) is str:  # the commonest values, decided as below
        return a == b
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a is b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    if isinstance(a, Mapping):
        if not isinstance(b, Mapping) or len(a) != len(b):
            return False
        return all(k in b and args_equal(v, b[k]) for k, v in a.items())
    if isinstance(a, list | tuple):
        if not isinstance(b, list | tuple) or len(a) != len(b):
            return False
        return all(args_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(b, Mapping | list | tuple | int | float):
        return False
    return bool(a == b)


def args_subset(spec: Mapping[str, Any], actual: Any) -> bool:
    """True when every top-level key of `spec` is in `actual` with an equal value.

    Extra keys in the actual arguments are allowed (Agno's subset rule); values are compared
    whole with `args_equal`. A call whose arguments are missing counts as `{}`, so an empty
    spec matches any call of the tool.
    """
    if actual is None:
        actual = {}
    elif type(actual) is not dict and not isinstance(actual, Mapping):
        return not spec
    # A loop, not all() over a generator, which costs more than a spec of a key or two.
    for k, v in spec.items():  # noqa: SIM110
        if k not in actual or not args_equal(v, actual[k]):
            return False
    return True


def mastra_tool_args(arguments: Any) -> Any:
    """Mastra's `toolArgs` of a call: the object itself, `{value: x}` for other values, or None.

    None stands for JavaScript's `undefined` (a call without arguments).
    """
    if arguments is None:
        return None
    if isinstance(arguments, Mapping):
        return arguments
    return {"value": arguments}


def js_json(value: Any) -> str:
    """`JSON.stringify(value)` as JavaScript writes it: insertion order kept, `1.0` as `1`."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            return "null"
        if value.is_integer() and abs(value) < 1e21:
            return str(int(value))
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, Mapping):
        items = (f"{json.dumps(str(k), ensure_ascii=False)}:{js_json(v)}" for k, v in value.items())
        return "{" + ",".join(items) + "}"
    if isinstance(value, list | tuple):
        return "[" + ",".join(js_json(v) for v in value) + "]"
    return json.dumps(repr(value), ensure_ascii=False)


def js_round2(x: float) -> float:
    """`Math.round(x * 100) / 100` (JavaScript rounds halves up; Python's round() does not)."""
    return math.floor(x * 100 + 0.5) / 100


def mastra_round2(x: float) -> float:
    """Mastra's `round2`: `Math.round((x + Number.EPSILON) * 100) / 100`."""
    return math.floor((x + 2.220446049250313e-16) * 100 + 0.5) / 100


def fmt_score(x: float) -> str:
    """A score as Mastra's reasons print it: two decimals at most, no trailing zeros."""
    rounded = js_round2(x)
    if rounded.is_integer():
        return str(int(rounded))
    return f"{rounded:.2f}".rstrip("0")


def lcs_pairs(match: MatchMatrix, n_actual: int) -> list[tuple[int, int]]:
    """An optimal in-order alignment: the most expected steps matched to increasing calls.

    Longest common subsequence with a match predicate (the matrix). Among optimal alignments
    it prefers the earliest calls, so reports are stable. O(expected x actual).
    """
    n = len(match)
    # best[i][j]: most matches using expected[i:] and actual[j:].
    best = [[0] * (n_actual + 1) for _ in range(n + 1)]
    for i in range(n - 1, -1, -1):
        row, below = best[i], best[i + 1]
        mrow = match[i]
        for j in range(n_actual - 1, -1, -1):
            # max(take, below[j], row[j + 1]) without the call: a third of scoring a step.
            most = below[j]
            if row[j + 1] > most:
                most = row[j + 1]
            if mrow[j] and below[j + 1] >= most:
                most = below[j + 1] + 1
            row[j] = most
    pairs: list[tuple[int, int]] = []
    i = j = 0
    while i < n and j < n_actual:
        if match[i][j] and best[i][j] == best[i + 1][j + 1] + 1:
            pairs.append((i, j))
            i += 1
            j += 1
        elif best[i][j + 1] == best[i][j]:
            j += 1
        else:
            i += 1
    return pairs


def lcs_mask_pairs(rows: Sequence[int], n_actual: int) -> list[tuple[int, int]]:
    """`lcs_pairs` of the matrix whose row i has call j's match in bit `n_actual - 1 - j` of
    `rows[i]`: the same pairs, in a few integer operations per expected step.

    The suffix table `best[i][j]` is held a row per integer (the bit-parallel LCS of Allison
    and Dix over the calls reversed: a row's zero bits mark where `best` steps up), so
    `best[i][j]` is a popcount, and the walk from (0, 0) takes exactly `lcs_pairs`' steps. It
    stops once nothing is left to match. Filling the table cell by cell in Python was most of
    scoring a trajectory against three expected steps.
    """
    n = len(rows)
    full = (1 << n_actual) - 1
    steps = [0] * (n + 1)  # steps[i]: bit n_actual-1-j set where best[i][j] > best[i][j+1]
    v = full
    for i in range(n - 1, -1, -1):
        u = v & rows[i]
        v = ((v + u) | (v - u)) & full
        steps[i] = full ^ v
    pairs: list[tuple[int, int]] = []
    i = j = 0
    low = full  # the bits of calls j.. : best[i][j] = (steps[i] & low).bit_count()
    while i < n and j < n_actual:
        here = steps[i] & low
        if not here:  # best[i][j] == 0: nothing left to match
            break
        best = here.bit_count()
        # The table's walk skips calls while `best` holds and no call matches; so jump to
        # the first matching call, unless `best` drops first (at the call whose bit is the
        # highest of `here`): then the walk leaves expected step i there.
        top = here.bit_length() - 1
        matching = rows[i] & low
        if matching and matching.bit_length() > top:
            at = matching.bit_length() - 1
            j, low = n_actual - 1 - at, (1 << (at + 1)) - 1
            rest = low >> 1
            if best == (steps[i + 1] & rest).bit_count() + 1:
                pairs.append((i, j))
                i += 1
                j += 1
                low = rest
            elif at != top:  # best[i][j + 1] == best[i][j]
                j += 1
                low = rest
            else:
                i += 1
        else:
            j, low = n_actual - 1 - top, (1 << (top + 1)) - 1
            i += 1
    return pairs


def greedy_relaxed_pairs(match: MatchMatrix, n_actual: int) -> list[tuple[int, int]]:
    """Mastra's relaxed scan: each expected step takes the first later call that matches."""
    pairs: list[tuple[int, int]] = []
    last = -1
    for i, row in enumerate(match):
        for j in range(last + 1, n_actual):
            if row[j]:
                pairs.append((i, j))
                last = j
                break
    return pairs


def first_fit_pairs(match: MatchMatrix, n_actual: int) -> list[tuple[int, int]]:
    """Mastra's unordered scan: each expected step takes the first unused matching call."""
    used = [False] * n_actual
    pairs: list[tuple[int, int]] = []
    for i, row in enumerate(match):
        for j in range(n_actual):
            if row[j] and not used[j]:
                used[j] = True
                pairs.append((i, j))
                break
    return pairs


def max_matching_pairs(match: MatchMatrix, n_actual: int) -> list[tuple[int, int]]:
    """A maximum matching of expected steps to distinct calls, order ignored (Kuhn's method).

    First-fit can strand a specific expectation when a looser one took its only call; this
    never does. Expected steps are tried in order, so the result is deterministic.
    """
    owner: list[int] = [-1] * n_actual

    def augment(i: int, seen: list[bool]) -> bool:
        for j in range(n_actual):
            if match[i][j] and not seen[j]:
                seen[j] = True
                if owner[j] < 0 or augment(owner[j], seen):
                    owner[j] = i
                    return True
        return False

    for i in range(len(match)):
        augment(i, [False] * n_actual)
    return sorted((i, j) for j, i in enumerate(owner) if i >= 0)


def build_matrix(
    expected: Sequence[Any], actual: Sequence[Any], pred: Callable[[Any, Any], bool]
) -> list[list[bool]]:
    """`pred(expected[i], actual[j])` for every pair, computed once."""
    return [[pred(e, a) for a in actual] for e in expected]
