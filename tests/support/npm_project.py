"""An npm project of the test suite, installed into the pytest cache and run with `node`.

A project (exact pins, committed `package-lock.json`) is installed with `npm ci` into the pytest
cache, keyed by the hash of its `package.json` and lock file, never into the repo tree: after the
first run a session only copies its files and runs `node`. ESM resolves packages next to the
script, so scripts run from the install directory.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

__all__ = ["NpmProject", "npm_project"]


@dataclass(frozen=True)
class NpmProject:
    """An installed project: `run` its scripts with node."""

    node: str
    work: Path
    timeout: float

    def run(self, script: str, *args: str) -> subprocess.CompletedProcess[str]:
        """`node <script> <args>` in the install directory, its output captured as text."""
        return subprocess.run(
            [self.node, str(self.work / script), *args],
            cwd=self.work,
            capture_output=True,
            text=True,
            timeout=self.timeout,
            check=False,
        )


def npm_project(
    request: pytest.FixtureRequest,
    project: Path,
    files: tuple[str, ...],
    *,
    missing: str,
    required_in_ci: bool,
    timeout: float,
) -> NpmProject:
    """`project` (its `files` copied) installed in the pytest cache.

    Without node and npm on PATH, or with the pytest cache off (`-p no:cacheprovider`), the
    test skips saying `missing` (or why), and fails instead under `CI=true` when
    `required_in_ci`.
    """
    node, npm = shutil.which("node"), shutil.which("npm")
    cache = getattr(request.config, "cache", None)
    if node is None or npm is None or cache is None:
        reason = (
            missing
            if node is None or npm is None
            else f"{project.name}'s npm install lives in the pytest cache (cacheprovider is off)"
        )
        if required_in_ci and os.environ.get("CI") == "true":
            pytest.fail(reason, pytrace=False)
        pytest.skip(reason)
    key = hashlib.sha256(
        (project / "package-lock.json").read_bytes() + (project / "package.json").read_bytes()
    ).hexdigest()[:16]
    work = Path(cache.mkdir(f"{project.name}-npm-{key}"))
    for name in files:
        shutil.copyfile(project / name, work / name)
    done = work / "node_modules" / ".tracescore-installed"
    if not done.exists():
        proc = subprocess.run(
            [npm, "ci", "--no-audit", "--no-fund", "--ignore-scripts"],
            cwd=work,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        if proc.returncode != 0:
            pytest.fail(f"npm ci in {work} failed:\n{proc.stderr[-4000:]}", pytrace=False)
        done.write_text("ok\n", encoding="utf-8")
    return NpmProject(node, work, timeout)
