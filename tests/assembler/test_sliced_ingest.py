"""A request taken in slices (`consume_sliced`) does exactly what `consume` does in one go, and
nothing else runs on the buffer between its slices.

Slices are made tiny (a few traces) so that every request of an agent run is cut into many.
"""

from __future__ import annotations

import asyncio
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from assembler._harness import SHOP, Harness
from assembler.test_grouped_ingest import CONFIGS, WAIT, _request, _rewire, _state, mixed_spans
from support.agent_spans import agent_run
from tracescore.assembler import Assembler, ingest


@pytest.fixture(autouse=True)
def _tiny_slices(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ingest, "SLICE", 2)


def _sliced(h: Harness, parsed: ExportTraceServiceRequest, body: bytes) -> object:
    return asyncio.run(h.assembler.consume_sliced(parsed, body))


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    seed=st.integers(0, 100_000),
    config=st.sampled_from(CONFIGS),
    candidates=st.booleans(),
    n_runs=st.integers(1, 6),
    batch=st.integers(1, 40),
)
def test_a_request_taken_in_slices_does_what_one_taken_at_once_does(
    seed: int, config: str, candidates: bool, n_runs: int, batch: int
) -> None:
    rng = random.Random(seed)
    spans = mixed_spans(rng, seed, n_runs, agent_twice=False)
    sliced, at_once = Harness(config), Harness(config)
    calls = _rewire(sliced, Assembler, candidates)
    reference = _rewire(at_once, Assembler, candidates)
    now = 0.0
    for start in range(0, len(spans), batch):
        body = _request(spans[start : start + batch], rng).SerializeToString()
        parsed = ExportTraceServiceRequest.FromString(body)
        assert _sliced(sliced, parsed, body) == at_once.assembler.consume(parsed, body)
        assert _state(sliced) == _state(at_once)
        if rng.random() < 0.4:
            now += rng.choice([0.5, WAIT, 40.0])
            assert sliced.tick(now) == at_once.tick(now)
    assert sliced.assembler.drain() == at_once.assembler.drain()
    assert _state(sliced) == _state(at_once)
    assert calls.log == reference.log


def test_a_tick_and_other_requests_wait_for_a_request_taken_in_slices() -> None:
    runs = [agent_run(seed=n) for n in range(8)]
    first = Harness(SHOP)
    body = _request([s for r in runs for s in r.spans], random.Random(1)).SerializeToString()
    late = agent_run(seed=99)
    late_body = _request(late.spans, random.Random(2)).SerializeToString()
    seen: list[tuple[bool, int]] = []

    async def go() -> None:
        a = first.assembler
        taking = asyncio.ensure_future(a.consume_sliced(None, body))
        await asyncio.sleep(0)  # its first slice is taken
        assert a.busy
        with pytest.raises(RuntimeError, match="consume_sliced"):
            a.consume(None, late_body)

        async def tick() -> None:
            async with a.exclusive:
                seen.append((taking.done(), a.runs))

        ticking = asyncio.ensure_future(tick())
        other = asyncio.ensure_future(a.consume_sliced(None, late_body))
        await asyncio.sleep(0)
        assert not ticking.done()
        assert (await taking).accepted == sum(len(r.spans) for r in runs)
        await ticking
        assert (await other).accepted == len(late.spans)
        assert not a.busy

    asyncio.run(go())
    assert seen == [(True, len(runs))], "the tick ran after the request, not between slices"
    assert first.assembler.runs == len(runs) + 1
