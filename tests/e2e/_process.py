"""`tracescore serve` as a subprocess: start it, read its ports, stop it with SIGTERM."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from google.protobuf.json_format import ParseDict
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.trace.v1.trace_pb2 import Span

__all__ = ["AGENT_CLIENT", "ServeProcess", "run_agent_client", "sent_spans"]

TRACESCORE = Path(sys.executable).with_name("tracescore")
AGENT_CLIENT = Path(__file__).with_name("agent_client.py")


class ServeProcess:
    """One `tracescore serve --config <file>` process with loopback ports picked at start."""

    def __init__(self, config_text: str, folder: Path, env: dict[str, str] | None = None) -> None:
        """Write the config next to the test's files; nothing runs until `start()`."""
        self.config = folder / "tracescore.yaml"
        self.config.write_text(config_text)
        self.env = {**os.environ, **(env or {})}
        self.ports: dict[str, int] = {}
        self.lines: list[str] = []
        self.process: subprocess.Popen[str] | None = None
        self._reader: threading.Thread | None = None

    def start(self, timeout: float = 20.0) -> ServeProcess:
        """Start and wait for `tracescore serve: ready`; fails with its stderr otherwise."""
        self.process = subprocess.Popen(
            [str(TRACESCORE), "serve", "--config", str(self.config)],
            stderr=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            text=True,
            env=self.env,
        )
        ready = threading.Event()

        def read() -> None:
            assert self.process is not None
            assert self.process.stderr is not None
            for line in self.process.stderr:
                self.lines.append(line.rstrip("\n"))
                if "listening on" in line and line.startswith("tracescore serve:"):
                    name = line.split("otlp/")[1].split()[0]
                    self.ports[name] = int(line.rsplit(":", 1)[1])
                if line.strip() == "tracescore serve: ready":
                    ready.set()
            ready.set()

        self._reader = threading.Thread(target=read, daemon=True)
        self._reader.start()
        ready.wait(timeout)
        assert self.process.poll() is None, "tracescore serve exited:\n" + self.stderr
        return self

    @property
    def stderr(self) -> str:
        """Everything it wrote to stderr so far."""
        return "\n".join(self.lines)

    def stop(self, timeout: float = 30.0) -> tuple[int, float]:
        """SIGTERM; returns the exit code and how long it took to exit."""
        assert self.process is not None
        started = time.monotonic()
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        code = self.process.wait(timeout)
        took = time.monotonic() - started
        if self._reader is not None:
            self._reader.join(5)
        return code, took

    def __enter__(self) -> ServeProcess:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(10)


def run_agent_client(
    protocol: str, endpoint: str, out: Path, repeat: int = 1, project: str | None = None
) -> None:
    """Run tests/e2e/agent_client.py to completion (it flushes every span before exiting)."""
    extra = ["--project", project] if project else []
    subprocess.run(
        [
            sys.executable,
            str(AGENT_CLIENT),
            "--protocol",
            protocol,
            "--endpoint",
            endpoint,
            "--out",
            str(out),
            "--repeat",
            str(repeat),
            *extra,
        ],
        check=True,
        timeout=120,
        capture_output=True,
    )


def sent_spans(path: Path) -> list[Span]:
    """The spans the agent client says it sent."""
    doc: dict[str, Any] = json.loads(path.read_text())
    request = ParseDict(doc, ExportTraceServiceRequest())
    return [s for rs in request.resource_spans for ss in rs.scope_spans for s in ss.spans]
