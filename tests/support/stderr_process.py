"""A server under test as a subprocess, its stderr read line by line until it says it is ready.

A reader thread keeps every line (for the failure message) and hands each to `on_line`, which
says when the process is ready; `terminate` sends SIGTERM and waits; leaving a context kills it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time

__all__ = ["StderrProcess"]


class StderrProcess:
    """A subprocess whose stderr is read by a thread; subclasses say when it is ready and
    enter the context by starting."""

    def __init__(self, env: dict[str, str] | None = None) -> None:
        """Nothing runs until `spawn()`; `env` is added to this process's environment."""
        self.env = {**os.environ, **(env or {})}
        self.lines: list[str] = []
        self.process: subprocess.Popen[str] | None = None
        self._reader: threading.Thread | None = None

    def on_line(self, line: str) -> bool:
        """Called with each stderr line (no newline); True once the process is ready."""
        return False

    def spawn(self, argv: list[str], timeout: float) -> None:
        """Start `argv` and wait up to `timeout` s until a line makes it ready, or it exits."""
        self.process = subprocess.Popen(
            argv, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True, env=self.env
        )
        ready = threading.Event()
        stderr = self.process.stderr
        assert stderr is not None

        def read() -> None:
            for line in stderr:
                self.lines.append(line.rstrip("\n"))
                if self.on_line(self.lines[-1]):
                    ready.set()
            ready.set()

        self._reader = threading.Thread(target=read, daemon=True)
        self._reader.start()
        ready.wait(timeout)

    @property
    def output(self) -> str:
        """Everything it wrote to stderr so far."""
        return "\n".join(self.lines)

    def terminate(self, timeout: float) -> tuple[int, float]:
        """SIGTERM; its exit code and the seconds it took to exit, once the reader has the last
        lines."""
        assert self.process is not None
        started = time.monotonic()
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        code = self.process.wait(timeout)
        took = time.monotonic() - started
        if self._reader is not None:
            self._reader.join(5)
        return code, took

    def __exit__(self, *exc: object) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(10)
