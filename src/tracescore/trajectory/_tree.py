"""One trace's spans as a forest that is always a forest, whatever arrived.

Repairs, each counted as a warning naming the trace: spans without an id get a synthetic one,
duplicate ids keep one copy (chosen by content, not arrival order), a parent that never arrived
makes its child a root, a parent cycle is cut at its earliest span, and clock skew and unknown
span kinds are noted. Everything is iterative: a 10,000-deep chain must not hit the recursion
limit. Sorting by (start, end, span id) makes the result independent of arrival order.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from tracescore.model.span import SpanRecord
from tracescore.trajectory._views import SpanView

__all__ = ["Issues", "Node", "build_forest"]

_MAX_OTLP_KIND = 5


@dataclass(slots=True, eq=False)
class Node:
    """A span in the repaired tree, with its classification."""

    span: SpanRecord
    span_id: str
    parent: Node | None = None
    children: list[Node] = field(default_factory=list)
    view: SpanView | None = None
    state: int = 0
    # Set by the builder: the nearest tool span above this one inside the same run, the run
    # this span is a step of, and whether the span is itself the agent span of a run.
    tool_ancestor: Node | None = None
    owner: Node | None = None
    is_run: bool = False

    @property
    def key(self) -> tuple[int, int, str]:
        """The deterministic order of steps and runs: start, end, span id."""
        return (self.span.start_ns, self.span.end_ns, self.span_id)


class Issues:
    """Counted warnings of one trace: one line per kind of problem, with its first example."""

    def __init__(self, trace_id: str) -> None:
        self.trace_id = trace_id
        self._counts: dict[str, int] = {}
        self._examples: dict[str, str] = {}
        self.incomplete = False

    def add(self, problem: str, example: str) -> None:
        """Count one occurrence of `problem`, keeping the smallest example.

        The smallest, not the first: spans arrive in any order and the warning must not depend
        on it.
        """
        self._counts[problem] = self._counts.get(problem, 0) + 1
        kept = self._examples.get(problem)
        if kept is None or example < kept:
            self._examples[problem] = example

    def messages(self) -> list[str]:
        """`trace <id>: <n> <problem> (e.g. <example>)`, in a stable order."""
        return [
            f"trace {self.trace_id}: {count} {problem} (e.g. {self._examples[problem]})"
            for problem, count in sorted(self._counts.items())
        ]


def _richness(span: SpanRecord) -> tuple[int, int, int, str, str, str]:
    # Duplicates (an exporter retry, a replayed file) keep the most complete copy; the key
    # depends only on content (down to a repr of every value), so arrival order never
    # changes which one is kept. Only duplicates pay for the repr.
    return (
        len(span.attributes),
        span.end_ns,
        int(span.status_code),
        span.status_message,
        span.name,
        repr(
            (
                span.parent_span_id,
                span.start_ns,
                span.kind,
                sorted(span.attributes.items(), key=lambda kv: kv[0]),
                span.events,
                span.scope,
                sorted(span.resource.items(), key=lambda kv: kv[0]),
            )
        ),
    )


def build_forest(spans: Iterable[SpanRecord], issues: Issues) -> tuple[list[Node], list[Node]]:
    """(all nodes in (start, end, span id) order, root nodes in the same order)."""
    by_id: dict[str, SpanRecord] = {}
    no_id: list[SpanRecord] = []
    for span in spans:
        sid = span.span_id if isinstance(span.span_id, str) else ""
        if not sid:
            no_id.append(span)
            continue
        kept = by_id.get(sid)
        if kept is None:
            by_id[sid] = span
            continue
        issues.add("spans with a duplicate span id (one copy kept)", sid)
        if _richness(span) > _richness(kept):
            by_id[sid] = span
    nodes = [Node(span, sid) for sid, span in by_id.items()]
    no_id.sort(key=lambda s: (s.start_ns, s.end_ns, s.name, _richness(s)))
    for index, span in enumerate(no_id):
        issues.add("spans without a span id (given a synthetic one)", repr(span.name))
        nodes.append(Node(span, f"missing-{index}"))
    nodes.sort(key=lambda n: n.key)
    index_by_id = {n.span_id: n for n in nodes}
    for node in nodes:
        span = node.span
        if not 0 <= span.kind <= _MAX_OTLP_KIND:
            issues.add("spans with an unknown span kind", f"{node.span_id} kind={span.kind}")
        pid = span.parent_span_id
        if not pid:
            continue
        if pid == node.span_id:
            issues.add("parent cycles (cut)", node.span_id)
            continue
        parent = index_by_id.get(pid)
        if parent is None:
            issues.add("spans whose parent never arrived", f"{node.span_id} -> {pid}")
            issues.incomplete = True
            continue
        node.parent = parent
    _cut_cycles(nodes, issues)
    roots: list[Node] = []
    for node in nodes:
        parent = node.parent
        if parent is None:
            roots.append(node)
            continue
        parent.children.append(node)
        if 0 < node.span.start_ns < parent.span.start_ns:
            issues.add(
                "spans starting before their parent (clock skew)",
                f"{node.span_id} by {(parent.span.start_ns - node.span.start_ns) / 1e6:.3f} ms",
            )
    return nodes, roots


def _cut_cycles(nodes: list[Node], issues: Issues) -> None:
    # state: 0 unseen, 1 on the current upward walk, 2 known to reach a root.
    for start in nodes:
        path: list[Node] = []
        current: Node | None = start
        while current is not None and current.state == 0:
            current.state = 1
            path.append(current)
            current = current.parent
        if current is not None and current.state == 1:
            cycle = path[path.index(current) :]
            breaker = min(cycle, key=lambda n: n.key)
            breaker.parent = None
            issues.add("parent cycles (cut)", " -> ".join(n.span_id for n in cycle[:5]))
            issues.incomplete = True
        for node in path:
            node.state = 2
