"""The fuzz target of the native wire code: validator, scanner, records, grouping and cut, each
checked against upb (protobuf's own parser) and the pure-Python twins on the same bytes.

    scripts/fuzz [seconds]     # under the ASan+UBSan build, coverage-guided (README)
    .venv/bin/python tests/fuzz/wire_target.py --seconds 60 [--artifacts DIR]   # any build

For every input:
- `validate_request` refuses exactly what upb refuses (the service validates every body);
- the checking scan (`SpanReader.checked_grouped`) vouches only for what upb accepts, and
  then gives the groups the pure-Python twin gives;
- where upb accepts, the scanner accepts too, reads every span as upb does, and records,
  grouping and cut equal the pure-Python twins' (sizes aside: they are estimates);
- where upb refuses, every native entry point either refuses with an ordinary error or reads
  without crashing: never SystemError (an exception lost), never a sanitizer report.

The driver is ours: inputs are seeds (fixture requests, structure-aware random requests from
tests/support/otlp_wire_fuzz.py) mutated byte-wise, structure-wise and spliced. In the
sanitized build (compiled with gcc's -fsanitize-coverage=trace-pc) the extension reports basic
blocks first reached, and inputs that reach new ones join the corpus: coverage-guided like
libFuzzer, which has no gcc counters to read. (atheris was tried: its Python instrumentation
miscompiles `otlp.wire.read_varint` on Python 3.11, so it cannot steer through the twins.)
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path
from typing import Any

sys.path[:0] = [str(Path(__file__).parents[1])]

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (  # noqa: E402
    ExportTraceServiceRequest,
)
from opentelemetry.proto.trace.v1.trace_pb2 import Span  # noqa: E402

from support.otlp_wire_fuzz import mutate, random_request  # noqa: E402
from tracescore.assembler._wire import python_cut_spans  # noqa: E402
from tracescore.otlp import scan  # noqa: E402
from tracescore.otlp.native import extension  # noqa: E402
from tracescore.otlp.scan import (  # noqa: E402
    CandidateRule,
    SpanReader,
    decode_any_value,
    python_scan_spans,
)
from tracescore.otlp.span_keys import python_span_has_key  # noqa: E402
from tracescore.trajectory import needed_attribute  # noqa: E402

__all__ = ["check", "seeds"]

_native: Any = extension()
_RULE = CandidateRule(
    "gen_ai.operation.name", "invoke_agent", "invoke_agent", ("gen_ai.agent.name",)
)
_TESTDATA = Path(__file__).parents[1] / "testdata"
# Keys asked of every input read as a Span (span_has_key): some the fixtures' spans have.
_SPAN_KEYS = ("gen_ai.agent.name", "", "gen_ai.operation.name", "eval.tone.score")


def _upb(body: bytes) -> ExportTraceServiceRequest | None:
    try:
        return ExportTraceServiceRequest.FromString(body)
    except Exception:
        return None


def _upb_span(body: bytes) -> bool:
    try:
        Span.FromString(body)
    except Exception:
        return False
    return True


def _upb_view(request: ExportTraceServiceRequest, keep: Any) -> list[tuple[Any, ...]]:
    def kept(key: str) -> bool:
        return keep is None or bool(keep(key))

    return [
        (
            i, j, k, s.trace_id, s.span_id, s.parent_span_id, s.name, s.kind,
            s.start_time_unix_nano, s.end_time_unix_nano, s.status.code, s.status.message,
            {kv.key: decode_any_value(kv.value) for kv in s.attributes if kept(kv.key)},
        )
        for i, rs in enumerate(request.resource_spans)
        for j, ss in enumerate(rs.scope_spans)
        for k, s in enumerate(ss.spans)
    ]  # fmt: skip


def _scan(scanner: Any, body: bytes, keep: Any) -> list[Any]:
    reader = SpanReader(keep)
    return list(
        scanner(body, reader._keys, reader._classify, scan._decode_value_bytes, reader._slow_kv,
                scan.ATTRIBUTE_OVERHEAD)
    )  # fmt: skip


def _attempt(call: Any) -> tuple[bool, Any]:
    """(True, result) or (False, the exception); SystemError (a lost exception) propagates."""
    try:
        return True, call()
    except SystemError:
        raise
    except Exception as exc:  # an ordinary refusal
        return False, exc


def _removals(body: bytes, spans: list[Any]) -> dict[int, dict[int, set[int]]]:
    """Every third span, picked by the input's own bytes."""
    remove: dict[int, dict[int, set[int]]] = {}
    for n, s in enumerate(spans):
        if (n + len(body)) % 3 == 0:
            remove.setdefault(s[0], {}).setdefault(s[1], set()).add(s[2])
    return remove


def _same(a: Any, b: Any) -> bool:
    """Equal, or alike but for NaN (a double attribute may be one, and NaN != NaN)."""
    return bool(a == b) or repr(a) == repr(b)


