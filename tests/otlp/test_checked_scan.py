"""The checking scan (`SpanReader.checked_grouped`, `otlp.proto.check_and_group`): the
validator's verdict and the scan in one walk of the bytes.

It may vouch for a request only where `validate_request` (upb's verdict) accepts it, and then
gives exactly what `grouped` gives; anything it cannot vouch for goes to the validator, whose
InputError is the one `check_proto_request` raises. It must vouch for the usual shapes (the
framework fixtures), or it saves nothing.
"""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from otlp.test_validate import CORNERS, PATHS, SAMPLES, _ld, _request_with_marker, upb_accepts
from support.otlp_wire_fuzz import mutate, random_request
from tracescore.errors import InputError
from tracescore.otlp import native, proto, scan
from tracescore.otlp.scan import CandidateRule, SpanReader
from tracescore.trajectory import needed_attribute

validate_request: Any = None
if scan.NATIVE:
    from tracescore.otlp._scan import (  # type: ignore[import-not-found]
        validate_request,
    )

_RULE = CandidateRule("gen_ai.operation.name", "invoke_agent", "invoke_agent", ("k",))


@pytest.fixture(autouse=True)
def _native_is_built() -> None:
    if native.disabled():
        pytest.skip(f"{native.ENV}=0: the suite runs on the pure-Python path")
    assert scan.NATIVE, "tracescore.otlp._scan is not built"


def _same(a: Any, b: Any) -> bool:
    return bool(a == b) or repr(a) == repr(b)  # NaN attributes


def _agree(body: bytes) -> bool:
    """Whether the checking scan vouched for `body`; fails where it vouched for what upb
    refuses, or gave other groups than `grouped`."""
    keep = needed_attribute if len(body) % 2 else None
    checked = SpanReader(keep, _RULE).checked_grouped(body)
    if checked is None:
        return False
    assert upb_accepts(body), body.hex()
    assert _same(checked, SpanReader(keep, _RULE).grouped(body))
    return True


def _span(payload: bytes) -> bytes:
    """A request of one span whose fields are `payload` (after valid ids)."""
    ids = _ld(1, bytes(range(1, 17))) + _ld(2, bytes(range(1, 9)))
    return _ld(1, _ld(2, _ld(2, ids + payload)))


SPAN_CORNERS = [
    _span(_ld(5, b"ok")),
    _span(_ld(5, b"bad \xff")),  # name
    _span(_ld(5, b"n" * 200 + b"\xff")),  # a name too long for the one-byte length
    _span(_ld(5, b"\xff") + _ld(5, b"ok")),  # a name sent twice: both are checked
    _span(_ld(3, b"\xc3\x28")),  # trace_state
    _span(_ld(9, b"\x0a\x02\xc3\x28")),  # an attribute key alone
    _span(_ld(9, b"\x0a\x01k\x12\x04\x0a\x02\xc3\x28")),  # a string value
    _span(_ld(9, b"\x0a\x01k\x12\x04\x0a\x02\xc3\xa9")),  # a UTF-8 value
    _span(_ld(9, b"\x12\x03\x0a\x01v\x0a\x01k")),  # the value first
    _span(_ld(9, b"\x0a\x01k", pad=5)),  # an attribute's length of 6 bytes
    _span(_ld(9, b"\x0a\x01k\x12" + b"\x83\x80\x80\x80\x80\x00" + b"\x0a\x01v")),
    _span(_ld(11, _ld(2, b"\xff"))),  # an event's name
    _span(_ld(11, _ld(3, b"\x0a\x01\xff"))),  # an event attribute's key
    _span(_ld(13, _ld(3, b"\xff"))),  # a link's trace_state
    _span(_ld(15, _ld(2, b"\xff"))),  # the status message
    _span(_ld(15, _ld(2, b"ok") + b"\x18\x02")),
    _span(b"\x85\x01\x01\x00\x00\x00"),  # flags: a two-byte tag
    _span(b"\x08\x01"),  # a known field of an unexpected wire type
    _span(b"\x0b\x0c"),  # a group
    _ld(1, _ld(1, _ld(1, b"\x0a\x01\xff")) + _ld(2, _ld(2, b""))),  # a resource attribute
    _ld(1, _ld(3, b"\xff") + _ld(2, _ld(2, b""))),  # a schema_url
    _ld(1, _ld(2, _ld(1, _ld(1, b"\xff")) + _ld(2, b""))),  # a scope's name
    _ld(1, _ld(2, _ld(3, b"\xff") + _ld(2, b""))),  # a scope_spans' schema_url
]


