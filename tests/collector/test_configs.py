"""collector-config/: the real collector validates every collector file, tracescore every
tracescore file, each pair agrees on its ports as the collector resolves them, and the README's
"Running one locally" recipe runs as written (with free ports in the environment)."""

from __future__ import annotations

import base64
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import yaml

from collector._collector import (
    CONFIGS,
    NO_OWN_METRICS,
    ROOT,
    collector_binary,
    tracescore_config,
    wait_until,
)
from support.otlp_sink import free_port
from tracescore.config import load_config

PAIRS = {
    "fanout.yaml": "tracescore-fanout.yaml",
    "inline.yaml": "tracescore-inline.yaml",
    "loadbalancing.yaml": "tracescore-fanout.yaml",
}
# The addresses the files take from the environment: the tests below use the defaults.
OVERRIDES = ("AGENT_OTLP", "SCORES_OTLP", "TRACESCORE_", "BACKEND_OTLP")


def _plain_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith(OVERRIDES)}


def _collector(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(collector_binary()), *args],
        capture_output=True,
        text=True,
        timeout=60,
        env=env or _plain_env(),
    )


def _resolved(name: str) -> dict[str, Any]:
    """The file as the collector resolves it (env defaults filled in)."""
    done = _collector("print-config", "--config", str(CONFIGS / name), "--config", NO_OWN_METRICS)
    assert done.returncode == 0, done.stderr
    config = yaml.safe_load(done.stdout)
    assert isinstance(config, dict)
    return config


def _port(address: str) -> int:
    return int(address.rsplit(":", 1)[1])


def test_every_file_is_a_collector_or_a_tracescore_config() -> None:
    files = {p.name for p in CONFIGS.glob("*.yaml")}
    assert files == set(PAIRS) | set(PAIRS.values())
    readme = (CONFIGS / "README.md").read_text()
    assert all(f"`{name}`" in readme for name in files)


@pytest.mark.parametrize("name", sorted(PAIRS))
def test_the_collector_validates_the_file(name: str) -> None:
    done = _collector("validate", "--config", str(CONFIGS / name))
    assert done.returncode == 0, done.stderr


def test_the_collector_refuses_a_misspelt_key(tmp_path: Path) -> None:
    broken = tmp_path / "broken.yaml"
    broken.write_text((CONFIGS / "fanout.yaml").read_text().replace("queue_size:", "queue_sise:"))
    done = _collector("validate", "--config", str(broken))
    assert done.returncode != 0
    assert "queue_sise" in done.stderr


