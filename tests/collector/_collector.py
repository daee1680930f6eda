"""The real OpenTelemetry Collector (tests/collector/otelcol, built by
scripts/check.d/pre-collector.sh) as a subprocess, and collector-config/'s files with free ports.

The collector files take every address from the environment (`${env:NAME:-default}`), so a test
runs them as written with free ports in `env`. tracescore's files have fixed ports (its config
has no variables): `tracescore_config` rewrites only the receiver and exporter addresses, plus
whatever timing a test shortens.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from support.stderr_process import StderrProcess

__all__ = ["CONFIGS", "STAGE", "Collector", "collector_binary", "tracescore_config", "wait_until"]

ROOT = Path(__file__).resolve().parents[2]
CONFIGS = ROOT / "collector-config"
STAGE = ROOT / "scripts" / "check.d" / "pre-collector.sh"
READY = "Everything is ready"
# The collector's own metrics would listen on :8888 in every test's collector at once.
NO_OWN_METRICS = "yaml:service::telemetry::metrics::level: none"


def collector_binary() -> Path:
    """The cached collector binary; fails under CI=true when it is missing, else skips."""
    out = subprocess.run(
        ["bash", str(STAGE), "--path"], capture_output=True, text=True, check=True
    ).stdout
    path = Path(out.strip())
    if not path.is_file():
        message = f"no collector at {path}: build it with `bash scripts/check.d/pre-collector.sh`"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    return path


class Collector(StderrProcess):
    """`otelcol-tracescore --config FILE` with `env`, stopped with SIGTERM."""

    def __init__(self, config: Path, env: dict[str, str]) -> None:
        """Nothing runs until `start()`."""
        super().__init__(env)
        self.config = config

    def on_line(self, line: str) -> bool:
        return READY in line

    def start(self, timeout: float = 30.0) -> Collector:
        """Start and wait until it logs that its pipelines run; fails with its log otherwise."""
        argv = [str(collector_binary()), "--config", str(self.config), "--config", NO_OWN_METRICS]
        self.spawn(argv, timeout)
        assert self.process is not None
        assert self.process.poll() is None, "collector exited:\n" + self.log
        assert READY in self.log, "collector not ready:\n" + self.log
        return self

    @property
    def log(self) -> str:
        """Everything it logged so far."""
        return self.output

    def stop(self, timeout: float = 30.0) -> int:
        """SIGTERM (it drains its queues) and its exit code."""
        return self.terminate(timeout)[0]

    def __enter__(self) -> Collector:
        return self.start()


def _merge(base: dict[str, Any], changes: dict[str, Any]) -> None:
    for key, value in changes.items():
        if isinstance(value, dict) and isinstance(base.get(key), dict):
            _merge(base[key], value)
        else:
            base[key] = value


def tracescore_config(
    name: str, grpc: int, http: int, scores: int, changes: dict[str, Any] | None = None
) -> str:
    """collector-config/`name` with its receivers on `grpc`/`http` and its exporter at the
    collector's `scores` port (all on 127.0.0.1), and `changes` merged in."""
    data = yaml.safe_load((CONFIGS / name).read_text())
    data["receivers"]["grpc"]["endpoint"] = f"127.0.0.1:{grpc}"
    data["receivers"]["http"]["endpoint"] = f"127.0.0.1:{http}"
    data["exporter"]["endpoint"] = f"http://127.0.0.1:{scores}"
    if "storage" in data:  # a folder per run: what one test leaves must not reach the next
        data["storage"]["directory"] = tempfile.mkdtemp(prefix="tracescore-storage-")
    _merge(data, changes or {})
    return yaml.safe_dump(data, sort_keys=False)


def wait_until(predicate: Any, timeout: float, what: str) -> None:
    """Poll `predicate()` until true; AssertionError naming `what` on timeout."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.1)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")
