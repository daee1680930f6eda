"""Which convention describes a span, and which attribute keys the builder reads at all.

Conventions are tried in priority order, most specific first: pydantic-ai and Mastra add
meaning to GenAI spans, Vercel legacy spans carry some `gen_ai.*` keys, and OpenInference and
Traceloop keys also appear on spans that follow GenAI. The first decisive view wins; the rest
only fill gaps (see `merge_views`).
"""

from __future__ import annotations

from tracescore.model.span import SpanRecord
from tracescore.trajectory._genai import GENAI
from tracescore.trajectory._mastra import MASTRA
from tracescore.trajectory._openinference import OPENINFERENCE
from tracescore.trajectory._options import BuildOptions
from tracescore.trajectory._pydantic_ai import PYDANTIC_AI
from tracescore.trajectory._traceloop import TRACELOOP
from tracescore.trajectory._vercel import VERCEL
from tracescore.trajectory._views import Convention, SpanView, clean_view, merge_views

__all__ = ["CONVENTIONS", "NEEDED_KEYS", "NEEDED_PREFIXES", "classify", "needed_attribute"]

CONVENTIONS: tuple[Convention, ...] = (
    PYDANTIC_AI,
    MASTRA,
    VERCEL,
    GENAI,
    OPENINFERENCE,
    TRACELOOP,
)

NEEDED_KEYS: frozenset[str] = frozenset().union(*(c.keys for c in CONVENTIONS))
NEEDED_PREFIXES: tuple[str, ...] = tuple(sorted({p for c in CONVENTIONS for p in c.prefixes}))


def needed_attribute(key: str) -> bool:
    """True when the builder reads attribute `key`: a receiver may drop every other key.

    Span names, status, events and resource attributes are always kept by the decoders; this
    only filters span attributes.
    """
    return key in NEEDED_KEYS or (bool(NEEDED_PREFIXES) and key.startswith(NEEDED_PREFIXES))


def classify(span: SpanRecord, options: BuildOptions) -> SpanView | None:
    """The merged view of `span`, or None when no convention recognises it."""
    views: list[SpanView] = []
    skip: set[str] = set()
    for convention in CONVENTIONS:
        if convention.name in skip:
            continue
        view = convention.read(span, options)
        if view is not None:
            views.append(view)
            skip.update(convention.extends)
    merged = merge_views(views)
    return clean_view(merged) if merged is not None else None