@pytest.mark.parametrize("name", sorted(set(PAIRS.values())))
def test_tracescore_validates_the_file(name: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "tracescore", "validate-config", str(CONFIGS / name)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize(("name", "pair"), sorted(PAIRS.items()))
def test_each_pair_agrees_on_ports_and_never_loops(name: str, pair: str) -> None:
    collector = _resolved(name)
    ts = load_config(CONFIGS / pair)
    assert ts.mode == ("forward" if name == "inline.yaml" else "fanout")
    assert ts.receivers.grpc is not None
    assert ts.receivers.http is not None
    assert ts.exporter is not None
    assert ts.exporter.protocol == "grpc"
    # The collector sends traces to tracescore's gRPC port (replica 0 of the load-balanced set:
    # the README's sed moves the others by 1000 and 2000).
    exporters = collector["exporters"]
    (to_tracescore,) = [e for e in exporters if e.endswith("/tracescore")]
    body = exporters[to_tracescore]
    targets = body["resolver"]["static"]["hostnames"] if "resolver" in body else [body["endpoint"]]
    ts_port = _port(ts.receivers.grpc.endpoint)
    assert [_port(t) for t in targets] == [ts_port + 1000 * n for n in range(len(targets))]
    # tracescore's output lands on a receiver of its own, and no port is taken twice on the host.
    receivers = collector["receivers"]
    ports = {
        f"{r}.{p}": _port(proto["endpoint"])
        for r, body in receivers.items()
        for p, proto in body["protocols"].items()
        if proto
    }
    ts_ports = [ts_port, _port(ts.receivers.http.endpoint)]
    assert len(set(ports.values()) | set(ts_ports)) == len(ports) + len(ts_ports)
    assert ports["otlp.grpc"] == 4317
    assert ports["otlp.http"] == 4318
    out_port = urlsplit(ts.exporter.endpoint).port
    (back,) = [
        r
        for r, body in receivers.items()
        if f"{r}.grpc" in ports and ports[f"{r}.grpc"] == out_port
    ]
    pipelines = collector["service"]["pipelines"]
    fed = {p.split("/")[0] for p, body in pipelines.items() if back in body["receivers"]}
    assert fed == {"traces", "logs", "metrics"}
    for p, body in pipelines.items():
        if back in body["receivers"]:
            assert to_tracescore not in body["exporters"], f"{name}: {p} loops back"
    # Traces reach tracescore from the agents' receiver; in fan-out they also go straight on.
    (trace_in,) = [b for b in pipelines.values() if to_tracescore in b["exporters"]]
    assert trace_in["receivers"] == ["otlp"]
    assert (len(trace_in["exporters"]) > 1) == (ts.mode == "fanout")


# -- the README's recipe -------------------------------------------------------------------


def recipe() -> list[str]:
    """The lines of collector-config/README.md's ```sh recipe``` block."""
    text = (CONFIGS / "README.md").read_text()
    match = re.search(r"```sh recipe\n(.*?)```", text, re.S)
    assert match, "collector-config/README.md lost its ```sh recipe``` block"
    return [line for line in match.group(1).splitlines() if line.strip()]


def _runs_to_completion(line: str) -> bool:
    return line.startswith("bash ") or " validate " in line or "agent.py" in line


@contextmanager
def _background(line: str, env: dict[str, str], log: Path, ready: str) -> Iterator[None]:
    with log.open("w") as out:
        proc = subprocess.Popen(
            ["bash", "-c", line], cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip
        try:
            wait_until(lambda: ready in log.read_text() or proc.poll() is not None, 60, line)
            assert proc.poll() is None, f"{line} exited:\n{log.read_text()}"
            yield
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)  # its own group: bash and what it runs
                try:
                    proc.wait(30)
                except subprocess.TimeoutExpired:
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait(10)


def _sink_requests(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line)["body"] for line in path.read_text().splitlines() if line]


def _spans(requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        span
        for body in requests
        for rs in body.get("resourceSpans", [])
        for ss in rs.get("scopeSpans", [])
        for span in ss.get("spans", [])
    ]


def _events(requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        record
        for body in requests
        for rl in body.get("resourceLogs", [])
        for sl in rl.get("scopeLogs", [])
        for record in sl.get("logRecords", [])
    ]


def _metric_names(requests: list[dict[str, Any]]) -> set[str]:
    return {
        m["name"]
        for body in requests
        for rm in body.get("resourceMetrics", [])
        for sm in rm.get("scopeMetrics", [])
        for m in sm.get("metrics", [])
    }


