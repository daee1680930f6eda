"""The flat-run fast path gives exactly the general builder's result, and is taken when it can.

Each case is built twice, with the fast path (`_build._flat_run`) and without it, and the two
results must be equal: on every recorded fixture trace, the benchmark's runs and a few hundred
generated variations of a flat run. The benchmark's runs must take the fast path, and every
variation that needs the general path (a repair, a warning, a join by name, a sub-run) must
decline it. Runs whose model spans record the calls they asked for: test_flat_requests.py.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest

from tracescore import semconv
from tracescore.model.span import SpanRecord, StatusCode
from tracescore.model.trajectory import Trajectory
from tracescore.trajectory import BuildOptions, BuildResult, _build, _genai
from tracescore.trajectory._flat import build_flat_run
from trajectory.corpora import bench_spans, fixture_span_files
from trajectory.edge_spans import EDGE_CASES, without_dropped
from trajectory.spans import assistant, call, messages, sid, span, text, user


def both(
    spans: list[SpanRecord], monkeypatch: pytest.MonkeyPatch, options: BuildOptions | None = None
) -> list[bool]:
    """Build `spans` with and without the fast path; assert the same result; return, per trace,
    whether the fast path answered it."""
    taken: list[bool] = []

    def recording(
        trace: list[SpanRecord], opts: BuildOptions, views: dict[str, Any]
    ) -> Trajectory | None:
        flat = build_flat_run(trace, opts, views)
        taken.append(flat is not None)
        return flat

    with monkeypatch.context() as patch:
        patch.setattr(_build, "_flat_run", recording)
        fast = _build.build_trajectories(spans, options)
        patch.setattr(_build, "_flat_run", None)
        general = _build.build_trajectories(spans, options)
    assert _comparable(fast) == _comparable(general)
    assert fast == general
    return taken


def _comparable(result: BuildResult) -> Any:
    return (
        [json.dumps(t.to_dict(), sort_keys=True, default=repr) for t in result.trajectories],
        result.warnings,
    )


def _by_trace(spans: list[SpanRecord]) -> list[list[SpanRecord]]:
    traces: dict[str, list[SpanRecord]] = {}
    for record in spans:
        traces.setdefault(record.trace_id, []).append(record)
    return list(traces.values())


def bench_traces(n_traces: int = 20) -> list[list[SpanRecord]]:
    """The benchmark's runs, decoded as the service decodes them (only the needed keys)."""
    return _by_trace(bench_spans(n_traces))


def test_every_fixture_trace_builds_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    files = fixture_span_files()
    assert len(files) > 10
    for spans in files:
        both(spans, monkeypatch)  # several traces at once
        for trace in _by_trace(spans):
            both(trace, monkeypatch)
            both(trace, monkeypatch, BuildOptions(include_output_tools=True, max_agent_depth=1))


def test_the_benchmark_runs_take_the_fast_path(monkeypatch: pytest.MonkeyPatch) -> None:
    traces = bench_traces()
    assert len(traces) == 20
    for trace in traces:
        assert both(trace, monkeypatch) == [True]
        # In another order, with an HTTP span (a leaf) dropped, as the service may keep them.
        http = next(i for i, s in enumerate(trace) if s.name == "POST")
        assert both((trace[:http] + trace[http + 1 :])[::-1], monkeypatch) == [True]
    assert both([s for t in traces for s in t], monkeypatch) == [True] * len(traces)


# Generated variations of a flat run: a base run, then mutations. A benign mutation keeps the
# run flat (the fast path must answer it); an odd one needs the general path (it must decline).

_AGENT = 1


