"""The judge client against a real OpenAI-compatible server process (the scripted fake).

Structured output and its fallback, repair, retries (timeout, 429 + Retry-After, 5xx), no
retry on other 4xx, cache hits, budgets, redaction and the API key's whereabouts.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict

from judges._helpers import bodies_text, client_for, run
from support.fake_openai_process import FakeOpenAI
from tracescore import semconv
from tracescore.errors import ConfigError
from tracescore.judges.budget import JudgeBudget
from tracescore.judges.cache import JudgeCache
from tracescore.judges.client import JudgeClient, JudgeShared
from tracescore.judges.errors import JudgeError, JudgeSkipped
from tracescore.judges.prompts import JudgeRequest, load_template
from tracescore.judges.redact import Redactor

Factory = Callable[..., FakeOpenAI]
GOOD = {"verdict": "fully", "reasoning": "it answers"}


class Verdict(BaseModel):
    model_config = ConfigDict(extra="forbid")

    verdict: str
    reasoning: str


def request(run_text: str = "user request: hi\nfinal answer: hello") -> JudgeRequest[Verdict]:
    return JudgeRequest(load_template("answer_relevancy", 1), Verdict, "d1", data={"run": run_text})


def ask(client: JudgeClient, req: JudgeRequest[Verdict] | None = None) -> Any:
    async def go() -> Any:
        try:
            return await client.ask(req or request())
        finally:
            await client.aclose()

    return run(go())


def shared(**kw: Any) -> JudgeShared:
    return JudgeShared(retry_backoff_s=0.01, **kw)


# --- structured output ------------------------------------------------------------------------


def test_a_json_schema_reply_is_validated_and_reported_with_its_token_use(
    fake_openai_factory: Factory,
) -> None:
    server = fake_openai_factory(
        [{"json": GOOD, "usage": {"prompt_tokens": 120, "completion_tokens": 9}}]
    )
    answer = ask(client_for(server))
    assert answer.value == Verdict(**GOOD)
    assert (answer.requests, answer.retries, answer.repaired, answer.cached) == (1, 0, False, False)
    assert (answer.input_tokens, answer.output_tokens) == (120, 9)
    (body,) = server.chat_bodies()
    assert body["model"] == "judge-model"
    assert body["temperature"] == 0.0
    schema = body["response_format"]["json_schema"]
    assert body["response_format"]["type"] == "json_schema"
    assert schema["name"] == "Verdict"
    assert schema["schema"]["required"] == ["verdict", "reasoning"]


def test_a_server_rejecting_json_schema_gets_the_schema_in_the_prompt_and_json_in_prose(
    fake_openai_factory: Factory,
) -> None:
    server = fake_openai_factory(
        [
            {"status": 400, "error": "response_format json_schema is not supported"},
            {"content": 'Sure! Here it is:\n```json\n{"verdict": "not", "reasoning": "r"}\n```'},
            {"content": '{"verdict": "partially", "reasoning": "r2"}'},
        ]
    )
    client = client_for(server)

    async def twice() -> list[Any]:
        try:
            return [await client.ask(request("a")), await client.ask(request("b"))]
        finally:
            await client.aclose()

    first, second = run(twice())
    assert (first.value.verdict, second.value.verdict) == ("not", "partially")
    bodies = server.chat_bodies()
    assert ["response_format" in b for b in bodies] == [True, False, False]  # remembered
    assert '"reasoning"' in bodies[1]["messages"][0]["content"]  # the schema, in the prompt


def test_invalid_output_gets_one_repair_attempt_that_names_the_problem(
    fake_openai_factory: Factory,
) -> None:
    server = fake_openai_factory([{"content": "I think it is fine."}, {"json": GOOD}])
    answer = ask(client_for(server))
    assert answer.value == Verdict(**GOOD)
    assert (answer.requests, answer.repaired) == (2, True)
    repair = server.chat_bodies()[1]["messages"]
    assert repair[-2] == {"role": "assistant", "content": "I think it is fine."}
    assert "the reply holds no JSON object" in repair[-1]["content"]


def test_output_invalid_twice_is_an_invalid_output_error(fake_openai_factory: Factory) -> None:
    server = fake_openai_factory([{"json": {"verdict": 3}}, {"content": "{not json"}])
    client = client_for(server)
    with pytest.raises(JudgeError, match="invalid output twice") as caught:
        ask(client)
    assert caught.value.error_type == "invalid_output"
    assert "does not match the schema" in server.chat_bodies()[1]["messages"][-1]["content"]
    assert len(server.chat_bodies()) == 2
    assert client.shared.counters.value(semconv.METRIC_JUDGE_ERRORS) == 1


# --- retries ----------------------------------------------------------------------------------


def test_a_timeout_is_retried_and_counted(fake_openai_factory: Factory) -> None:
    server = fake_openai_factory([{"json": GOOD, "delay": 2.0}, {"json": GOOD}])
    client = client_for(server, timeout_s=0.3)
    answer = ask(client)
    assert (answer.value.verdict, answer.retries) == ("fully", 1)
    counters = client.shared.counters
    assert counters.value(semconv.METRIC_JUDGE_RETRIES, reason="timeout") == 1
    assert counters.value(semconv.METRIC_JUDGE_CALLS, **{semconv.JUDGE_OUTCOME: "timeout"}) == 1


def test_timeouts_beyond_max_retries_are_a_timeout_error(fake_openai_factory: Factory) -> None:
    server = fake_openai_factory([{"json": GOOD, "delay": 2.0}])
    with pytest.raises(JudgeError, match=r"timeout after 1 attempt") as caught:
        ask(client_for(server, timeout_s=0.3, max_retries=0))
    assert caught.value.error_type == "timeout"


def test_a_429_waits_as_long_as_retry_after_says_then_succeeds(
    fake_openai_factory: Factory,
) -> None:
    server = fake_openai_factory(
        [{"status": 429, "headers": {"Retry-After": "1"}, "error": "slow down"}, {"json": GOOD}]
    )
    client = client_for(server)
    answer = ask(client)
    assert (answer.value.verdict, answer.retries) == ("fully", 1)
    first, second = server.requests()
    # The backoff alone is ~10 ms: only Retry-After explains a second's gap.
    assert second["time"] - first["time"] >= 1.0
    assert client.shared.counters.value(semconv.METRIC_JUDGE_RETRIES, reason="rate_limited") == 1


def test_retry_after_ms_is_honoured_too(fake_openai_factory: Factory) -> None:
    server = fake_openai_factory(
        [{"status": 429, "headers": {"retry-after-ms": "400"}}, {"json": GOOD}]
    )
    ask(client_for(server))
    first, second = server.requests()
    assert second["time"] - first["time"] >= 0.4


def test_a_retry_after_longer_than_a_minute_is_an_error_not_a_stall(
    fake_openai_factory: Factory,
) -> None:
    server = fake_openai_factory([{"status": 429, "headers": {"Retry-After": "3600"}}])
    with pytest.raises(JudgeError, match="asked to retry after 3600s") as caught:
        ask(client_for(server))
    assert caught.value.error_type == "rate_limited"
    assert len(server.requests()) == 1


def test_a_500_is_retried(fake_openai_factory: Factory) -> None:
    server = fake_openai_factory([{"status": 500}, {"status": 503}, {"json": GOOD}])
    client = client_for(server)
    assert ask(client).retries == 2
    assert client.shared.counters.value(semconv.METRIC_JUDGE_RETRIES, reason="server_error") == 2


def test_a_dropped_connection_is_retried(fake_openai_factory: Factory) -> None:
    server = fake_openai_factory([{"disconnect": True}, {"json": GOOD}])
    assert ask(client_for(server)).retries == 1


@pytest.mark.parametrize("status", [401, 403, 404, 422])
def test_other_4xx_answers_are_not_retried(fake_openai_factory: Factory, status: int) -> None:
    # 422 with response_format unproven gets one schema-less try, which is not a retry.
    server = fake_openai_factory([{"status": status, "error": "nope"}] * 2 + [{"json": GOOD}])
    with pytest.raises(JudgeError, match=f"answered HTTP {status}: nope") as caught:
        ask(client_for(server))
    assert caught.value.error_type == f"http_{status}"
    assert len(server.requests()) == (2 if status == 422 else 1)


# --- cache and budget -------------------------------------------------------------------------


def test_identical_content_is_judged_once(fake_openai_factory: Factory) -> None:
    server = fake_openai_factory([{"json": GOOD}])
    client = client_for(server, shared(cache=JudgeCache(100)))

    async def three() -> list[Any]:
        try:
            return [await client.ask(request()) for _ in range(3)]
        finally:
            await client.aclose()

    answers = run(three())
    assert [a.cached for a in answers] == [False, True, True]
    assert len(server.chat_bodies()) == 1
    assert client.shared.counters.value(semconv.METRIC_JUDGE_CACHE_HITS) == 2


def test_the_sqlite_cache_answers_after_a_restart(
    fake_openai_factory: Factory, tmp_path: Path
) -> None:
    server = fake_openai_factory([{"json": GOOD}])
    path = str(tmp_path / "judge-cache.sqlite")
    first = JudgeCache(100, path)
    ask(client_for(server, shared(cache=first)))
    first.close()
    second = JudgeCache(100, path)
    answer = ask(client_for(server, shared(cache=second)))
    second.close()
    assert answer.cached
    assert len(server.chat_bodies()) == 1


def test_a_spent_call_budget_skips_without_a_request(fake_openai_factory: Factory) -> None:
    server = fake_openai_factory({"steps": [], "exhausted": {"json": GOOD}})
    now = [0.0]
    client = client_for(server, shared(budget=JudgeBudget(2, clock=lambda: now[0])))

    async def asks() -> list[str]:
        outcomes = []
        try:
            for step in (0.0, 10.0, 20.0, 61.0):  # the first call leaves the window at 60 s
                now[0] = step
                try:
                    await client.ask(request(f"run at {step}"))
                    outcomes.append("ok")
                except JudgeSkipped as exc:
                    outcomes.append(f"{exc.reason}: {exc}")
        finally:
            await client.aclose()
        return outcomes

    outcomes = run(asks())
    assert outcomes[:2] == ["ok", "ok"]
    assert outcomes[2] == "budget: judge budget spent: max_calls_per_minute=2 reached"
    assert outcomes[3] == "ok"
    assert len(server.chat_bodies()) == 3
    assert client.shared.counters.value(semconv.METRIC_JUDGE_SKIPPED, reason="budget") == 1


def test_a_spent_token_budget_skips_the_next_call(fake_openai_factory: Factory) -> None:
    usage = {"prompt_tokens": 900, "completion_tokens": 200}
    server = fake_openai_factory({"steps": [], "exhausted": {"json": GOOD, "usage": usage}})
    client = client_for(server, shared(budget=JudgeBudget(max_tokens_per_hour=1000)))
    ask(client)
    with pytest.raises(JudgeSkipped, match=r"max_tokens_per_hour=1000 reached \(1100 tokens"):
        ask(client_for(server, client.shared))
    assert len(server.chat_bodies()) == 1


# --- what leaves the process ------------------------------------------------------------------

SECRETS = (
    "sk-proj-AbCdEfGhIjKlMnOpQrStUv12",
    "hunter2pass",
    "alice@example.com",
    "AKIAIOSFODNN7EXAMPLE",
    "eyJzdWIiOiIxMjM0NSJ9",
    "ACME-123456",
)


def test_redaction_happens_before_the_request_leaves(fake_openai_factory: Factory) -> None:
    server = fake_openai_factory([{"json": GOOD}])
    run_text = (
        "user request: refund alice@example.com, key sk-proj-AbCdEfGhIjKlMnOpQrStUv12\n"
        'arguments: {"dsn": "postgres://admin:hunter2pass@db/app", "aws": '
        '"AKIAIOSFODNN7EXAMPLE", "auth": "Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NSJ9'
        '.c2lnbmF0dXJlMTIz", "ticket": "ACME-123456"}'
    )
    client = client_for(server, shared(redactor=Redactor([r"ACME-\d{6}"])))
    ask(client, request(run_text))
    sent = bodies_text(server)
    for secret in SECRETS:
        assert secret not in sent
    assert sent.count("[REDACTED]") >= len(SECRETS)
    assert client.shared.counters.value(semconv.METRIC_JUDGE_REDACTIONS) >= len(SECRETS)
    assert "refund" in sent  # the rest of the run is still there


def test_content_over_the_limit_is_cut_with_a_visible_marker(fake_openai_factory: Factory) -> None:
    server = fake_openai_factory([{"json": GOOD}])
    huge = "user request: hi\n" + "z" * 100_000 + "\nfinal answer: the end"
    ask(client_for(server, shared(max_content_chars=2000)), request(huge))
    user = server.chat_bodies()[0]["messages"][1]["content"]
    assert "truncated" in user
    assert "final answer: the end" in user
    assert len(user) < 2600  # 2000 of content, the template and the fence


KEY = "zz-judge-key-9f8e7d6c5b4a"  # matches no built-in pattern: only the literal rule hides it


def test_the_api_key_is_sent_as_auth_and_never_appears_in_bodies_logs_errors_or_metrics(
    fake_openai_factory: Factory, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    server = fake_openai_factory(
        [
            {"json": GOOD},
            {"status": 500, "error": f"upstream rejected {KEY}"},
            {"status": 401, "error": f"invalid api key {KEY}"},
        ]
    )
    environ = {"JUDGE_KEY": KEY}
    client = client_for(server, environ=environ, api_key_env="JUDGE_KEY", max_retries=1)
    ask(client_for(server, client.shared, environ=environ, api_key_env="JUDGE_KEY"),
        request(f"user request: my key is {KEY}"))  # fmt: skip
    with pytest.raises(JudgeError) as caught:
        ask(client, request("another run"))
    auth = [r["headers"].get("authorization") for r in server.requests()]
    assert auth == [f"Bearer {KEY}"] * 3  # the key did go where it belongs
    leaks = {
        "request bodies": bodies_text(server),
        "logs": caplog.text,
        "error": str(caught.value),
        "metrics": repr(client.shared.counters.series()),
        "repr": repr(client),
    }
    assert {where: KEY in text for where, text in leaks.items()} == dict.fromkeys(leaks, False)
    assert "invalid api key [REDACTED]" in str(caught.value)


def test_an_unset_key_variable_fails_at_start_up_naming_the_variable_only(
    fake_openai_factory: Factory,
) -> None:
    server = fake_openai_factory([])
    with pytest.raises(ConfigError, match="'NO_SUCH_KEY' is not set"):
        client_for(server, environ={}, api_key_env="NO_SUCH_KEY")


def test_extra_headers_are_sent(fake_openai_factory: Factory) -> None:
    server = fake_openai_factory([{"json": GOOD}])
    ask(client_for(server, headers={"X-Proxy-Team": "evals"}))
    assert server.requests()[0]["headers"]["x-proxy-team"] == "evals"
    assert json.dumps(server.chat_bodies()).count("evals") == 0
