"""`JudgeRunner`: the bounded queue, callbacks, per-scorer endpoints, fields and shutdown."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

from export.prometheus_text import parse_prometheus
from judges._helpers import MODEL, bodies_text, run, shop_run, tool_answer
from support.fake_openai_process import FakeOpenAI
from tracescore import semconv
from tracescore.config.scorers import parse_scorer
from tracescore.errors import ConfigError
from tracescore.export.metrics import Telemetry
from tracescore.judges.base import JudgeScorerBase
from tracescore.judges.runner import JudgeJob, JudgeResult, JudgeRunner, judge_sampled
from tracescore.judges.settings import JudgeFields, JudgeSettings
from tracescore.judges.telemetry import JudgeCounters
from tracescore.scenarios import is_sampled

Factory = Callable[..., FakeOpenAI]
RELEVANT = {"verdict": "fully", "reasoning": "answers it"}


def settings(server: FakeOpenAI, **kw: Any) -> JudgeSettings:
    return JudgeSettings(base_url=server.base_url, model=MODEL, retry_backoff_s=0.01, **kw)


def relevancy(**params: Any) -> JudgeScorerBase:
    scorer = parse_scorer({"type": "answer_relevancy", **params})
    assert isinstance(scorer, JudgeScorerBase)
    return scorer


def test_results_reach_the_future_and_the_callback_with_one_score_per_scorer(
    fake_openai_factory: Factory,
) -> None:
    server = fake_openai_factory({"steps": [], "exhausted": {"json": RELEVANT}})
    seen: list[JudgeResult] = []

    async def on_result(result: JudgeResult) -> None:
        seen.append(result)

    scorers = (relevancy(name="first"), relevancy(name="second", judge={"model": "other"}))

    async def go() -> JudgeResult:
        runner = JudgeRunner(settings(server), on_result=on_result)
        runner.check(scorers)
        await runner.start()
        try:
            return await runner.submit(JudgeJob(shop_run(), scorers, scenario="s", context=42))
        finally:
            await runner.shutdown()

    result = run(go())
    assert [(s.name, s.value) for s in result.scores] == [("first", 1.0), ("second", 1.0)]
    assert seen == [result]
    assert result.job.context == 42
    assert sorted(b["model"] for b in server.chat_bodies()) == [MODEL, "other"]


def test_a_full_queue_skips_new_work_at_once_and_counts_it(fake_openai_factory: Factory) -> None:
    server = fake_openai_factory({"steps": [], "exhausted": {"json": RELEVANT}})
    scorers = (relevancy(name="a"), relevancy(name="b"))

    async def go() -> tuple[list[bool], list[JudgeResult], JudgeRunner]:
        runner = JudgeRunner(settings(server, queue_size=1, max_concurrency=1))
        await runner.start()
        try:
            # No await between submits: the worker cannot take the first job off the queue yet.
            futures = [runner.submit(JudgeJob(shop_run(), scorers)) for _ in range(3)]
            done_at_once = [f.done() for f in futures]
            return done_at_once, list(await asyncio.gather(*futures)), runner
        finally:
            await runner.shutdown()

    done_at_once, results, runner = run(go())
    assert done_at_once == [False, True, True]
    assert [s.value for s in results[0].scores] == [1.0, 1.0]
    for result in results[1:]:
        for score in result.scores:
            assert (score.value, score.error, score.label) == (
                None,
                "skipped: queue_full",
                "skipped",
            )
            assert "the judge queue is full (1 runs waiting)" in score.explanation
            assert score.digest == relevancy().digest(MODEL, 0.0)
    skipped = runner.counters.value(semconv.METRIC_JUDGE_SKIPPED, reason="queue_full")
    assert skipped == 4
    # "a" and "b" ask the same question of the same run at once: one request answers both.
    assert len(server.chat_bodies()) == 1


def test_judge_fields_keep_excluded_parts_out_of_the_request(
    fake_openai_factory: Factory,
) -> None:
    server = fake_openai_factory([{"json": tool_answer((1, "lookup_order", True))}])
    scorer = parse_scorer({"type": "llm_tool_call_accuracy"})
    assert isinstance(scorer, JudgeScorerBase)
    fields = JudgeFields(exclude=("results", "get_weather.arguments"))

    async def go() -> JudgeResult:
        runner = JudgeRunner(settings(server))
        await runner.start()
        try:
            return await runner.judge(JudgeJob(shop_run(), (scorer,), fields=fields))
        finally:
            await runner.shutdown()

    assert run(go()).scores[0].value == 1.0
    sent = bodies_text(server)
    assert 'tomorrow"}' not in sent  # lookup_order's result
    assert "Paris" not in sent  # get_weather's arguments
    assert "withheld from the judge by judge_fields" in sent
    assert "A-42" in sent


def test_a_shutdown_right_after_start_stops_the_workers_cleanly(
    fake_openai_factory: Factory,
) -> None:
    # The workers had not run yet when shutdown cleared the runner's queue: they used to crash
    # on it (an unretrieved task exception); now each holds its own reference.
    server = fake_openai_factory([])

    async def go() -> list[BaseException | None]:
        runner = JudgeRunner(settings(server))
        await runner.start()
        tasks = list(runner._tasks)
        await runner.shutdown(timeout=5.0)  # waiting for the drain lets the workers start
        return [None if t.cancelled() else t.exception() for t in tasks]

    outcomes = run(go())
    assert outcomes
    assert outcomes == [None] * len(outcomes)


def test_shutdown_without_draining_skips_what_is_queued(fake_openai_factory: Factory) -> None:
    server = fake_openai_factory([])

    async def go() -> list[JudgeResult]:
        runner = JudgeRunner(settings(server))
        await runner.start()
        futures = [runner.submit(JudgeJob(shop_run(), (relevancy(),))) for _ in range(2)]
        await runner.shutdown(drain=False)
        return [f.result() for f in futures]

    results = run(go())
    assert [r.scores[0].error for r in results] == ["skipped: shutdown"] * 2
    assert server.requests() == []


def test_work_still_in_flight_when_the_shutdown_timeout_ends_is_skipped_not_lost(
    fake_openai_factory: Factory,
) -> None:
    server = fake_openai_factory([{"json": RELEVANT, "delay": 5.0}])
    seen: list[JudgeResult] = []

    async def go() -> JudgeResult:
        runner = JudgeRunner(settings(server), on_result=seen.append)
        await runner.start()
        future = runner.submit(JudgeJob(shop_run(), (relevancy(),)))
        while not server.requests():  # the worker has sent the request
            await asyncio.sleep(0.02)
        await runner.shutdown(timeout=0.2)
        return future.result()

    result = run(go())
    assert result.scores[0].error == "skipped: shutdown"
    assert "shut down while judging" in result.scores[0].explanation
    assert seen == [result]


def test_shutdown_is_safe_without_start_and_twice() -> None:
    async def go() -> None:
        runner = JudgeRunner(None)
        await runner.shutdown()
        await runner.shutdown()

    run(go())


def test_submit_before_start_is_a_programming_error() -> None:
    async def go() -> None:
        JudgeRunner(None).submit(JudgeJob(shop_run(), (relevancy(),)))

    with pytest.raises(RuntimeError, match="start"):
        run(go())


def test_check_reports_every_scorer_without_a_judge_and_unset_keys() -> None:
    runner = JudgeRunner(None, environ={})
    with pytest.raises(ConfigError) as caught:
        runner.check(
            [
                relevancy(name="nowhere"),
                relevancy(name="keyless", judge={"base_url": "http://127.0.0.1:9/v1",
                                                  "model": "m", "api_key_env": "UNSET_KEY"}),
            ]
        )  # fmt: skip
    problems = caught.value.problems
    assert any("scorer 'nowhere': no judge base_url or model configured" in p for p in problems)
    assert any("'UNSET_KEY' is not set" in p for p in problems)


def test_a_scorer_without_a_judge_gets_a_config_error_score_when_run() -> None:
    async def go() -> JudgeResult:
        runner = JudgeRunner(None)
        try:
            return await runner.run_job(JudgeJob(shop_run(), (relevancy(),)))
        finally:
            await runner.shutdown()

    (score,) = run(go()).scores
    assert score.error is not None
    assert score.error.startswith("config: scorer 'answer_relevancy': no judge base_url")


def test_counters_expose_calls_tokens_and_latency_for_the_metrics_exporter(
    fake_openai_factory: Factory,
) -> None:
    usage = {"prompt_tokens": 300, "completion_tokens": 20}
    server = fake_openai_factory([{"status": 500}, {"json": RELEVANT, "usage": usage}])

    telemetry = Telemetry()

    async def go() -> JudgeRunner:
        runner = JudgeRunner(settings(server), counters=JudgeCounters(telemetry.meter))
        await runner.start()
        try:
            await runner.judge(JudgeJob(shop_run(), (relevancy(),)))
        finally:
            await runner.shutdown()
        return runner

    run(go())
    families = parse_prometheus(telemetry.render_prometheus())
    calls = {
        labels["tracescore_judge_outcome"]: v
        for _, labels, v in families["tracescore_judge_calls_total"].samples
        if labels["gen_ai_request_model"] == MODEL
    }
    assert calls == {"ok": 1.0, "server_error": 1.0}
    retries = families["tracescore_judge_retries_total"].samples
    assert [(labels["reason"], v) for _, labels, v in retries] == [("server_error", 1.0)]
    tokens = {
        labels["gen_ai_token_type"]: v
        for name, labels, v in families["gen_ai_client_token_usage"].samples
        if name.endswith("_sum")
    }
    assert tokens == {"input": 300.0, "output": 20.0}
    durations = families["gen_ai_client_operation_duration_seconds"].samples
    assert sum(v for name, _, v in durations if name.endswith("_count")) == 2


def test_judge_sampling_is_scenario_sampling_so_judged_runs_nest_in_scored_ones() -> None:
    ids = [f"{i:032x}" for i in range(400)]
    scored = {t for t in ids if is_sampled(t, 0.5)}
    judged = {t for t in ids if judge_sampled(t, 0.2)}
    assert judged <= scored
    assert 40 < len(judged) < 120
