"""Generated flat runs whose model spans record the calls they asked for, and variations.

`messages_run` makes the shape SDKs with message capture send (chat spans whose output messages
hold `tool_call` parts, tool spans repeating their ids); `JOINED` are variations the fast path
must build itself, `DECLINED` ones it must leave to the general path (test_flat_requests.py).
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from tracescore import semconv
from tracescore.model.span import SpanEvent, SpanRecord, StatusCode
from trajectory.spans import assistant, call, messages, response, sid, span, text, user

_AGENT = 1
_NAMES = ["lookup", "write_file", "final_result", "search", "Ünï", "handoff_to_billing"]
_OAI_SCOPE = "opentelemetry.instrumentation.openai_agents"


def messages_run(rng: random.Random, rounds: int | None = None) -> list[SpanRecord]:
    """An agent span, then rounds of a chat span that asks for tool calls (one to three, by
    id) and the tool spans that run most of them; the last chat span answers in text. Chat
    spans may record the conversation so far as their input (with each call's response)."""
    rounds = rng.randint(0, 5) if rounds is None else rounds
    attrs = {semconv.GEN_AI_OPERATION_NAME: "invoke_agent", semconv.GEN_AI_AGENT_NAME: "triage"}
    spans = [span(_AGENT, "invoke_agent triage", None, 0, 0, attrs)]
    history: list[dict[str, Any]] = [user("what is up?")]
    n, t = 2, 1
    for r in range(rounds + 1):
        last = r == rounds
        count = 0 if last else rng.choice([1, 1, 1, 2, 3])
        calls = [call(f"call_{r}_{j}", rng.choice(_NAMES), q=r, j=j) for j in range(count)]
        parts = list(calls)
        if last or rng.random() < 0.2:
            parts.insert(0, text(f"answer {r}"))
        chat_attrs: dict[str, Any] = {
            semconv.GEN_AI_OPERATION_NAME: "chat",
            semconv.GEN_AI_REQUEST_MODEL: "gpt-4.1",
            semconv.GEN_AI_USAGE_INPUT_TOKENS: rng.randint(1, 999),
            semconv.GEN_AI_OUTPUT_MESSAGES: messages(assistant(*parts)),
        }
        if rng.random() < 0.4:
            chat_attrs[semconv.GEN_AI_INPUT_MESSAGES] = messages(*history)
        spans.append(replace(span(n, "chat gpt-4.1", _AGENT, t, t + 3, chat_attrs), kind=3))
        if rng.random() < 0.3:
            spans.append(replace(span(100 + n, "POST", n, t + 1, t + 2), kind=3))
        history.append(assistant(*parts))
        n, t = n + 1, t + 4
        for part in calls:
            if rng.random() < 0.85:
                spans.append(_execution(n, t, part, rng))
                history.append(response(part["id"], {"ok": n}))
                n, t = n + 1, t + rng.choice([1, 2])
            else:  # never executed: what the next model call was told, if anything
                answer = rng.choice(
                    [None, {"type": "execution-denied"}, {"isError": True}, {"handoff_to": "b"}]
                )
                if answer is not None:
                    history.append(response(part["id"], answer))
    spans[0] = replace(spans[0], end_ns=spans[0].start_ns + (t + 5) * 1_000_000)
    return spans


def _execution(n: int, start: int, part: dict[str, Any], rng: random.Random) -> SpanRecord:
    name = part["name"]
    attrs: dict[str, Any] = {
        semconv.GEN_AI_OPERATION_NAME: "execute_tool",
        semconv.GEN_AI_TOOL_NAME: name,
        semconv.GEN_AI_TOOL_CALL_ID: part["id"],
    }
    if rng.random() < 0.5:  # else the request's arguments stand in
        attrs[semconv.GEN_AI_TOOL_CALL_ARGUMENTS] = json.dumps(part["arguments"])
    if rng.random() < 0.7:
        attrs[semconv.GEN_AI_TOOL_CALL_RESULT] = rng.choice(['{"ok": 1}', '{"isError": true}'])
    status = StatusCode.ERROR if rng.random() < 0.15 else StatusCode.UNSET
    return span(n, f"execute_tool {name}", _AGENT, start, start + 1, attrs, status, "boom")


Mutation = Callable[[list[SpanRecord], random.Random], list[SpanRecord]]


def _of(spans: list[SpanRecord], op: str) -> list[int]:
    return [i for i, s in enumerate(spans) if s.attributes.get(semconv.GEN_AI_OPERATION_NAME) == op]


def _replaced(spans: list[SpanRecord], i: int, record: SpanRecord) -> list[SpanRecord]:
    out = list(spans)
    out[i] = record
    return out


def _with_attrs(spans: list[SpanRecord], i: int, **attrs: Any) -> list[SpanRecord]:
    return _replaced(spans, i, replace(spans[i], attributes={**spans[i].attributes, **attrs}))


def _outputs(record: SpanRecord) -> list[dict[str, Any]] | None:
    """A chat span's output messages, parsed (None when it recorded none, or a structure)."""
    raw = record.attributes.get(semconv.GEN_AI_OUTPUT_MESSAGES)
    return json.loads(raw) if isinstance(raw, str) else None


def _shuffled(spans: list[SpanRecord], rng: random.Random) -> list[SpanRecord]:
    return rng.sample(spans, len(spans))


def _unrequested(spans: list[SpanRecord], rng: random.Random) -> list[SpanRecord]:
    # A tool span no model call asked for (its id is its own, or no request's).
    part = call(rng.choice(["call_own", "call_9_9"]), rng.choice(_NAMES), q=9)
    return [*spans, _execution(300, rng.randint(1, 30), part, rng)]


def _executed_twice(spans: list[SpanRecord], rng: random.Random) -> list[SpanRecord]:
    # Two tool spans with one call id: the first in order answers the request, the other
    # stands alone.
    tools = _of(spans, "execute_tool")
    if not tools:
        return spans
    copy = spans[rng.choice(tools)]
    shift = rng.choice([-2, 0, 3]) * 1_000_000
    twin = replace(copy, span_id=sid(301), start_ns=copy.start_ns + shift, end_ns=copy.end_ns)
    return [*spans, twin]


def _asked_twice(spans: list[SpanRecord], rng: random.Random) -> list[SpanRecord]:
    # A later model call records an earlier call again (a retried stream): asked once.
    chats = _of(spans, "chat")
    if len(chats) < 2:
        return spans
    first, later = sorted(rng.sample(chats, 2), key=lambda i: spans[i].start_ns)
    earlier, mine = _outputs(spans[first]), _outputs(spans[later])
    if not earlier or not mine:
        return spans
    mine[0]["parts"] = earlier[0]["parts"] + mine[0]["parts"]
    return _with_attrs(spans, later, **{semconv.GEN_AI_OUTPUT_MESSAGES: json.dumps(mine)})


def _early_tool(spans: list[SpanRecord], rng: random.Random) -> list[SpanRecord]:
    # A tool span that starts with, or before, the model call that asked for it (clocks of
    # millisecond resolution, or skew between processes).
    tools = _of(spans, "execute_tool")
    chats = _of(spans, "chat")
    if not tools or not chats:
        return spans
    i, j = rng.choice(tools), rng.choice(chats)
    root = next(s for s in spans if s.span_id == sid(_AGENT))
    start = max(spans[j].start_ns + rng.choice([-1, 0, 0, 1]) * 1_000_000, root.start_ns + 1)
    return _replaced(spans, i, replace(spans[i], start_ns=start, end_ns=start + 500_000))


def _executed_out_of_order(spans: list[SpanRecord], rng: random.Random) -> list[SpanRecord]:
    # Two calls one model call asked for, executed in the other order (in parallel).
    asked_together: dict[str, list[int]] = {}
    for i in _of(spans, "execute_tool"):
        call_id = spans[i].attributes.get(semconv.GEN_AI_TOOL_CALL_ID)
        if isinstance(call_id, str):
            asked_together.setdefault(call_id.rsplit("_", 1)[0], []).append(i)
    groups = [group for group in asked_together.values() if len(group) > 1]
    if not groups:
        return spans
    i, j = rng.sample(rng.choice(groups), 2)
    first, second = spans[i], spans[j]
    out = _replaced(spans, i, replace(first, start_ns=second.start_ns, end_ns=second.end_ns))
    return _replaced(out, j, replace(second, start_ns=first.start_ns, end_ns=first.end_ns))


def _text_only(spans: list[SpanRecord], rng: random.Random) -> list[SpanRecord]:
    # Every model call answers in text: messages recorded, nothing asked for.
    out = list(spans)
    for i in _of(spans, "chat"):
        out = _with_attrs(out, i, **{semconv.GEN_AI_OUTPUT_MESSAGES: messages(assistant())})
    return out


def _decision(spans: list[SpanRecord], rng: random.Random) -> list[SpanRecord]:
    # A `gen_ai.tool.call.decision` event for some call (executed or not), on some span.
    i = rng.randrange(len(spans))
    attrs: dict[str, Any] = {
        semconv.GEN_AI_TOOL_CALL_DECISION_OUTCOME: rng.choice(["deny", "require_approval", "ok"])
    }
    if rng.random() < 0.7:
        attrs[semconv.GEN_AI_TOOL_CALL_ID] = f"call_{rng.randint(0, 2)}_0"
    else:
        attrs[semconv.GEN_AI_TOOL_NAME] = rng.choice(_NAMES)
    event = SpanEvent(semconv.GEN_AI_TOOL_CALL_DECISION_EVENT, 0, attrs)
    return _replaced(spans, i, replace(spans[i], events=(*spans[i].events, event)))


def _denied_before(spans: list[SpanRecord], rng: random.Random) -> list[SpanRecord]:
    # A resumed run: its first model call is told of a call of the earlier run the user
    # denied (or rejected in the OpenAI Agents SDK's words).
    chats = _of(spans, "chat")
    if not chats:
        return spans
    first = min(chats, key=lambda i: spans[i].start_ns)
    answer = rng.choice(
        [{"type": "execution-denied"}, semconv.OPENAI_AGENTS_REJECTION_MESSAGE, {"ok": 1}]
    )
    earlier = rng.choice(["call_old", "call_0_0"])
    told = messages(user("go"), assistant(call(earlier, "delete", x=1)), response(earlier, answer))
    return _with_attrs(spans, first, **{semconv.GEN_AI_INPUT_MESSAGES: told})


def _agent_exchange(spans: list[SpanRecord], rng: random.Random) -> list[SpanRecord]:
    # The agent span records the exchange too (Microsoft Agent Framework): it stands in when
    # no model span recorded one.
    out = messages(assistant(call("call_0_0", "lookup", q=0), call("call_agent", "search")))
    inp = messages(user("hello"), response("call_agent", {"type": "execution-denied"}))
    attrs = {semconv.GEN_AI_OUTPUT_MESSAGES: out, semconv.GEN_AI_INPUT_MESSAGES: inp}
    return _with_attrs(spans, 0, **attrs)


def _no_model_messages(spans: list[SpanRecord], rng: random.Random) -> list[SpanRecord]:
    # Content capture off on chat spans: only the agent span's record (if any) tells requests.
    out = list(spans)
    for i in _of(spans, "chat"):
        attrs = dict(spans[i].attributes)
        attrs.pop(semconv.GEN_AI_OUTPUT_MESSAGES)
        out[i] = replace(spans[i], attributes=attrs)
    return out


def _openai_agents(spans: list[SpanRecord], rng: random.Random) -> list[SpanRecord]:
    # The OpenAI Agents SDK's scope, results not recorded (or not decoded): a last tool with
    # no model call after it is a call stopped for an approval.
    out = []
    for record in spans:
        attrs = dict(record.attributes)
        if rng.random() < 0.7:
            attrs.pop(semconv.GEN_AI_TOOL_CALL_RESULT, None)
        out.append(replace(record, scope=_OAI_SCOPE, attributes=attrs))
    return out


def _repr_answer(spans: list[SpanRecord], rng: random.Random) -> list[SpanRecord]:
    # openai-agents-v2 0.1.0 writes a model answer that asked for tools as the repr of the
    # OpenAI message: read back as its text and tool_call parts.
    chats = _of(spans, "chat")
    if not chats:
        return spans
    i = rng.choice(chats)
    function = "{'name': 'lookup', 'arguments': '{}'}"
    calls = f"[{{'id': 'call_0_0', 'type': 'function', 'function': {function}}}]"
    content = f"{{'content': None, 'refusal': None, 'role': 'assistant', 'tool_calls': {calls}}}"
    out = messages(assistant(text(content)))
    return _with_attrs(spans, i, **{semconv.GEN_AI_OUTPUT_MESSAGES: out})


def _structured(spans: list[SpanRecord], rng: random.Random) -> list[SpanRecord]:
    # Messages as a structured OTLP value (an array of kvlists), ids with stray whitespace.
    out = list(spans)
    for i in _of(spans, "chat"):
        parsed = _outputs(spans[i])
        if parsed is None:
            continue
        for message in parsed:
            for part in message["parts"]:
                if part.get("type") == "tool_call" and rng.random() < 0.5:
                    part["id"] = " " + part["id"] + " "
        out = _with_attrs(out, i, **{semconv.GEN_AI_OUTPUT_MESSAGES: tuple(parsed)})
    return out


JOINED: list[Mutation] = [
    _shuffled,
    _unrequested,
    _executed_twice,
    _asked_twice,
    _early_tool,
    _executed_out_of_order,
    _text_only,
    _decision,
    _denied_before,
    _agent_exchange,
    _no_model_messages,
    _openai_agents,
    _repr_answer,
    _structured,
]


def _idless_request(spans: list[SpanRecord], rng: random.Random) -> list[SpanRecord]:
    # A requested call without an id: joined by name and order, by the general path.
    i = rng.choice(_of(spans, "chat"))
    parsed = _outputs(spans[i]) or [assistant()]
    parsed[0]["parts"].append(call(None, "lookup", q=1))
    return _with_attrs(spans, i, **{semconv.GEN_AI_OUTPUT_MESSAGES: json.dumps(parsed)})


def _idless_execution(spans: list[SpanRecord], rng: random.Random) -> list[SpanRecord]:
    # A tool span without an id in a run that recorded requests: joined by name and order.
    spans = _idless_request(spans, rng) if not _requested(spans) else spans
    part = call("unused", "lookup", q=1)
    record = _execution(302, rng.randint(1, 30), part, rng)
    attrs = dict(record.attributes)
    del attrs[semconv.GEN_AI_TOOL_CALL_ID]
    return [*spans, replace(record, attributes=attrs)]


def _requested(spans: list[SpanRecord]) -> bool:
    return any(
        '"tool_call"' in str(s.attributes.get(semconv.GEN_AI_OUTPUT_MESSAGES)) for s in spans
    )


def _handoff_span(spans: list[SpanRecord], rng: random.Random) -> list[SpanRecord]:
    attrs = {
        semconv.GEN_AI_OPERATION_NAME: "agent_handoff",
        semconv.GEN_AI_HANDOFF_TO_AGENT: "billing",
    }
    return [*spans, span(303, "agent_handoff", _AGENT, 5, 6, attrs)]


DECLINED: list[Mutation] = [_idless_request, _idless_execution, _handoff_span]
