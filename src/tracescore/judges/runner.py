"""`JudgeRunner`: judge work off the ingestion path, bounded, and never silent.

    runner = JudgeRunner(config.judge, on_result=emit)      # emit(JudgeResult) may be async
    runner.check(scorers)                                    # start-up: endpoints and keys
    await runner.start()
    future = runner.submit(JudgeJob(trajectory, scorers, fields=scenario.judge_fields))
    ...                                                      # later: on_result(result) runs,
    await runner.shutdown()                                  # and `future` holds the result

`submit` never blocks: when the queue is full the job is answered at once with scores whose
error is `skipped: queue_full` (counted), so spans never wait on a judge. `put` waits for room
instead (offline scoring, where back-pressure is right). A `JudgeResult` holds one score per
scorer, in order: a value, or an error saying why not (budget, timeout, invalid output, ...).
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from tracescore import semconv
from tracescore.errors import ConfigError
from tracescore.judges.base import JudgeScorerBase, skipped_score
from tracescore.judges.client import JudgeClient
from tracescore.judges.endpoint import ResolvedEndpoint
from tracescore.judges.jobs import JudgeJob, JudgeResult, judge_sampled
from tracescore.judges.render import withhold
from tracescore.judges.settings import JudgeSettings
from tracescore.judges.shared import JudgeShared, judge_setting
from tracescore.judges.telemetry import JudgeCounters
from tracescore.model.score import Score
from tracescore.model.trajectory import Trajectory

__all__ = ["JudgeJob", "JudgeResult", "JudgeRunner", "judge_sampled"]

log = logging.getLogger(__name__)

ResultCallback = Callable[["JudgeResult"], Awaitable[None] | None]


@dataclass(slots=True)
class _Item:
    job: JudgeJob
    future: asyncio.Future[JudgeResult]


class JudgeRunner:
    """A bounded queue of judge jobs, worked by `max_concurrency` tasks."""

    def __init__(
        self,
        settings: JudgeSettings | None,
        *,
        on_result: ResultCallback | None = None,
        counters: JudgeCounters | None = None,
        clock: Callable[[], float] | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        """`settings` is the top-level `judge:` section (None: only per-scorer blocks).

        `clock` drives the budgets (tests move it instead of sleeping); `environ` is where API
        keys are read (default: the process environment).
        """
        self.settings = settings
        self.on_result = on_result
        self.counters = counters or JudgeCounters()
        self.shared = JudgeShared.from_settings(settings, self.counters, clock)
        self.queue_size: int = judge_setting(settings, "queue_size")
        self.workers: int = judge_setting(settings, "max_concurrency")
        self._environ = environ
        self._clients: dict[tuple[Any, ...], JudgeClient] = {}
        self._queue: asyncio.Queue[_Item] | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self._callbacks: set[asyncio.Task[None]] = set()

    # --- set-up -------------------------------------------------------------------------

    def endpoint_for(self, scorer: JudgeScorerBase) -> ResolvedEndpoint:
        """The scorer's effective connection; raises ConfigError when none is configured."""
        try:
            return ResolvedEndpoint.merge(self.settings, scorer.judge)
        except ValueError as exc:
            raise ConfigError([f"scorer {scorer.score_name!r}: {exc}"], source="judge") from None

    def client_for(self, scorer: JudgeScorerBase) -> JudgeClient:
        """The shared client of the scorer's endpoint (built on first use)."""
        endpoint = self.endpoint_for(scorer)
        client = self._clients.get(endpoint.connection_key)
        if client is None:
            client = JudgeClient(endpoint, self.shared, environ=self._environ)
            self._clients[endpoint.connection_key] = client
        return client

    def check(self, scorers: Iterable[JudgeScorerBase]) -> None:
        """Build every client now, so a missing judge or API key fails at start-up."""
        problems: list[str] = []
        for scorer in scorers:
            try:
                self.client_for(scorer)
            except ConfigError as exc:
                problems.extend(exc.problems)
        if problems:
            raise ConfigError(sorted(set(problems)), source="judge")

    # --- lifecycle ------------------------------------------------------------------------

    async def start(self) -> None:
        """Start the worker tasks (in the running event loop)."""
        if self._queue is not None:
            return
        queue: asyncio.Queue[_Item] = asyncio.Queue(self.queue_size)
        self._queue = queue
        # Workers get the queue itself: a shutdown before they first run clears self._queue.
        self._tasks = [
            asyncio.create_task(self._work(queue), name=f"judge-worker-{i}")
            for i in range(self.workers)
        ]

    async def shutdown(self, *, drain: bool = True, timeout: float | None = None) -> None:
        """Finish queued work (up to `timeout` s), then skip the rest; safe without `start`."""
        queue, self._queue = self._queue, None
        if queue is not None:
            if drain:
                try:
                    await asyncio.wait_for(queue.join(), timeout)
                except TimeoutError:
                    log.warning("judge shutdown: %d run(s) still queued; skipped", queue.qsize())
            for task in self._tasks:
                task.cancel()
            await asyncio.gather(*self._tasks, return_exceptions=True)
            self._tasks = []
            while not queue.empty():
                item = queue.get_nowait()
                self._resolve_skipped(item, semconv.JUDGE_SKIP_SHUTDOWN, "tracescore shut down")
        if self._callbacks:
            await asyncio.gather(*self._callbacks, return_exceptions=True)
        for client in self._clients.values():
            await client.aclose()
        self._clients.clear()
        self.shared.cache.close()

    # --- work -----------------------------------------------------------------------------

    def submit(self, job: JudgeJob) -> asyncio.Future[JudgeResult]:
        """Queue a job without waiting; when the queue is full, skip it (`queue_full`)."""
        queue = self._require_started()
        item = _Item(job, asyncio.get_running_loop().create_future())
        try:
            queue.put_nowait(item)
        except asyncio.QueueFull:
            self._resolve_skipped(
                item,
                semconv.JUDGE_SKIP_QUEUE_FULL,
                f"the judge queue is full ({self.queue_size} runs waiting)",
            )
        self.counters.set_queue_items(queue.qsize())
        return item.future

    async def put(self, job: JudgeJob) -> asyncio.Future[JudgeResult]:
        """Queue a job, waiting for room (offline scoring)."""
        queue = self._require_started()
        item = _Item(job, asyncio.get_running_loop().create_future())
        await queue.put(item)
        self.counters.set_queue_items(queue.qsize())
        return item.future

    async def judge(self, job: JudgeJob) -> JudgeResult:
        """Queue a job and wait for its result."""
        return await (await self.put(job))

    async def run_job(self, job: JudgeJob) -> JudgeResult:
        """Judge one job now, bypassing the queue (every scorer concurrently)."""
        trajectory = job.trajectory
        if job.fields is not None and job.fields.exclude:
            trajectory = withhold(trajectory, job.fields)
        scores = await asyncio.gather(*(self._score(s, trajectory) for s in job.scorers))
        return JudgeResult(job, tuple(scores))

    async def _score(self, scorer: JudgeScorerBase, trajectory: Trajectory) -> Score:
        try:
            client = self.client_for(scorer)
        except ConfigError as exc:
            self.counters.error("config")
            return scorer.error_score(f"config: {'; '.join(exc.problems)}")
        return await scorer.ascore(trajectory, client)

    async def _work(self, queue: asyncio.Queue[_Item]) -> None:
        while True:
            item = await queue.get()
            self.counters.set_queue_items(queue.qsize())
            try:
                result = await self.run_job(item.job)
            except asyncio.CancelledError:  # shutdown ran out of time while this was judged
                self._resolve_skipped(
                    item, semconv.JUDGE_SKIP_SHUTDOWN, "tracescore shut down while judging"
                )
                raise
            except Exception as exc:  # ascore never raises; this is a bug, not a judge error
                log.exception("judge job failed")
                result = JudgeResult(
                    item.job,
                    tuple(s.error_score(f"{type(exc).__name__}: {exc}") for s in item.job.scorers),
                )
            finally:
                queue.task_done()
            self._deliver(item, result)

    def _resolve_skipped(self, item: _Item, reason: str, message: str) -> None:
        scores = []
        for scorer in item.job.scorers:
            try:
                endpoint = self.endpoint_for(scorer)
                digest = scorer.digest(endpoint.model, endpoint.temperature)
            except ConfigError:
                digest = scorer.digest()
            scores.append(skipped_score(scorer, reason, message, digest))
        self.counters.skipped(reason, len(scores))
        self._deliver(item, JudgeResult(item.job, tuple(scores)))

    def _deliver(self, item: _Item, result: JudgeResult) -> None:
        if not item.future.done():
            item.future.set_result(result)
        if self.on_result is None:
            return
        try:
            outcome = self.on_result(result)
        except Exception:
            log.exception("judge result callback failed")
            return
        if inspect.isawaitable(outcome):
            task = asyncio.ensure_future(_guard(outcome))
            self._callbacks.add(task)
            task.add_done_callback(self._callbacks.discard)

    def _require_started(self) -> asyncio.Queue[_Item]:
        if self._queue is None:
            raise RuntimeError("JudgeRunner.start() has not been awaited (or it was shut down)")
        return self._queue


async def _guard(awaitable: Awaitable[None]) -> None:
    try:
        await awaitable
    except Exception:
        log.exception("judge result callback failed")