def check(body: bytes) -> None:
    request = _upb(body)
    verdict = _native.validate_request(body)
    assert (verdict is None) == (request is not None), (verdict, request is not None)
    keep = needed_attribute if len(body) % 2 else None
    outcomes = {
        "scan_spans": _attempt(lambda: _scan(_native.scan_spans, body, keep)),
        "records": _attempt(lambda: SpanReader(keep, _RULE).records(body)),
        "grouped": _attempt(lambda: SpanReader(keep, _RULE).grouped(body)),
    }
    checked = SpanReader(keep, _RULE).checked_grouped(body)  # None: not vouched for
    assert checked is None or request is not None, "vouched for what upb refuses"
    # Any bytes read as a Span: the twins answer alike where upb reads them as one (None
    # where neither reads them); elsewhere the native walk only must not crash.
    span_ok = _upb_span(body)
    for keys in (_SPAN_KEYS, dict.fromkeys(_SPAN_KEYS[len(body) % 3 :])):
        native_answer = _native.span_has_key(body, keys)
        assert not span_ok or native_answer == python_span_has_key(body, keys)
    if request is None:
        return  # refused or read: either is fine, only crashes and lost exceptions are not
    for rs in request.resource_spans:
        for ss in rs.scope_spans:
            for span in ss.spans:  # what upb reads: the answer is its keys' (or none)
                has = any(kv.key in _SPAN_KEYS for kv in span.attributes)
                assert _native.span_has_key(span.SerializeToString(), _SPAN_KEYS) in (has, None)
    for name, (ok, result) in outcomes.items():
        assert ok, f"{name} refused what upb accepts: {result!r}"
    native = outcomes["scan_spans"][1]
    assert _same([s[:13] for s in native], _upb_view(request, keep))
    # Sizes are memory estimates, and the twins estimate a KeyValue in an unusual shape (key
    # after value, non-canonical tags) differently: compared without them.
    python = _scan(python_scan_spans, body, keep)
    assert _same([s[:13] + s[14:] for s in native], [s[:13] + s[14:] for s in python])
    records = SpanReader(keep, _RULE).python_records(body)
    assert _same([r[:5] + r[6:] for r in outcomes["records"][1]], [r[:5] + r[6:] for r in records])
    groups, rejects = SpanReader(keep, _RULE).python_grouped(body)
    assert _same(outcomes["grouped"][1][1], rejects)
    native_groups = outcomes["grouped"][1][0]
    assert _same(
        {t: g[:1] + g[2:] for t, g in native_groups.items()},
        {t: g[:1] + g[2:] for t, g in groups.items()},
    )
    assert list(native_groups) == list(groups)
    if checked is not None:
        assert _same(checked[1], rejects)
        assert _same(
            {t: g[:1] + g[2:] for t, g in checked[0].items()},
            {t: g[:1] + g[2:] for t, g in groups.items()},
        )
    remove = _removals(body, native)
    if remove:
        cut = _native.cut_spans(body, remove)
        assert _same(cut, python_cut_spans(body, remove))
        assert _upb(cut[0]) is not None


def seeds() -> list[bytes]:
    """Real requests of every framework fixture, and structure-aware random ones."""
    from support.otlp_proto import request_bodies

    out = [b""]
    for pattern in ("frameworks/*.otlp.json", "traces/*/input.otlp.json"):
        for path in sorted(_TESTDATA.glob(pattern))[:12]:
            out.extend(request_bodies(path)[:2])
    rng = random.Random(20)
    out.extend(random_request(rng) for _ in range(40))
    return out


def _splice(rng: random.Random, a: bytes, b: bytes) -> bytes:
    return a[: rng.randint(0, len(a))] + b[rng.randint(0, len(b)) :]


def _next_input(rng: random.Random, corpus: list[bytes]) -> bytes:
    roll = rng.random()
    if roll < 0.1:
        return random_request(rng)
    body = rng.choice(corpus)
    if roll < 0.2:
        return _splice(rng, body, rng.choice(corpus))
    for _ in range(rng.randint(1, 3)):
        body = mutate(rng, body)
    return body[: 1 << 20]


def fuzz(seconds: float, artifacts: Path, seed: int) -> int:
    """Run `check` on generated inputs for `seconds`; 0, or 1 after writing the failing input
    to `artifacts`. Prints the inputs run and the corpus size."""
    if _native is None:
        raise SystemExit("the native extension is not built: pip install -e . first")
    news = getattr(_native, "coverage_news", None)
    rng = random.Random(seed)
    corpus = seeds()
    runs = 0
    started = time.monotonic()
    while time.monotonic() - started < seconds:
        body = _next_input(rng, corpus)
        try:
            check(body)
        except BaseException:
            artifacts.mkdir(parents=True, exist_ok=True)
            path = artifacts / f"failure-{seed}-{runs}"
            path.write_bytes(body)
            print(f"fuzz: input {runs} failed; written to {path} (rerun: --input {path})")
            raise
        runs += 1
        if news is not None and news():
            corpus.append(body)
    guided = "coverage-guided" if news is not None else "no coverage feedback (plain build)"
    print(f"fuzz: {runs} inputs in {seconds:.0f} s, no failure; corpus {len(corpus)}; {guided}")
    return 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--seed", type=int, default=int(time.time()))
    parser.add_argument("--artifacts", type=Path, default=Path("build/fuzz-artifacts"))
    parser.add_argument("--input", type=Path, help="run one saved input and stop")
    args = parser.parse_args()
    if args.input is not None:
        check(args.input.read_bytes())
        print(f"fuzz: {args.input} passes")
        return
    print(f"fuzz: seed {args.seed}")
    raise SystemExit(fuzz(args.seconds, args.artifacts, args.seed))


if __name__ == "__main__":
    main()
