"""The journal with a real assembler: what a crashed process left is replayed, nothing twice.

A "crash" here is dropping the assembler and journal after their records are on disk, without
any shutdown; a new journal on the same folder then recovers, as `serve` does at start-up.
The exporter is the only stand-in: tracked forwards are captured with their tokens, and the
test says which of them the downstream acknowledged.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.trace.v1.trace_pb2 import Span

from support.agent_spans import agent_run
from support.agent_spans import request as make_request
from support.otlp_sink import attrs
from tracescore.assembler import Assembler, AssemblerHooks, Outbox, Pending, ReadyTrace
from tracescore.config import parse_config
from tracescore.export.metrics import Telemetry
from tracescore.export.spans import annotate_span_bytes
from tracescore.pipeline.scoring import RunScorer, agent_name, key_filter, may_match
from tracescore.storage import Journal, StorageSettings

SHOP = """
scenarios:
  - name: shop
    match: {agent: shop_agent}
    gates:
      - {type: called_tool, tool: get_weather}
assembly: {decision_wait: 1s}
"""


class Later(Pending):
    """Attributes that are final once the test says so."""

    wait = 60.0
    nbytes = 0

    def __init__(self, attributes: dict[str, Any]) -> None:
        self.attributes = attributes
        self._done = False
        self._callbacks: list[Callable[[], None]] = []

    def done(self) -> bool:
        return self._done

    def add_done_callback(self, callback: Callable[[], None]) -> None:
        self._callbacks.append(callback)

    def finish(self) -> dict[str, Any]:
        return self.attributes

    def complete(self) -> None:
        self._done = True
        for callback in self._callbacks:
            callback()


class Node:
    """One process's assembler and journal on `folder`; forwards captured with tokens."""

    def __init__(
        self, folder: Path, yaml: str = SHOP, *, judged: list[Later] | None = None
    ) -> None:
        """`judged`: each scored span's attributes wait in a `Later` added to it (as judge
        scores would with `judge.judge_wait`)."""
        self.config = parse_config(yaml)
        self.telemetry = Telemetry()
        self.now = 0.0
        self.sent: list[tuple[bytes, int, Any]] = []
        self.scored: list[ReadyTrace] = []
        self.journal = Journal(StorageSettings(directory=str(folder)))
        logs = Outbox(lambda b, n: True, self.telemetry)
        scorer = RunScorer(self.config, self.telemetry, logs, None)

        def score(readies: list[ReadyTrace]):  # type: ignore[no-untyped-def]
            self.scored.extend(readies)
            annotations = scorer.score_traces(readies)
            if judged is None:
                return annotations
            waiting = []
            for by_span in annotations:
                waiting.append({span: Later(dict(a)) for span, a in by_span.items()})  # type: ignore[arg-type]
                judged.extend(waiting[-1].values())
            return waiting

        hooks = AssemblerHooks(
            keep_key=key_filter(self.config),
            agent_name=agent_name,
            wants=may_match(self.config),
            score=score,
            forward=lambda body, n: self.sent.append((body, n, None)) is None,
            forward_tracked=lambda body, n, token: self.sent.append((body, n, token)) is None,
            downstream_ready=lambda: True,
            annotate=annotate_span_bytes,
        )
        self.assembler = Assembler(
            self.config.assembly,
            hooks,
            self.telemetry,
            mode=self.config.mode,
            scoring=bool(self.config.scenarios),
            clock=lambda: self.now,
            journal=self.journal,
        )

    async def start(self) -> int:
        """Recover what is on disk (as the pipeline does); returns requests replayed."""
        left = self.journal.recover()
        self.journal.start()
        for recovered in left:
            self.journal.resume(recovered)
            self.assembler.restore(recovered.request, recovered.parts, recovered.released)
            self.journal.resumed()
        return len(left)

    async def send(self, spans: list[Span]) -> None:
        self.assembler.consume(None, make_request(spans).SerializeToString())
        await self.journal.commit()

    def deliver(self) -> list[Span]:
        """The downstream acknowledges everything sent so far; returns its spans."""
        out = []
        for body, _, token in self.sent:
            out.extend(_spans(body))
            if token is not None:
                self.journal.settled([token])
        self.sent = []
        return out

    async def crash(self) -> None:
        """Everything written is on disk; then the process is gone without a shutdown."""
        await self.journal.commit()
        await self.journal.close()

    def tick(self, at: float) -> None:
        self.now = at
        self.assembler.tick()


def _spans(body: bytes) -> Iterator[Span]:
    req = ExportTraceServiceRequest.FromString(body)
    return (s for rs in req.resource_spans for ss in rs.scope_spans for s in ss.spans)


def test_a_held_agent_span_survives_a_crash_and_is_scored_from_replayed_children(
    tmp_path: Path,
) -> None:
    run = agent_run(seed=1)

    async def main() -> None:
        first = Node(tmp_path)
        await first.start()
        await first.send(run.children)
        await first.send([run.agent])
        delivered = first.deliver()
        assert {s.span_id for s in delivered} == {s.span_id for s in run.children}
        await first.crash()  # the agent span was held, waiting out decision_wait

        second = Node(tmp_path)
        assert await second.start() == 2
        assert second.sent == [], "children were delivered: not sent again"
        second.tick(2.0)
        (agent,) = second.deliver()
        assert agent.span_id == run.agent.span_id
        found = attrs(agent.attributes)
        assert found["eval.called_tool.score"] == 1.0, "scored from the replayed tool span"
        assert found["tracescore.complete"] is True
        await second.crash()

        third = Node(tmp_path)
        assert await third.start() == 0, "everything delivered and scored: nothing left"
        assert third.sent == []
        await third.crash()
        assert len(list(tmp_path.glob("*.wal"))) <= 1, "segments of retired requests deleted"

    asyncio.run(main())


