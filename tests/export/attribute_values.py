"""Hypothesis strategies for decoded attribute values, shared by the encoding tests."""

from __future__ import annotations

from hypothesis import strategies as st

__all__ = ["attribute_values"]


def attribute_values(*, exact_only: bool = True) -> st.SearchStrategy[object]:
    """Every shape an attribute value takes: scalars, tuples (arrays) and dicts (kvlists).

    With `exact_only` (for round trips compared with ==), no NaN and no None: NaN is not equal
    to itself, and None decodes from an empty AnyValue as nothing at all.
    """
    scalars = (
        st.text()
        | st.booleans()
        | st.integers(min_value=-(2**63), max_value=2**63 - 1)
        | st.floats(allow_nan=not exact_only)
        | st.binary()
    )
    if not exact_only:
        scalars |= st.none()
    return st.recursive(
        scalars,
        lambda inner: (
            st.lists(inner, max_size=4).map(tuple)
            | st.dictionaries(st.text(max_size=8), inner, max_size=4)
        ),
        max_leaves=12,
    )
