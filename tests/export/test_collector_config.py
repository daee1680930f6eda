"""collector-config/: every collector file is well-formed for otelcol-contrib, and each pairs
with its tracescore config (ports, modes, no feedback loops).

The allowed keys below are the documented ones (collector-contrib READMEs: otlp receiver,
memory_limiter, exporterhelper `sending_queue` / `retry_on_failure`, otlp_grpc exporter,
loadbalancing exporter). A key outside them is most likely a typo the collector would refuse.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import yaml

from tracescore.config import load_config

ROOT = Path(__file__).resolve().parents[2] / "collector-config"
PAIRS = {
    "fanout.yaml": ("tracescore-fanout.yaml", "fanout"),
    "inline.yaml": ("tracescore-inline.yaml", "forward"),
    "loadbalancing.yaml": ("tracescore-fanout.yaml", "fanout"),
}

_TLS = {"insecure": None, "insecure_skip_verify": None, "ca_file": None, "cert_file": None,
        "key_file": None}  # fmt: skip
_QUEUE = {
    "enabled": None, "num_consumers": None, "queue_size": None, "sizer": None,
    "block_on_overflow": None, "wait_for_result": None,
    "batch": {"flush_timeout": None, "min_size": None, "max_size": None},
}  # fmt: skip
_RETRY = {"enabled": None, "initial_interval": None, "max_interval": None,
          "max_elapsed_time": None, "multiplier": None}  # fmt: skip
_OTLP_CLIENT = {"tls": _TLS, "compression": None, "timeout": None, "headers": "*",
                "sending_queue": _QUEUE, "retry_on_failure": _RETRY}  # fmt: skip
# type -> (kind, allowed keys); a nested dict is a block, None a leaf, "*" any keys.
SCHEMAS: dict[str, tuple[str, Any]] = {
    "otlp": ("receivers", {"protocols": {"grpc": {"endpoint": None}, "http": {"endpoint": None}}}),
    "memory_limiter": ("processors", {
        "check_interval": None, "limit_mib": None, "spike_limit_mib": None,
        "limit_percentage": None, "spike_limit_percentage": None,
    }),
    "otlp_grpc": ("exporters", {"endpoint": None, **_OTLP_CLIENT}),
    "otlp_http": ("exporters", {"endpoint": None, **_OTLP_CLIENT}),
    "debug": ("exporters", {"verbosity": None}),
    "loadbalancing": ("exporters", {
        "routing_key": None,
        "protocol": {"otlp": _OTLP_CLIENT},
        "resolver": {
            "static": {"hostnames": None},
            "dns": {"hostname": None, "port": None, "interval": None, "timeout": None},
            "k8s": {"service": None, "ports": None, "timeout": None, "return_hostnames": None},
        },
        "timeout": None, "sending_queue": _QUEUE, "retry_on_failure": _RETRY,
    }),
}  # fmt: skip
SIGNALS_OF = {"loadbalancing": {"traces", "logs"}}
_GO_DURATION = re.compile(r"^(\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+$|^0$")
_DURATION_KEYS = {"check_interval", "timeout", "initial_interval", "max_interval",
                  "max_elapsed_time", "flush_timeout", "interval"}  # fmt: skip


def load(name: str) -> dict[str, Any]:
    data = yaml.safe_load((ROOT / name).read_text())
    assert isinstance(data, dict)
    return data


def check_keys(value: Any, schema: Any, path: str) -> list[str]:
    """Every key of `value` allowed by `schema`; durations in Go syntax."""
    if schema == "*" or schema is None:
        return []
    if value is None:
        return []  # an empty block (`batch:`) takes the defaults
    if not isinstance(value, dict):
        return [f"{path}: expected a mapping, got {value!r}"]
    problems = []
    for key, sub in value.items():
        if key not in schema:
            problems.append(f"{path}.{key}: not a documented key")
            continue
        if key in _DURATION_KEYS and not (isinstance(sub, str) and _GO_DURATION.match(sub)):
            problems.append(f"{path}.{key}: {sub!r} is not a Go duration")
        problems += check_keys(sub, schema[key], f"{path}.{key}")
    return problems


def port_of(endpoint: str) -> int:
    return int(endpoint.rsplit(":", 1)[1])


@pytest.mark.parametrize("name", sorted(PAIRS))
def test_components_are_contrib_components_with_documented_keys(name: str) -> None:
    config = load(name)
    assert set(config) <= {"receivers", "processors", "exporters", "connectors", "extensions",
                           "service"}  # fmt: skip
    problems = []
    for kind in ("receivers", "processors", "exporters"):
        for component_id, body in (config.get(kind) or {}).items():
            ctype = component_id.split("/", 1)[0]
            assert ctype in SCHEMAS, f"{name}: unknown component type {ctype!r}"
            expected_kind, schema = SCHEMAS[ctype]
            assert kind == expected_kind, f"{name}: {component_id} is not a {kind[:-1]}"
            problems += check_keys(body, schema, f"{name}:{kind}.{component_id}")
    assert problems == []


@pytest.mark.parametrize("name", sorted(PAIRS))
def test_every_component_is_defined_and_used_in_a_pipeline(name: str) -> None:
    config = load(name)
    pipelines = config["service"]["pipelines"]
    used: dict[str, set[str]] = {"receivers": set(), "processors": set(), "exporters": set()}
    for pipeline_id, pipeline in pipelines.items():
        signal = pipeline_id.split("/", 1)[0]
        assert signal in {"traces", "logs", "metrics"}, f"{name}: pipeline {pipeline_id}"
        assert set(pipeline) <= {"receivers", "processors", "exporters"}
        assert pipeline.get("receivers"), f"{name}: {pipeline_id} has no receiver"
        assert pipeline.get("exporters"), f"{name}: {pipeline_id} has no exporter"
        for kind, ids in pipeline.items():
            for component_id in ids:
                assert component_id in (config.get(kind) or {}), (
                    f"{name}: {pipeline_id} uses undefined {kind[:-1]} {component_id!r}"
                )
                allowed = SIGNALS_OF.get(component_id.split("/", 1)[0])
                assert allowed is None or signal in allowed, (
                    f"{name}: {component_id} cannot be used in a {signal} pipeline"
                )
                used[kind].add(component_id)
    for kind, ids in used.items():
        assert set(config.get(kind) or {}) == ids, f"{name}: unused {kind}"


@pytest.mark.parametrize("name", sorted(PAIRS))
def test_receiver_ports_do_not_collide(name: str) -> None:
    ports = [
        port_of(proto["endpoint"])
        for body in load(name)["receivers"].values()
        for proto in body["protocols"].values()
    ]
    assert len(ports) == len(set(ports))


@pytest.mark.parametrize(("name", "pair"), sorted(PAIRS.items()))
def test_collector_and_tracescore_configs_agree(name: str, pair: tuple[str, str]) -> None:
    tracescore_file, mode = pair
    collector = load(name)
    ts = load_config(ROOT / tracescore_file)  # the real loader: scenarios and all
    assert ts.mode == mode
    assert ts.receivers.grpc is not None
    assert ts.exporter is not None

    # The collector sends traces to tracescore's gRPC port.
    exporters = collector["exporters"]
    to_tracescore = [e for e in exporters if "tracescore" in e]
    assert len(to_tracescore) == 1
    (exporter_id,) = to_tracescore
    body = exporters[exporter_id]
    targets = body["resolver"]["static"]["hostnames"] if "resolver" in body else [body["endpoint"]]
    assert {port_of(t) for t in targets} == {port_of(ts.receivers.grpc.endpoint)}

    # tracescore's output lands on a collector receiver of its own...
    out_port = urlsplit(ts.exporter.endpoint).port
    (back_id,) = [
        r_id
        for r_id, r in collector["receivers"].items()
        if any(port_of(p["endpoint"]) == out_port for p in r["protocols"].values())
    ]
    assert ts.exporter.protocol == "grpc"
    assert "grpc" in collector["receivers"][back_id]["protocols"]
    # ...whose pipelines carry traces, logs and metrics and never lead back to tracescore.
    pipelines = collector["service"]["pipelines"]
    fed = {p_id.split("/")[0] for p_id, p in pipelines.items() if back_id in p["receivers"]}
    assert fed == {"traces", "logs", "metrics"}
    for p_id, p in pipelines.items():
        if back_id in p["receivers"]:
            assert exporter_id not in p["exporters"], f"{name}: {p_id} loops back"

    # Traces reach tracescore; in fan-out they also go straight on, inline they do not.
    trace_in = [p for p_id, p in pipelines.items() if exporter_id in p["exporters"]]
    assert len(trace_in) == 1
    straight_on = len(trace_in[0]["exporters"]) > 1
    assert straight_on == (mode == "fanout")


def test_the_readme_names_every_config_file() -> None:
    readme = (ROOT / "README.md").read_text()
    for path in ROOT.glob("*.yaml"):
        assert f"`{path.name}`" in readme


def test_the_key_checker_catches_typos() -> None:
    schema = SCHEMAS["otlp_grpc"][1]
    assert check_keys({"endpont": "x:1"}, schema, "e") == ["e.endpont: not a documented key"]
    assert check_keys({"timeout": "10 seconds"}, schema, "e") == [
        "e.timeout: '10 seconds' is not a Go duration"
    ]
    assert check_keys({"sending_queue": {"batch": {}}, "timeout": "1m30s"}, schema, "e") == []
