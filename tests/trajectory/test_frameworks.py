"""Trajectories rebuilt from traces that real agent frameworks wrote while running offline.

The traces come from `tests/frameworks/` (pydantic-ai with FunctionModel; Agno and the OpenAI
Agents SDK against the scripted fake LLM server). Each test states the trajectory a person
reading the spans would expect: agent, input, output, tool calls in the order the model asked
for them, with call ids, arguments, results and status. Where the builder cannot read something
yet, the test keeps the right expectation and is a strict xfail naming what is missing.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from frameworks import cases
from frameworks.fixtures import stable_view
from tracescore.model.trajectory import AgentStep, ModelCall, Trajectory
from tracescore.otlp import decode_json_request
from tracescore.trajectory import BuildResult, build_trajectories

Doc = dict[str, Any]
PYDANTIC_AI_SHOP_TOOLS = (
    "get_weather",
    "lookup_order",
    "charge_card",
    "delete_account",
    "refund_order",
    "ship_order",
    "close_account",
)
OAI_CHARGE_ERROR = (
    "Error running tool (non-fatal): {'tool_name': 'charge_card', "
    "'error': 'Tool execution failed. Error details are redacted.'}"
)
OAI_TOOL_ERROR_TEXT = "An error occurred while running the tool. Please try again."


def build(doc: Doc, name: str) -> BuildResult:
    """Decode like `tracescore trajectories` does and build; real traces decode cleanly."""
    decoded = decode_json_request(doc, name)
    assert decoded.rejected == 0, decoded.problems
    result = build_trajectories(decoded.spans)
    assert result.warnings == []
    return result


def run_of(result: BuildResult, agent: str) -> Trajectory:
    """The one run of `agent` in the trace."""
    runs = [t for t in result.trajectories if t.agent == agent]
    assert len(runs) == 1, [t.agent for t in result.trajectories]
    return runs[0]


def root_run(result: BuildResult, doc: Doc) -> Trajectory:
    """The run whose agent span is the trace root (a workflow wrapping the agents)."""
    spans = [s for rs in doc["resourceSpans"] for ss in rs["scopeSpans"] for s in ss["spans"]]
    (root,) = [s["spanId"] for s in spans if not s.get("parentSpanId")]
    (run,) = [t for t in result.trajectories if t.span_id == root]
    return run


def call(
    name: str,
    call_id: str | None,
    arguments: Any,
    result: Any = None,
    status: str = "ok",
    *,
    error_type: str | None = None,
    error_message: str | None = None,
    pause_reason: str | None = None,
) -> dict[str, Any]:
    """An expected tool call, in the shape `calls` returns."""
    return {
        "name": name,
        "call_id": call_id,
        "arguments": arguments,
        "result": result,
        "status": status,
        "error_type": error_type,
        "error_message": error_message,
        "pause_reason": pause_reason,
    }


def calls(run: Trajectory, *, include_subagents: bool = False) -> list[dict[str, Any]]:
    """The run's tool calls with every field a scorer reads."""
    return [
        {
            "name": c.name,
            "call_id": c.call_id,
            "arguments": c.arguments,
            "result": c.result,
            "status": c.status,
            "error_type": c.error_type,
            "error_message": c.error_message,
            "pause_reason": c.pause_reason,
        }
        for c in run.tool_calls(include_subagents=include_subagents)
    ]


def kinds(run: Trajectory) -> list[str]:
    """Step kinds in order, sub-agents by name: `["model_call", "tool_call", "agent:x"]`."""
    return [f"agent:{s.name}" if isinstance(s, AgentStep) else s.kind for s in run.steps]


def subagent(run: Trajectory, name: str) -> AgentStep:
    (step,) = [s for s in run.steps if isinstance(s, AgentStep) and s.name == name]
    return step


# --- pydantic-ai (OTel GenAI spans, InstrumentationSettings v5) --------------------------------


