"""A real Prometheus (Debian's `prometheus`) on loopback for tests: scrapes given targets every
second into a temporary storage directory, and answers PromQL over its HTTP API.

Installed by scripts/check.d/pre-prometheus.sh. Missing, a test that needs it fails under CI
(`CI=true`) and is skipped elsewhere with the command that installs it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
import urllib.parse
import urllib.request
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from support.otlp_sink import free_port

__all__ = ["Prometheus", "require_prometheus"]

INSTALL = "bash scripts/check.d/pre-prometheus.sh  (apt-get install prometheus)"


def require_prometheus() -> str:
    """The prometheus binary; fails under CI and skips elsewhere when it is not installed."""
    binary = shutil.which("prometheus")
    if binary is None:
        message = f"Debian's prometheus is not installed; run: {INSTALL}"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    return binary


class Prometheus:
    """One Prometheus process scraping `targets` (host:port, path /metrics) every second."""

    def __init__(self, folder: Path, targets: Sequence[str]) -> None:
        self.binary = require_prometheus()
        self.folder = folder
        self.port = free_port()
        self.config = folder / "prometheus.yml"
        self.config.write_text(
            "global: {scrape_interval: 1s, evaluation_interval: 1s}\n"
            "scrape_configs:\n"
            "  - job_name: tracescore\n"
            f"    static_configs: [{{targets: {json.dumps(list(targets))}}}]\n"
        )
        self.process: subprocess.Popen[bytes] | None = None
        self.log = folder / "prometheus.log"

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> Prometheus:
        log = self.log.open("wb")
        self.process = subprocess.Popen(
            [
                self.binary,
                f"--config.file={self.config}",
                f"--web.listen-address=127.0.0.1:{self.port}",
                f"--storage.tsdb.path={self.folder / 'data'}",
                "--log.level=warn",
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        self.wait_for(lambda: self._ready(), "ready")
        return self

    def __exit__(self, *exc: object) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)

    def _ready(self) -> bool:
        assert self.process is not None
        assert self.process.poll() is None, "prometheus exited:\n" + self.log.read_text()
        try:
            with urllib.request.urlopen(self.url + "/-/ready", timeout=2) as response:
                return bool(response.status == 200)
        except OSError:
            return False

    def query(self, promql: str) -> list[dict[str, Any]]:
        """An instant query at now: the vector's samples (metric labels and value)."""
        url = self.url + "/api/v1/query?" + urllib.parse.urlencode({"query": promql})
        with urllib.request.urlopen(url, timeout=10) as response:
            body = json.loads(response.read())
        assert body["status"] == "success", body
        assert body["data"]["resultType"] == "vector", body
        return list(body["data"]["result"])

    def value(self, promql: str) -> float | None:
        """The single value of a query that gives one sample (None: no sample)."""
        result = self.query(promql)
        assert len(result) <= 1, result
        return float(result[0]["value"][1]) if result else None

    def wait_for(self, predicate: Any, what: str, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while not predicate():
            assert time.monotonic() < deadline, f"prometheus: timed out waiting for {what}"
            time.sleep(0.25)
