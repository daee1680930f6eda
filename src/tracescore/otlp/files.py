"""Reading OTLP JSON trace files: one ExportTraceServiceRequest, or JSON Lines of them.

JSON Lines is what the collector's `file` exporter writes. `-` reads standard input. A file that
holds no OTLP span at all is an error naming what it holds instead: an offline score over an
empty or foreign file must not pass a CI gate with "0 run(s)".
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Mapping

from tracescore.errors import InputError
from tracescore.otlp.decode import DecodeResult
from tracescore.otlp.json import decode_json_request

__all__ = ["read_trace_file", "read_trace_files"]

_EXPECTED = (
    'expected OTLP JSON: an ExportTraceServiceRequest ({"resourceSpans": [...]}) '
    "or JSON Lines of them, as the collector's file exporter writes"
)
_CONSOLE = (
    "this is the OpenTelemetry SDK's ConsoleSpanExporter output (one JSON object per span), "
    "not OTLP JSON; export OTLP instead: send the spans over OTLP to an OpenTelemetry "
    "Collector with the `file` exporter (it writes OTLP JSON Lines) or to `tracescore serve`"
)
_OTHER_SIGNALS = {"resourceMetrics": "OTLP metrics", "resourceLogs": "OTLP logs"}


def read_trace_files(paths: Iterable[str]) -> DecodeResult:
    """Decode every file; raises InputError naming the file (and line) that is broken."""
    result = DecodeResult()
    for path in paths:
        result.extend(read_trace_file(path))
    return result


def read_trace_file(path: str) -> DecodeResult:
    """Decode one file or `-` (stdin); raises InputError when it holds no OTLP span."""
    try:
        if path == "-":
            raw = sys.stdin.buffer.read()
            name = "<stdin>"
        else:
            with open(path, "rb") as handle:
                raw = handle.read()
            name = path
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    # Invalid UTF-8 must not lose the rest of the file: replace it and carry on.
    text = raw.decode("utf-8", errors="replace")
    if not text.strip():
        raise InputError(f"{name}: empty input, no OTLP spans; {_EXPECTED}")
    result = DecodeResult()
    bodies = _bodies(text, name)
    for source, body in bodies:
        _refuse_foreign(body, name)
        result.extend(decode_json_request(body, source=source))
    if not result.spans:
        raise InputError(f"{name}: no OTLP spans: {_found(bodies, result)}; {_EXPECTED}")
    return result


def _bodies(text: str, name: str) -> list[tuple[str, object]]:
    """The JSON values in `text` with where each came from: one document or one per line.

    Pretty-printed values one after another (what ConsoleSpanExporter prints) are neither, and
    are read as a stream only so that the error can say what they are.
    """
    try:
        return [(name, json.loads(text))]
    except json.JSONDecodeError:
        pass
    bodies: list[tuple[str, object]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            bodies.append((f"{name}: line {number}", json.loads(line)))
        except json.JSONDecodeError as exc:
            stream = _stream(text)
            if stream and all(_is_console_span(value) for value in stream):
                raise InputError(f"{name}: {_CONSOLE}") from exc
            raise InputError(f"{name}: line {number}: invalid JSON: {exc.msg}") from exc
    return bodies


def _stream(text: str) -> list[object] | None:
    """Concatenated JSON values, or None when `text` is not one."""
    decoder = json.JSONDecoder()
    values: list[object] = []
    position = 0
    while True:
        while position < len(text) and text[position].isspace():
            position += 1
        if position == len(text):
            return values
        try:
            value, position = decoder.raw_decode(text, position)
        except json.JSONDecodeError:
            return None
        values.append(value)


def _is_console_span(value: object) -> bool:
    context = value.get("context") if isinstance(value, Mapping) else None
    return isinstance(context, Mapping) and "trace_id" in context and "span_id" in context


def _refuse_foreign(body: object, name: str) -> None:
    """Shapes that are certainly not OTLP trace JSON, named with how to fix them."""
    if _is_console_span(body):
        raise InputError(f"{name}: {_CONSOLE}")
    if isinstance(body, Mapping) and "resource_spans" in body and "resourceSpans" not in body:
        raise InputError(
            f"{name}: snake_case `resource_spans`: OTLP JSON names fields in lowerCamelCase "
            "(`resourceSpans`, `scopeSpans`, `traceId`), as protobuf's JSON mapping writes them"
        )


def _found(bodies: list[tuple[str, object]], result: DecodeResult) -> str:
    """What a file without spans holds instead, in a few words."""
    if result.rejected:
        return f"every span was rejected ({result.rejected})"
    kinds: list[str] = []
    for _, body in bodies:
        assert isinstance(body, Mapping)  # decode_json_request refused anything else
        if "resourceSpans" in body:
            kind = "resourceSpans with no spans"
        elif signal := next((s for k, s in _OTHER_SIGNALS.items() if k in body), None):
            kind = f"{signal}, not traces"
        else:
            keys = ", ".join(sorted(str(k) for k in body)[:5]) or "no keys"
            kind = f"a JSON object without resourceSpans (keys: {keys})"
        if kind not in kinds:
            kinds.append(kind)
    return "; ".join(kinds[:3])
