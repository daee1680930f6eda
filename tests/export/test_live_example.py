"""examples/live: run the README walkthrough's own commands and check what a newcomer would see.

The commands come from the ```sh walkthrough``` block of examples/live/README.md, so the README
and this test cannot drift apart. Ports are swapped for free ones (and the config rewritten to
match) so the test never collides with anything listening on 4317/4318/4328.
"""

from __future__ import annotations

import base64
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import yaml

from export.otlp_receiver import free_port
from export.prometheus_text import parse_prometheus

REPO = Path(__file__).resolve().parents[2]
LIVE = REPO / "examples" / "live"


def walkthrough_commands() -> list[list[str]]:
    """The commands of the README's ```sh walkthrough``` block, split like a shell would."""
    readme = (LIVE / "README.md").read_text()
    match = re.search(r"```sh walkthrough\n(.*?)```", readme, re.S)
    assert match, "examples/live/README.md lost its ```sh walkthrough``` block"
    return [shlex.split(line) for line in match.group(1).splitlines() if line.strip()]


def test_the_walkthrough_has_the_four_steps_in_order() -> None:
    commands = walkthrough_commands()
    assert [c[1] if c[0].endswith("python") else c[:2] for c in commands] == [
        "examples/live/sink.py",
        [".venv/bin/tracescore", "serve"],
        "examples/live/agent.py",
        ["curl", "-s"],
    ]


def test_the_live_config_pairs_the_agent_tracescore_and_the_sink() -> None:
    from tracescore.config import load_config

    config = load_config(LIVE / "tracescore.yaml")
    sink, _serve, agent, curl = walkthrough_commands()
    assert config.receivers.http is not None
    assert config.exporter is not None
    http_port = config.receivers.http.endpoint.rsplit(":", 1)[1]
    assert agent[-1] == f"http://127.0.0.1:{http_port}"
    assert curl[-1] == f"http://127.0.0.1:{http_port}/metrics"
    assert config.exporter.endpoint == f"http://127.0.0.1:{sink[sink.index('--port') + 1]}"
    assert config.exporter.protocol == "http/protobuf"  # what sink.py speaks


@contextmanager
def process(argv: list[str], log: Path) -> Iterator[subprocess.Popen[bytes]]:
    """Start a process with its output in `log`; stop it (by its own pid) on exit."""
    with log.open("wb") as out:
        proc = subprocess.Popen(argv, cwd=REPO, stdout=out, stderr=subprocess.STDOUT)
        try:
            yield proc
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait(timeout=10)


def wait_for(
    cond: Callable[[], Any],
    what: str,
    log: Path,
    proc: subprocess.Popen[bytes] | None = None,
    timeout: float = 60,
) -> Any:
    """Poll until `cond()` is truthy, failing at once if `proc` exits; the timeout only guards
    against a hung test."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        result = cond()
        if result:
            return result
        if proc is not None and proc.poll() is not None:
            output = log.read_text(errors="replace")
            raise AssertionError(f"{what}: process exited with {proc.returncode}\n{output}")
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}\n{log.read_text(errors='replace')}")


def http_get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=5) as resp:
            return resp.status, resp.read().decode()
    except OSError:
        return 0, ""


def attributes(obj: dict[str, Any]) -> dict[str, Any]:
    return {kv["key"]: next(iter(kv["value"].values()), None) for kv in obj.get("attributes", [])}


@pytest.mark.slow
def test_the_walkthrough_shows_scored_spans_events_and_metrics(tmp_path: Path) -> None:
    sink_cmd, serve_cmd, agent_cmd, curl_cmd = walkthrough_commands()
    grpc_port, http_port, sink_port = free_port(), free_port(), free_port()

    config = yaml.safe_load((LIVE / "tracescore.yaml").read_text())
    config["receivers"]["grpc"]["endpoint"] = f"127.0.0.1:{grpc_port}"
    config["receivers"]["http"]["endpoint"] = f"127.0.0.1:{http_port}"
    config["exporter"]["endpoint"] = f"http://127.0.0.1:{sink_port}"
    config_path = tmp_path / "tracescore.yaml"
    config_path.write_text(yaml.safe_dump(config))

    def localize(argv: list[str]) -> list[str]:
        out = [sys.executable if a == ".venv/bin/python" else a for a in argv]
        if out[0] == ".venv/bin/tracescore":
            out[:1] = [sys.executable, "-m", "tracescore"]
        return [
            a.replace("examples/live/tracescore.yaml", str(config_path))
            .replace(":4318", f":{http_port}")
            .replace("4328", str(sink_port))
            for a in out
        ]

    sink_out = tmp_path / "sink.jsonl"
    sink_log, serve_log = tmp_path / "sink.log", tmp_path / "serve.log"
    with (
        process([*localize(sink_cmd), "--out", str(sink_out)], sink_log) as sink,
        process(localize(serve_cmd), serve_log) as serve,
    ):
        wait_for(lambda: "listening" in sink_log.read_text(), "the sink", sink_log, sink)
        ready = f"http://127.0.0.1:{http_port}/readyz"
        wait_for(lambda: http_get(ready)[0] == 200, "tracescore /readyz", serve_log, serve)

        agent = subprocess.run(
            localize(agent_cmd), cwd=REPO, capture_output=True, text=True, timeout=120
        )
        assert agent.returncode == 0, agent.stderr
        assert agent.stdout.count("agent: ") == 3

        def received() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
            spans, events = [], []
            if sink_out.exists():
                for line in sink_out.read_text().splitlines():
                    doc = json.loads(line)
                    body = doc["body"]
                    for rs in body.get("resourceSpans", []):
                        for ss in rs.get("scopeSpans", []):
                            spans += ss.get("spans", [])
                    for rl in body.get("resourceLogs", []):
                        for sl in rl.get("scopeLogs", []):
                            events += sl.get("logRecords", [])
            return spans, events

        def scored_runs() -> bool:
            spans, events = received()
            agents = [s for s in spans if s["name"] == "invoke_agent shop-assistant"]
            return len(agents) == 3 and len(events) == 6

        wait_for(scored_runs, "three scored agent spans and six events", serve_log, serve)
        spans, events = received()

        # Forward mode: every span the agent sent arrives, agent spans carry the scores.
        assert len(spans) == 14
        agents = {s["spanId"]: attributes(s) for s in spans if s["name"].startswith("invoke_agent")}
        verdicts = sorted(a["tracescore.verdict"] for a in agents.values())
        assert verdicts == ["passed", "passed", "scored"]
        no_errors = sorted(a["eval.no_tool_errors.score"] for a in agents.values())
        assert no_errors == [0.0, 1.0, 1.0]
        assert all(a["tracescore.scenario"] == "shop" for a in agents.values())
        # Each event points at a scored agent span.
        for event in events:
            attrs = attributes(event)
            assert attrs["event.name"] == "gen_ai.evaluation.result"
            assert base64.b64decode(event["spanId"]).hex() in {
                base64.b64decode(k).hex() for k in agents
            }
            assert attrs["gen_ai.evaluation.name"] in {"no_tool_errors", "max_tool_calls"}

        status, text = http_get(localize(curl_cmd)[-1])
        assert status == 200
        families = parse_prometheus(text)
        runs = families["tracescore_runs_total"].samples
        assert sum(value for _, _, value in runs) == 3

        serve.send_signal(signal.SIGTERM)
        assert serve.wait(timeout=60) == 0, serve_log.read_text()
    assert os.path.getsize(sink_out) > 0