def test_a_forward_not_acknowledged_is_sent_again_once_and_then_never(tmp_path: Path) -> None:
    run = agent_run(seed=2)

    async def main() -> None:
        first = Node(tmp_path)
        await first.start()
        await first.send(run.children)
        await first.crash()  # the downstream never acknowledged the children

        second = Node(tmp_path)
        await second.start()
        again = second.deliver()
        assert sorted(s.span_id for s in again) == sorted(s.span_id for s in run.children)
        await second.crash()  # acknowledged this time (the trace is still buffered)

        third = Node(tmp_path)
        assert await third.start() == 1, "its trace was not scored yet: kept to rebuild it"
        assert third.deliver() == []
        await third.crash()

    asyncio.run(main())


def test_a_released_span_not_yet_delivered_goes_out_as_scored_without_scoring_again(
    tmp_path: Path,
) -> None:
    run = agent_run(seed=3)

    async def main() -> None:
        first = Node(tmp_path)
        await first.start()
        await first.send(run.spans)
        first.deliver()  # the children
        first.tick(2.0)  # scored: the agent span is released with its scores ...
        assert len(first.sent) == 1
        await first.crash()  # ... and the crash came before the downstream acknowledged it

        second = Node(tmp_path)
        await second.start()
        (agent,) = second.deliver()
        assert attrs(agent.attributes)["eval.called_tool.score"] == 1.0
        second.tick(10.0)
        assert second.deliver() == [], "sent once"
        # Its trace is rebuilt from the replayed request and scored again only for the
        # metrics and events: the span itself is not sent twice.
        await second.crash()

    asyncio.run(main())


@pytest.mark.parametrize(
    "restarted",
    [
        pytest.param("assembly: {decision_wait: 1s}\n", id="without scenarios"),
        # The replayed trace is then not built: its agent's scenario is gone.
        pytest.param(SHOP.replace("shop_agent", "billing_agent"), id="for another agent"),
    ],
)
def test_a_held_span_whose_run_cannot_be_scored_goes_out_marked_incomplete(
    tmp_path: Path, restarted: str
) -> None:
    run = agent_run(seed=4)

    async def main() -> None:
        first = Node(tmp_path)
        await first.start()
        await first.send(run.spans)
        first.deliver()
        await first.crash()

        # Restarted with a config under which nothing can score the run any more.
        second = Node(tmp_path, yaml=restarted)
        await second.start()
        second.tick(2.0)
        (agent,) = second.deliver()
        assert agent.span_id == run.agent.span_id
        assert attrs(agent.attributes) == {
            **attrs(run.agent.attributes),
            "tracescore.complete": False,
        }
        assert second.scored == []
        await second.crash()
        third = Node(tmp_path)
        assert await third.start() == 0

    asyncio.run(main())


def test_fanout_runs_not_yet_scored_are_scored_after_a_crash(tmp_path: Path) -> None:
    run = agent_run(seed=5)

    async def main() -> None:
        first = Node(tmp_path, yaml=SHOP + "mode: fanout\n")
        await first.start()
        await first.send(run.spans)
        assert first.sent == [], "fanout forwards nothing"
        await first.crash()  # before its decision_wait: the run was never scored

        second = Node(tmp_path, yaml=SHOP + "mode: fanout\n")
        assert await second.start() == 1
        second.tick(2.0)
        (ready,) = second.scored
        assert ready.trace_id == run.trace_id.hex()
        assert len(ready.spans) == len(run.spans)
        await second.crash()
        third = Node(tmp_path, yaml=SHOP + "mode: fanout\n")
        assert await third.start() == 0, "scored: retired"

    asyncio.run(main())


def test_spans_waiting_for_judge_scores_survive_a_crash_parked_or_released(
    tmp_path: Path,
) -> None:
    parked, released = agent_run(seed=6), agent_run(seed=7)

    async def main() -> None:
        judged: list[Later] = []
        first = Node(tmp_path, judged=judged)
        await first.start()
        await first.send(parked.spans)
        await first.send(released.spans)
        first.deliver()
        first.tick(2.0)  # both scored; their agent spans wait for judge scores
        assert len(judged) == 2
        assert first.sent == []
        judged[1].attributes["judge.extra"] = "late"
        judged[1].complete()  # the second is released with its judge score, not yet delivered
        assert len(first.sent) == 1
        await first.crash()

        second = Node(tmp_path)
        await second.start()
        (out,) = second.deliver()
        assert out.span_id == released.agent.span_id
        assert attrs(out.attributes)["judge.extra"] == "late", "sent as it was released"
        second.tick(4.0)  # the parked one was held again and is scored again
        (again,) = second.deliver()
        assert again.span_id == parked.agent.span_id
        assert attrs(again.attributes)["eval.called_tool.score"] == 1.0
        await second.crash()
        third = Node(tmp_path)
        assert await third.start() == 0

    asyncio.run(main())


def test_a_run_whose_agent_span_still_waits_keeps_all_its_requests(tmp_path: Path) -> None:
    # The children were delivered and the run scored, but its agent span waits for judge
    # scores: the children's request must stay, or a crash rescores the agent span alone.
    run = agent_run(seed=8)

    async def main() -> None:
        judged: list[Later] = []
        first = Node(tmp_path, judged=judged)
        await first.start()
        await first.send(run.children)
        await first.send([run.agent])
        first.deliver()
        first.tick(2.0)
        assert len(judged) == 1
        await first.crash()

        second = Node(tmp_path)
        assert await second.start() == 2
        second.tick(4.0)
        (agent,) = second.deliver()
        assert attrs(agent.attributes)["eval.called_tool.score"] == 1.0
        await second.crash()

    asyncio.run(main())
