"""Which span attribute keys the builder reads at all: the receiver's key filter.

A receiver decodes only these keys (`needed_attribute`), plus what a config matches on, less
the keys behind parts of a run nothing will read (`attribute_filter`).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Mapping
from typing import TypeAlias

from tracescore import semconv
from tracescore.model.trajectory import Reading
from tracescore.trajectory._classify import CONVENTIONS
from tracescore.trajectory._genai import MODEL_USAGE_KEYS
from tracescore.trajectory._messages import ERROR_RESULT_NEEDLES

__all__ = [
    "NEEDED_KEYS",
    "NEEDED_PREFIXES",
    "READING_CONDITIONS",
    "READING_KEYS",
    "KeepKey",
    "attribute_filter",
    "needed_attribute",
    "value_kept",
]

# Interned (semconv's own objects, interned first): the scanner interns the keys it decodes,
# so the keys of a record are these very objects and lookups end at the pointer compare.
NEEDED_KEYS: frozenset[str] = frozenset(
    map(sys.intern, set().union(*(c.keys for c in CONVENTIONS)))
)
NEEDED_PREFIXES: tuple[str, ...] = tuple(sorted({p for c in CONVENTIONS for p in c.prefixes}))


def needed_attribute(key: str) -> bool:
    """True when the builder reads attribute `key`: a receiver may drop every other key.

    Span names, status, events and resource attributes are always kept by the decoders; this
    only filters span attributes.
    """
    return key in NEEDED_KEYS or (bool(NEEDED_PREFIXES) and key.startswith(NEEDED_PREFIXES))


# The attributes behind each optional part of a run (`Reading`). Only OTel GenAI's: each of
# these keys feeds that part and nothing else the builder reads (arguments are not used to pair
# requested calls with executions, models and tokens only fill ModelCall), so leaving one
# undecoded changes that part alone. Other conventions' keys (OpenInference's `input.value`,
# say) serve several parts and are always kept.
READING_KEYS: Mapping[Reading, frozenset[str]] = {
    "tool_arguments": frozenset({semconv.GEN_AI_TOOL_CALL_ARGUMENTS}),
    "tool_results": frozenset(),
    "model_usage": MODEL_USAGE_KEYS,
}
# Keys behind a part that also say something the builder always reads: left undecoded when the
# part is not read unless their string value holds one of these texts. A GenAI tool result is
# read for its MCP `isError`, which makes a failed call, and every such result holds one of
# ERROR_RESULT_NEEDLES (`may_be_error_result`).
READING_CONDITIONS: Mapping[Reading, Mapping[str, tuple[str, ...]]] = {
    "tool_results": {semconv.GEN_AI_TOOL_CALL_RESULT: ERROR_RESULT_NEEDLES},
}

KeepKey: TypeAlias = Callable[[str], bool | tuple[str, ...]]
"""Whether a receiver decodes attribute key `key`: True, False, or texts: only a string value
holding one of them (any other value is decoded; see `value_kept`)."""


def value_kept(kept: bool | tuple[str, ...], value: object) -> bool:
    """Whether a value of a key `kept` (a `KeepKey` answer) is decoded: always for True, never
    for False; for texts, unless it is an ASCII str holding none of them (the scanner decides
    on the value's bytes, and decodes the others as usual)."""
    if kept is True or kept is False:
        return kept
    return not (isinstance(value, str) and value.isascii() and not any(t in value for t in kept))


def attribute_filter(extra_keys: Iterable[str] = (), unread: Iterable[Reading] = ()) -> KeepKey:
    """`needed_attribute` plus keys something else reads (e.g. scenario `match.attributes`),
    less the keys behind parts of a run nothing will read (`unread`, see READING_KEYS and
    READING_CONDITIONS, whose keys it answers with their texts).

    Trajectories keep their agent span's attributes for scenario matching; a receiver that
    filters keys must keep those a config matches on too, even when a part left unread would
    have dropped them.
    """
    extra = frozenset(extra_keys)
    unread = frozenset(unread)
    dropped = frozenset().union(*(READING_KEYS[part] for part in unread)) - extra
    conditions = {
        key: texts
        for part in unread
        for key, texts in READING_CONDITIONS.get(part, {}).items()
        if key not in extra
    }
    if not extra and not dropped and not conditions:
        return needed_attribute
    keys = (NEEDED_KEYS | extra) - dropped

    def keep(key: str) -> bool | tuple[str, ...]:
        # No dropped or conditional key starts with a needed prefix (test_classify checks),
        # so the prefix test needs no second look at them.
        if key in keys:
            return conditions.get(key, True)
        return key.startswith(NEEDED_PREFIXES)

    return keep
