"""Session fixture running the real `@mastra/evals` 1.10.2 scorers on the oracle runs (Node).

The npm project in `tests/scorers/mastra/` (exact pins, committed `package-lock.json`) is
installed with `npm ci` into the pytest cache (`support/npm_project.py`), never into the repo
tree: after the first run a session only copies the script and runs `node` (about two seconds).
Its output is the recorded oracle `tests/testdata/oracles/mastra_scores.jsonl`, so the oracle is
re-checked against Mastra itself on every run, not only replayed. Without `node` and `npm` the
tests using it skip, saying so, except under `CI=true`, where they fail.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from support.npm_project import npm_project

__all__ = ["mastra_oracle_output"]

PROJECT = Path(__file__).resolve().parent / "mastra"
_FILES = ("package.json", "package-lock.json", "oracle.mjs")
_TIMEOUT_S = 600


@pytest.fixture(scope="session")
def mastra_oracle_output(request: pytest.FixtureRequest) -> str:
    """What `node oracle.mjs` prints with `@mastra/evals` 1.10.2 installed: JSON lines."""
    installed = npm_project(
        request,
        PROJECT,
        _FILES,
        missing="the Mastra oracle needs node (>= 20) and npm on PATH (apt-get install nodejs npm)",
        required_in_ci=True,
        timeout=_TIMEOUT_S,
    )
    proc = installed.run("oracle.mjs")
    if proc.returncode != 0:
        pytest.fail(f"the Mastra oracle exited with {proc.returncode}:\n{proc.stderr[-4000:]}")
    return proc.stdout
