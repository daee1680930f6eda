"""The live service: receivers → assembler → scoring → exporter, with one lifecycle.

`start()` starts the exporter, binds the receivers, runs a tick on the event loop that scores
due traces and retries waiting forwards, and starts the SDK's periodic metrics push. `shutdown()`
(SIGTERM) stops accepting, scores every buffered trace, forwards everything held, pushes the
final metrics and flushes the exporter, all within `service.shutdown_grace_period`. Both are
safe to call in any order and more than once.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import Counter
from typing import TYPE_CHECKING

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from tracescore import semconv
from tracescore.assembler import Assembler, AssemblerHooks, Ingest, Outbox
from tracescore.config.model import Config
from tracescore.errors import OverloadedError
from tracescore.export.metrics import Telemetry
from tracescore.export.otlp import OtlpExporter
from tracescore.export.phoenix import PhoenixAnnotations
from tracescore.export.spans import annotate_span_bytes
from tracescore.otlp.grouping import Grouped
from tracescore.pipeline.preflight import ServeSecrets
from tracescore.pipeline.retry_schedule import RetrySchedule
from tracescore.pipeline.scoring import (
    AGENT_CANDIDATES,
    RunScorer,
    agent_name,
    key_filter,
    may_match,
)
from tracescore.pipeline.startup import replay_storage, start_metrics_push
from tracescore.pipeline.ticks import tick, tick_interval, tick_loop
from tracescore.receiver import GrpcReceiver, HttpReceiver
from tracescore.storage import Journal

if TYPE_CHECKING:
    from tracescore.pipeline.live_judges import LiveJudges

__all__ = ["Pipeline"]

log = logging.getLogger(__name__)

_ITEMS = {"traces": "spans", "logs": "log records", "metrics": "metric points"}


class Pipeline:
    """One `tracescore serve` instance; also the receivers' consumer and status source."""

    def __init__(
        self,
        config: Config,
        secrets: ServeSecrets | None = None,
        *,
        exporter: OtlpExporter | None = None,
        telemetry: Telemetry | None = None,
    ) -> None:
        """Wire the stages; nothing starts until `start()`.

        Args:
            config: a validated config (see `preflight` for what serving also needs).
            secrets: bearer tokens read from the environment at start-up.
            exporter: the downstream exporter (default: built from `config.exporter`).
            telemetry: where every metric goes (default: a fresh one).
        """
        if config.exporter is None and exporter is None:
            raise ValueError("tracescore serve needs an exporter")
        self.config = config
        self.telemetry = telemetry or Telemetry()
        for scenario in config.scenarios:
            names = [entry.score_name for entry, _ in scenario.entries]
            self.telemetry.declare_evaluations(scenario.name, names)
        if exporter is None:
            assert config.exporter is not None
            exporter = OtlpExporter(config.exporter, self.telemetry)
        self.exporter = exporter
        self.storage = Journal(config.storage) if config.storage is not None else None
        if self.storage is not None:
            exporter.on_settled = self.storage.settled
            exporter.before_send = self.storage.commit
        secrets = secrets or ServeSecrets()
        fanout = config.mode == "fanout"
        self._logs = Outbox(lambda body, n: exporter.submit_logs(body, n), self.telemetry)
        self._spans = (
            Outbox(lambda body, n: exporter.submit_traces(body, n), self.telemetry)
            if fanout
            else None
        )
        self.annotations = (
            PhoenixAnnotations(config.annotations.phoenix, config, self.telemetry)
            if config.annotations.phoenix is not None
            else None
        )
        viewers = self.annotations.add if self.annotations is not None else None
        self.judges: LiveJudges | None = None
        if any(not e.deterministic for s in config.scenarios for e, _ in s.entries):
            # Imported only when needed: the judge client pulls in `openai`.
            from tracescore.pipeline.live_judges import LiveJudges

            self.judges = LiveJudges(
                config, self.telemetry, self._logs, spans=self._spans, viewers=viewers
            )
        scorer = RunScorer(
            config,
            self.telemetry,
            self._logs,
            self._spans,
            prefix=config.service.score_attribute_prefix,
            judges=self.judges.submit if self.judges is not None else None,
            viewers=viewers,
        )
        hooks = AssemblerHooks(
            keep_key=key_filter(config),
            agent_name=agent_name,
            wants=may_match(config),
            score=scorer.score_traces,
            forward=lambda body, n: exporter.submit_traces(body, n),
            forward_tracked=lambda body, n, token: exporter.submit_traces(body, n, token),
            downstream_ready=exporter.has_capacity,
            annotate=annotate_span_bytes,
            agent_candidates=AGENT_CANDIDATES,
        )
        self.assembler = Assembler(
            config.assembly,
            hooks,
            self.telemetry,
            mode=config.mode,
            scoring=bool(config.scenarios),
            journal=self.storage,
        )
        grace = config.service.shutdown_grace_period
        drain = min(2.0, grace / 4)
        receivers = config.receivers
        self.grpc = (
            GrpcReceiver(receivers.grpc, self, token=secrets.grpc_token, drain_timeout=drain)
            if receivers.grpc is not None
            else None
        )
        self.http = (
            HttpReceiver(receivers.http, self, self, token=secrets.http_token, drain_timeout=drain)
            if receivers.http is not None
            else None
        )
        self._retries = RetrySchedule()
        wait = config.assembly.decision_wait
        self._tick_s = tick_interval(wait)
        self._tasks: list[asyncio.Task[None]] = []
        self._started = False
        self._serving = False
        self._stopping = False
        self._stopped = False
        self.shutdown_losses: Counter[str] = Counter()
        """What shutdown could not deliver: `spans`, `log records`, `metric points`."""

    # -- lifecycle -------------------------------------------------------------------------

    async def start(self) -> None:
        """Start the exporter, bind the receivers, start the loops."""
        if self._started or self._stopping:
            return
        self._started = True
        await self.exporter.start()
        if self.annotations is not None:
            await self.annotations.start()
        if self.judges is not None:
            await self.judges.start()
        try:
            if self.storage is not None:
                replay_storage(self.storage, self.assembler)
            if self.grpc is not None:
                port = await self.grpc.start()
                log.debug("otlp/grpc receiver bound to port %d", port)
            if self.http is not None:
                port = await self.http.start()
                log.debug("otlp/http receiver bound to port %d", port)
        except BaseException:
            await self.shutdown()
            raise
        self._serving = True
        self._tasks = [
            asyncio.create_task(
                tick_loop(self.assembler, self._flush_outboxes, self._tick_s),
                name="tracescore-tick",
            ),
        ]
        start_metrics_push(self.config, self.telemetry)

    async def shutdown(self) -> None:
        """Stop accepting, score and forward everything held, flush; safe any time, twice."""
        if self._stopping:
            return
        self._stopping = True
        deadline = time.monotonic() + self.config.service.shutdown_grace_period
        for receiver in (self.grpc, self.http):
            if receiver is not None:
                await receiver.shutdown()
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._tasks = []
        if self._serving:
            async with self.assembler.exclusive:  # a request still taken in slices ends first
                scored = self.assembler.drain()
            log.info("shutdown: scored %d buffered traces", scored)
            if self.judges is not None:  # judge what is queued while the grace period lasts
                await self.judges.shutdown(timeout=max(0.1, deadline - time.monotonic() - 1.0))
            # Spans still waiting for judge scores (judge_wait > 0) go with what is ready.
            self.assembler.drain_waits()
            while not self._flush_outboxes() and time.monotonic() < deadline - 0.5:
                await asyncio.sleep(0.02)
            # The final values, pushed by the SDK's exporter (blocking: off the event loop).
            push = max(0.1, min(5.0, (deadline - time.monotonic()) / 2))
            await asyncio.to_thread(self.telemetry.stop_push, push)
        elif self._started and self.judges is not None:
            await self.judges.shutdown(timeout=0.1)
        # A start that failed accepted nothing: nothing to wait for at the exporter either.
        flush = deadline - time.monotonic() if self._serving else 0.1
        await self.exporter.shutdown(timeout=max(0.1, flush))
        if self.annotations is not None:  # after the exporter: the spans they annotate first
            await self.annotations.shutdown(timeout=max(0.1, deadline - time.monotonic()))
        lost = self.shutdown_losses
        lost["spans"] += self.assembler.abandon_outbox()
        lost["log records"] += self._logs.abandon()
        if self._spans is not None:
            lost["spans"] += self._spans.abandon()
        for (signal, reason), n in self.exporter.dropped.items():
            if reason == semconv.DROP_SHUTDOWN:
                lost[_ITEMS[signal]] += n
        if self.storage is not None:
            await self.storage.close()
        self._stopped = True

    async def _tick(self) -> None:
        """One tick: score what is due, a slice at a time (see `ticks.tick`)."""
        await tick(self.assembler, self._flush_outboxes)

    def _flush_outboxes(self) -> bool:
        done = self.assembler.flush_outbox()
        for outbox in (self._logs, self._spans):
            if outbox is not None:
                done = outbox.flush() and done
        return done

    # -- receivers' consumer and status ----------------------------------------------------

    def check_capacity(self) -> None:
        """Raise OverloadedError when receivers must answer with a retryable status; its
        `retry_after_s` is the request's turn to come back (see `RetrySchedule`)."""
        try:
            if self.storage is not None:
                self.storage.check_capacity()
            self.assembler.check_capacity()
        except OverloadedError as exc:
            self.telemetry.request_refused(exc.reason)
            raise exc.retry_in(self._retries.retry_in(exc.retry_after_s)) from None
        self._retries.admitted()

    def checked_scan(self, body: bytes) -> Grouped:
        """Request bytes checked against the OTLP schema and scanned for `consume`, in one
        walk where the native scanner can vouch for them; safe in a worker thread."""
        return self.assembler.checked_scan(body)

    def consume(
        self,
        request: ExportTraceServiceRequest | None,
        body: bytes | None,
        scanned: Grouped | None = None,
    ) -> Ingest:
        """Hand a request (or the checked bytes of one, maybe scanned) to the assembler; with
        storage, the result's `committed` is done once the request is on disk."""
        result = self.assembler.consume(request, body, scanned)
        if self.storage is not None and result.accepted:
            result.committed = self.storage.commit()
        return result

    @property
    def consuming(self) -> bool:
        """A request is being taken in slices: the next one goes through `consume_sliced`."""
        return self.assembler.busy

    async def consume_sliced(
        self,
        request: ExportTraceServiceRequest | None,
        body: bytes | None,
        scanned: Grouped | None = None,
    ) -> Ingest:
        """`consume` in slices that yield to the event loop (a request of many traces), after
        any request taken before it; not to be cancelled midway (receivers shield it)."""
        result = await self.assembler.consume_sliced(request, body, scanned)
        if self.storage is not None and result.accepted:
            result.committed = self.storage.commit()
        return result

    def is_ready(self) -> bool:
        """Started, not shutting down, and no exporter failing for too long."""
        return self.not_ready_reason() is None

    def not_ready_reason(self) -> str | None:
        """Why /readyz answers 503, or None: starting, shutting down, or the exporter failing
        for longer than `exporter.unready_after` (its endpoint and cause)."""
        if not self._serving:
            return "starting"
        if self._stopping:
            return "shutting down"
        return self.exporter.problem()

    def metrics_text(self) -> str:
        """Every metric in Prometheus text format."""
        return self.telemetry.render_prometheus()