def flat_run(rng: random.Random, steps: int | None = None) -> list[SpanRecord]:
    """An agent span with chat and tool spans under it, some chat spans with an HTTP child."""
    attrs = {semconv.GEN_AI_OPERATION_NAME: "invoke_agent", semconv.GEN_AI_AGENT_NAME: "triage"}
    steps = rng.randint(0, 9) if steps is None else steps
    spans = [span(_AGENT, "invoke_agent triage", None, 0, 10 * steps + 20, attrs)]
    for i in range(steps):
        n, start = i + 2, 10 * i + 1
        if i % 2 == 0:
            spans.append(
                replace(span(n, "chat m", _AGENT, start, start + 5, _chat_attrs(rng)), kind=3)
            )
            if rng.random() < 0.5:
                spans.append(replace(span(100 + n, "POST", n, start + 1, start + 4), kind=3))
        else:
            spans.append(_tool(n, start, rng))
    return spans


def _chat_attrs(rng: random.Random) -> dict[str, Any]:
    attrs: dict[str, Any] = {
        semconv.GEN_AI_OPERATION_NAME: "chat",
        semconv.GEN_AI_REQUEST_MODEL: "gpt-4.1",
        semconv.GEN_AI_USAGE_INPUT_TOKENS: rng.randint(1, 999),
    }
    if rng.random() < 0.8:
        attrs[semconv.GEN_AI_RESPONSE_MODEL] = "gpt-4.1-2025"
        attrs[semconv.GEN_AI_USAGE_OUTPUT_TOKENS] = rng.randint(1, 99)
    if rng.random() < 0.2:
        attrs[semconv.GEN_AI_TOOL_DEFINITIONS] = json.dumps(
            [{"type": "function", "name": rng.choice(["lookup", "final_result", "x"])}]
        )
    if rng.random() < 0.2:
        attrs[semconv.GEN_AI_INPUT_MESSAGES] = messages(user("what is up?"))
    return attrs


def _tool(n: int, start: int, rng: random.Random, parent: int = _AGENT) -> SpanRecord:
    name = rng.choice(
        ["lookup", "write_file", "final_result", "final_result_Pet", "final_resultPet", "Ünï"]
    )
    attrs: dict[str, Any] = {
        semconv.GEN_AI_OPERATION_NAME: "execute_tool",
        semconv.GEN_AI_TOOL_NAME: name,
    }
    if rng.random() < 0.8:
        attrs[semconv.GEN_AI_TOOL_CALL_ID] = f"call_{n}"
    if rng.random() < 0.7:
        attrs[semconv.GEN_AI_TOOL_CALL_ARGUMENTS] = json.dumps({"q": n})
        attrs[semconv.GEN_AI_TOOL_CALL_RESULT] = rng.choice(['{"ok": 1}', '{"isError": true}'])
    status = StatusCode.ERROR if rng.random() < 0.2 else StatusCode.UNSET
    if status == StatusCode.ERROR and rng.random() < 0.5:
        attrs[semconv.ERROR_TYPE] = "TimeoutError"
    return span(n, f"execute_tool {name}", parent, start, start + 3, attrs, status, "boom")


Mutation = Callable[[list[SpanRecord], random.Random], list[SpanRecord]]


def _pick(spans: list[SpanRecord], rng: random.Random, op: str | None = None) -> int:
    """The index of a random non-root span (of operation `op` when given), or -1."""
    found = [
        i
        for i, s in enumerate(spans)
        if s.parent_span_id and (op is None or s.attributes.get("gen_ai.operation.name") == op)
    ]
    return rng.choice(found) if found else -1


def _root(spans: list[SpanRecord]) -> int:
    return next(i for i, s in enumerate(spans) if s.span_id == sid(_AGENT))


def _with_agent_attrs(spans: list[SpanRecord], **attrs: str) -> list[SpanRecord]:
    i = _root(spans)
    out = list(spans)
    out[i] = replace(spans[i], attributes={**spans[i].attributes, **attrs})
    return out


def _shuffled(spans: list[SpanRecord], rng: random.Random) -> list[SpanRecord]:
    return rng.sample(spans, len(spans))


