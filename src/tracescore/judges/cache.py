"""Cache of judge answers keyed by the judge digest and the exact content judged.

In memory (least recently used first out, bounded by `max_entries`), optionally backed by a
SQLite file so identical runs are judged once across restarts. SQLite calls run in a worker
thread: a disk write must not stall the event loop that also receives spans.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import threading
import time
from collections import OrderedDict
from typing import Any

__all__ = ["JudgeCache"]

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS judge_cache ("
    "key TEXT PRIMARY KEY, value TEXT NOT NULL, used REAL NOT NULL)"
)


class JudgeCache:
    """A bounded LRU of JSON-able judge answers, with an optional SQLite file behind it."""

    def __init__(self, max_entries: int = 10_000, path: str | None = None) -> None:
        """`max_entries` 0 disables the cache; `path` opens (or creates) the SQLite file."""
        self.max_entries = max_entries
        self._memory: OrderedDict[str, str] = OrderedDict()
        self._db: sqlite3.Connection | None = None
        self._lock = threading.Lock()
        self._rows = 0
        if path is not None and max_entries > 0:
            # check_same_thread=False: calls come from asyncio's worker threads, one at a
            # time under self._lock.
            self._db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute(_SCHEMA)
            self._rows = int(self._db.execute("SELECT COUNT(*) FROM judge_cache").fetchone()[0])

    def __len__(self) -> int:
        return len(self._memory)

    async def get(self, key: str) -> Any | None:
        """The cached answer, or None."""
        if self.max_entries <= 0:
            return None
        text = self._memory.get(key)
        if text is not None:
            self._memory.move_to_end(key)
            return json.loads(text)
        if self._db is None:
            return None
        text = await asyncio.to_thread(self._db_get, key)
        if text is None:
            return None
        self._remember(key, text)
        return json.loads(text)

    async def put(self, key: str, value: Any) -> None:
        """Store a JSON-able answer."""
        if self.max_entries <= 0:
            return
        text = json.dumps(value, sort_keys=True, separators=(",", ":"))
        self._remember(key, text)
        if self._db is not None:
            await asyncio.to_thread(self._db_put, key, text)

    def close(self) -> None:
        """Close the SQLite file; safe to call twice."""
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None

    def _remember(self, key: str, text: str) -> None:
        self._memory[key] = text
        self._memory.move_to_end(key)
        while len(self._memory) > self.max_entries:
            self._memory.popitem(last=False)

    def _db_get(self, key: str) -> str | None:
        with self._lock:
            if self._db is None:
                return None
            row = self._db.execute("SELECT value FROM judge_cache WHERE key = ?", (key,)).fetchone()
            if row is not None:
                self._db.execute(
                    "UPDATE judge_cache SET used = ? WHERE key = ?", (time.time(), key)
                )
            return None if row is None else str(row[0])

    def _db_put(self, key: str, text: str) -> None:
        with self._lock:
            if self._db is None:
                return
            cursor = self._db.execute(
                "INSERT OR REPLACE INTO judge_cache (key, value, used) VALUES (?, ?, ?)",
                (key, text, time.time()),
            )
            self._rows += max(0, cursor.rowcount)
            # Prune in batches (10 % headroom) so most writes do not pay for a DELETE.
            if self._rows > self.max_entries * 1.1:
                self._db.execute(
                    "DELETE FROM judge_cache WHERE key NOT IN "
                    "(SELECT key FROM judge_cache ORDER BY used DESC LIMIT ?)",
                    (self.max_entries,),
                )
                self._rows = int(self._db.execute("SELECT COUNT(*) FROM judge_cache").fetchone()[0])
