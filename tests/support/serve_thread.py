"""The tracescore serve pipeline in a background thread, for in-process receiver tests.

End-to-end tests start `tracescore serve` as a subprocess; tests that look closely at one
receiver's answers run the same `Pipeline` here, so they can also read its telemetry::

    with ServeThread(config) as serve:
        urllib.request.urlopen(f"http://127.0.0.1:{serve.http_port}/healthz")
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable

from tracescore.config.model import Config
from tracescore.pipeline import Pipeline, ServeSecrets, preflight

__all__ = ["ServeThread"]


class ServeThread:
    """Runs `Pipeline(config)` on its own event loop until `stop()`."""

    def __init__(self, config: Config, secrets: ServeSecrets | None = None) -> None:
        """Check the config as `tracescore serve` does (tokens come from the environment)."""
        self.pipeline = Pipeline(config, secrets or preflight(config))
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._error: BaseException | None = None

    @property
    def grpc_port(self) -> int:
        """Port of the gRPC receiver."""
        assert self.pipeline.grpc is not None
        assert self.pipeline.grpc.port is not None
        return self.pipeline.grpc.port

    @property
    def http_port(self) -> int:
        """Port of the HTTP receiver."""
        assert self.pipeline.http is not None
        assert self.pipeline.http.port is not None
        return self.pipeline.http.port

    def __enter__(self) -> ServeThread:
        ready = threading.Event()

        def main() -> None:
            try:
                asyncio.run(self._main(ready))
            except BaseException as exc:  # surfaced in __enter__ / __exit__
                self._error = exc
                ready.set()

        self._thread = threading.Thread(target=main, name="tracescore-serve", daemon=True)
        self._thread.start()
        ready.wait(15)
        if self._error is not None:
            raise self._error
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        """Shut the pipeline down (as on SIGTERM) and wait for it."""
        if self._loop is not None and self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        if self._thread is not None:
            self._thread.join(30)
            self._thread = None
        self._loop = None
        if self._error is not None:
            raise self._error

    def call(self, fn: Callable[[], object]) -> None:
        """Run `fn()` on the pipeline's loop (tick the assembler from a test, ...)."""
        assert self._loop is not None
        done = threading.Event()

        def run() -> None:
            try:
                fn()
            finally:
                done.set()

        self._loop.call_soon_threadsafe(run)
        done.wait(10)

    async def _main(self, ready: threading.Event) -> None:
        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        await self.pipeline.start()
        ready.set()
        await self._stop.wait()
        await self.pipeline.shutdown()
