"""A real Arize Phoenix on loopback, for the tests about how scores show in it.

Phoenix comes from its own venv (scripts/check.d/pre-phoenix.sh), its SQLite database in a
temporary working directory. Its gRPC port binds every interface whatever PHOENIX_HOST says, so
it gets a free port of its own and nothing is sent to it.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

__all__ = ["Phoenix", "free_port", "phoenix_venv"]

VERSION = os.environ.get("PHOENIX_VERSION", "20.26.1")
_CACHE = Path(os.environ.get("TRACESCORE_CACHE", Path.home() / ".cache" / "tracescore"))


def phoenix_venv() -> Path:
    """The venv holding `phoenix`; fails under CI when missing, else skips saying how to build."""
    venv = Path(os.environ.get("TRACESCORE_PHOENIX_VENV", _CACHE / f"phoenix-{VERSION}"))
    if (venv / "bin" / "phoenix").exists():
        return venv
    message = f"no Phoenix venv at {venv}: run scripts/check.d/pre-phoenix.sh"
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Phoenix:
    """`phoenix serve` as a subprocess, with a small REST client."""

    def __init__(self, workdir: Path, port: int | None = None) -> None:
        """Start it; `__enter__` waits until it answers /healthz."""
        self.workdir = workdir
        self.port = port or free_port()
        self.grpc_port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self._process: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> Phoenix:
        env = {
            **os.environ,
            "PHOENIX_WORKING_DIR": str(self.workdir),
            "PHOENIX_HOST": "127.0.0.1",
            "PHOENIX_PORT": str(self.port),
            "PHOENIX_GRPC_PORT": str(self.grpc_port),
            "PHOENIX_TELEMETRY_ENABLED": "false",
            "PHOENIX_ALLOW_EXTERNAL_RESOURCES": "false",
            "PHOENIX_DISABLE_AGENT_ASSISTANT": "true",
        }
        self.workdir.mkdir(parents=True, exist_ok=True)
        log = (self.workdir / "phoenix.log").open("wb")
        self._process = subprocess.Popen(
            [str(phoenix_venv() / "bin" / "phoenix"), "serve"],
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + 240  # the first start migrates an empty database
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                raise RuntimeError(f"phoenix exited: {self.log_tail()}")
            try:
                with urllib.request.urlopen(f"{self.url}/healthz", timeout=2) as reply:
                    if reply.status == 200:
                        return self
            except (OSError, urllib.error.URLError):
                pass
            time.sleep(0.5)
        self.__exit__(None, None, None)
        raise RuntimeError(f"phoenix not ready in 240 s: {self.log_tail()}")

    def __exit__(self, *_: object) -> None:
        if self._process is not None and self._process.poll() is None:
            self._process.terminate()
            try:
                self._process.wait(15)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait(5)

    def log_tail(self) -> str:
        """The end of Phoenix's own log."""
        path = self.workdir / "phoenix.log"
        return path.read_text(errors="replace")[-3000:] if path.exists() else ""

    def get(self, path: str) -> Any:
        """GET a REST path under /v1, as JSON."""
        with urllib.request.urlopen(f"{self.url}/v1{path}", timeout=10) as reply:
            return json.load(reply)

    def spans(self, project: str = "default") -> list[dict[str, Any]]:
        """Every span of a project."""
        return list(self.get(f"/projects/{project}/spans?limit=1000")["data"])

    def span_annotations(self, span_ids: list[str], project: str = "default") -> list[Any]:
        """The annotations on the given spans."""
        query = "&".join(f"span_ids={s}" for s in span_ids)
        return list(self.get(f"/projects/{project}/span_annotations?{query}&limit=1000")["data"])

    def wait_for(self, what: Any, timeout: float = 60.0) -> Any:
        """Poll `what()` until it returns something truthy."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                value = what()
            except (OSError, urllib.error.URLError, KeyError):
                value = None
            if value:
                return value
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting; phoenix log: {self.log_tail()}")
            time.sleep(0.5)