@pytest.mark.slow
def test_the_readme_recipe_runs_as_written(tmp_path: Path) -> None:
    collector_binary()  # fails under CI, else skips, when the collector is not built
    lines = recipe()
    sink_port, agents_http, scores, ts_grpc, ts_http = (free_port() for _ in range(5))
    config = tmp_path / "tracescore-fanout.yaml"
    config.write_text(tracescore_config("tracescore-fanout.yaml", ts_grpc, ts_http, scores))
    env = {
        **_plain_env(),
        "AGENT_OTLP_GRPC": f"127.0.0.1:{free_port()}",
        "AGENT_OTLP_HTTP": f"127.0.0.1:{agents_http}",
        "SCORES_OTLP_GRPC": f"127.0.0.1:{scores}",
        "TRACESCORE_OTLP": f"127.0.0.1:{ts_grpc}",
        "BACKEND_OTLP_HTTP": f"http://127.0.0.1:{sink_port}",
    }
    out = tmp_path / "sink.jsonl"
    bin_dir = str(Path(sys.executable).parent)

    def localize(line: str) -> str:
        line = line.replace(".venv/bin/", bin_dir + "/")
        line = line.replace("collector-config/tracescore-fanout.yaml", str(config))
        line = line.replace("--port 4328", f"--port {sink_port} --out {out}")
        return line.replace("http://127.0.0.1:4318", f"http://127.0.0.1:{agents_http}")

    readiness = {
        "sink.py": "otlp sink listening on",
        "tracescore serve": "tracescore serve: ready",
        'pre-collector.sh --path)" --config': "Everything is ready",
    }
    with ExitStack() as running:
        for n, line in enumerate(lines):
            command = localize(line)
            if _runs_to_completion(line):
                done = subprocess.run(
                    ["bash", "-c", command], cwd=ROOT, env=env, capture_output=True, text=True,
                    timeout=900,
                )  # fmt: skip
                assert done.returncode == 0, f"{line}:\n{done.stdout}\n{done.stderr}"
                continue
            (ready,) = [mark for key, mark in readiness.items() if key in line]
            running.enter_context(_background(command, env, tmp_path / f"{n}.log", ready))
        # agent.py ran three conversations; each is scored about 2 s after it ended.
        wait_until(
            lambda: (
                sum(s["name"] == "evaluate shop-assistant" for s in _spans(_sink_requests(out)))
                == 3
                and len(_events(_sink_requests(out))) == 6
            ),
            60,
            "three evaluate spans and six evaluation events at the sink",
        )
        time.sleep(0.5)  # anything late would show as a fourth span below
    # Stopped: tracescore flushed its metrics on SIGTERM, through the collector to the sink.
    requests = _sink_requests(out)
    spans = _spans(requests)
    agents = [s for s in spans if s["name"] == "invoke_agent shop-assistant"]
    evaluations = [s for s in spans if s["name"] == "evaluate shop-assistant"]
    assert len(agents) == 3
    assert len(evaluations) == 3
    scored = {base64.b64decode(e["spanId"]).hex() for e in _events(requests)}
    assert scored == {base64.b64decode(a["spanId"]).hex() for a in agents}
    assert {"tracescore.runs", "gen_ai.evaluation.score"} <= _metric_names(requests)


def test_a_missing_collector_fails_under_ci_and_skips_elsewhere(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TRACESCORE_CACHE", str(tmp_path))
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match=r"pre-collector\.sh"):
        collector_binary()
    monkeypatch.delenv("CI")
    with pytest.raises(pytest.skip.Exception, match=r"pre-collector\.sh"):
        collector_binary()


def test_the_readme_replica_copies_listen_where_loadbalancing_sends(tmp_path: Path) -> None:
    text = (CONFIGS / "README.md").read_text()
    match = re.search(r"```sh replicas\n(.*?)```", text, re.S)
    assert match, "collector-config/README.md lost its ```sh replicas``` block"
    lines = [line for line in match.group(1).splitlines() if line.strip()]
    assert len(lines) == 2
    for line in lines:
        done = subprocess.run(
            ["bash", "-c", line.replace("/tmp/", f"{tmp_path}/")], cwd=ROOT, timeout=30
        )
        assert done.returncode == 0
    replicas = [CONFIGS / "tracescore-fanout.yaml"]
    replicas += [tmp_path / f"tracescore-{n}.yaml" for n in (1, 2)]
    configs = [load_config(path) for path in replicas]
    listening = []
    for config in configs:
        assert config.receivers.grpc is not None
        assert config.receivers.http is not None
        listening.append(_port(config.receivers.grpc.endpoint))
        listening.append(_port(config.receivers.http.endpoint))
    assert len(set(listening)) == 6
    body = _resolved("loadbalancing.yaml")["exporters"]["loadbalancing/tracescore"]
    assert [_port(h) for h in body["resolver"]["static"]["hostnames"]] == listening[::2]
    assert {c.exporter.endpoint for c in configs if c.exporter} == {"http://127.0.0.1:14317"}
