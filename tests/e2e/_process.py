"""`tracescore serve` as a subprocess: start it, read its ports, stop it with SIGTERM."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from google.protobuf.json_format import ParseDict
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.trace.v1.trace_pb2 import Span

from support.stderr_process import StderrProcess

__all__ = ["AGENT_CLIENT", "ServeProcess", "run_agent_client", "sent_spans"]

TRACESCORE = Path(sys.executable).with_name("tracescore")
AGENT_CLIENT = Path(__file__).with_name("agent_client.py")


class ServeProcess(StderrProcess):
    """One `tracescore serve --config <file>` process with loopback ports picked at start."""

    def __init__(self, config_text: str, folder: Path, env: dict[str, str] | None = None) -> None:
        """Write the config next to the test's files; nothing runs until `start()`."""
        super().__init__(env)
        self.config = folder / "tracescore.yaml"
        self.config.write_text(config_text)
        self.ports: dict[str, int] = {}

    def on_line(self, line: str) -> bool:
        if "listening on" in line and line.startswith("tracescore serve:"):
            name = line.split("otlp/")[1].split()[0]
            self.ports[name] = int(line.rsplit(":", 1)[1])
        return line.strip() == "tracescore serve: ready"

    def start(self, timeout: float = 20.0) -> ServeProcess:
        """Start and wait for `tracescore serve: ready`; fails with its stderr otherwise."""
        self.spawn([str(TRACESCORE), "serve", "--config", str(self.config)], timeout)
        assert self.process is not None
        assert self.process.poll() is None, "tracescore serve exited:\n" + self.stderr
        return self

    @property
    def stderr(self) -> str:
        """Everything it wrote to stderr so far."""
        return self.output

    def stop(self, timeout: float = 30.0) -> tuple[int, float]:
        """SIGTERM; returns the exit code and how long it took to exit."""
        return self.terminate(timeout)

    def __enter__(self) -> ServeProcess:
        return self.start()


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
