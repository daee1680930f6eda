"""Session fixture running the Vercel AI SDK trace generator (Node) in `tests/frameworks/vercel/`.

The npm project (exact pins, committed `package-lock.json`) is installed with `npm ci` into the
pytest cache (`support/npm_project.py`), never into the repo tree: after the first run a session
only copies the script and runs `node` (about a second). Without `node` and `npm` on
PATH the Vercel tests skip, saying so.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from frameworks.fixtures import _sync_testdata
from support.npm_project import npm_project

__all__ = ["vercel_traces"]

PROJECT = Path(__file__).resolve().parent / "vercel"
_FILES = ("package.json", "package-lock.json", "generate.mjs")
_TIMEOUT_S = 300


@pytest.fixture(scope="session")
def vercel_traces(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, dict[str, Any]]:
    """`{"vercel-<case>": OTLP JSON}` from real `ai` runs against its MockLanguageModelV3."""
    installed = npm_project(
        request,
        PROJECT,
        _FILES,
        missing="Vercel AI SDK traces need node and npm on PATH (neither is a Python dep)",
        required_in_ci=False,
        timeout=_TIMEOUT_S,
    )
    out = tmp_path_factory.mktemp("vercel")
    proc = installed.run("generate.mjs", str(out))
    if proc.returncode != 0:
        pytest.fail(f"vercel generator exited with {proc.returncode}:\n{proc.stderr[-4000:]}")
    traces = {
        Path(line).name.removesuffix(".otlp.json"): json.loads(Path(line).read_text("utf-8"))
        for line in proc.stdout.split()
        if line.endswith(".otlp.json")
    }
    if not traces:
        pytest.fail("vercel generator wrote no traces", pytrace=False)
    _sync_testdata(traces)
    return traces
