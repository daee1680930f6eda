"""Tool results for scorer tests."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any


class UnreadableResult(Mapping[str, Any]):
    """A tool result whose reading fails: a Mastra check on it becomes an error score."""

    def __getitem__(self, key: str) -> Any:
        raise KeyError(key)

    def __iter__(self) -> Iterator[str]:
        return iter(())

    def __len__(self) -> int:
        return 0

    def get(self, key: str, default: Any = None) -> Any:
        raise RuntimeError("result unreadable")

    def __repr__(self) -> str:  # the default names an address, which a digest would take in
        return f"{type(self).__name__}()"