def test_pydantic_ai_clean_calls_keep_ids_arguments_and_parsed_results(
    pydantic_ai_traces: dict[str, Doc],
) -> None:
    result = build(pydantic_ai_traces["pydantic_ai-clean"], "clean")
    (run,) = result.trajectories
    assert (run.agent, run.input, run.output) == (
        "shop_agent",
        cases.PYDANTIC_AI_PROMPTS["clean"],
        cases.PYDANTIC_AI_ANSWERS["clean"],
    )
    assert run.available_tools == PYDANTIC_AI_SHOP_TOOLS
    assert calls(run) == [
        call("get_weather", "call_w1", {"city": "Paris"}, "sunny in Paris"),
        call(
            "lookup_order",
            "call_o1",
            {"order_id": "A-42"},
            {"order_id": "A-42", "status": "shipped"},
        ),
    ]
    assert kinds(run) == ["model_call", "tool_call", "tool_call", "model_call"]
    assert [m.model for m in run.model_calls()] == ["scripted", "scripted"]
    assert all(isinstance(m, ModelCall) and m.input_tokens for m in run.model_calls())


def test_pydantic_ai_model_retry_is_an_errored_call_followed_by_the_clean_retry(
    pydantic_ai_traces: dict[str, Doc],
) -> None:
    (run,) = build(pydantic_ai_traces["pydantic_ai-tool_retry"], "tool_retry").trajectories
    assert (run.agent, run.input, run.output) == (
        "shop_agent",
        cases.PYDANTIC_AI_PROMPTS["tool_retry"],
        cases.PYDANTIC_AI_ANSWERS["tool_retry"],
    )
    assert calls(run) == [
        call(
            "charge_card",
            "call_c1",
            {"amount_cents": -5},
            "amount_cents must be positive",  # the retry prompt the model saw
            "error",
            error_type="pydantic_ai.exceptions.ToolRetryError",
            error_message="amount_cents must be positive",
        ),
        call("charge_card", "call_c2", {"amount_cents": 500}, "charged 500"),
    ]


def test_pydantic_ai_argument_validation_failure_is_an_errored_call(
    pydantic_ai_traces: dict[str, Doc],
) -> None:
    (run,) = build(pydantic_ai_traces["pydantic_ai-tool_invalid_args"], "invalid").trajectories
    assert run.output == cases.PYDANTIC_AI_ANSWERS["tool_invalid_args"]
    invalid, _retried = run.tool_calls()
    assert (invalid.name, invalid.call_id, invalid.arguments, invalid.status) == (
        "charge_card",
        "call_v1",
        {"amount_cents": "five dollars"},
        "error",
    )
    assert invalid.error_type == "pydantic_core._pydantic_core.ValidationError"
    assert (invalid.error_message or "").startswith("1 validation error for charge_card")
    # The result is pydantic's error list (JSON); its doc URLs carry the pydantic version.
    assert [{k: e[k] for k in ("type", "loc", "input")} for e in invalid.result] == [
        {"type": "int_parsing", "loc": ["amount_cents"], "input": "five dollars"}
    ]
    assert calls(run)[1:] == [call("charge_card", "call_v2", {"amount_cents": 500}, "charged 500")]


def test_pydantic_ai_tool_exception_errors_the_call_and_the_run_has_no_output(
    pydantic_ai_traces: dict[str, Doc],
) -> None:
    (run,) = build(pydantic_ai_traces["pydantic_ai-tool_exception"], "exception").trajectories
    assert (run.agent, run.input, run.output) == (
        "shop_agent",
        cases.PYDANTIC_AI_PROMPTS["tool_exception"],
        None,
    )
    assert calls(run) == [
        call("get_weather", "call_x1", {"city": "Oslo"}, "sunny in Oslo"),
        call(
            "delete_account",
            "call_x2",
            {"user_id": 7},
            None,
            "error",
            error_type="RuntimeError",
            error_message="permission denied for user 7",
        ),
    ]


