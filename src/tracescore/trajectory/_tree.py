"""One trace's spans as a forest that is always a forest, whatever arrived.

Repairs, each counted as a warning naming the trace: spans without an id get a synthetic one,
duplicate ids keep one copy (chosen by content, not arrival order), a parent that never arrived
makes its child a root, a parent cycle is cut at its earliest span, and clock skew and unknown
span kinds are noted. Everything is iterative: a 10,000-deep chain must not hit the recursion
limit. Sorting by (start, end, span id) makes the result independent of arrival order.
"""

from __future__ import annotations

from collections.abc import Iterable
from operator import attrgetter

from tracescore.model.span import SpanRecord
from tracescore.trajectory._views import SpanView

__all__ = ["MAX_OTLP_KIND", "NODE_KEY", "Issues", "Node", "build_forest"]

MAX_OTLP_KIND = 5
"""The largest span kind OTLP defines; a larger one is warned about."""


class Node:
    """A span in the repaired tree, with its classification.

    A plain slotted class with a positional constructor: one is built per span, and its sort
    key is computed once here because ordering steps and runs reads it many times.
    """

    __slots__ = (
        "children",
        "is_run",
        "key",
        "owner",
        "parent",
        "span",
        "span_id",
        "state",
        "tool_ancestor",
        "view",
    )

    def __init__(self, span: SpanRecord, span_id: str) -> None:
        self.span = span
        self.span_id = span_id
        # The deterministic order of steps and runs: start, end, span id.
        self.key: tuple[int, int, str] = (span.start_ns, span.end_ns, span_id)
        self.parent: Node | None = None
        # Set only when the forest must be walked from its roots (see `build_forest`).
        self.children: list[Node] | None = None
        self.view: SpanView | None = None
        self.state = 0
        # Set by the builder: the nearest tool span above this one inside the same run, the run
        # this span is a step of, and whether the span is itself the agent span of a run.
        self.tool_ancestor: Node | None = None
        self.owner: Node | None = None
        self.is_run = False

    def __repr__(self) -> str:
        return f"Node({self.span_id!r})"


NODE_KEY = attrgetter("key")
"""Sort key of nodes (a C-level getter: cheaper than a lambda)."""


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


def build_forest(
    spans: Iterable[SpanRecord], issues: Issues
) -> tuple[list[Node], list[Node], list[Node]]:
    """(all nodes in (start, end, span id) order, root nodes in the same order, all nodes
    parents first).

    The parents-first order is a preorder walk of the repaired forest, or, when the node order
    already puts every parent before its children and every span had its own id (so no two
    nodes share a sort key), the node order itself: no walk, no child lists (the usual case).
    """
    by_id: dict[str, Node] = {}
    no_id: list[SpanRecord] = []
    for span in spans:
        sid = span.span_id
        if sid.__class__ is not str and not isinstance(sid, str):
            sid = ""
        if not sid:
            no_id.append(span)
            continue
        if sid not in by_id:
            by_id[sid] = Node(span, sid)
            continue
        issues.add("spans with a duplicate span id (one copy kept)", sid)
        if _richness(span) > _richness(by_id[sid].span):
            by_id[sid] = Node(span, sid)
    nodes = list(by_id.values())
    index_by_id = by_id
    if no_id:
        no_id.sort(key=lambda s: (s.start_ns, s.end_ns, s.name, _richness(s)))
        for index, span in enumerate(no_id):
            issues.add("spans without a span id (given a synthetic one)", repr(span.name))
            nodes.append(Node(span, f"missing-{index}"))
        nodes.sort(key=NODE_KEY)
        # A synthetic id may equal a real one: the later node in order wins, as it always did.
        index_by_id = {n.span_id: n for n in nodes}
    else:
        nodes.sort(key=NODE_KEY)
    roots, forward = _link(nodes, index_by_id, issues)
    if forward and not no_id:
        return nodes, roots, nodes
    if not forward:  # cycles are possible: cut them, which makes new roots
        for node in nodes:
            node.state = 0
        _cut_cycles(nodes, issues)
        roots = [node for node in nodes if node.parent is None]
    _adopt(nodes, issues)
    return nodes, roots, _preorder(roots)


def _link(
    nodes: list[Node], index_by_id: dict[str, Node], issues: Issues
) -> tuple[list[Node], bool]:
    """Set parents; return the roots in node order, and whether every parent comes before
    its children in node order.

    When it does (the usual case), there can be no cycle (each step up goes earlier) and no
    child starts before its parent, so this one pass is all the forest needs.
    """
    roots: list[Node] = []
    forward = True
    for node in nodes:
        span = node.span
        node.state = 1  # seen in this pass
        if not 0 <= span.kind <= MAX_OTLP_KIND:
            issues.add("spans with an unknown span kind", f"{node.span_id} kind={span.kind}")
        pid = span.parent_span_id
        if not pid:
            roots.append(node)
            continue
        if pid == node.span_id:
            issues.add("parent cycles (cut)", node.span_id)
            roots.append(node)
            continue
        parent = index_by_id.get(pid)
        if parent is None:
            issues.add("spans whose parent never arrived", f"{node.span_id} -> {pid}")
            issues.incomplete = True
            roots.append(node)
            continue
        node.parent = parent
        if not parent.state:
            forward = False
    return roots, forward


def _adopt(nodes: list[Node], issues: Issues) -> None:
    """Child lists in node order, for a walk from the roots; notes clock skew."""
    for node in nodes:
        parent = node.parent
        if parent is None:
            continue
        if parent.children is None:
            parent.children = [node]
        else:
            parent.children.append(node)
        if 0 < node.span.start_ns < parent.span.start_ns:
            issues.add(
                "spans starting before their parent (clock skew)",
                f"{node.span_id} by {(parent.span.start_ns - node.span.start_ns) / 1e6:.3f} ms",
            )


def _preorder(roots: list[Node]) -> list[Node]:
    """Every node, parents first, depth first (iterative: a 10,000-deep chain must not
    recurse)."""
    order: list[Node] = []
    stack = roots[::-1]
    pop, push_all = stack.pop, stack.extend
    while stack:
        node = pop()
        order.append(node)
        children = node.children
        if children:
            push_all(reversed(children))  # popped in order
            # Parent and child links make the nodes one reference cycle, which only the
            # cyclic GC can free (in `serve` that was over 40% of the CPU); with the downward
            # links dropped once followed, reference counting frees the nodes.
            node.children = None
    return order


def _cut_cycles(nodes: list[Node], issues: Issues) -> None:
    # state: 0 unseen, 1 on the current upward walk, 2 known to reach a root.
    for start in nodes:
        if start.state:
            continue  # reached from an earlier start
        parent = start.parent
        if parent is None or parent.state == 2:
            # Fast path: nodes come in start order, so a parent is usually known already.
            start.state = 2
            continue
        path: list[Node] = []
        current: Node | None = start
        while current is not None and current.state == 0:
            current.state = 1
            path.append(current)
            current = current.parent
        if current is not None and current.state == 1:
            cycle = path[path.index(current) :]
            breaker = min(cycle, key=NODE_KEY)
            breaker.parent = None
            issues.add("parent cycles (cut)", " -> ".join(n.span_id for n in cycle[:5]))
            issues.incomplete = True
        for node in path:
            node.state = 2
