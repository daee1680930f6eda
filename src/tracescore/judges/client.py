"""`JudgeClient`: one OpenAI-compatible chat-completions endpoint, asked for validated JSON.

Per question: redact and cap the run content, look in the cache, check the budget, send with a
fresh nonce fence and `response_format: json_schema` (falling back to the schema in the prompt
when the server rejects it), validate with pydantic, repair once, retry timeouts, 429 and 5xx
with backoff and jitter (Retry-After honoured), never retry other 4xx.

The API key is read from the configured environment variable only, kept inside the `openai`
client, and scrubbed (as a literal) from everything this module sends, logs or raises.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Generic, TypeVar

import openai
from pydantic import BaseModel

from tracescore import semconv
from tracescore.errors import ConfigError
from tracescore.judges.budget import JudgeBudget
from tracescore.judges.cache import JudgeCache
from tracescore.judges.endpoint import ResolvedEndpoint
from tracescore.judges.errors import JudgeError, JudgeSkipped
from tracescore.judges.inflight import InFlight
from tracescore.judges.prompts import JudgeRequest, build_messages, output_schema
from tracescore.judges.redact import Redactor
from tracescore.judges.replies import parse_reply, reply_text, validate_reply
from tracescore.judges.sanitize import Fence, truncate_middle
from tracescore.judges.telemetry import JudgeCounters
from tracescore.retry import RetryPolicy, retry_after_from_headers

__all__ = ["JudgeAnswer", "JudgeClient", "JudgeShared"]

log = logging.getLogger(__name__)

T = TypeVar("T", bound=BaseModel)

MAX_RETRY_AFTER_S = 60.0
"""A server asking to wait longer than this gets an error score, not a stalled worker."""
MAX_BACKOFF_S = 30.0
_MIN_SECTION_CHARS = 200
_REPAIR = (
    "Your reply could not be used: {problem}. Reply again with only the corrected JSON "
    "object, matching the schema, and nothing else."
)


@dataclass
class JudgeShared:
    """What every client of one runner shares: redaction, cache, budget, counters, limits."""

    redactor: Redactor = field(default_factory=Redactor)
    cache: JudgeCache = field(default_factory=lambda: JudgeCache(0))
    budget: JudgeBudget = field(default_factory=JudgeBudget)
    counters: JudgeCounters = field(default_factory=JudgeCounters)
    inflight: InFlight = field(default_factory=InFlight)
    max_content_chars: int = 24_000
    retry_backoff_s: float = 0.5


@dataclass(frozen=True, slots=True)
class JudgeAnswer(Generic[T]):
    """A validated judge answer and what it cost."""

    value: T
    cached: bool = False
    requests: int = 0
    retries: int = 0
    repaired: bool = False
    input_tokens: int = 0
    output_tokens: int = 0


@dataclass
class _Tally:
    requests: int = 0
    retries: int = 0
    input_tokens: int = 0
    output_tokens: int = 0


class JudgeClient:
    """Asks one judge model for structured answers; shared limits come from `JudgeShared`."""

    def __init__(
        self,
        endpoint: ResolvedEndpoint,
        shared: JudgeShared | None = None,
        *,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        """Raises ConfigError when `api_key_env` names an unset variable (at start-up)."""
        key: str | None = None
        if endpoint.api_key_env:
            key = (os.environ if environ is None else environ).get(endpoint.api_key_env) or None
            if key is None:
                raise ConfigError(
                    [
                        f"judge.api_key_env: environment variable {endpoint.api_key_env!r} "
                        "is not set or is empty"
                    ],
                    source="judge",
                )
        self.endpoint = endpoint
        self.shared = shared or JudgeShared()
        self._redactor = self.shared.redactor.with_literals(key or "")
        self._scrub = Redactor(literals=[key or ""])
        # max_retries=0: retries are ours, so they are counted and honour our backoff.
        self._openai = openai.AsyncOpenAI(
            base_url=endpoint.base_url,
            api_key=key or "unused",
            timeout=endpoint.timeout_s,
            max_retries=0,
            default_headers=endpoint.headers or None,
        )
        self._semaphore = asyncio.Semaphore(endpoint.max_concurrency)
        self._schema_ok: bool | None = None  # does the server take response_format json_schema?

    def __repr__(self) -> str:
        url, _ = self._scrub.redact(self.endpoint.base_url)
        return f"JudgeClient(model={self.endpoint.model!r}, base_url={url!r})"

    @property
    def model(self) -> str:
        """The judge model (part of every judge score's digest)."""
        return self.endpoint.model

    @property
    def temperature(self) -> float:
        """The sampling temperature (part of the digest)."""
        return self.endpoint.temperature

    @property
    def value_limit(self) -> int:
        """Characters one recorded value (an argument, a result) may take in a prompt."""
        return max(_MIN_SECTION_CHARS, self.shared.max_content_chars // 4)

    async def aclose(self) -> None:
        """Close the HTTP connection pool."""
        await self._openai.close()

    async def ask(self, request: JudgeRequest[T]) -> JudgeAnswer[T]:
        """The judge's validated answer; raises JudgeSkipped (budget) or JudgeError."""
        try:
            return await self._ask(request)
        except JudgeSkipped as exc:
            self.shared.counters.skipped(exc.reason)
            raise
        except JudgeError as exc:
            self.shared.counters.error(exc.error_type)
            log.warning("judge failed (%s): %s", exc.error_type, exc)
            raise

    async def _ask(self, request: JudgeRequest[T]) -> JudgeAnswer[T]:
        request = self._sanitize(request)
        key = request.content_key()
        cached = await self.shared.cache.get(key)
        if cached is not None:
            value, problem = validate_reply(cached, request)
            if value is not None and problem is None:
                self.shared.counters.cache_hit()
                return JudgeAnswer(value, cached=True)
        inflight = self.shared.inflight
        while (pending := inflight.follow(key)) is not None:
            shared = await asyncio.shield(pending)  # the leader's error is raised here too
            if shared is None:
                continue  # the leader was cancelled: follow the next one, or lead
            value, problem = validate_reply(shared, request)
            if value is not None and problem is None:
                self.shared.counters.cache_hit()
                return JudgeAnswer(value, cached=True)
            break
        future = inflight.lead(key)
        try:
            answer = await self._ask_judge(request, key)
        except BaseException as exc:
            inflight.finish(key, future, None, exc)
            raise
        inflight.finish(key, future, answer.value.model_dump(mode="json"), None)
        return answer

    async def _ask_judge(self, request: JudgeRequest[T], key: str) -> JudgeAnswer[T]:
        """Ask the judge itself: one request, one repair if needed; cache the answer."""
        fence = Fence.fresh(*request.data.values(), *request.fields.values())
        tally = _Tally()
        text = await self._complete(request, fence, [], tally)
        value, problem = parse_reply(text, request)
        repaired = False
        if value is None:
            repaired = True
            log.info("judge %r gave invalid output (%s); one repair attempt", self.model, problem)
            repair = [
                {"role": "assistant", "content": truncate_middle(text, 4000)},
                {"role": "user", "content": _REPAIR.format(problem=problem)},
            ]
            text = await self._complete(request, fence, repair, tally)
            value, problem = parse_reply(text, request)
            if value is None:
                raise JudgeError(
                    "invalid_output",
                    f"judge {self.model!r} gave invalid output twice (one repair attempt): "
                    f"{truncate_middle(str(problem), 300)}",
                )
        await self.shared.cache.put(key, value.model_dump(mode="json"))
        return JudgeAnswer(
            value,
            requests=tally.requests,
            retries=tally.retries,
            repaired=repaired,
            input_tokens=tally.input_tokens,
            output_tokens=tally.output_tokens,
        )

    def _sanitize(self, request: JudgeRequest[T]) -> JudgeRequest[T]:
        """Redact every text, then cap the run content to `max_content_chars` in total."""
        total = 0
        fields: dict[str, str] = {}
        for name, text in request.fields.items():
            fields[name], n = self._redactor.redact(text)
            total += n
        redacted: dict[str, str] = {}
        for name, text in request.data.items():
            redacted[name], n = self._redactor.redact(text)
            total += n
        self.shared.counters.redacted(total)
        # Smallest sections first take what they need; the largest share what is left.
        remaining = self.shared.max_content_chars
        data: dict[str, str] = {}
        order = sorted(redacted, key=lambda k: len(redacted[k]))
        for index, name in enumerate(order):
            share = max(_MIN_SECTION_CHARS, remaining // (len(order) - index))
            data[name] = truncate_middle(redacted[name], share)
            remaining = max(0, remaining - len(data[name]))
        ordered = {name: data[name] for name in request.data}
        return replace(request, fields=fields, data=ordered)

    async def _complete(
        self,
        request: JudgeRequest[Any],
        fence: Fence,
        extra: list[dict[str, str]],
        tally: _Tally,
    ) -> str:
        """One reply text, after retries; raises JudgeError or JudgeSkipped."""
        use_schema = self._schema_ok is not False
        attempt = 0
        while True:
            messages = build_messages(request, fence, schema_in_prompt=not use_schema) + extra
            why = self.shared.budget.try_call()
            if why is not None:
                raise JudgeSkipped(semconv.JUDGE_SKIP_BUDGET, f"judge budget spent: {why}")
            kwargs: dict[str, Any] = {
                "model": self.model,
                "messages": messages,
                "temperature": self.temperature,
            }
            if use_schema:
                kwargs["response_format"] = {
                    "type": "json_schema",
                    "json_schema": {
                        "name": request.output.__name__,
                        "schema": output_schema(request.output),
                        "strict": True,
                    },
                }
            tally.requests += 1
            started = time.perf_counter()
            wait: float | None = None
            try:
                async with self._semaphore:
                    response = await self._openai.chat.completions.create(**kwargs)
            except openai.APITimeoutError:
                outcome = "timeout"
            except openai.APIConnectionError:
                outcome = "connection"
            except openai.APIStatusError as exc:
                outcome = "rate_limited" if exc.status_code == 429 else f"http_{exc.status_code}"
                if exc.status_code >= 500:
                    outcome = "server_error"
                wait = retry_after_from_headers(exc.response.headers)
                if outcome.startswith("http_"):
                    self._record(outcome, started)
                    if use_schema and self._schema_ok is None and exc.status_code in (400, 422):
                        # Perhaps no json_schema support (older vLLM, Ollama): ask again with
                        # the schema in the prompt; remembered only if that then works.
                        log.info("judge %r refused response_format; retrying without", self.model)
                        use_schema = False
                        continue
                    raise JudgeError(outcome, self._describe(exc)) from None
            else:
                usage = response.usage
                in_tokens = usage.prompt_tokens if usage else None
                out_tokens = usage.completion_tokens if usage else None
                self._record(semconv.JUDGE_OUTCOME_OK, started, in_tokens, out_tokens)
                text = reply_text(response)
                # Servers that omit usage still spend: estimate ~4 characters per token.
                sent = sum(len(m["content"]) for m in messages)
                in_n = in_tokens if in_tokens is not None else sent // 4
                out_n = out_tokens if out_tokens is not None else len(text) // 4
                self.shared.budget.spend_tokens(in_n + out_n)
                tally.input_tokens += in_n
                tally.output_tokens += out_n
                self._schema_ok = use_schema
                return text
            self._record(outcome, started)
            if attempt >= self.endpoint.max_retries:
                raise JudgeError(
                    outcome,
                    f"judge {self.model!r} at {self._url()}: {outcome.replace('_', ' ')} "
                    f"after {attempt + 1} attempt(s)",
                )
            if wait is not None and wait > MAX_RETRY_AFTER_S:
                raise JudgeError(
                    outcome,
                    f"judge {self.model!r} asked to retry after {wait:.0f}s "
                    f"(more than {MAX_RETRY_AFTER_S:.0f}s)",
                )
            delay = RetryPolicy(self.shared.retry_backoff_s, MAX_BACKOFF_S).delay(attempt, wait)
            attempt += 1
            tally.retries += 1
            self.shared.counters.retry(outcome)
            log.info("judge %r: %s; retry %d in %.2fs", self.model, outcome, attempt, delay)
            await asyncio.sleep(delay)

    def _record(
        self,
        outcome: str,
        started: float,
        input_tokens: int | None = None,
        output_tokens: int | None = None,
    ) -> None:
        duration = time.perf_counter() - started
        self.shared.counters.call(self.model, outcome, duration, input_tokens, output_tokens)

    def _url(self) -> str:
        return self._scrub.redact(self.endpoint.base_url)[0]

    def _describe(self, exc: openai.APIStatusError) -> str:
        body = exc.body
        detail = body.get("message") if isinstance(body, dict) else None
        message = truncate_middle(str(detail if detail else exc.message), 300)
        text = f"judge {self.model!r} at {self._url()} answered HTTP {exc.status_code}: {message}"
        return self._scrub.redact(text)[0]
