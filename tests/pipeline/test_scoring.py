"""Spotting agent spans at ingest, the key filter, and the may-match guess."""

from __future__ import annotations

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from support.agent_spans import agent_run, framework_request, request
from tracescore.config import parse_config
from tracescore.model.span import SpanRecord
from tracescore.otlp.proto import decode_proto_request
from tracescore.pipeline.scoring import agent_name, key_filter, may_match


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
        "    scorers: [{type: no_tool_errors}]\n"
    )
    keep = key_filter(config)
    assert keep("gen_ai.tool.name")
    assert keep("gen_ai.usage.input_tokens")
    assert keep("tenant.id")
    assert not keep("http.request.method")
    assert not keep("server.address")


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
