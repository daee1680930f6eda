"""The `storage:` section: what it accepts, what it refuses, and the README's example."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tracescore.config import parse_config
from tracescore.errors import ConfigError

README = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")


def test_storage_is_off_unless_configured() -> None:
    assert parse_config("mode: forward\n").storage is None


def test_the_readme_example_loads_with_its_units() -> None:
    sections = re.findall(r"^```yaml section\n(.*?)^```$", README, re.MULTILINE | re.DOTALL)
    (block,) = [s for s in sections if s.startswith("storage:")]
    storage = parse_config(block, source="README.md").storage
    assert storage is not None
    assert storage.directory == "/var/lib/tracescore"
    assert storage.max_bytes == 1024**3
    assert storage.segment_bytes == 16 * 1024**2
    assert storage.sync == "always"


@pytest.mark.parametrize(
    ("yaml", "problem"),
    [
        ("storage: {}\n", "storage.directory"),
        ("storage: {directory: ''}\n", "storage.directory"),
        ("storage: {directory: d, sync: sometimes}\n", "storage.sync"),
        ("storage: {directory: d, max_bytes: 1KiB}\n", "storage.max_bytes"),
        ("storage: {directory: d, max_bytes: 4MiB, segment_bytes: 3MiB}\n", "twice"),
        ("storage: {directory: d, size: 1GiB}\n", "storage.size"),
    ],
)
def test_bad_storage_settings_name_their_path(yaml: str, problem: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(problem)):
        parse_config(yaml)
