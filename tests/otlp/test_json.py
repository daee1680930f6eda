"""OTLP/JSON bodies become the same protobuf the protobuf library's own JSON parser builds."""

from __future__ import annotations

import base64
import copy
import json
import re
from typing import Any

import pytest
from google.protobuf.json_format import ParseDict
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from support.agent_spans import TESTDATA
from tracescore.errors import InputError
from tracescore.otlp.json import decode_json_request, parse_json_request

TRACE = TESTDATA / "serve" / "pydantic_ai-subagent.otlp.json"


def _oracle(doc: dict[str, Any]) -> ExportTraceServiceRequest:
    """json_format.ParseDict after turning OTLP's hex ids into the generic mapping's base64."""
    doc = copy.deepcopy(doc)
    for rs in doc["resourceSpans"]:
        for ss in rs["scopeSpans"]:
            for span in ss["spans"]:
                for key in ("traceId", "spanId", "parentSpanId"):
                    if span.get(key):
                        span[key] = base64.b64encode(bytes.fromhex(span[key])).decode()
    return ParseDict(doc, ExportTraceServiceRequest())


def test_a_real_framework_trace_converts_like_the_protobuf_library() -> None:
    doc = json.loads(TRACE.read_text())
    assert parse_json_request(TRACE.read_bytes()) == _oracle(doc)


def test_every_value_type_and_lenient_spellings() -> None:
    doc = {
        "resourceSpans": [
            {
                "resource": {
                    "attributes": [{"key": "service.name", "value": {"stringValue": "s"}}]
                },
                "scopeSpans": [
                    {
                        "scope": {"name": "sc", "version": "1"},
                        "spans": [
                            {
                                "traceId": "5B8EFFF798038103D269B633813FC60C",
                                "spanId": "EEE19B7EC3C1B174",
                                "name": "n",
                                "kind": "SPAN_KIND_CLIENT",
                                "startTimeUnixNano": 1544712660000000000,
                                "endTimeUnixNano": "1544712661000000000",
                                "status": {"code": 2, "message": "boom"},
                                "attributes": [
                                    {"key": "i", "value": {"intValue": "-7"}},
                                    {"key": "d", "value": {"doubleValue": "NaN"}},
                                    {"key": "b", "value": {"boolValue": True}},
                                    {"key": "y", "value": {"bytesValue": "AAE="}},
                                    {
                                        "key": "a",
                                        "value": {"arrayValue": {"values": [{"intValue": 1}]}},
                                    },
                                    {
                                        "key": "k",
                                        "value": {
                                            "kvlistValue": {
                                                "values": [
                                                    {"key": "x", "value": {"stringValue": "y"}}
                                                ]
                                            }
                                        },
                                    },
                                ],
                                "events": [{"name": "exception", "timeUnixNano": "5"}],
                                "links": [{"traceId": "00" * 15 + "01", "spanId": "00" * 7 + "02"}],
                                "unknownField": {"ignored": True},
                            }
                        ],
                    }
                ],
            }
        ]
    }
    req = parse_json_request(json.dumps(doc).encode())
    span = req.resource_spans[0].scope_spans[0].spans[0]
    assert span.trace_id.hex() == "5b8efff798038103d269b633813fc60c"
    assert span.kind == 3
    assert span.start_time_unix_nano == 1544712660000000000
    assert (span.status.code, span.status.message) == (2, "boom")
    values = {kv.key: kv.value for kv in span.attributes}
    assert values["i"].int_value == -7
    assert values["d"].double_value != values["d"].double_value  # NaN
    assert values["b"].bool_value is True
    assert values["y"].bytes_value == b"\x00\x01"
    assert values["a"].array_value.values[0].int_value == 1
    assert values["k"].kvlist_value.values[0].value.string_value == "y"
    assert span.events[0].time_unix_nano == 5
    assert span.links[0].span_id.hex() == "0000000000000002"


def test_wrong_length_hex_ids_are_left_for_the_assembler_to_reject() -> None:
    body = b'{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"abcd","spanId":"01"}]}]}]}'
    span = parse_json_request(body).resource_spans[0].scope_spans[0].spans[0]
    assert (span.trace_id, span.span_id) == (b"\xab\xcd", b"\x01")


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b"[]", "body: expected a JSON object, got list"),
        (b"\xff", "body is not UTF-8 JSON"),
        (b'{"resourceSpans": [{"scopeSpans": [{"spans": [1]}]}]}', "spans[0]: expected a JSON"),
        (
            b'{"resourceSpans":[{"scopeSpans":[{"spans":[{"name":"x","attributes":'
            b'[{"key":"k","value":{"boolValue":"yes"}}]}]}]}]}',
            "spans[0].attributes[0].value.boolValue: expected true or false, got 'yes'",
        ),
        (
            b'{"resourceSpans":[{"scopeSpans":[{"spans":[{"startTimeUnixNano":"soon"}]}]}]}',
            "spans[0].startTimeUnixNano: expected an integer, got 'soon'",
        ),
    ],
)
def test_malformed_bodies_name_the_json_path(body: bytes, message: str) -> None:
    with pytest.raises(InputError) as caught:
        parse_json_request(body)
    assert message in str(caught.value)


def test_the_file_reader_and_the_receiver_share_one_mapping() -> None:
    """The same bad span: the receiver refuses the body, the file reader rejects that span
    and keeps the rest, both naming it by its JSON path; the kept spans are what the receiver's
    protobuf decodes to."""
    doc = json.loads(TRACE.read_text())
    good = parse_json_request(json.dumps(doc).encode())
    spans = doc["resourceSpans"][0]["scopeSpans"][0]["spans"]
    spans[0]["traceId"] = "not an id"
    where = "resourceSpans[0].scopeSpans[0].spans[0].traceId"
    with pytest.raises(InputError, match=re.escape(where)):
        parse_json_request(json.dumps(doc).encode())
    result = decode_json_request(doc, source="trace.json")
    assert result.rejected == 1
    assert result.problems[0].startswith(f"trace.json: {where}")
    all_spans = [s for rs in good.resource_spans for ss in rs.scope_spans for s in ss.spans]
    assert [r.span_id for r in result.spans] == [s.span_id.hex() for s in all_spans[1:]]
