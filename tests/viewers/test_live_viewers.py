"""examples/live step 4: run its own commands and check that the scores show in a real Phoenix
(as annotations) and a real Prometheus (scraped from /metrics), as the README says.

The commands come from the ```sh viewers``` block of examples/live/README.md; ports and paths
are swapped for free ones and temporary folders (the configs rewritten to match), so the test
never collides with anything on 6006/4317/4318/9090.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from export.test_live_example import REPO, http_get, process, wait_for
from support.otlp_sink import free_port
from support.phoenix import phoenix_venv
from support.prometheus import require_prometheus

pytestmark = pytest.mark.slow

LIVE = REPO / "examples" / "live"


def viewer_commands() -> list[list[str]]:
    readme = (LIVE / "README.md").read_text()
    match = re.search(r"```sh viewers\n(.*?)```", readme, re.S)
    assert match, "examples/live/README.md lost its ```sh viewers``` block"
    return [shlex.split(line) for line in match.group(1).splitlines() if line.strip()]


def test_the_viewer_steps_are_in_order() -> None:
    commands = viewer_commands()
    assert [c[1] if c[0] == "bash" else c[0] for c in commands] == [
        "scripts/check.d/pre-phoenix.sh",
        "scripts/check.d/pre-prometheus.sh",
        "env",
        "prometheus",
        ".venv/bin/tracescore",
        ".venv/bin/python",
        "curl",
    ]


def test_the_scores_show_in_phoenix_and_prometheus(tmp_path: Path) -> None:
    venv = phoenix_venv()
    require_prometheus()
    install_phoenix, install_prometheus, phoenix_cmd, prom_cmd, serve_cmd, agent_cmd, curl_cmd = (
        viewer_commands()
    )
    ports = {name: free_port() for name in ("phoenix", "phoenix_grpc", "prom", "grpc", "http")}
    config = yaml.safe_load((LIVE / "tracescore.viewers.yaml").read_text())
    config["receivers"]["grpc"]["endpoint"] = f"127.0.0.1:{ports['grpc']}"
    config["receivers"]["http"]["endpoint"] = f"127.0.0.1:{ports['http']}"
    config["exporter"]["endpoint"] = f"http://127.0.0.1:{ports['phoenix']}"
    config["annotations"]["phoenix"]["endpoint"] = f"http://127.0.0.1:{ports['phoenix']}"
    config_path = tmp_path / "tracescore.viewers.yaml"
    config_path.write_text(yaml.safe_dump(config))
    prom_config = tmp_path / "prometheus.yml"
    prom_config.write_text(
        (LIVE / "prometheus.yml").read_text().replace(":4318", f":{ports['http']}")
    )

    def localize(argv: list[str]) -> list[str]:
        out = [sys.executable if a == ".venv/bin/python" else a for a in argv]
        if out[0] == ".venv/bin/tracescore":
            out[:1] = [sys.executable, "-m", "tracescore"]
        return [
            a.replace("~/.cache/tracescore/phoenix-20.26.1", str(venv))
            .replace("/tmp/tracescore-phoenix", str(tmp_path / "phoenix"))
            .replace("/tmp/tracescore-prometheus", str(tmp_path / "prometheus"))
            .replace("examples/live/tracescore.viewers.yaml", str(config_path))
            .replace("examples/live/prometheus.yml", str(prom_config))
            .replace("=6006", f"={ports['phoenix']}")
            .replace("=4339", f"={ports['phoenix_grpc']}")
            .replace(":9090", f":{ports['prom']}")
            .replace(":4318", f":{ports['http']}")
            for a in out
        ]

    for install in (install_phoenix, install_prometheus):  # cached: a second run is instant
        subprocess.run(install, cwd=REPO, check=True, timeout=900)
    phoenix_log, prom_log, serve_log = (tmp_path / n for n in ("phx.log", "prom.log", "ts.log"))
    phoenix_url = f"http://127.0.0.1:{ports['phoenix']}"
    with (
        process(localize(phoenix_cmd), phoenix_log) as phoenix,
        process(localize(prom_cmd), prom_log) as prometheus,
    ):
        wait_for(lambda: http_get(f"{phoenix_url}/healthz")[0] == 200, "phoenix", phoenix_log,
                 phoenix, timeout=240)  # fmt: skip
        with process(localize(serve_cmd), serve_log) as serve:
            ready = f"http://127.0.0.1:{ports['http']}/readyz"
            wait_for(lambda: http_get(ready)[0] == 200, "tracescore /readyz", serve_log, serve)
            agent = subprocess.run(
                localize(agent_cmd), cwd=REPO, capture_output=True, text=True, timeout=120
            )
            assert agent.returncode == 0, agent.stderr

            def annotated() -> list[dict[str, Any]] | None:
                status, text = http_get(f"{phoenix_url}/v1/projects/default/spans?limit=100")
                if status != 200:
                    return None
                agents = [s for s in json.loads(text)["data"] if s["span_kind"] == "AGENT"]
                if len(agents) != 3:
                    return None
                ids = "&".join(f"span_ids={s['context']['span_id']}" for s in agents)
                url = f"{phoenix_url}/v1/projects/default/span_annotations?{ids}&limit=100"
                status, text = http_get(url)
                found = json.loads(text)["data"] if status == 200 else []
                return found if len(found) == 6 else None

            annotations = wait_for(annotated, "six annotations in Phoenix", serve_log, serve,
                                   timeout=120)  # fmt: skip
            assert all(a["annotator_kind"] == "CODE" for a in annotations)
            failed = [a for a in annotations if a["result"]["score"] == 0.0]
            assert [a["name"] for a in failed] == ["no_tool_errors"]
            assert failed[0]["result"]["explanation"] == "1 of 2 tool call(s) failed: charge_card"

            def counted() -> dict[tuple[str, str], float] | None:
                done = subprocess.run(
                    localize(curl_cmd), capture_output=True, text=True, timeout=30
                )
                if done.returncode != 0 or not done.stdout:
                    return None
                result = json.loads(done.stdout)["data"]["result"]
                series = {
                    (r["metric"]["gen_ai_evaluation_name"],
                     r["metric"]["tracescore_evaluation_result"]): float(r["value"][1])
                    for r in result
                }  # fmt: skip
                return series if sum(series.values()) == 6 else None

            series = wait_for(counted, "six scores in Prometheus", prom_log, prometheus)
            assert {k: v for k, v in series.items() if v} == {
                ("max_tool_calls", "passed"): 3.0,
                ("no_tool_errors", "passed"): 2.0,
                ("no_tool_errors", "failed"): 1.0,
            }
            serve.terminate()
            assert serve.wait(timeout=60) == 0, serve_log.read_text()
    assert os.path.exists(tmp_path / "prometheus")
