"""Joining requested tool calls to the spans that executed them.

By call id first (ids are already stripped of stray whitespace); where a side has no id, by tool
name and order under the same run, so agno, Mastra and Traceloop calls (no id on the tool span)
still find the model's request.
"""

from __future__ import annotations

from dataclasses import dataclass

from tracescore.trajectory._tree import Node
from tracescore.trajectory._views import ToolRequest

__all__ = ["Request", "join"]


@dataclass(slots=True)
class Request:
    """A requested call, when it was asked for, and the execution joined to it (if any)."""

    request: ToolRequest
    anchor: int
    execution: Node | None = None


def join(requests: list[Request], executions: list[Node]) -> list[Node]:
    """Attach executions to requests by call id, then by name and order; return the rest.

    An execution with an id may only take a request without one (and vice versa): two
    different ids are two different calls. Per-name queues keep this linear.
    """
    if not requests:  # nothing was requested (content capture off): every execution stands alone
        return list(executions)
    by_id: dict[str, Request] = {}
    for item in requests:
        if item.request.call_id is not None:
            by_id.setdefault(item.request.call_id, item)
    rest: list[Node] = []
    for node in executions:
        view = node.view
        assert view is not None
        found = by_id.get(view.call_id) if view.call_id is not None else None
        if found is not None and found.execution is None:
            found.execution = node
        else:
            rest.append(node)
    if not rest:
        return rest
    any_queue: dict[str, list[Request]] = {}
    idless_queue: dict[str, list[Request]] = {}
    for item in requests:
        any_queue.setdefault(item.request.name, []).append(item)
        if item.request.call_id is None:
            idless_queue.setdefault(item.request.name, []).append(item)
    cursor: dict[tuple[bool, str], int] = {}
    unmatched: list[Node] = []
    for node in rest:
        view = node.view
        assert view is not None
        name = view.tool_name or ""
        has_id = view.call_id is not None
        queue = (idless_queue if has_id else any_queue).get(name, [])
        position = cursor.get((has_id, name), 0)
        while position < len(queue) and queue[position].execution is not None:
            position += 1
        cursor[(has_id, name)] = position
        if position < len(queue):
            queue[position].execution = node
        else:
            unmatched.append(node)
    return unmatched
