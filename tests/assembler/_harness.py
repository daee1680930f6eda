"""An Assembler wired like the pipeline wires it, with a hand-driven clock.

Everything is the real thing (config, trajectory builder, scenarios, scorers, score
attributes, events) except the exporter: forwards are captured as the bytes the exporter
would have queued, and `accepting` plays a full export queue.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.logs.v1.logs_pb2 import LogRecord
from opentelemetry.proto.trace.v1.trace_pb2 import Span

from support.agent_spans import request as make_request
from tracescore.assembler import Assembler, AssemblerHooks, Ingest, Outbox, Pending, ReadyTrace
from tracescore.config import parse_config
from tracescore.export.metrics import Telemetry
from tracescore.export.spans import annotate_span_bytes
from tracescore.pipeline.scoring import RunScorer, agent_name, key_filter, may_match
from tracescore.scenarios import RunResult

SHOP = """
scenarios:
  - name: shop
    match: {agent: shop_agent}
    gates:
      - {type: called_tool, tool: get_weather}
    scorers:
      - {type: no_tool_errors}
"""


class Harness:
    """One assembler, its captured outputs, and a clock the test moves."""

    def __init__(
        self,
        yaml: str = SHOP,
        *,
        judges: Callable[[RunResult], Pending | None] | None = None,
        **assembly: object,
    ) -> None:
        """`judges` takes each scored run, as `LiveJudges.submit` does in the pipeline."""
        limits = ", ".join(f"{k}: {v}" for k, v in assembly.items())
        self.config = parse_config(yaml + (f"\nassembly: {{{limits}}}\n" if limits else ""))
        self.telemetry = Telemetry()
        self.now = 0.0
        self.accepting = True
        self.forwarded: list[tuple[bytes, int]] = []
        self.logs_out: list[bytes] = []
        self.fanout_out: list[bytes] = []
        self.ready: list[ReadyTrace] = []
        logs = self.logs = Outbox(lambda b, n: self._take(self.logs_out, b), self.telemetry)
        spans = self.spans = (
            Outbox(lambda b, n: self._take(self.fanout_out, b), self.telemetry)
            if self.config.mode == "fanout"
            else None
        )
        scorer = RunScorer(self.config, self.telemetry, logs, spans, judges=judges)

        def score(readies: list[ReadyTrace]):  # type: ignore[no-untyped-def]
            self.ready.extend(readies)
            return scorer.score_traces(readies)

        hooks = AssemblerHooks(
            keep_key=key_filter(self.config),
            agent_name=agent_name,
            wants=may_match(self.config),
            score=score,
            forward=self._forward,
            downstream_ready=lambda: self.accepting,
            annotate=annotate_span_bytes,
        )
        self.assembler = Assembler(
            self.config.assembly,
            hooks,
            self.telemetry,
            mode=self.config.mode,
            scoring=bool(self.config.scenarios),
            clock=lambda: self.now,
        )

    def _take(self, out: list[bytes], body: bytes) -> bool:
        if not self.accepting:
            return False
        out.append(body)
        return True

    def _forward(self, body: bytes, n: int) -> bool:
        if not self.accepting:
            return False
        self.forwarded.append((body, n))
        return True

    def send(
        self, spans: Iterable[Span] | ExportTraceServiceRequest, *, raw: bool = True
    ) -> Ingest:
        """Consume one request: its bytes alone, as the protobuf receivers pass it, or with
        `raw=False` parsed, as the JSON receiver does."""
        req = spans if isinstance(spans, ExportTraceServiceRequest) else make_request(spans)
        body = req.SerializeToString()
        if raw:
            return self.assembler.consume(None, body)
        return self.assembler.consume(ExportTraceServiceRequest.FromString(body), None)

    def tick(self, at: float) -> int:
        """Move the clock to `at` and let the assembler decide."""
        self.now = at
        return self.assembler.tick()

    def forwarded_spans(self) -> list[Span]:
        """Every span forwarded so far, in order."""
        out: list[Span] = []
        for body, n in self.forwarded:
            req = ExportTraceServiceRequest.FromString(body)
            spans = [s for rs in req.resource_spans for ss in rs.scope_spans for s in ss.spans]
            assert len(spans) == n, "span count handed to the exporter must match the body"
            out.extend(spans)
        return out

    def log_records(self) -> list[LogRecord]:
        """Every gen_ai.evaluation.result record emitted so far."""
        return [
            r
            for body in self.logs_out
            for rl in ExportLogsServiceRequest.FromString(body).resource_logs
            for sl in rl.scope_logs
            for r in sl.log_records
        ]
