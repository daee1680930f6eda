"""A corpus of hostile requests against the real `tracescore serve` over loopback.

Each body is answered (200 when upb accepts it, 400 when it refuses) in time proportional to
its size, the service's memory stays bounded, /healthz keeps answering while the largest ones
are read, and the service is healthy at the end. The bounds are generous on purpose: they
catch a quadratic blow-up or a stall (minutes, or gigabytes), not a slow machine.
"""

from __future__ import annotations

import functools
import json
import struct
from collections.abc import Iterator

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from adversarial._serve import HealthPoller, export_grpc, healthy, post, rss_kib, serving
from e2e._process import ServeProcess
from support.adversarial import (
    colliding_trace_ids,
    field,
    key_value,
    random_trace_ids,
    request,
    resource_spans,
    scope_spans,
    span,
    span_per_trace,
    string_value,
)

pytestmark = pytest.mark.slow

MIB = 1 << 20
TRACE = b"\x0a" * 16


def _upb_accepts(body: bytes) -> bool:
    try:
        ExportTraceServiceRequest.FromString(body)
    except Exception:
        return False
    return True


def _one(span_bytes: bytes, resource: bytes = b"", scope: bytes = b"scope") -> bytes:
    return request([resource_spans([scope_spans([span_bytes], scope)], resource)])


def _nested_value(depth: int) -> bytes:
    """An AnyValue holding arrays `depth` deep (two messages per level)."""
    value = string_value(b"leaf")
    for _ in range(depth):
        value = field(5, field(1, value))
    return value


def _nesting_corpus() -> dict[str, bytes]:
    """The deepest attribute value upb takes, and one level more."""
    bodies = {}
    for depth in range(40, 60):
        body = _one(
            span(TRACE, b"\x01" * 8, b"deep", (key_value(b"gen_ai.deep", _nested_value(depth)),))
        )
        if not _upb_accepts(body):
            bodies["nesting one past the limit"] = body
            break
        bodies["nesting at the limit"] = body
    return bodies


def _odd_orders() -> dict[str, bytes]:
    sid = b"\x02" * 8
    spans = [span(TRACE, bytes([n + 1]) * 8, b"op") for n in range(3)]
    scope_after = b"".join(field(2, s) for s in spans) + field(1, field(1, b"late-scope"))
    resource_after = field(2, scope_after) + field(
        1, field(1, key_value(b"service.name", string_value(b"svc")))
    )
    reversed_fields = (
        b"\x41"
        + struct.pack("<Q", 2)
        + b"\x39"
        + struct.pack("<Q", 1)
        + field(5, b"name")
        + field(2, sid)
        + field(1, TRACE)
    )
    repeated = (
        span(TRACE, sid, b"first")
        + field(5, b"second")
        + field(1, TRACE)
        + field(15, field(2, b"a"))
        + field(15, b"\x18\x02")
    )
    interleaved = (
        field(1, TRACE)
        + field(9, key_value(b"gen_ai.system", string_value(b"x")))
        + field(11, field(2, b"event"))
        + field(2, sid)
        + field(9, key_value(b"gen_ai.system", string_value(b"y")))
        + field(5, b"n")
    )
    return {
        "scope after its spans, resource after its scopes": request([resource_after]),
        "span fields in reverse order": _one(reversed_fields),
        "span fields repeated (last wins, messages merge)": _one(repeated),
        "attributes and events interleaved, a key repeated": _one(interleaved),
        "empty request": b"",
        "empty resource, scope and span messages": request([field(2, field(2, b""))]),
    }  # fmt: skip


def _wire_types() -> dict[str, bytes]:
    unknown = (
        b"\x70\x05" + b"\x71" + b"\x00" * 8 + b"\x72\x01x" + b"\x73\x74" + b"\x75" + b"\x00" * 4
    )
    base = span(TRACE, b"\x03" * 8, b"wire")
    out = {
        "unknown field 14 in every valid wire type": _one(base + unknown),
        "a group after the request (\\x3b\\x3c)": _one(base) + b"\x3b\x3c",
        "nested groups in a span": _one(base + b"\x63\x6b\x0b\x0c\x6c\x64"),
        "known field sent as a group": _one(base + b"\x4b\x4c"),
    }
    for wire in (6, 7):
        out[f"wire type {wire}"] = _one(base + bytes([14 << 3 | wire]))
    out["unclosed group"] = _one(base + b"\x63")
    out["mismatched group"] = _one(base + b"\x63\x6c")
    return out


