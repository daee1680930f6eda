"""`Completions`: one judge endpoint's chat-completions calls, with retries and structured output.

One call asks with `response_format: json_schema` (falling back to the schema in the prompt when
the server rejects it), counts what it spent against the budget, and retries timeouts, 429 and
5xx with backoff and jitter (Retry-After honoured); other 4xx are never retried. The API key
stays inside the `openai` client and is scrubbed (as a literal) from every error raised here.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass
from typing import Any

import openai

from tracescore import semconv
from tracescore.judges.endpoint import ResolvedEndpoint
from tracescore.judges.errors import JudgeError, JudgeSkipped
from tracescore.judges.prompts import JudgeRequest, build_messages, output_schema
from tracescore.judges.redact import Redactor
from tracescore.judges.replies import reply_text
from tracescore.judges.sanitize import Fence, truncate_middle
from tracescore.judges.shared import JudgeShared
from tracescore.retry import RetryPolicy, retry_after_from_headers

__all__ = ["MAX_BACKOFF_S", "MAX_RETRY_AFTER_S", "Completions", "Tally"]

log = logging.getLogger(__name__)

MAX_RETRY_AFTER_S = 60.0
"""A server asking to wait longer than this gets an error score, not a stalled worker."""
MAX_BACKOFF_S = 30.0


@dataclass
class Tally:
    """What the calls for one answer cost: requests, retries and tokens."""

    requests: int = 0
    retries: int = 0
    input_tokens: int = 0
    output_tokens: int = 0


class Completions:
    """The chat-completions calls of one endpoint; shared limits come from `JudgeShared`."""

    def __init__(self, endpoint: ResolvedEndpoint, shared: JudgeShared, key: str | None) -> None:
        """`key` is the API key (None: the endpoint needs none)."""
        self.endpoint = endpoint
        self.shared = shared
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

    @property
    def model(self) -> str:
        """The judge model."""
        return self.endpoint.model

    def url(self) -> str:
        """The endpoint's base URL with the API key scrubbed out."""
        return self._scrub.redact(self.endpoint.base_url)[0]

    async def aclose(self) -> None:
        """Close the HTTP connection pool."""
        await self._openai.close()

    async def complete(
        self,
        request: JudgeRequest[Any],
        fence: Fence,
        extra: list[dict[str, str]],
        tally: Tally,
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
                "temperature": self.endpoint.temperature,
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
                    f"judge {self.model!r} at {self.url()}: {outcome.replace('_', ' ')} "
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

    def _describe(self, exc: openai.APIStatusError) -> str:
        body = exc.body
        detail = body.get("message") if isinstance(body, dict) else None
        message = truncate_middle(str(detail if detail else exc.message), 300)
        text = f"judge {self.model!r} at {self.url()} answered HTTP {exc.status_code}: {message}"
        return self._scrub.redact(text)[0]
