"""Every command and YAML block of README.md runs, and the output it shows is the real one.

Fenced blocks, in order: `sh` blocks are commands (one per line; `# exits N` at the end of a
line is the expected exit code, 0 otherwise), `yaml` blocks are configs that must load,
`yaml broken` blocks must fail with exactly the problems of the next `text` block, the first
`text` block is the output of the first command, and the `json` block must agree with the real
`--output json` wherever it does not elide a value with `...`.

Two commands are checked rather than run: the install steps of the first command need the
network (set TRACESCORE_TEST_INSTALL=1 to run them in a fresh venv), and `./scripts/check` runs
this very test suite.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

from tracescore.config import parse_config
from tracescore.errors import ConfigError

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
BLOCKS = [
    (m.group(1).strip(), m.group(2))
    for m in re.finditer(r"^```([^\n]*)\n(.*?)^```$", README, flags=re.MULTILINE | re.DOTALL)
]
INSTALL_STEPS = ["python3 -m venv .venv", ". .venv/bin/activate", "pip install -e ."]
CHECK = "./scripts/check"


def blocks(info: str) -> list[str]:
    return [body for kind, body in BLOCKS if kind == info]


def commands() -> list[tuple[str, int]]:
    """Every README command with its expected exit code; the install steps left out."""
    out = []
    for body in blocks("sh"):
        for line in body.splitlines():
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            command, _, comment = line.partition("  # ")
            found = re.match(r"exits (\d+)", comment.strip())
            steps = [s.strip() for s in command.split("&&")]
            if steps[: len(INSTALL_STEPS)] == INSTALL_STEPS:
                steps = steps[len(INSTALL_STEPS) :]
            for step in steps:
                if step != CHECK:
                    out.append((step, int(found.group(1)) if found else 0))
    return out


class Runner:
    """Runs README commands in one scratch copy of examples/, each command once."""

    def __init__(self, work: Path) -> None:
        self.work = work
        shutil.copytree(ROOT / "examples", work / "examples")
        self.done: dict[str, subprocess.CompletedProcess[str]] = {}

    def __call__(self, command: str) -> subprocess.CompletedProcess[str]:
        if command not in self.done:
            path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"
            env = {**os.environ, "PATH": path}
            env.pop("NO_COLOR", None)
            self.done[command] = subprocess.run(
                ["bash", "-c", command],
                cwd=self.work,
                env=env,
                capture_output=True,
                text=True,
                timeout=300,
                check=False,
            )
        return self.done[command]


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Runner:
    return Runner(tmp_path_factory.mktemp("readme"))


def test_the_readme_opens_with_the_two_commands_for_a_fresh_machine() -> None:
    first, second = blocks("sh")[:2]
    assert BLOCKS[0][0] == "sh"
    steps = [s.strip() for s in first.partition("  # ")[0].split("&&")]
    assert steps[:3] == INSTALL_STEPS
    assert steps[3].startswith("tracescore score --config examples/support-agent/tracescore.yaml")
    assert second.strip() == CHECK


def test_the_commands_that_are_checked_rather_than_run() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert project["project"]["scripts"]["tracescore"] == "tracescore.cli:main"
    check = ROOT / "scripts" / "check"
    assert check.stat().st_mode & stat.S_IXUSR
    text = check.read_text(encoding="utf-8")
    for tool in (
        "pip install",
        "-e '.[test",
        "ruff check",
        "ruff format --check",
        "mypy",
        "lint-imports",
        "pytest",
    ):
        assert tool in text
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "exec ./scripts/check" in ci


@pytest.mark.parametrize(("command", "code"), commands())
def test_every_readme_command_runs(command: str, code: int, run: Runner) -> None:
    done = run(command)
    assert done.returncode == code, done.stderr
    assert "Traceback" not in done.stderr


def _same_table(shown: str, real: str) -> None:
    """Equal, except that an explanation's wording after its label is not pinned."""

    def normalise(text: str) -> list[str]:
        return [
            line.split("): ", 1)[0] if line.startswith("    ") else line.rstrip()
            for line in text.splitlines()
        ]

    assert normalise(shown) == normalise(real)


def test_the_output_shown_is_the_real_output(run: Runner) -> None:
    quickstart = commands()[0][0]
    shown = blocks("text")[0]
    assert shown.startswith("RUN ")
    _same_table(shown, run(quickstart).stdout)


def test_every_yaml_config_loads() -> None:
    configs = blocks("yaml")
    assert len(configs) >= 2
    for body in configs:
        assert parse_config(body, source="README.md").scenarios
    for body in blocks("yaml section"):  # one section of a config, shown on its own
        parse_config(body, source="README.md")


def test_the_broken_config_fails_as_shown(tmp_path: Path) -> None:
    (broken,) = blocks("yaml broken")
    with pytest.raises(ConfigError):
        parse_config(broken)
    index = next(i for i, (kind, _) in enumerate(BLOCKS) if kind == "yaml broken")
    shown = next(body for kind, body in BLOCKS[index:] if kind == "text")
    (tmp_path / "tracescore.yaml").write_text(broken, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "tracescore", "validate-config", "tracescore.yaml"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2
    assert done.stderr == shown


def _agrees(shown: Any, real: Any, where: str) -> None:
    if isinstance(shown, str) and "..." in shown:
        assert isinstance(real, str), where
        assert real.startswith(shown.split("...")[0]), where
    elif isinstance(shown, dict):
        assert isinstance(real, dict), where
        assert list(shown) == list(real), where
        for key in shown:
            _agrees(shown[key], real[key], f"{where}.{key}")
    elif isinstance(shown, list):
        assert isinstance(real, list), where
        assert len(shown) == len(real), where
        for i, (s, r) in enumerate(zip(shown, real, strict=True)):
            _agrees(s, r, f"{where}[{i}]")
    else:
        assert shown == real, where


def test_the_json_shown_agrees_with_the_real_json(run: Runner) -> None:
    (body,) = blocks("json")
    decoder = json.JSONDecoder()
    shown, position = [], 0
    while position < len(body.strip()):
        obj, end = decoder.raw_decode(body, position)
        shown.append(obj)
        position = end + len(body[end:]) - len(body[end:].lstrip())
    command = next(c for c, _ in commands() if "--output json" in c)
    real = [json.loads(line) for line in run(command).stdout.splitlines()]
    for obj in shown:
        candidates = [
            r
            for r in real
            if r["kind"] == obj["kind"]
            and all(r.get(k) == obj[k] for k in ("name", "scenario", "verdict") if k in obj)
        ]
        assert candidates, obj
        _agrees(obj, candidates[0], obj["kind"])


@pytest.mark.slow
@pytest.mark.skipif(
    os.environ.get("TRACESCORE_TEST_INSTALL") != "1",
    reason="installs from PyPI into a fresh venv; set TRACESCORE_TEST_INSTALL=1",
)
def test_the_quickstart_verbatim_in_a_fresh_venv(tmp_path: Path) -> None:
    for name in ("src", "examples"):
        shutil.copytree(ROOT / name, tmp_path / name, ignore=shutil.ignore_patterns("*.egg-info"))
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(ROOT / name, tmp_path / name)
    first = blocks("sh")[0].partition("  # ")[0]
    done = subprocess.run(
        ["bash", "-c", first],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert done.returncode == 1, done.stderr
    _same_table(blocks("text")[0], done.stdout)
