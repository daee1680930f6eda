"""Session fixture running the real `@mastra/evals` 1.10.2 scorers on the oracle runs (Node).

The npm project in `tests/scorers/mastra/` (exact pins, committed `package-lock.json`) is
installed with `npm ci` into the pytest cache, keyed by the lock file's hash, never into the repo
tree: after the first run a session only copies the script and runs `node` (about two seconds).
Its output is the recorded oracle `tests/testdata/oracles/mastra_scores.jsonl`, so the oracle is
re-checked against Mastra itself on every run, not only replayed. Without `node` and `npm` the
tests using it skip, saying so, except under `CI=true`, where they fail.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from pathlib import Path

import pytest

__all__ = ["mastra_oracle_output"]

PROJECT = Path(__file__).resolve().parent / "mastra"
_FILES = ("package.json", "package-lock.json", "oracle.mjs")
_TIMEOUT_S = 600


def _run(cmd: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        cmd, cwd=cwd, capture_output=True, text=True, timeout=_TIMEOUT_S, check=False
    )


@pytest.fixture(scope="session")
def mastra_oracle_output(request: pytest.FixtureRequest) -> str:
    """What `node oracle.mjs` prints with `@mastra/evals` 1.10.2 installed: JSON lines."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        reason = "the Mastra oracle needs node (>= 20) and npm on PATH (apt-get install nodejs npm)"
        if os.environ.get("CI") == "true":
            pytest.fail(reason, pytrace=False)
        pytest.skip(reason)
    lock = (PROJECT / "package-lock.json").read_bytes()
    key = hashlib.sha256(lock + (PROJECT / "package.json").read_bytes()).hexdigest()[:16]
    work = Path(request.config.cache.mkdir(f"mastra-npm-{key}"))
    # ESM resolves packages next to the script, so the script runs from the install directory.
    for name in _FILES:
        shutil.copyfile(PROJECT / name, work / name)
    done = work / "node_modules" / ".tracescore-installed"
    if not done.exists():
        proc = _run([npm, "ci", "--no-audit", "--no-fund", "--ignore-scripts"], work)
        if proc.returncode != 0:
            pytest.fail(f"npm ci in {work} failed:\n{proc.stderr[-4000:]}", pytrace=False)
        done.write_text("ok\n", encoding="utf-8")
    proc = _run([node, str(work / "oracle.mjs")], work)
    if proc.returncode != 0:
        pytest.fail(f"the Mastra oracle exited with {proc.returncode}:\n{proc.stderr[-4000:]}")
    return proc.stdout
