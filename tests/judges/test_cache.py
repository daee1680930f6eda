"""The judge-answer cache: bounded in memory, optionally persisted in SQLite."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from judges._helpers import run
from tracescore.judges.cache import JudgeCache


def roundtrip(cache: JudgeCache, puts: list[tuple[str, Any]], gets: list[str]) -> list[Any]:
    async def go() -> list[Any]:
        for key, value in puts:
            await cache.put(key, value)
        return [await cache.get(key) for key in gets]

    return run(go())


def test_the_least_recently_used_entry_goes_first() -> None:
    cache = JudgeCache(max_entries=2)

    async def go() -> list[Any]:
        await cache.put("a", 1)
        await cache.put("b", 2)
        await cache.get("a")  # a is now more recent than b
        await cache.put("c", 3)
        return [await cache.get(k) for k in "abc"]

    assert run(go()) == [1, None, 3]
    assert len(cache) == 2


def test_zero_entries_turns_the_cache_off() -> None:
    assert roundtrip(JudgeCache(0), [("a", {"x": 1})], ["a"]) == [None]


def test_sqlite_keeps_answers_across_instances_and_stays_bounded(tmp_path: Path) -> None:
    path = str(tmp_path / "cache.sqlite")
    first = JudgeCache(max_entries=10, path=path)
    roundtrip(first, [(f"k{i}", {"i": i}) for i in range(30)], [])
    first.close()
    first.close()  # safe twice
    second = JudgeCache(max_entries=10, path=path)
    assert roundtrip(second, [], ["k29", "k0"]) == [{"i": 29}, None]
    second.close()
    rows = sqlite3.connect(path).execute("SELECT COUNT(*) FROM judge_cache").fetchone()[0]
    assert rows <= 11