def _ties(spans: list[SpanRecord], rng: random.Random) -> list[SpanRecord]:
    # Millisecond clocks: some steps start (and end) together; the span id decides the order.
    i, j = _pick(spans, rng), _pick(spans, rng, "execute_tool")  # a tool has no children
    if j < 0 or spans[i].parent_span_id != spans[j].parent_span_id:
        return spans
    out = list(spans)
    same_end = rng.random() < 0.5
    out[j] = replace(
        spans[j],
        start_ns=spans[i].start_ns,
        end_ns=spans[i].end_ns if same_end else spans[j].end_ns,
    )
    return out


def _no_end(spans: list[SpanRecord], rng: random.Random) -> list[SpanRecord]:
    i = _pick(spans, rng)
    out = list(spans)
    if i >= 0:
        out[i] = replace(spans[i], end_ns=0)
    return out


def _agent_messages(spans: list[SpanRecord], rng: random.Random) -> list[SpanRecord]:
    # Messages on the agent span without tool calls: input and output, and no requests.
    return _with_agent_attrs(
        spans,
        **{
            semconv.GEN_AI_INPUT_MESSAGES: messages(user("hello")),
            semconv.GEN_AI_OUTPUT_MESSAGES: messages(assistant(text("done"))),
        },
    )


def _agent_tools(spans: list[SpanRecord], rng: random.Random) -> list[SpanRecord]:
    # Tools the agent offered: repeated, output tools among them, or none at all.
    pool = ["lookup", "final_result", "final_result_x", "lookup", "write", "é", ""]
    names = rng.sample(pool, rng.randint(0, len(pool)))
    definitions = json.dumps([{"type": "function", "name": name} for name in names])
    return _with_agent_attrs(spans, **{semconv.GEN_AI_TOOL_DEFINITIONS: definitions})


def _duplicate(spans: list[SpanRecord], rng: random.Random) -> list[SpanRecord]:
    copy = rng.choice(spans)
    return [*spans, replace(copy, name=copy.name + " retry", end_ns=copy.end_ns + 1)]


def _orphan(spans: list[SpanRecord], rng: random.Random) -> list[SpanRecord]:
    i = _pick(spans, rng)
    out = list(spans)
    out[i] = replace(spans[i], parent_span_id="feedfacefeedface")
    return out


def _no_id(spans: list[SpanRecord], rng: random.Random) -> list[SpanRecord]:
    i = _pick(spans, rng)
    out = list(spans)
    out[i] = replace(spans[i], span_id=rng.choice(["", None, b"\x01"]))  # type: ignore[arg-type]
    return out


def _second_agent(spans: list[SpanRecord], rng: random.Random) -> list[SpanRecord]:
    parent = rng.choice([_AGENT, None])
    attrs = {semconv.GEN_AI_OPERATION_NAME: "invoke_agent", semconv.GEN_AI_AGENT_NAME: "sub"}
    return [*spans, span(200, "invoke_agent sub", parent, 2, 4, attrs)]


def _second_root(spans: list[SpanRecord], rng: random.Random) -> list[SpanRecord]:
    return [*spans, span(201, "GET /health", None, 1, 2, {})]


def _nested_tool(spans: list[SpanRecord], rng: random.Random) -> list[SpanRecord]:
    i = _pick(spans, rng, rng.choice(["execute_tool", "chat"]))
    if i < 0:
        return [*spans, _tool(202, 1, rng, parent=300)]  # an orphan tool: odd either way
    outer = spans[i]
    start = (outer.start_ns - spans[_root(spans)].start_ns) // 1_000_000
    inner = _tool(202, start, rng, parent=int(outer.span_id, 16))
    if rng.random() < 0.5:  # an MCP span of the same call inside the tool span
        inner = replace(inner, attributes={**outer.attributes, **inner.attributes})
    return [*spans, inner]


def _skew(spans: list[SpanRecord], rng: random.Random) -> list[SpanRecord]:
    i = _pick(spans, rng)
    out = list(spans)
    out[i] = replace(spans[i], start_ns=spans[_root(spans)].start_ns - 5_000_000)
    return out


