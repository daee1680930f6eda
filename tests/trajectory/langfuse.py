"""Turn a Langfuse trace export back into the OTLP/JSON spans it was ingested from.

Langfuse keeps each span's attributes in `metadata.attributes` but moves some of them into the
observation's `input` / `output` (conventions.md §9). Putting them back needs to know which
attribute Langfuse took them from; that depends on the convention:

- Vercel legacy (`ai.operationId`): tool args/result, model prompt messages / tool calls / text,
  root prompt / tool calls / text.
- GenAI (`gen_ai.operation.name`): execute_tool arguments/result, chat and invoke_agent messages.
- pydantic-ai legacy `running tool` spans: `tool_arguments` / `tool_response` (only if missing).
- Anything else: Langfuse's own `langfuse.observation.input|output`.

Langfuse stores numbers as strings and some JSON strings as parsed objects; scalars go back as
string values and structured values as JSON strings, which is what the producers sent. The
Langfuse observation `type` (TOOL, GENERATION, ...) is Langfuse's own guess and is dropped, so
the builder sees only what the instrumentation wrote.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

__all__ = ["convert"]

_AI_TOOL_CALL = "ai.toolCall"
_AI_MODEL_OPS = (".doGenerate", ".doStream")


def convert(export: dict[str, Any]) -> dict[str, Any]:
    """An OTLP/JSON ExportTraceServiceRequest holding every observation as a span."""
    trace_id = export["trace"]["id"]
    groups: dict[str, dict[str, Any]] = {}
    for observation in export["observations"]:
        metadata = observation.get("metadata") or {}
        if isinstance(metadata, str):
            metadata = json.loads(metadata)
        resource = metadata.get("resourceAttributes") or {}
        scope = metadata.get("scope") or {}
        key = json.dumps([resource, scope.get("name"), scope.get("version")], sort_keys=True)
        group = groups.setdefault(
            key,
            {"resource": resource, "scope": scope, "spans": []},
        )
        group["spans"].append(_span(trace_id, observation, metadata))
    resource_spans = [
        {
            "resource": {"attributes": _kvs(g["resource"])},
            "scopeSpans": [
                {
                    "scope": {
                        "name": g["scope"].get("name", ""),
                        "version": g["scope"].get("version", ""),
                    },
                    "spans": g["spans"],
                }
            ],
        }
        for g in groups.values()
    ]
    return {"resourceSpans": resource_spans}


def _span(trace_id: str, observation: dict[str, Any], metadata: dict[str, Any]) -> dict[str, Any]:
    attributes = dict(metadata.get("attributes") or {})
    _restore(attributes, observation)
    span: dict[str, Any] = {
        "traceId": trace_id,
        "spanId": observation["id"],
        "name": observation["name"],
        "kind": 0,
        "startTimeUnixNano": str(_ns(observation.get("startTime"))),
        "endTimeUnixNano": str(_ns(observation.get("endTime"))),
        "attributes": _kvs(attributes),
        "status": {},
    }
    if observation.get("parentObservationId"):
        span["parentSpanId"] = observation["parentObservationId"]
    if observation.get("level") == "ERROR":
        span["status"] = {"code": 2, "message": observation.get("statusMessage") or ""}
    return span


def _restore(attributes: dict[str, Any], observation: dict[str, Any]) -> None:
    targets = _targets(attributes, observation)
    for field, key in zip(("input", "output"), targets, strict=True):
        value = observation.get(field)
        if value is None or key is None or key in attributes:
            continue
        attributes[key] = value


def _targets(attributes: dict[str, Any], observation: dict[str, Any]) -> tuple[str, str]:
    op_id = attributes.get("ai.operationId")
    if isinstance(op_id, str):
        if op_id == _AI_TOOL_CALL:
            return "ai.toolCall.args", "ai.toolCall.result"
        output_key = (
            "ai.response.toolCalls"
            if _is_tool_calls(observation.get("output"))
            else "ai.response.text"
        )
        if op_id.endswith(_AI_MODEL_OPS):
            return "ai.prompt.messages", output_key
        return "ai.prompt", output_key
    op = attributes.get("gen_ai.operation.name")
    if op == "execute_tool":
        return "gen_ai.tool.call.arguments", "gen_ai.tool.call.result"
    if op is not None:
        return "gen_ai.input.messages", "gen_ai.output.messages"
    if "gen_ai.tool.call.id" in attributes or str(observation.get("name", "")).startswith(
        "running tool"
    ):
        return "tool_arguments", "tool_response"
    return "langfuse.observation.input", "langfuse.observation.output"


def _is_tool_calls(value: object) -> bool:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return False
    return isinstance(value, list) and all(isinstance(v, dict) and "toolCallId" in v for v in value)


def _ns(stamp: object) -> int:
    if not isinstance(stamp, str) or not stamp:
        return 0
    moment = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    # Integer arithmetic: float seconds would lose the millisecond digits at 1e18 ns.
    return (int(moment.timestamp()) * 1_000_000 + moment.microsecond) * 1000


def _kvs(attributes: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"key": k, "value": _any(v)} for k, v in attributes.items()]


def _any(value: object) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    if isinstance(value, float):
        return {"doubleValue": value}
    if isinstance(value, str):
        return {"stringValue": value}
    return {"stringValue": json.dumps(value, ensure_ascii=False)}
