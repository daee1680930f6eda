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


def handoffs(run: Trajectory) -> list[tuple[str, str | None, str | None, Any]]:
    """The run's handoffs as (target, call id, tool name, arguments)."""
    return [(h.target, h.call_id, h.tool_name, h.arguments) for h in run.handoffs()]


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
    # Delegation through a tool the user wrote is a tool call whose execution ran an agent, not
    # a handoff: control comes back with the tool's result (README, "Handoffs").
    assert handoffs(parent) == []
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
    # The delegation is a handoff to the member, not a tool call (README, "Handoffs").
    delegate = {"member_id": "billing_agent", "task": "Explain INV-9"}
    assert calls(leader) == []
    assert handoffs(leader) == [
        ("billing_agent", "call_t1", "delegate_task_to_member", delegate),
    ]
    assert kinds(leader) == ["model_call", "handoff", "agent:billing_agent", "model_call"]
    assert (member.input, member.output) == ("Explain INV-9", cases.AGNO_ANSWERS["billing"])
    # Agno writes str(result): Python repr, kept as text rather than guessed into a dict.
    lookup = call(
        "lookup_invoice",
        "call_m1",
        {"invoice_id": "INV-9"},
        "{'invoice_id': 'INV-9', 'total_cents': 12900}",
    )
    assert calls(member) == [lookup]
    assert calls(leader, include_subagents=True) == [lookup]


# --- OpenAI Agents SDK (GenAI spans via openai-agents-v2, and OpenInference) -------------------