def _odd_kind(spans: list[SpanRecord], rng: random.Random) -> list[SpanRecord]:
    i = rng.randrange(len(spans))
    out = list(spans)
    out[i] = replace(spans[i], kind=rng.choice([6, 9, -1]))
    return out


def _idless_call(spans: list[SpanRecord], rng: random.Random) -> list[SpanRecord]:
    # Content capture on: the chat span records a call it asked for, without an id (joined to
    # an execution by name and order, which only the general path does).
    i = _pick(spans, rng, "chat")
    if i < 0:
        return _second_root(spans, rng)
    parts = [text("hi"), call(None, "lookup", q=1)]
    attrs = {**spans[i].attributes, semconv.GEN_AI_OUTPUT_MESSAGES: messages(assistant(*parts))}
    out = list(spans)
    out[i] = replace(spans[i], attributes=attrs)
    return out


def _agent_requests(spans: list[SpanRecord], rng: random.Random) -> list[SpanRecord]:
    # The agent span's record of a call without an id: with no chat span recording any, it
    # stands in for theirs, and is joined by name and order.
    output = messages(assistant(call(None, "lookup", q=2)))
    return _with_agent_attrs(spans, **{semconv.GEN_AI_OUTPUT_MESSAGES: output})


def _self_parent(spans: list[SpanRecord], rng: random.Random) -> list[SpanRecord]:
    i = _pick(spans, rng)
    out = list(spans)
    out[i] = replace(spans[i], parent_span_id=spans[i].span_id)
    return out


def _other_convention(spans: list[SpanRecord], rng: random.Random) -> list[SpanRecord]:
    # A pydantic-ai span: another reader, which may add warnings or output tools.
    i = _pick(spans, rng)
    out = list(spans)
    out[i] = replace(spans[i], scope=semconv.PYDANTIC_AI_SCOPE)
    return out


def _warned(spans: list[SpanRecord], rng: random.Random) -> list[SpanRecord]:
    # A span whose view carries a warning (an OpenInference span of an unknown kind).
    kind = {semconv.OI_SPAN_KIND: "WEIRD"}
    return [*spans, span(203, "step", rng.choice([_AGENT, 2, None]), 3, 4, kind)]


def _plain_child(spans: list[SpanRecord], rng: random.Random) -> list[SpanRecord]:
    # A span no convention reads, or an `other` GenAI span, under any span of the run.
    parent = rng.choice([s for s in spans if isinstance(s.span_id, str) and s.span_id])
    start = (parent.start_ns - spans[_root(spans)].start_ns) // 1_000_000 + 1
    attrs = rng.choice([{}, {semconv.GEN_AI_OPERATION_NAME: "embeddings"}])
    return [*spans, span(204, "work", int(parent.span_id, 16), start, start, attrs)]


BENIGN: list[Mutation] = [
    _shuffled,
    _ties,
    _no_end,
    _agent_messages,
    _agent_tools,
    _plain_child,
]
# Odd structures: a flat run of any content with one of these needs the general path.
STRUCTURE_ODD: list[Mutation] = [
    _duplicate,
    _orphan,
    _no_id,
    _second_agent,
    _second_root,
    _nested_tool,
    _skew,
    _odd_kind,
    _self_parent,
    _warned,
]
ODD: list[Mutation] = [*STRUCTURE_ODD, _idless_call, _agent_requests]


