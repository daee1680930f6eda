"""Session fixture running the Vercel AI SDK trace generator (Node) in `tests/frameworks/vercel/`.

The npm project (exact pins, committed `package-lock.json`) is installed with `npm ci` into the
pytest cache, keyed by the lock file's hash, never into the repo tree: after the first run a
session only copies the script and runs `node` (about a second). Without `node` and `npm` on
PATH the Vercel tests skip, saying so.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from frameworks.fixtures import _sync_testdata

__all__ = ["vercel_traces"]

PROJECT = Path(__file__).resolve().parent / "vercel"
_FILES = ("package.json", "package-lock.json", "generate.mjs")
_TIMEOUT_S = 300


def _run(cmd: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        cmd, cwd=cwd, capture_output=True, text=True, timeout=_TIMEOUT_S, check=False
    )


@pytest.fixture(scope="session")
def vercel_traces(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, dict[str, Any]]:
    """`{"vercel-<case>": OTLP JSON}` from real `ai` runs against its MockLanguageModelV3."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        pytest.skip("Vercel AI SDK traces need node and npm on PATH (neither is a Python dep)")
    lock = (PROJECT / "package-lock.json").read_bytes()
    key = hashlib.sha256(lock + (PROJECT / "package.json").read_bytes()).hexdigest()[:16]
    work = Path(request.config.cache.mkdir(f"vercel-npm-{key}"))
    # ESM resolves packages next to the script, so the script runs from the install directory.
    for name in _FILES:
        shutil.copyfile(PROJECT / name, work / name)
    done = work / "node_modules" / ".tracescore-installed"
    if not done.exists():
        proc = _run([npm, "ci", "--no-audit", "--no-fund", "--ignore-scripts"], work)
        if proc.returncode != 0:
            pytest.fail(f"npm ci in {work} failed:\n{proc.stderr[-4000:]}", pytrace=False)
        done.write_text("ok\n", encoding="utf-8")
    out = tmp_path_factory.mktemp("vercel")
    proc = _run([node, str(work / "generate.mjs"), str(out)], work)
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
