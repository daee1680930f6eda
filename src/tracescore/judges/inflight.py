"""Identical judge questions asked at the same time go to the judge once.

The cache answers a question only after its first answer is in; a burst of identical live runs,
or one `tracescore score` over identical runs, would otherwise pay for the same answer once per
run. The first asker leads; the others wait for its answer (counted as cache hits) or its error.
"""

from __future__ import annotations

import asyncio
from typing import Any

__all__ = ["InFlight"]


class InFlight:
    """Questions in flight by content key, each with the future its followers wait on."""

    def __init__(self) -> None:
        """Nothing in flight."""
        self._futures: dict[str, asyncio.Future[Any]] = {}

    def __len__(self) -> int:
        return len(self._futures)

    def follow(self, key: str) -> asyncio.Future[Any] | None:
        """The future of an identical question in flight, or None: then the caller leads.

        It resolves to the answer as JSON, to None when the leader was cancelled (ask again),
        or to the leader's exception.
        """
        return self._futures.get(key)

    def lead(self, key: str) -> asyncio.Future[Any]:
        """Mark `key` in flight; the caller must `finish` it, whatever happens."""
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._futures[key] = future
        return future

    def finish(
        self, key: str, future: asyncio.Future[Any], answer: Any, error: BaseException | None
    ) -> None:
        """Hand the leader's answer (JSON) or error to its followers."""
        if self._futures.get(key) is future:
            del self._futures[key]
        if future.done():
            return
        if isinstance(error, Exception):
            future.set_exception(error)
            future.exception()  # retrieved: no "never retrieved" report when nobody followed
        else:
            future.set_result(answer)  # None after a cancellation: followers ask themselves