@pytest.mark.parametrize("seed", range(300))
def test_generated_flat_runs_build_the_same(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(seed)
    spans = flat_run(rng)
    mutations = rng.sample(BENIGN, rng.randint(0, len(BENIGN)))
    odd = seed % 3 != 0 and len(spans) > 2
    if odd:  # last, so no benign mutation undoes it (e.g. a tie that ends a clock skew)
        mutations.append(rng.choice(ODD))
    for mutate in mutations:
        spans = mutate(spans, rng)
    options = rng.choice(
        [BuildOptions(), BuildOptions(include_output_tools=True), BuildOptions(max_agent_depth=1)]
    )
    names = [m.__name__ for m in mutations]
    assert both(spans, monkeypatch, options) == [not odd], names


@pytest.mark.parametrize("seed", range(40))
def test_other_conventions_build_the_same(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(seed)
    spans = _other_convention(_shuffled(flat_run(rng), rng), rng)
    both(spans, monkeypatch)  # taken or not, as long as the result is the same


def test_a_reader_that_raises_makes_the_fast_path_decline(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    spans = flat_run(random.Random(7))
    original = _genai.read_agent

    def broken(record: SpanRecord, options: BuildOptions, convention: str) -> Any:
        if record.span_id == spans[0].span_id:
            raise RuntimeError("reader bug")
        return original(record, options, convention)

    monkeypatch.setitem(_genai._READERS, semconv.OP_INVOKE_AGENT, broken)
    assert both(spans, monkeypatch) == [False]
    assert "could not be read" in _build.build_trajectories(spans).warnings[0]


def test_views_read_before_declining_are_reused(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(3)
    spans = _idless_call(flat_run(rng), rng)
    read: list[str] = []
    original = _build.classify

    def counting(record: SpanRecord, options: BuildOptions) -> Any:
        read.append(record.span_id)
        return original(record, options)

    assert both(spans, monkeypatch) == [False]
    monkeypatch.setattr(_build, "classify", counting)
    monkeypatch.setattr(_build, "_flat_run", build_flat_run)
    _build.build_trajectories(spans)
    # The fast path read the agent span and the chat span with an id-less call (where it
    # declined): the general path reads neither again (it reads only what was left unread).
    chat = next(s for s in spans if semconv.GEN_AI_OUTPUT_MESSAGES in s.attributes)
    assert sid(_AGENT) not in read
    assert chat.span_id not in read
    assert len(read) < len(spans)


_OUTPUT_OPTIONS = [
    BuildOptions(),
    BuildOptions(include_output_tools=True),
    BuildOptions(output_tool_names=("lookup", "write", "")),
    BuildOptions(output_tool_names=()),
    BuildOptions(max_value_chars=16),
]


@pytest.mark.parametrize("seed", range(200))
def test_generated_flat_runs_under_output_options_build_the_same(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = random.Random(seed)
    spans = flat_run(rng)
    for mutate in rng.sample(BENIGN, rng.randint(0, 2)):
        spans = mutate(spans, rng)
    assert both(spans, monkeypatch, rng.choice(_OUTPUT_OPTIONS)) == [True]


@pytest.mark.parametrize("seed", range(60))
def test_long_flat_runs_build_the_same(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    # Long runs of plain spans, and odd variations of them.
    rng = random.Random(seed)
    spans = _plain(flat_run(rng, steps=rng.choice([15, 30, 45])))
    odd = seed % 2 == 1
    if odd:
        spans = rng.choice(ODD)(spans, rng)
    spans = _shuffled(spans, rng)
    assert both(spans, monkeypatch) == [not odd]


def _plain(spans: list[SpanRecord]) -> list[SpanRecord]:
    """`spans` with every tool and chat span in its plainest shape (no results, messages or
    tool definitions)."""
    out = []
    for record in spans:
        attrs = dict(record.attributes)
        op = attrs.get(semconv.GEN_AI_OPERATION_NAME)
        if op == "execute_tool":
            attrs[semconv.GEN_AI_TOOL_NAME] = "lookup"
            attrs.pop(semconv.GEN_AI_TOOL_CALL_RESULT, None)
        elif op == "chat":
            attrs.pop(semconv.GEN_AI_TOOL_DEFINITIONS, None)
            attrs.pop(semconv.GEN_AI_INPUT_MESSAGES, None)
        out.append(replace(record, attributes=attrs))
    return out


@pytest.mark.parametrize(
    ("what", "record"),
    [(what, record) for what, record, _ in EDGE_CASES],
    ids=[what for what, _, _ in EDGE_CASES],
)
@pytest.mark.parametrize("options", _OUTPUT_OPTIONS[:3])
def test_reader_edge_cases_as_steps_build_the_same(
    what: str, record: SpanRecord, options: BuildOptions, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Each edge case of a plain GenAI span as the one step of a run (or as a run of its own).
    agent = span(
        _AGENT,
        "invoke_agent triage",
        None,
        attrs={semconv.GEN_AI_OPERATION_NAME: "invoke_agent", semconv.GEN_AI_AGENT_NAME: "a"},
    )
    record = without_dropped(record)
    if record.span_id == agent.span_id:
        both([record], monkeypatch, options)
    else:
        step = replace(record, parent_span_id=agent.span_id, start_ns=agent.start_ns + 1)
        both([agent, step], monkeypatch, options)


def _tied_run(order: list[int], ends: list[int]) -> list[SpanRecord]:
    """A plain run whose tool spans all start at once, with these ends, given in `order`."""
    agent = span(
        _AGENT,
        "invoke_agent triage",
        None,
        0,
        50,
        {semconv.GEN_AI_OPERATION_NAME: "invoke_agent", semconv.GEN_AI_AGENT_NAME: "a"},
    )
    tools = [
        span(
            n + 2,
            "execute_tool lookup",
            _AGENT,
            5,
            end,
            {semconv.GEN_AI_OPERATION_NAME: "execute_tool", semconv.GEN_AI_TOOL_NAME: f"t{n}"},
        )
        for n, end in enumerate(ends)
    ]
    return [agent, *(tools[n] for n in order)]


@pytest.mark.parametrize(
    ("order", "ends"),
    [
        ([3, 2, 1, 0], [9, 9, 9, 9]),  # one start and one end: the span ids decide
        ([1, 3, 0, 2], [9, 9, 9, 9]),
        ([3, 2, 1, 0], [12, 9, 12, 9]),  # the ends first, then the ids
        ([0, 1, 2, 3], [12, 11, 10, 9]),
    ],
)
def test_the_fast_path_orders_tied_spans_as_the_general_path(
    order: list[int], ends: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    spans = _tied_run(order, ends)
    assert both(spans, monkeypatch) == [True]
    (run,) = _build.build_trajectories(spans).trajectories
    ordered = sorted(spans[1:], key=lambda s: (s.start_ns, s.end_ns, s.span_id))
    assert [s.span_id for s in run.steps] == [s.span_id for s in ordered]


@pytest.mark.parametrize(
    "value",
    [True, 2**63, -(2**63) - 1, 2**64 + 5, 5.0],
    ids=["bool", "int64 max + 1", "int64 min - 1", "uint64 + 5", "float"],
)
@pytest.mark.parametrize("field", ["start_ns", "end_ns"])
def test_unusual_times_build_as_on_the_general_path(
    value: Any, field: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    spans = _tied_run([0, 1], [9, 9])
    spans[1] = replace(spans[1], **{field: value})  # a tool span: the run stays flat
    both(spans, monkeypatch)


def test_the_fast_path_orders_int64_extremes(monkeypatch: pytest.MonkeyPatch) -> None:
    spans = _tied_run([1, 0], [9, 9])
    spans[0] = replace(spans[0], start_ns=-(2**63), end_ns=2**63 - 1)
    spans[1] = replace(spans[1], start_ns=2**63 - 1, end_ns=2**63 - 1)
    assert both(spans, monkeypatch) == [True]


def test_output_tool_names_given_as_a_list_are_kept_as_a_tuple() -> None:
    # The fast path caches the hidden tools by these names: a caller's list must not reach it.
    names = ["lookup", "write"]
    options = BuildOptions(output_tool_names=names)  # type: ignore[arg-type]
    assert options.output_tool_names == ("lookup", "write")
    spans = flat_run(random.Random(7))
    as_tuple = BuildOptions(output_tool_names=("lookup", "write"))
    assert _build.build_trajectories(spans, options=options) == _build.build_trajectories(
        spans, options=as_tuple
    )