def test_pydantic_ai_deferred_and_approval_calls_are_paused_in_their_requested_places(
    pydantic_ai_traces: dict[str, Doc],
) -> None:
    (run,) = build(pydantic_ai_traces["pydantic_ai-deferred"], "deferred").trajectories
    assert (run.agent, run.input) == ("shop_agent", cases.PYDANTIC_AI_PROMPTS["deferred"])
    assert calls(run) == [
        call(
            "refund_order",
            "call_d1",
            {"order_id": "A-42"},
            None,
            "paused",
            pause_reason="approval_required",
        ),
        call("get_weather", "call_d2", {"city": "Paris"}, "sunny in Paris"),
        call("ship_order", "call_d3", {"order_id": "B-7"}, None, "paused", pause_reason="deferred"),
        call(
            "lookup_order", "call_d4", {"order_id": "B-7"}, {"order_id": "B-7", "status": "shipped"}
        ),
        # requires_approval=True: pydantic-ai never starts a span, so only the request shows.
        call(
            "close_account", "call_d5", {"user_id": 7}, None, "paused", pause_reason="no_execution"
        ),
    ]
    # The run's answer is pydantic-ai's DeferredToolRequests, serialized in `final_result`.
    output = json.loads(run.output or "null")
    assert [c["tool_name"] for c in output["approvals"]] == ["refund_order", "close_account"]
    assert [c["tool_name"] for c in output["calls"]] == ["ship_order"]


def test_pydantic_ai_subagent_is_its_own_run_and_one_step_of_its_parent(
    pydantic_ai_traces: dict[str, Doc],
) -> None:
    result = build(pydantic_ai_traces["pydantic_ai-subagent"], "subagent")
    assert sorted(t.agent or "" for t in result.trajectories) == ["billing_agent", "support_agent"]
    parent, child = run_of(result, "support_agent"), run_of(result, "billing_agent")
    assert (parent.input, parent.output) == (
        cases.PYDANTIC_AI_PROMPTS["subagent"],
        cases.PYDANTIC_AI_ANSWERS["subagent"],
    )
    assert parent.available_tools == ("ask_billing",)
    assert calls(parent) == [
        call(
            "ask_billing",
            "call_s1",
            {"question": "Why is INV-9 high?"},
            cases.PYDANTIC_AI_ANSWERS["billing"],
        )
    ]
    assert kinds(parent) == ["model_call", "tool_call", "agent:billing_agent", "model_call"]
    lookup = call(
        "lookup_invoice",
        "call_b1",
        {"invoice_id": "INV-9"},
        {"invoice_id": "INV-9", "lines": ["plan", "setup fee"], "total_cents": 12900},
    )
    assert calls(parent, include_subagents=True) == [calls(parent)[0], lookup]
    assert subagent(parent, "billing_agent").span_id == child.span_id
    # billing_agent answers through its output tool `final_result`, which is not a tool call.
    assert child.input == "Why is INV-9 high?"
    assert json.loads(child.output or "null") == {
        "invoice_id": "INV-9",
        "explanation": cases.PYDANTIC_AI_ANSWERS["billing"],
    }
    assert child.available_tools == ("lookup_invoice",)
    assert calls(child) == [lookup]
    assert [s.kind for s in subagent(parent, "billing_agent").steps] == [
        s.kind for s in child.steps
    ]


# --- Agno (OpenInference spans: tool spans without call ids) -----------------------------------


def test_agno_errored_call_takes_its_id_from_the_llm_request(agno_traces: dict[str, Doc]) -> None:
    (run,) = build(agno_traces["agno-tool_error"], "agno tool_error").trajectories
    assert (run.agent, run.input, run.output) == (
        "shop_agent",
        cases.AGNO_PROMPTS["tool_error"],
        cases.AGNO_ANSWERS["tool_error"],
    )
    assert run.available_tools == ("get_weather", "charge_card", "close_account")
    assert calls(run) == [
        call("get_weather", "call_e1", {"city": "Paris"}, "sunny in Paris"),
        call(
            "charge_card",
            "call_e2",
            {"amount_cents": 0},
            "amount_cents must be positive",  # Agno writes the error text as the output
            "error",
            error_message="amount_cents must be positive",
        ),
    ]
    assert kinds(run) == ["model_call", "tool_call", "tool_call", "model_call"]