# openai-agents-v2 writes a model answer that asks for tools as the Python repr of the OpenAI
# message; the builder reads the calls (and their ids) back out of it, so both carry ids.
OAI_VARIANTS = [
    pytest.param("openai_agents_otel", "call", id="otel-genai"),
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


@pytest.mark.parametrize(("variant", "ids"), OAI_VARIANTS)
def test_openai_agents_handoff_is_a_handoff_step_not_a_tool_call(
    openai_agents_traces: dict[str, Doc], variant: str, ids: str | None
) -> None:
    """openai-agents-v2 records an `agent_handoff` span, OpenInference a TOOL span named
    `handoff to billing_agent`: both are the same handoff, joined to the model's
    `transfer_to_billing_agent` call, and no tool call (README, "Handoffs")."""
    result = build(openai_agents_traces[f"{variant}-handoff"], variant)
    triage = run_of(result, "triage_agent")
    assert calls(triage) == []
    assert handoffs(triage) == [("billing_agent", "call_h1", "transfer_to_billing_agent", None)]
    assert kinds(triage) == ["model_call", "handoff"]
    # The model asked for a transfer, not for an answer: no final text.
    assert triage.output is None


# --- OpenAI Agents SDK: tools that need approval (needs_approval=True) --------------------------

REFUND = "refund_order"


def _approval_runs(doc: Doc, name: str) -> list[Trajectory]:
    """The refund_agent runs of the case: the interrupted one, then the resumed one (if any)."""
    result = build(doc, name)
    return [t for t in result.trajectories if t.agent == "refund_agent"]


@pytest.mark.parametrize(("variant", "ids"), OAI_VARIANTS)
@pytest.mark.parametrize(
    ("case", "order"),
    [("approval_pending", "A-3"), ("approval_approved", "A-1"), ("approval_rejected", "A-2")],
)
def test_openai_agents_call_stopped_for_approval_is_paused_not_clean(
    openai_agents_traces: dict[str, Doc], variant: str, ids: str | None, case: str, order: str
) -> None:
    """Both instrumentations export the interrupted call's span with status OK and no result;
    nothing of the run follows it. It is a paused call (`approval_required`)."""
    interrupted = _approval_runs(openai_agents_traces[f"{variant}-{case}"], case)[0]
    assert (interrupted.input, interrupted.output) == (cases.OPENAI_AGENTS_PROMPTS[case], None)
    assert calls(interrupted) == [
        call(
            REFUND,
            f"call_r{order[-1]}",
            {"order_id": order},
            None,
            "paused",
            pause_reason="approval_required",
        )
    ]
    assert kinds(interrupted) == ["model_call", "tool_call"]


def test_openai_agents_approved_call_runs_in_the_resumed_run(
    openai_agents_traces: dict[str, Doc],
) -> None:
    """The resumed run (a trace of its own) executes the approved call."""
    runs = _approval_runs(openai_agents_traces["openai_agents_otel-approval_approved"], "appr")
    resumed = runs[1]
    assert resumed.output == cases.OPENAI_AGENTS_ANSWERS["approval_approved"]
    # The execute_tool span carries no call id; the resumed run never requested the call.
    assert calls(resumed) == [call(REFUND, None, {"order_id": "A-1"}, "refunded A-1")]
    assert kinds(resumed) == ["tool_call", "model_call"]


def test_openai_agents_rejected_call_is_a_denied_call_of_the_resumed_run(
    openai_agents_traces: dict[str, Doc],
) -> None:
    """A rejected call never runs: its only record is the SDK's rejection message in the
    resumed run's input. It is a paused call (`denied`) before the model call it was told to."""
    runs = _approval_runs(openai_agents_traces["openai_agents_otel-approval_rejected"], "rej")
    resumed = runs[1]
    assert resumed.output == cases.OPENAI_AGENTS_ANSWERS["approval_rejected"]
    assert calls(resumed) == [
        call(
            REFUND,
            "call_r2",
            {"order_id": "A-2"},
            "Tool execution was not approved.",
            "paused",
            pause_reason="denied",
        )
    ]
    assert kinds(resumed) == ["tool_call", "model_call"]


@pytest.mark.parametrize("case", ["approval_approved", "approval_rejected"])
def test_openinference_exports_nothing_of_a_resumed_run(
    openai_agents_traces: dict[str, Doc], case: str
) -> None:
    """openinference-instrumentation-openai-agents 2.6.0 records no span of a run resumed from
    its RunState (README, "Paused and denied calls"): only the interrupted run is there."""
    runs = _approval_runs(openai_agents_traces[f"openai_agents_openinference-{case}"], case)
    assert len(runs) == 1


# --- Microsoft Agent Framework (its own GenAI spans) ----------------------------------------------


def test_agent_framework_handoff_is_a_handoff_step_not_a_tool_call(
    agent_framework_traces: dict[str, Doc],
) -> None:
    """HandoffBuilder's generated `handoff_to_billing_agent` tool never runs (a middleware
    answers it with {"handoff_to": "billing_agent"}, and no tool span is exported): it is the
    handoff, and billing_agent's run follows as a run of its own."""
    result = build(agent_framework_traces["agent_framework-handoff"], "maf handoff")
    triage, billing = run_of(result, "triage_agent"), run_of(result, "billing_agent")
    assert triage.input == cases.AGENT_FRAMEWORK_PROMPTS["handoff"]
    assert calls(triage) == []
    assert handoffs(triage) == [("billing_agent", "call_h1", "handoff_to_billing_agent", None)]
    assert kinds(triage) == ["model_call", "handoff"]
    assert billing.output == cases.AGENT_FRAMEWORK_ANSWERS["handoff"]
    assert calls(billing) == [
        call(
            "lookup_invoice",
            "call_b1",
            {"invoice_id": "INV-9"},
            {"invoice_id": "INV-9", "total_cents": 12900},
        )
    ]


# --- one run, two instrumentations ---------------------------------------------------------------


def _portable(t: Trajectory) -> dict[str, Any]:
    """What a scorer reads of a run: everything but span ids and clocks."""
    volatile = {"span_id", "start_ns", "end_ns", "duration_ms"}

    def step(s: Any) -> Any:
        d = {k: v for k, v in s.to_dict().items() if k not in volatile}
        if isinstance(s, AgentStep):
            d["steps"] = [step(x) for x in s.steps]
        return d

    return {
        "agent": t.agent,
        "input": t.input,
        "output": t.output,
        "steps": [step(s) for s in t.steps],
        "tool_calls": calls(t, include_subagents=True),
    }


@pytest.mark.parametrize(
    "case", ["tool_error", "handoff", "approval_pending", "approval_approved", "approval_rejected"]
)
def test_every_run_recorded_by_both_instrumentations_gives_equal_trajectories(
    openai_agents_traces: dict[str, Doc], case: str
) -> None:
    """Scores must not change when a team swaps instrumentation: each run both instrumentations
    recorded rebuilds to the same trajectory (agent, input, output, steps with ids, arguments,
    results, statuses and handoffs). The resumed runs only openai-agents-v2 records are left
    out (`test_openinference_exports_nothing_of_a_resumed_run`)."""
    otel = build(openai_agents_traces[f"openai_agents_otel-{case}"], f"otel {case}")
    oi = build(openai_agents_traces[f"openai_agents_openinference-{case}"], f"oi {case}")
    oi_runs = [_portable(t) for t in oi.trajectories]
    otel_runs = [_portable(t) for t in otel.trajectories]
    assert len(oi_runs) >= 2
    assert otel_runs[: len(oi_runs)] == oi_runs


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