@pytest.mark.parametrize("body", [c[0] for c in CORNERS] + SPAN_CORNERS)
def test_corners_are_vouched_for_only_where_upb_accepts(body: bytes) -> None:
    _agree(body)


@pytest.mark.parametrize("path", PATHS, ids=[".".join(n for _, n in p) for p in PATHS])
def test_invalid_utf8_in_any_string_field_is_never_vouched_for(path: Any) -> None:
    body = _request_with_marker(path)
    if upb_accepts(body):  # a bytes field: nothing to refuse
        return
    assert SpanReader(None, _RULE).checked_grouped(body) is None


def test_the_usual_requests_are_vouched_for() -> None:
    assert all(_agree(body) for body in SAMPLES)
    for usual in (SPAN_CORNERS[0], SPAN_CORNERS[7], SPAN_CORNERS[16]):  # flags: 2-byte tag
        assert _agree(usual)


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 2**64))
def test_generated_requests(seed: int) -> None:
    _agree(random_request(random.Random(seed)))


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 2**64), st.sampled_from(range(len(SAMPLES))))
def test_mutated_requests(seed: int, sample: int) -> None:
    _agree(mutate(random.Random(seed), SAMPLES[sample]))


def test_check_and_group_refuses_with_the_validators_error() -> None:
    bad = SPAN_CORNERS[1]
    with pytest.raises(InputError) as expected:
        proto.check_proto_request(bad, source="body")
    with pytest.raises(InputError) as caught:
        proto.check_and_group(SpanReader(None, _RULE), bad, source="body")
    assert str(caught.value) == str(expected.value)
    assert "spans[0].name: invalid UTF-8" in str(caught.value)
    assert _same(
        proto.check_and_group(SpanReader(None, _RULE), SAMPLES[0]),
        SpanReader(None, _RULE).grouped(SAMPLES[0]),
    )


def test_an_unreadable_request_upb_accepts_still_raises_the_scans_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    reader = SpanReader(None, _RULE)

    def broken(raw: bytes) -> Any:
        raise ValueError("resource callback failed")

    monkeypatch.setattr(reader, "resource", broken)
    assert reader.checked_grouped(SAMPLES[0]) is None
    with pytest.raises(ValueError, match="resource callback failed"):
        proto.check_and_group(reader, SAMPLES[0])


@pytest.mark.parametrize("at", [0, 15, 16, 31, 32, 33, 63, 64, 95, 96, 97, 99])
@pytest.mark.parametrize("byte", [b"\xff", b"\xc3\xa9"])
def test_long_strings_are_checked_through_every_block(at: int, byte: bytes) -> None:
    # ASCII is checked 32 bytes a step in long strings, then 8, then the last 8: a byte past
    # ASCII anywhere in a 100-byte name or attribute value gets upb's verdict.
    at = min(at, 100 - len(byte))
    text = b"a" * at + byte + b"a" * (100 - at - len(byte))
    for body in (_span(_ld(5, text)), _span(_ld(9, b"\x0a\x01k\x12\x66\x0a\x64" + text))):
        assert (validate_request(body) is None) == upb_accepts(body) == (byte != b"\xff")
        assert (SpanReader(None, _RULE).checked_grouped(body) is None) == (byte == b"\xff")
