"""OTLP decoding: protobuf and JSON requests and files into `SpanRecord`s."""

from tracescore.otlp.decode import DecodeResult, KeyFilter
from tracescore.otlp.files import read_trace_files
from tracescore.otlp.json import decode_json_request
from tracescore.otlp.proto import decode_proto_request

__all__ = [
    "DecodeResult",
    "KeyFilter",
    "decode_json_request",
    "decode_proto_request",
    "read_trace_files",
]
