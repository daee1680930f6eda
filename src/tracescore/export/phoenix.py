"""Scores as Phoenix span annotations: batched, retried, bounded and counted.

Phoenix shows scores natively (its Annotations panel, a column in the spans table, the trace
annotation charts) only when they come through its REST API, not as span attributes. Each score
becomes one annotation on the scored run's agent span: name, score, label and explanation;
annotator kind `LLM` for judge scores and `CODE` for the rest; the scorer type, digest and the
scenario in metadata. Requests go with `sync=false`: Phoenix queues them and attaches an
annotation once its span has arrived, so annotations may be sent before the span is stored.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import time
from collections import deque
from collections.abc import Mapping
from typing import Any

import aiohttp

from tracescore import semconv
from tracescore.config.annotations import PhoenixAnnotationSettings
from tracescore.config.model import Config
from tracescore.errors import ConfigError
from tracescore.export.metrics import Telemetry
from tracescore.model.run_result import RunResult
from tracescore.retry import retry_after_from_headers

__all__ = ["PhoenixAnnotations", "annotator_kinds", "span_annotations"]

log = logging.getLogger(__name__)

_RETRYABLE = frozenset({408, 429, 500, 502, 503, 504})
_SIGNAL = semconv.SIGNAL_PHOENIX_ANNOTATIONS

Kinds = Mapping[tuple[str, str], str]


def annotator_kinds(config: Config) -> dict[tuple[str, str], str]:
    """`(scenario, score name) -> LLM | CODE`: judge entries are LLM annotators."""
    return {
        (scenario.name, entry.score_name): (
            semconv.PHOENIX_ANNOTATOR_CODE if entry.deterministic else semconv.PHOENIX_ANNOTATOR_LLM
        )
        for scenario in config.scenarios
        for entry, _ in scenario.entries
    }


def span_annotations(result: RunResult, kinds: Kinds) -> list[dict[str, Any]]:
    """One Phoenix `SpanAnnotationData` per score of a scored run (none without a span)."""
    span_id = result.trajectory.span_id
    scenario = result.scenario or ""
    if not span_id:
        return []
    out: list[dict[str, Any]] = []
    for score in result.scores:
        if score.error is not None:
            outcome: dict[str, Any] = {"label": "error", "explanation": score.error}
        else:
            outcome = {"score": score.value, "label": score.label, "explanation": score.explanation}
        out.append(
            {
                "span_id": span_id,
                "name": score.name,
                "annotator_kind": kinds.get((scenario, score.name), semconv.PHOENIX_ANNOTATOR_CODE),
                "result": outcome,
                "metadata": {
                    "scorer_type": score.type,
                    "scorer_digest": score.digest,
                    "scenario": scenario,
                    "scenario_digest": result.digest,
                    "passed": score.passed,
                    "trace_id": result.trajectory.trace_id,
                },
                "identifier": f"{semconv.PHOENIX_IDENTIFIER_PREFIX}.{scenario}",
            }
        )
    return out


class PhoenixAnnotations:
    """The exporter: `add` never blocks; a task sends batches until `shutdown`."""

    def __init__(
        self,
        settings: PhoenixAnnotationSettings,
        config: Config,
        telemetry: Telemetry,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        """Read the API key now (a missing one is a ConfigError); nothing is sent yet."""
        self._settings = settings
        self._kinds = annotator_kinds(config)
        self._telemetry = telemetry
        self._url = settings.endpoint + semconv.PHOENIX_SPAN_ANNOTATIONS_PATH
        self._headers = {"Content-Type": "application/json", **settings.headers}
        if settings.api_key_env is not None:
            key = (os.environ if environ is None else environ).get(settings.api_key_env, "")
            if not key.strip():
                raise ConfigError(
                    [
                        f"annotations.phoenix.api_key_env: environment variable "
                        f"{settings.api_key_env!r} is not set or empty"
                    ]
                )
            self._headers["Authorization"] = f"Bearer {key.strip()}"
        self._queue: deque[dict[str, Any]] = deque()
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._session: aiohttp.ClientSession | None = None
        self._closing = False
        self._failing: str | None = None  # the cause last logged, so each is logged once
        self.sent = 0
        self.dropped = 0

    def add(self, result: RunResult) -> None:
        """Queue a scored run's annotations; past `queue_size` they are dropped and counted."""
        annotations = span_annotations(result, self._kinds)
        room = self._settings.queue_size - len(self._queue)
        if len(annotations) > room:
            self._drop(len(annotations) - max(room, 0), semconv.ANNOTATIONS_DROPPED_QUEUE_FULL)
            annotations = annotations[: max(room, 0)]
        self._queue.extend(annotations)
        if len(self._queue) >= self._settings.batch_size:
            self._wake.set()

    @property
    def pending(self) -> int:
        """Annotations queued and not yet sent."""
        return len(self._queue)

    async def start(self) -> None:
        """Start the sending task."""
        timeout = aiohttp.ClientTimeout(total=self._settings.timeout)
        self._session = aiohttp.ClientSession(timeout=timeout, headers=self._headers)
        self._task = asyncio.create_task(self._run(), name="phoenix-annotations")

    async def shutdown(self, timeout: float) -> None:
        """Send what is queued within `timeout`; what is left is dropped, counted and logged."""
        self._closing = True
        self._wake.set()
        if self._task is not None:
            try:
                await asyncio.wait_for(asyncio.shield(self._task), timeout)
            except TimeoutError:
                self._task.cancel()
                await asyncio.gather(self._task, return_exceptions=True)
        if self._queue:
            log.warning(
                "phoenix annotations: %d not sent at shutdown to %s", len(self._queue), self._url
            )
            self._drop(len(self._queue), semconv.DROP_SHUTDOWN)
            self._queue.clear()
        if self._session is not None:
            await self._session.close()

    async def _run(self) -> None:
        while self._queue or not self._closing:
            if len(self._queue) < self._settings.batch_size and not self._closing:
                # An empty or partial batch waits for more, at most one flush interval.
                self._wake.clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), self._settings.flush_interval)
            if self._queue:
                n = min(len(self._queue), self._settings.batch_size)
                await self._send([self._queue.popleft() for _ in range(n)])

    async def _send(self, batch: list[dict[str, Any]]) -> None:
        """Post one batch, retrying what may succeed later, until the retry budget is spent."""
        assert self._session is not None
        policy = self._settings.retry.policy()
        started = time.monotonic()
        attempt = 0
        while True:
            t0 = time.monotonic()
            wait: float | None = None
            try:
                async with self._session.post(
                    self._url, params={"sync": "false"}, json={"data": batch}
                ) as response:
                    await response.read()
                    status = response.status
                    wait = retry_after_from_headers(response.headers)
            except (aiohttp.ClientError, TimeoutError) as exc:
                cause = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
                status, retryable = 0, True
            else:
                self._telemetry.observe_export_latency(_SIGNAL, time.monotonic() - t0)
                if 200 <= status < 300:
                    self.sent += len(batch)
                    if self._failing is not None:
                        log.warning("phoenix annotations: delivering again to %s", self._url)
                        self._failing = None
                    return
                cause, retryable = f"HTTP {status}", status in _RETRYABLE
            self._telemetry.export_failure(_SIGNAL, cause.split(":")[0].replace(" ", "_"))
            self._log_once(cause, retryable)
            delay = policy.delay(attempt, wait)
            if not retryable or self._closing or policy.gives_up(time.monotonic() - started, 0):
                self._drop(len(batch), semconv.ANNOTATIONS_DROPPED_GAVE_UP)
                return
            attempt += 1
            await asyncio.sleep(delay)

    def _log_once(self, cause: str, retryable: bool) -> None:
        if cause == self._failing:
            return
        self._failing = cause
        what = "retrying" if retryable else "not retried: check annotations.phoenix"
        log.warning("phoenix annotations to %s failed (%s); %s", self._url, cause, what)

    def _drop(self, n: int, reason: str) -> None:
        if n <= 0:
            return
        self.dropped += n
        for _ in range(n):
            self._telemetry.export_failure(_SIGNAL, reason)
