"""Reading OTLP JSON trace files: one ExportTraceServiceRequest, or JSON Lines of them.

JSON Lines is what the collector's `file` exporter writes. `-` reads standard input.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable

from tracescore.errors import InputError
from tracescore.otlp.decode import DecodeResult
from tracescore.otlp.json import decode_json_request

__all__ = ["read_trace_file", "read_trace_files"]


def read_trace_files(paths: Iterable[str]) -> DecodeResult:
    """Decode every file; raises InputError naming the file (and line) that is broken."""
    result = DecodeResult()
    for path in paths:
        result.extend(read_trace_file(path))
    return result


def read_trace_file(path: str) -> DecodeResult:
    """Decode one file or `-` (stdin)."""
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
    stripped = text.lstrip()
    if not stripped:
        return DecodeResult()
    try:
        whole = json.loads(text)
    except json.JSONDecodeError:
        whole = None
    if whole is not None:
        return decode_json_request(whole, source=name)
    result = DecodeResult()
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            body = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(f"{name}: line {number}: invalid JSON: {exc.msg}") from exc
        result.extend(decode_json_request(body, source=f"{name}: line {number}"))
    return result