def test_agno_confirmation_pause_leaves_a_requested_call_that_never_ran(
    agno_traces: dict[str, Doc],
) -> None:
    (run,) = build(agno_traces["agno-paused"], "agno paused").trajectories
    assert (run.agent, run.input) == ("shop_agent", cases.AGNO_PROMPTS["paused"])
    assert run.output == "I have tools to execute, but I need confirmation."  # Agno's own text
    assert calls(run) == [
        call("get_weather", "call_p1", {"city": "Paris"}, "sunny in Paris"),
        call(
            "close_account", "call_p2", {"user_id": 7}, None, "paused", pause_reason="no_execution"
        ),
    ]


def test_agno_team_member_is_a_run_of_its_own_and_a_step_of_the_leader(
    agno_traces: dict[str, Doc],
) -> None:
    result = build(agno_traces["agno-team"], "agno team")
    assert sorted(t.agent or "" for t in result.trajectories) == ["billing_agent", "support_team"]
    leader, member = run_of(result, "support_team"), run_of(result, "billing_agent")
    assert (leader.input, leader.output) == (cases.AGNO_PROMPTS["team"], cases.AGNO_ANSWERS["team"])
    delegate = {"member_id": "billing_agent", "task": "Explain INV-9"}
    assert calls(leader) == [
        call("delegate_task_to_member", "call_t1", delegate, cases.AGNO_ANSWERS["billing"])
    ]
    assert kinds(leader) == ["model_call", "tool_call", "agent:billing_agent", "model_call"]
    assert (member.input, member.output) == ("Explain INV-9", cases.AGNO_ANSWERS["billing"])
    # Agno writes str(result): Python repr, kept as text rather than guessed into a dict.
    lookup = call(
        "lookup_invoice",
        "call_m1",
        {"invoice_id": "INV-9"},
        "{'invoice_id': 'INV-9', 'total_cents': 12900}",
    )
    assert calls(member) == [lookup]
    assert calls(leader, include_subagents=True) == [calls(leader)[0], lookup]


# --- OpenAI Agents SDK (GenAI spans via openai-agents-v2, and OpenInference) -------------------

OAI_VARIANTS = [
    pytest.param("openai_agents_otel", None, id="otel-genai"),  # no call ids anywhere readable
    pytest.param("openai_agents_openinference", "call", id="openinference"),
]


@pytest.mark.parametrize(("variant", "ids"), OAI_VARIANTS)
def test_openai_agents_errored_call_is_an_error_and_the_workflow_wraps_the_agent(
    openai_agents_traces: dict[str, Doc], variant: str, ids: str | None
) -> None:
    doc = openai_agents_traces[f"{variant}-tool_error"]
    result = build(doc, variant)
    run = run_of(result, "shop_agent")
    assert (run.input, run.output) == (
        cases.OPENAI_AGENTS_PROMPTS["tool_error"],
        cases.OPENAI_AGENTS_ANSWERS["tool_error"],
    )
    assert calls(run) == [
        call("get_weather", ids and "call_e1", {"city": "Paris"}, "sunny in Paris"),
        call(
            "charge_card",
            ids and "call_e2",
            {"amount_cents": 0},
            OAI_TOOL_ERROR_TEXT,  # what the SDK told the model
            "error",
            error_message=OAI_CHARGE_ERROR,
        ),
    ]
    workflow = root_run(result, doc)
    assert kinds(workflow) == ["agent:shop_agent"]
    assert len(result.trajectories) == 2


