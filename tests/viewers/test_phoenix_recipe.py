"""The README's Phoenix recipe (traces only to Phoenix) runs clean against a real Phoenix, and
without it a traces-only backend costs one warning per refused signal, not one per push.

A real pydantic-ai agent exports through the OpenTelemetry SDK to `tracescore serve`, which
forwards to Phoenix; the test reads the spans back through Phoenix's REST API.
"""

from __future__ import annotations

import re
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from e2e._process import ServeProcess, run_agent_client
from support.phoenix import Phoenix

pytestmark = pytest.mark.slow

README = Path(__file__).resolve().parents[2] / "README.md"
AGENT = "shop-assistant"


@pytest.fixture(scope="module")
def phoenix(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Phoenix]:
    with Phoenix(tmp_path_factory.mktemp("phoenix")) as running:
        yield running


def readme_recipe() -> dict[str, Any]:
    """The yaml block after the README's "Phoenix (traces only)" paragraph."""
    text = README.read_text()
    after = text[text.index("**Phoenix (traces only).**") :]
    match = re.search(r"```yaml\n(.*?)```", after, re.S)
    assert match is not None
    recipe: dict[str, Any] = yaml.safe_load(match.group(1))
    return recipe


def serve_config(phoenix: Phoenix, recipe: dict[str, Any]) -> str:
    """The recipe pointed at this Phoenix, on loopback, scoring the test agent's runs."""
    assert recipe["exporter"]["endpoint"] == "http://127.0.0.1:6006"
    config = {
        **recipe,
        "exporter": {**recipe["exporter"], "endpoint": phoenix.url},
        "receivers": {"grpc": None, "http": {"endpoint": "127.0.0.1:0"}},
        "assembly": {"decision_wait": "300ms"},
        "service": {"metrics_interval": "300ms"},
        "scenarios": [
            {
                "name": "shop",
                "match": {"agent": AGENT},
                "gates": [{"type": "called_tool", "tool": "lookup_order"}],
            }
        ],
    }
    return yaml.safe_dump(config)


def send_and_wait(phoenix: Phoenix, serve: ServeProcess, tmp_path: Path, project: str) -> None:
    """Run the agent through serve; wait until Phoenix holds its scored agent spans."""
    run_agent_client("http", f"127.0.0.1:{serve.ports['http']}", tmp_path / "sent.json",
                     project=project)  # fmt: skip

    def scored() -> list[dict[str, Any]]:
        return [
            s
            for s in phoenix.spans(project)
            if s["name"].startswith("invoke_agent") and "eval.called_tool.score" in str(s)
        ]

    phoenix.wait_for(scored)


def refusals(serve: ServeProcess) -> list[str]:
    return [line for line in serve.lines if "does not accept" in line]


def readyz(serve: ServeProcess) -> int:
    url = f"http://127.0.0.1:{serve.ports['http']}/readyz"
    with urllib.request.urlopen(url, timeout=5) as reply:
        return int(reply.status)


def test_the_readme_recipe_sends_traces_to_phoenix_without_a_warning(
    phoenix: Phoenix, tmp_path: Path
) -> None:
    recipe = readme_recipe()
    assert recipe["exporter"]["logs"] == {"enabled": False}
    assert recipe["exporter"]["metrics"] == {"enabled": False}
    with ServeProcess(serve_config(phoenix, recipe), tmp_path) as serve:
        send_and_wait(phoenix, serve, tmp_path, "recipe")
        assert readyz(serve) == 200
        code, _ = serve.stop()
    assert code == 0, serve.stderr
    assert not [line for line in serve.lines if "WARNING" in line], serve.stderr


def test_all_signals_to_phoenix_warn_once_per_refused_signal(
    phoenix: Phoenix, tmp_path: Path
) -> None:
    recipe = readme_recipe()
    exporter = {k: v for k, v in recipe["exporter"].items() if k not in ("logs", "metrics")}
    with ServeProcess(serve_config(phoenix, {**recipe, "exporter": exporter}), tmp_path) as serve:
        send_and_wait(phoenix, serve, tmp_path, "all-signals")
        phoenix.wait_for(lambda: len(refusals(serve)) == 2)
        assert readyz(serve) == 200, "a refused log or metric signal does not make it unready"
        code, _ = serve.stop()
    refused = refusals(serve)
    assert len(refused) == 2, serve.stderr
    assert any("accept logs" in line and "exporter.logs.enabled: false" in line for line in refused)
    assert any("accept metrics" in line for line in refused)
    assert all("405" in line for line in refused)
    assert code == 0, serve.stderr
