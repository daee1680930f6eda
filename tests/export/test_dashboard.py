"""The Grafana dashboard in examples/grafana: every query it holds, run by a real Prometheus
that scraped a live `tracescore serve` (a subprocess) fed real pydantic-ai runs through the
OpenTelemetry SDK, returns the series a user expects; and the README's PromQL is the
dashboard's."""

from __future__ import annotations

import json
import re
import subprocess
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from e2e._process import ServeProcess, run_agent_client
from support.otlp_sink import OtlpSink
from support.prometheus import Prometheus, require_prometheus
from tracescore import semconv

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
DASHBOARD = ROOT / "examples" / "grafana" / "tracescore-dashboard.json"
# What Grafana puts in for its variables: every scenario, a rate window that holds a few
# scrapes, a range that holds the whole test.
GRAFANA_VARIABLES = {"$scenario": ".*", "$__rate_interval": "2m", "$__range": "10m"}

# Each prompt of tests/e2e/agent_client.py is one run: the order lookup calls its tools without
# an error, the mug purchase has a tool that fails, so its no_tool_errors gate fails the run.
CONFIG = """
scenarios:
  - name: shop
    match: {{agent: shop-assistant}}
    gates:
      - {{type: no_tool_errors}}
    scorers:
      - {{type: max_tool_calls, max: 5, threshold: 1.0}}
receivers: {{grpc: {{endpoint: "127.0.0.1:0"}}, http: {{endpoint: "127.0.0.1:0"}}}}
exporter: {{endpoint: "{endpoint}"}}
assembly: {{decision_wait: 200ms}}
service: {{metrics_interval: 1s, shutdown_grace_period: 5s}}
"""


def targets() -> list[dict[str, Any]]:
    dashboard = json.loads(DASHBOARD.read_text())
    return [
        {"panel": panel["title"], **target}
        for panel in dashboard["panels"]
        for target in panel["targets"]
    ]


def expand(expr: str) -> str:
    for name, value in GRAFANA_VARIABLES.items():
        expr = expr.replace(name, value)
    assert "$" not in expr, f"a Grafana variable the test does not know in {expr!r}"
    return expr


def by_label(result: list[dict[str, Any]], label: str) -> dict[str, float]:
    return {sample["metric"].get(label, ""): float(sample["value"][1]) for sample in result}


def test_the_dashboard_is_grafana_json_with_prometheus_targets() -> None:
    dashboard = json.loads(DASHBOARD.read_text())
    assert dashboard["uid"] == "tracescore"
    variables = {v["name"]: v for v in dashboard["templating"]["list"]}
    assert variables["datasource"]["query"] == "prometheus"
    ids = [panel["id"] for panel in dashboard["panels"]]
    assert len(ids) == len(set(ids))
    for target in targets():
        assert target["datasource"]["uid"] == "${datasource}"
        assert target["expr"].strip()


def test_the_readme_lists_the_dashboards_promql() -> None:
    readme = (ROOT / "README.md").read_text()
    section = readme.split("### Prometheus and Grafana", 1)[1].split("\n## ", 1)[0]
    shown = {" ".join(q.split()) for q in re.findall(r"```promql\n(.*?)```", section, re.S)}
    wanted = {
        "Pass rate over the range",
        "Mean score by evaluation",
        "Failing runs per scenario",
    }
    for target in targets():
        if target["panel"] in wanted:
            assert " ".join(target["expr"].split()) in shown, target["panel"]


def test_every_dashboard_query_returns_its_series_from_a_live_serve(tmp_path: Path) -> None:
    require_prometheus()
    with OtlpSink() as sink, ServeProcess(CONFIG.format(endpoint=sink.endpoint), tmp_path) as serve:
        http = serve.ports["http"]
        with urllib.request.urlopen(f"http://127.0.0.1:{http}/metrics") as response:
            text = response.read()
        check = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True)
        assert check.returncode == 0, check.stdout + check.stderr
        (tmp_path / "prom").mkdir()
        with Prometheus(tmp_path / "prom", [f"127.0.0.1:{http}"]) as prometheus:
            # Scraped before any run: the counters' first samples are the zeros of start-up.
            prometheus.wait_for(
                lambda: prometheus.value("sum(tracescore_spans_received_total)") == 0.0,
                "a first scrape",
            )
            sent = 0
            for wave, repeat in enumerate((1, 2)):  # the second wave grows existing series
                run_agent_client("grpc", f"127.0.0.1:{serve.ports['grpc']}",
                                 tmp_path / f"sent{wave}.json", repeat=repeat)  # fmt: skip
                sent += 2 * repeat

                def scraped(runs: int = sent) -> bool:
                    return prometheus.value("sum(tracescore_runs_total)") == runs

                prometheus.wait_for(scraped, f"{sent} runs scraped")
            results = {t["panel"] + "/" + t["refId"]: prometheus.query(expand(t["expr"]))
                       for t in targets()}  # fmt: skip
        code, _ = serve.stop()
        assert code == 0, serve.stderr

    for name, result in results.items():
        assert result, f"{name}: no series"
        assert all(s["value"][1] not in ("NaN", "+Inf", "-Inf") for s in result), (name, result)
    pass_rate = by_label(results["Pass rate by evaluation/A"], "gen_ai_evaluation_name")
    assert pass_rate == pytest.approx({"no_tool_errors": 0.5, "max_tool_calls": 1.0})
    over_range = by_label(results["Pass rate over the range/A"], "gen_ai_evaluation_name")
    assert over_range == pytest.approx({"no_tool_errors": 0.5, "max_tool_calls": 1.0})
    mean = by_label(results["Mean score by evaluation/A"], "gen_ai_evaluation_name")
    assert mean == pytest.approx({"no_tool_errors": 0.5, "max_tool_calls": 1.0})
    failing = by_label(results["Failing runs per scenario/A"], "tracescore_scenario")
    assert set(failing) == {"shop"}
    assert failing["shop"] > 0
    verdicts = by_label(results["Runs scored by verdict/A"], "tracescore_verdict")
    assert set(verdicts) == {"passed", "failed"}
    by_result = by_label(results["Scores by result/A"], "tracescore_evaluation_result")
    assert by_result["passed"] > 0
    assert by_result["failed"] > 0
    assert by_result["error"] == by_result["unscorable"] == 0, "declared at 0 from start-up"
    dropped = by_label(results["Spans dropped by reason/A"], "reason")
    assert set(dropped) >= {"export_rejected", "export_retries_exhausted", "shutdown"}
    assert set(dropped.values()) == {0.0}, "nothing was lost"
    refused = by_label(results["Requests refused by reason/A"], "reason")
    assert refused == dict.fromkeys(semconv.REFUSED_REASONS, 0.0), "declared at 0, none refused"
    received = results["Spans received and forwarded/A"]
    assert float(received[0]["value"][1]) > 0
    assert float(results["Scoring latency p95/A"][0]["value"][1]) > 0