@pytest.mark.parametrize(("variant", "ids"), OAI_VARIANTS)
def test_openai_agents_handoff_keeps_the_agents_in_order(
    openai_agents_traces: dict[str, Doc], variant: str, ids: str | None
) -> None:
    doc = openai_agents_traces[f"{variant}-handoff"]
    result = build(doc, variant)
    assert len(result.trajectories) == 3
    assert kinds(root_run(result, doc)) == ["agent:triage_agent", "agent:billing_agent"]
    triage, billing = run_of(result, "triage_agent"), run_of(result, "billing_agent")
    assert triage.input == cases.OPENAI_AGENTS_PROMPTS["handoff"]
    assert (billing.input, billing.output) == (
        cases.OPENAI_AGENTS_PROMPTS["handoff"],
        cases.OPENAI_AGENTS_ANSWERS["handoff"],
    )
    assert calls(billing) == [
        call(
            "lookup_invoice",
            ids and "call_b1",
            {"invoice_id": "INV-9"},
            {"invoice_id": "INV-9", "total_cents": 12900},
        )
    ]


def test_openai_agents_genai_handoff_is_no_tool_call(openai_agents_traces: dict[str, Doc]) -> None:
    """openai-agents-v2 records the handoff as an `agent_handoff` span with no tool name, and
    the model's transfer call only as Python repr text: nothing names a tool call to score."""
    result = build(openai_agents_traces["openai_agents_otel-handoff"], "otel handoff")
    assert calls(run_of(result, "triage_agent")) == []


def test_openai_agents_openinference_handoff_is_the_executed_transfer_call(
    openai_agents_traces: dict[str, Doc],
) -> None:
    result = build(openai_agents_traces["openai_agents_openinference-handoff"], "oi handoff")
    triage = run_of(result, "triage_agent")
    assert calls(triage) == [call("transfer_to_billing_agent", "call_h1", {}, "billing_agent")]


# --- the committed copies under tests/testdata/frameworks -------------------------------------


def test_committed_framework_traces_are_current(framework_testdata_updates: list[str]) -> None:
    """Like a golden file: a framework that changed what it records rewrites the copy once and
    fails here, so the new trace is reviewed and committed."""
    assert framework_testdata_updates == []


def test_stable_view_ignores_clocks_uuids_and_span_order_but_not_content() -> None:
    def span(span_id: str, name: str, uuid: str, duration: str) -> dict[str, Any]:
        attrs = {
            "id": uuid,
            "exception.stacktrace": f"File /{uuid[:4]}/b.py",
            "agno.metrics": '{"duration": ' + duration + "}",
            "gen_ai.tool.name": name,
        }
        return {
            "spanId": span_id,
            "parentSpanId": "00000000000000aa",
            "name": name,
            "startTimeUnixNano": duration,
            "attributes": [{"key": k, "value": {"stringValue": v}} for k, v in attrs.items()],
        }

    def doc(*spans: dict[str, Any]) -> dict[str, Any]:
        root = {"spanId": "00000000000000aa", "name": "invoke_agent a"}
        return {"resourceSpans": [{"scopeSpans": [{"spans": [root, *spans]}]}]}

    uuid1, uuid2 = "01a22ca4-a904-7605-aac1-5d0fee558ede", "11111111-2222-3333-4444-555555555555"
    first = doc(span("01", "f", uuid1, "0.25"), span("02", "g", uuid1, "0.5"))
    rerun = doc(span("01", "g", uuid2, "0.75"), span("02", "f", uuid2, "1e-05"))
    assert stable_view(rerun) == stable_view(first)
    renamed = doc(span("01", "f", uuid1, "0.25"), span("02", "h", uuid1, "0.5"))
    assert stable_view(renamed) != stable_view(first)
    reparented = json.loads(
        json.dumps(first).replace('"parentSpanId": "00000000000000aa"', '"parentSpanId": "01"', 1)
    )
    assert stable_view(reparented) != stable_view(first)
