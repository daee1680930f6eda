"""`Assembler.checked_scan`: the receiver's schema check and the scan in one walk, its refusal
decided before anything of the request is taken."""

from __future__ import annotations

from pathlib import Path

import pytest

from assembler._harness import Harness
from support.otlp_proto import request_bodies
from tracescore.errors import InputError

_FIXTURE = sorted((Path(__file__).parents[1] / "testdata" / "frameworks").glob("*.otlp.json"))[0]


def _ld(number: int, payload: bytes) -> bytes:
    return bytes([number << 3 | 2, len(payload)]) + payload


def test_a_refused_request_leaves_the_assembler_untouched() -> None:
    harness = Harness()
    assembler = harness.assembler
    body = request_bodies(_FIXTURE)[0]
    bad = body + _ld(1, _ld(3, b"\xff"))  # a valid request, then an invalid schema_url
    # the validator's message natively (it names the field), upb's without the extension
    with pytest.raises(InputError, match="body: not an OTLP ExportTraceServiceRequest: "):
        assembler.checked_scan(bad)
    assert (assembler.runs, assembler.spans, harness.forwarded) == (0, 0, [])
    result = assembler.consume(None, body, assembler.checked_scan(body))
    assert result.accepted > 0
    assert assembler.runs > 0


def test_checked_scan_gives_what_scan_gives() -> None:
    assembler = Harness().assembler
    for body in request_bodies(_FIXTURE):
        assert repr(assembler.checked_scan(body)) == repr(assembler.scan(body))
