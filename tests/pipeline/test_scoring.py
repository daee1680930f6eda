"""Spotting agent spans at ingest, the key filter, and the may-match guess."""

from __future__ import annotations

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from support.agent_spans import agent_run, framework_request, request
from tracescore.config import parse_config
from tracescore.model.span import SpanRecord
from tracescore.model.trajectory import READINGS
from tracescore.otlp.proto import decode_proto_request
from tracescore.pipeline.scoring import agent_name, config_readings, key_filter, may_match


def _records(req: ExportTraceServiceRequest) -> list[SpanRecord]:
    return decode_proto_request(req).spans


def test_agent_spans_are_named_as_the_trajectory_builder_names_them() -> None:
    records = _records(framework_request("pydantic_ai-subagent"))
    names = {r.name: agent_name(r) for r in records}
    assert names["invoke_agent support_agent"] == "support_agent"
    assert names["invoke_agent billing_agent"] == "billing_agent"
    assert all(v is None for k, v in names.items() if not k.startswith("invoke_agent"))
    run = agent_run(agent="shop_agent")
    by_name = {r.name: agent_name(r) for r in _records(request(run.spans))}
    assert by_name["invoke_agent shop_agent"] == "shop_agent"
    assert by_name["execute_tool get_weather"] is None
    assert by_name["POST"] is None


def test_key_filter_keeps_what_trajectories_and_scenarios_read() -> None:
    config = parse_config(
        "scenarios:\n  - name: s\n    match: {attributes: {tenant.id: acme}}\n"
        "    scorers: [{type: trajectory_accuracy, steps: [{tool: a, args: {q: 1}}]}]\n"
    )
    keep = key_filter(config)
    assert config_readings(config) == READINGS  # it compares arguments
    assert keep("gen_ai.tool.name")
    assert keep("gen_ai.tool.call.arguments")
    assert keep("gen_ai.usage.input_tokens")
    assert keep("tenant.id")
    assert not keep("http.request.method")
    assert not keep("server.address")


def test_key_filter_leaves_out_what_no_scorer_reads() -> None:
    # Checks of tool names and statuses read neither arguments nor model usage; a key that a
    # scenario matches on is kept whatever the scorers read.
    config = parse_config(
        "scenarios:\n  - name: s\n    match: {attributes: {gen_ai.request.model: gpt-4.1}}\n"
        "    gates: [{type: max_tool_calls, max: 20}]\n"
        "    scorers: [{type: no_tool_errors}, {type: called_tool, tool: a}]\n"
    )
    keep = key_filter(config)
    assert config_readings(config) == frozenset()
    assert keep("gen_ai.tool.name")
    assert keep("gen_ai.tool.call.result")
    assert keep("gen_ai.operation.name")
    assert not keep("gen_ai.tool.call.arguments")
    assert not keep("gen_ai.usage.input_tokens")
    assert not keep("gen_ai.usage.completion_tokens")
    assert not keep("gen_ai.response.model")
    assert keep("gen_ai.request.model")


def test_a_judge_reads_every_part_of_a_run() -> None:
    config = parse_config(
        "judge: {base_url: 'http://127.0.0.1:9/v1', model: m}\n"
        "scenarios:\n  - name: s\n    scorers: [{type: no_tool_errors}, "
        "{type: llm_rubric, criteria: polite}]\n"
    )
    assert config_readings(config) == READINGS
    assert key_filter(config)("gen_ai.tool.call.arguments")


def test_may_match_uses_the_agent_glob_attributes_and_sampling() -> None:
    config = parse_config(
        "scenarios:\n"
        "  - name: shops\n    match: {agent: 'shop*', input: 'refund'}\n"
        "    scorers: [{type: no_tool_errors}]\n"
        "  - name: acme\n    match: {attributes: {service.name: acme}}\n"
        "    scorers: [{type: no_tool_errors}]\n"
        "  - name: never\n    match: {agent: 'rare'}\n    sample: 0\n"
        "    scorers: [{type: no_tool_errors}]\n"
    )
    wants = may_match(config)
    shop = next(r for r in _records(request(agent_run().spans)) if agent_name(r))
    assert wants(shop, "shop_agent"), "input is unknown at ingest: a glob match is enough"
    assert not wants(shop, "billing")
    acme = next(r for r in _records(request(agent_run().spans, service="acme")) if agent_name(r))
    assert wants(acme, "billing")
    assert not wants(shop, "rare"), "a scenario sampling nothing holds nothing"
