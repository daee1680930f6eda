"""`JudgeShared`: what every client of one runner shares, built from the `judge:` section."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tracescore.judges.budget import JudgeBudget
from tracescore.judges.cache import JudgeCache
from tracescore.judges.inflight import InFlight
from tracescore.judges.redact import Redactor
from tracescore.judges.settings import JudgeSettings
from tracescore.judges.telemetry import JudgeCounters

__all__ = ["JudgeShared", "judge_setting"]


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

    @classmethod
    def from_settings(
        cls,
        settings: JudgeSettings | None,
        counters: JudgeCounters,
        clock: Callable[[], float] | None = None,
    ) -> JudgeShared:
        """What the `judge:` section (None: its defaults) says every client shares.

        `clock` drives the budgets (tests move it instead of sleeping).
        """
        redaction = judge_setting(settings, "redaction")
        cache = judge_setting(settings, "cache")
        budget_args: dict[str, Any] = {} if clock is None else {"clock": clock}
        return cls(
            redactor=Redactor(redaction.patterns, builtin=redaction.builtin),
            cache=JudgeCache(cache.max_entries, cache.path),
            budget=JudgeBudget(
                settings.max_calls_per_minute if settings else None,
                settings.max_tokens_per_hour if settings else None,
                **budget_args,
            ),
            counters=counters,
            max_content_chars=judge_setting(settings, "max_content_chars"),
            retry_backoff_s=judge_setting(settings, "retry_backoff_s"),
        )


def judge_setting(settings: JudgeSettings | None, name: str) -> Any:
    """One key of the `judge:` section, or its default when the config has no such section."""
    if settings is not None:
        return getattr(settings, name)
    return JudgeSettings.model_fields[name].get_default(call_default_factory=True)
