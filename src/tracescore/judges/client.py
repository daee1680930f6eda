"""`JudgeClient`: one OpenAI-compatible chat-completions endpoint, asked for validated JSON.

Per question: redact and cap the run content, look in the cache (and follow an identical
question already in flight), send with a fresh nonce fence, validate with pydantic, repair
once. Sending, with structured output, budgets and retries, is `completions.Completions`.

The API key is read from the configured environment variable only, kept inside the `openai`
client, and scrubbed (as a literal) from everything this module sends, logs or raises.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Generic, TypeVar

from pydantic import BaseModel

from tracescore.errors import ConfigError
from tracescore.judges.completions import MAX_BACKOFF_S, MAX_RETRY_AFTER_S, Completions, Tally
from tracescore.judges.endpoint import ResolvedEndpoint
from tracescore.judges.errors import JudgeError, JudgeSkipped
from tracescore.judges.prompts import JudgeRequest
from tracescore.judges.replies import parse_reply, validate_reply
from tracescore.judges.sanitize import Fence, truncate_middle
from tracescore.judges.shared import JudgeShared

__all__ = [
    "MAX_BACKOFF_S",
    "MAX_RETRY_AFTER_S",
    "JudgeAnswer",
    "JudgeClient",
    "JudgeShared",
]

log = logging.getLogger(__name__)

T = TypeVar("T", bound=BaseModel)

_MIN_SECTION_CHARS = 200
_REPAIR = (
    "Your reply could not be used: {problem}. Reply again with only the corrected JSON "
    "object, matching the schema, and nothing else."
)


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
        self._completions = Completions(endpoint, self.shared, key)

    def __repr__(self) -> str:
        url = self._completions.url()
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
        await self._completions.aclose()

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
        tally = Tally()
        text = await self._completions.complete(request, fence, [], tally)
        value, problem = parse_reply(text, request)
        repaired = False
        if value is None:
            repaired = True
            log.info("judge %r gave invalid output (%s); one repair attempt", self.model, problem)
            repair = [
                {"role": "assistant", "content": truncate_middle(text, 4000)},
                {"role": "user", "content": _REPAIR.format(problem=problem)},
            ]
            text = await self._completions.complete(request, fence, repair, tally)
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