def _truncations() -> dict[str, bytes]:
    attributes = tuple(key_value(f"gen_ai.k{n}".encode(), string_value(b"value")) for n in range(5))
    whole = request([resource_spans([scope_spans([span(TRACE, b"\x04" * 8, b"cut", attributes)])])])
    return {f"truncated at {n} of {len(whole)}": whole[:n] for n in range(1, len(whole), 7)}


def _with_attribute(key: bytes, value: bytes, sid: bytes) -> bytes:
    return _one(span(TRACE, sid, b"s", (key_value(key, string_value(value)),)))


def _huge() -> dict[str, bytes]:
    big = b"k" * MIB
    many = tuple(key_value(f"a{n}".encode(), string_value(b"v")) for n in range(20_000))
    resource = field(1, key_value(b"service.name", string_value(b"r" * 4 * MIB)))
    return {
        "1 MiB attribute key": _with_attribute(big, b"v", b"\x05" * 8),
        "1 MiB kept attribute key": _with_attribute(
            b"llm.input_messages." + big, b"v", b"\x06" * 8
        ),
        "1 MiB span name": _one(span(TRACE, b"\x07" * 8, b"n" * MIB)),
        "8 MiB attribute value": _with_attribute(b"gen_ai.prompt.0.content", big * 8, b"\x08" * 8),
        "4 MiB resource": _one(span(TRACE, b"\x09" * 8), resource),
        "20,000 attributes on one span": _one(span(TRACE, b"\x0a" * 8, b"s", many)),
    }


def _many() -> dict[str, bytes]:
    def service(n: int) -> bytes:
        return field(1, key_value(b"service.name", string_value(str(n).encode())))

    def sid(n: int) -> bytes:
        return (n + 1).to_bytes(8, "big")

    resources = [
        resource_spans([scope_spans([span(TRACE, sid(n))])], service(n)) for n in range(10_000)
    ]
    scopes = [scope_spans([span(TRACE, sid(n))], f"scope-{n}".encode()) for n in range(10_000)]
    one_trace = [span(TRACE, sid(n)) for n in range(50_000)]
    return {
        "10,000 distinct resources": request(resources),
        "10,000 scopes": request([resource_spans(scopes)]),
        "50,000 spans of one trace": request([resource_spans([scope_spans(one_trace)])]),
    }


CORPUS: dict[str, bytes] = {
    **_odd_orders(),
    **_wire_types(),
    **_nesting_corpus(),
    **_truncations(),
    **_huge(),
    **_many(),
}


@pytest.fixture(scope="module")
def serve(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeProcess]:
    with serving(tmp_path_factory.mktemp("serve"), max_body="64MiB") as process:
        yield process


def _deadline(body: bytes) -> float:
    """Generous: 10 s plus 4 s per MiB (the service reads several MiB per second)."""
    return 10.0 + 4.0 * len(body) / MIB


@pytest.mark.parametrize("name", CORPUS)
def test_each_hostile_body_is_answered_as_upb_judges_it(serve: ServeProcess, name: str) -> None:
    body = CORPUS[name]
    status, answer, took = post(serve.ports["http"], body)
    assert status == (200 if _upb_accepts(body) else 400), answer[:300]
    assert took < _deadline(body)
    assert healthy(serve.ports["http"])


@functools.cache
def _flood(kind: str, spans: int) -> bytes:
    """One request of `spans` one-span traces, with random ids or ids that all hashed alike
    under the former unkeyed hash."""
    ids = random_trace_ids if kind == "random" else colliding_trace_ids
    return span_per_trace(ids(spans, 3))


def _export(protocol: str, port: int, body: bytes) -> tuple[bool, float, str]:
    if protocol == "grpc":
        code, took = export_grpc(port, body)
        return code == "OK", took, code
    status, answer, took = post(port, body)
    return status == 200, took, answer[:300].decode(errors="replace")


