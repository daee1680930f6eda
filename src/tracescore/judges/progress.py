"""A one-line progress bar on a terminal while `tracescore score` waits for judges.

Shown only when the stream is a TTY and there are enough runs to be worth it, so piped output
and CI logs stay clean. No third-party dependency: one carriage-return-rewritten line.
"""

from __future__ import annotations

import time
from typing import TextIO

__all__ = ["MIN_RUNS", "Progress"]

MIN_RUNS = 5
"""Fewer runs than this finish before a bar would help."""
_WIDTH = 30
_INTERVAL_S = 0.1


class Progress:
    """`advance()` per finished run; `close()` clears the line. Inert when not shown."""

    def __init__(self, total: int, stream: TextIO, *, label: str = "judging") -> None:
        self.total = total
        self.done = 0
        self.label = label
        self._stream = stream
        self._shown = total >= MIN_RUNS and _isatty(stream)
        self._last = 0.0
        self._started = time.monotonic()

    @property
    def shown(self) -> bool:
        """Whether the bar is drawn at all."""
        return self._shown

    def advance(self, n: int = 1) -> None:
        """Count finished runs and redraw (at most ten times a second, and at the end)."""
        self.done += n
        now = time.monotonic()
        if self._shown and (now - self._last >= _INTERVAL_S or self.done >= self.total):
            self._last = now
            self._stream.write("\r" + self.line(now - self._started))
            self._stream.flush()

    def line(self, elapsed_s: float) -> str:
        """The bar's text, e.g. `judging [#######.......] 12/40 runs 3.1s`."""
        filled = _WIDTH * self.done // self.total if self.total else _WIDTH
        bar = "#" * filled + "." * (_WIDTH - filled)
        return f"{self.label} [{bar}] {self.done}/{self.total} runs {elapsed_s:.1f}s"

    def close(self) -> None:
        """Erase the bar so the results print on a clean line."""
        if self._shown:
            self._stream.write("\r" + " " * (len(self.line(0.0)) + 8) + "\r")
            self._stream.flush()


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False
