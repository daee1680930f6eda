"""What the pass over a flat run (`_flat`) collects: its steps, made as its spans are read, or
what each span said, for `_flat_steps.flat_steps` to join in a second pass.

A flat run's model spans may record the calls they asked for (`tool_call` parts of their output
messages), and its tool spans repeat their ids. In the usual orders a request is recorded by a
model span read before the execution that answers it, or no request is recorded at all, and the
steps come in the order the spans are read: each is then made in the pass (`FlatParts.execute`).
Where that does not hold (a request recorded after its execution, never executed, or executed
before one asked earlier; tied starts; the agent span's fallback requests; a call after the
last model call, which may have paused for an approval; calls denied before the run), the spans
are read again and `flat_steps` joins them.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache

from tracescore import semconv
from tracescore.model.span import SpanRecord
from tracescore.model.trajectory import Step
from tracescore.trajectory._genai import model_responses
from tracescore.trajectory._options import BuildOptions
from tracescore.trajectory._pydantic_ai import output_tool_prefixes
from tracescore.trajectory._step_calls import executed_call
from tracescore.trajectory._unexecuted import denied_earlier
from tracescore.trajectory._views import (
    TOOL_CALL_ID,
    LazyResponses,
    ModelValues,
    RequestValues,
    SpanView,
    ToolValues,
)

__all__ = ["FlatParts", "denied_before_run", "responses_of"]

_OPENAI_AGENTS_SCOPES = semconv.OPENAI_AGENTS_SCOPES  # (bound here: a lookup fewer per call)


class FlatParts:
    """What the pass over a flat run collected: its steps made in the pass, or its model and tool
    spans and the requests for `flat_steps`.

    In one pass (`one_pass`), `steps` holds the run's steps as they are made, in (start, end,
    span id) order (see `execute`). In two passes, `order` lists the steps other than requested
    calls, in (start, end, span id) order: an index into `tools` for a tool span (with what it
    says of its call), `~k` (negative) for the model call `model_steps[k]`.
    """

    __slots__ = (
        "agent",
        "agent_view",
        "anchors",
        "answers",
        "by_id",
        "hidden",
        "joined",
        "late",
        "loose_ids",
        "model_spans",
        "model_steps",
        "models",
        "one_pass",
        "options",
        "order",
        "prefixes",
        "recorded",
        "requests",
        "root",
        "shown",
        "steps",
        "tools",
    )

    def __init__(
        self,
        root: SpanRecord,
        agent_view: SpanView,
        agent: str | None,
        options: BuildOptions,
        one_pass: bool,
    ) -> None:
        self.root = root
        self.agent_view = agent_view
        self.agent = agent
        self.options = options
        self.one_pass = one_pass
        self.answers: list[SpanView] = []  # the views of `models` that `run_trajectory` may read
        # A GenAI inference span as its values, another convention's as its view.
        self.models: list[SpanView | ModelValues] = []
        self.model_spans: list[SpanRecord] = []
        self.model_steps: list[Step] = []  # (model calls only)
        self.tools: list[tuple[SpanRecord, ToolValues]] = []
        self.order: list[int] = []
        self.requests: list[RequestValues] = []
        self.anchors: list[int] = []  # when each request was asked for: its model span's end
        self.by_id: dict[str, int] = {}  # call id -> index in `requests` (the first one wins)
        self.recorded = False  # a model span recorded its output messages (maybe no call)
        self.steps: list[Step] = []
        self.joined = 0  # how many requests were executed (the first ones: in request order)
        self.loose_ids: list[str | None] = []  # the call ids of executions no request asked for
        self.late = False  # a request was recorded after an execution of its call id
        # Output tools are left out unless `include_output_tools` (`shows_unrequested`: no view
        # here is an output tool); `is_output_tool(name, hidden)` is inlined with these, and
        # `shown` remembers the names it passed (the same few tools run again and again).
        self.hidden, self.prefixes, self.shown = _hidden_tools(
            options.include_output_tools, options.output_tool_names
        )

    def add_requests(self, asked: tuple[RequestValues, ...], anchor: int) -> bool:
        """Add the requests `asked` at `anchor`, but a call id already asked for (the same call
        recorded twice, e.g. by a retried stream); False when one has no call id, or an
        execution read before has none (requests are joined by id)."""
        requests, anchors, by_id = self.requests, self.anchors, self.by_id
        loose = self.loose_ids  # (only in one pass: executions read before this request)
        if None in loose:  # an execution without an id, where requests are joined by id
            return False
        for request in asked:
            call_id = request[1]
            if call_id is None:
                return False
            if call_id not in by_id:
                if call_id in loose:
                    self.late = True
                by_id[call_id] = len(requests)
                requests.append(request)
                anchors.append(anchor)
        return True

    def keep(self, span: SpanRecord, values: ToolValues) -> bool | None:
        """In two passes: keep what the tool span `span` says of its call (`values`)."""
        self.order.append(len(self.tools))
        self.tools.append((span, values))
        return True

    def execute(self, span: SpanRecord, values: ToolValues) -> bool | None:
        """In one pass: the step of the tool span `span` (what it says of its call: `values`),
        joined to the request it answers when that was the next request to execute; False when
        the run needs the two passes, None when it needs the general path (`keep`'s answers are
        the same).

        `flat_steps` places each requested call at its execution's start, in the order asked,
        among the other steps in (start, end, span id) order. When spans start at distinct
        times (`one_pass`) and the requests are executed in the order asked, that is the order
        in which the spans are read.
        """
        call_id = values[TOOL_CALL_ID]
        request: RequestValues | None = None
        if self.requests:
            found = self.by_id.get(call_id)  # type: ignore[arg-type]
            if found is None:
                if call_id is None:
                    return None  # (requests are joined by id)
            elif found == self.joined:
                request = self.requests[found]
                self.joined = found + 1
            elif found > self.joined:
                return False  # executed before a call asked earlier
            # (else a call executed again: the first execution answered the request)
        if request is None:
            self.loose_ids.append(call_id)
        call = executed_call(values, span, span.span_id, request, self.agent, self.options)
        name = call.name
        # `shows(name)`, inlined: a call fewer per execution.
        if name in self.shown:  # (a set test: the `startswith` call below costs more)
            self.steps.append(call)
        elif not name or not (name in self.hidden or name.startswith(self.prefixes)):
            self.steps.append(call)
            if len(self.shown) < _SHOWN_NAMES:
                self.shown.add(name)
        return True

    def shows(self, name: str) -> bool:
        """Whether a call of tool `name` is among the run's steps: not an output tool (left out
        unless `include_output_tools`), remembered in `shown` when it passed."""
        if name in self.shown:
            return True
        if name and (name in self.hidden or name.startswith(self.prefixes)):
            return False
        if len(self.shown) < _SHOWN_NAMES:
            self.shown.add(name)
        return True

    def joined_steps(
        self,
        first_model: SpanView | ModelValues | None,
        first_start: int,
        ordered: list[SpanRecord],
        last_model: SpanRecord | None,
    ) -> tuple[Step, ...] | None:
        """In one pass: the run's steps, or None when it needs the two passes: a request never
        executed, or recorded after an execution of its call; requests the agent span recorded
        for model spans that recorded none; an OpenAI Agents SDK call after the last model call,
        which may have stopped its run for an approval (`paused_for_approval`); calls denied
        before the run (`denied_earlier`). The first model span said `first_model` and started
        at `first_start`; `last_model` is the last of the spans `ordered` that is a model span."""
        if self.late or self.joined != len(self.requests):
            return None
        if not self.recorded and self.agent_view.requests:
            return None  # (the agent span's requests stand in: `flat_steps`)
        if self.options.pause.awaiting_approval is not None:
            # Only the OpenAI Agents SDK's calls (`awaits_approval`), and only after the last
            # model call: its spans come last in `ordered` (distinct starts). The few there are
            # tested, tool spans or not.
            for span in reversed(ordered):
                if span is last_model:
                    break
                if span.scope in _OPENAI_AGENTS_SCOPES:
                    return None
        if first_model is not None and denied_before_run(
            self, first_model, first_start, self.loose_ids
        ):
            return None
        return tuple(self.steps)


_SHOWN_NAMES = 4096  # (tool names come from traffic: the memo of those shown stops growing)


@lru_cache(maxsize=16)  # (few distinct options: made once per run, not per call)
def _hidden_tools(
    shown: bool, names: tuple[str, ...]
) -> tuple[tuple[str, ...], tuple[str, ...], set[str]]:
    """The output tools left out of a run's steps (none when `shown`), the prefixes of their
    suffixed variants (`output_tool_prefixes`), and a memo of names found not to be either
    (shared by the runs built with these options)."""
    hidden = () if shown else tuple(sorted(set(names)))
    return hidden, output_tool_prefixes(hidden), set()


def denied_before_run(
    parts: FlatParts,
    model: SpanView | ModelValues,
    start: int,
    executed_ids: Iterable[str | None],
) -> list[tuple[int, Step]]:
    """The calls of an earlier run denied as the run's first model call (`model`, started at
    `start`) was told (`denied_earlier`; `executed_ids`: the call ids of the executions no
    request asked for)."""
    # Only a first model call that recorded its input can tell of earlier denials: most runs
    # make no list for `denied_earlier` to turn down.
    first = responses_of(model, parts.options)
    if first is None:
        return []
    return denied_earlier(first, start, parts.by_id, executed_ids, parts.agent, parts.options)


def responses_of(model: SpanView | ModelValues, options: BuildOptions) -> LazyResponses | None:
    """A model span's recorded responses (its view's `responses`), read when asked."""
    if model.__class__ is SpanView:
        return model.responses
    return model_responses(model, options)  # type: ignore[arg-type]