@pytest.mark.parametrize("protocol", ["http", "grpc"])
@pytest.mark.parametrize("spans", [65_536, 524_288])
def test_hash_colliding_trace_ids_cost_what_random_ones_cost(
    serve: ServeProcess, spans: int, protocol: str
) -> None:
    # A guard against the loop being held, not the measurement: tests/adversarial/measure.py
    # measures the slowest poll (17-40 ms at 64k, 56-110 ms at 512k on an idle machine); here a
    # machine shared with other jobs, and the pure-Python path (TRACESCORE_NATIVE=0), must pass.
    bound = 0.250 if spans <= 65_536 else 2.0
    took: dict[str, float] = {}
    slowest: dict[str, float] = {}
    for kind in ("random", "colliding"):
        body = _flood(kind, spans)
        # The better of up to three tries: a machine shared with other jobs pauses a process
        # now and then; a loop the service itself blocks misses the bound every time.
        for _ in range(3):
            with HealthPoller(serve.ports["http"]) as poller:
                ok, took[kind], answer = _export(protocol, serve.ports[protocol], body)
                # Two polls after the answer: a request quicker than two poll intervals (64k
                # spans on a fast host) is then still watched, before and after.
                poller.poll_on(2)
            assert ok, answer
            assert poller.failures == 0
            assert poller.polls >= 3, "the poller did not watch the request"
            slowest[kind] = min(slowest.get(kind, 1e9), poller.slowest)
            if slowest[kind] <= bound:
                break
    # Before the keyed hash: 15 s against 0.05 s at 64k. Generous: a small multiple, plus slack.
    assert took["colliding"] < 4 * took["random"] + 3.0, took
    # The event loop kept answering throughout: the body is checked and scanned in a worker
    # thread and taken in slices (one go over 512k traces kept /healthz waiting 130-200 ms).
    # At 512k the bound is the stall's (16 s once, 0.5-0.8 s before serve's 1 ms switch
    # interval); the in-process test (tests/assembler/test_slices_latency.py) holds the
    # bookkeeping to 100 ms.
    assert max(slowest.values()) <= bound, slowest


def test_a_large_json_body_is_parsed_while_health_checks_are_answered(serve: ServeProcess) -> None:
    spans = [
        {"traceId": f"{n + 1:032x}", "spanId": f"{n + 1:016x}", "name": "op" * 20}
        for n in range(40_000)
    ]
    document = {"resourceSpans": [{"scopeSpans": [{"scope": {"name": "s"}, "spans": spans}]}]}
    body = json.dumps(document).encode()
    assert len(body) > 4 * MIB
    with HealthPoller(serve.ports["http"]) as poller:
        status, answer, took = post(serve.ports["http"], body, content_type="application/json")
    assert status == 200, answer[:300]
    assert took < _deadline(body)
    assert poller.failures == 0
    assert poller.slowest < 2.0, poller.slowest


def test_memory_stays_bounded_and_the_service_healthy_after_the_corpus(serve: ServeProcess) -> None:
    # Runs after the corpus above (pytest keeps file order): distinct 1 MiB keys and names
    # across requests grow no cache, so RSS settles instead of climbing with each request.
    port = serve.ports["http"]
    pid = serve.process.pid if serve.process else 0
    before = rss_kib(pid)
    for n in range(60):
        big = f"{n:08x}".encode() * (MIB // 8)
        keys = (key_value(big, string_value(b"v")), key_value(b"llm.tools." + big, b""))
        body = _one(span(TRACE[:12] + n.to_bytes(4, "big"), b"\x01" * 8, big, keys))
        status, answer, _ = post(port, body)
        assert status == 200, answer[:300]
    grown = rss_kib(pid) - before
    # 60 requests of 3 MiB each, cached, would hold 180 MiB and more; held per record and
    # released after decision_wait, they hold at most what assembly.max_bytes allows.
    assert grown < 150 * 1024, f"RSS grew by {grown / 1024:.0f} MiB"
    assert healthy(port)
    assert serve.process is not None
    assert serve.process.poll() is None
    assert "Traceback" not in serve.stderr
