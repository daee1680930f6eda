"""Fixtures shared by the whole test suite."""

import pytest

from frameworks.fixtures import (
    agno_traces,
    framework_testdata_updates,
    openai_agents_traces,
    pydantic_ai_traces,
)
from support.fixtures import fake_openai, fake_openai_factory

__all__ = [
    "agno_traces",
    "fake_openai",
    "fake_openai_factory",
    "framework_testdata_updates",
    "openai_agents_traces",
    "pydantic_ai_traces",
    "update_golden",
]


def pytest_addoption(parser: pytest.Parser) -> None:
    """`--update-golden` rewrites golden files under tests/testdata, then fails on purpose."""
    parser.addoption(
        "--update-golden",
        action="store_true",
        default=False,
        help="rewrite golden files (tests that do so fail so the diff gets reviewed)",
    )


@pytest.fixture
def update_golden(request: pytest.FixtureRequest) -> bool:
    """True when the run was asked to rewrite golden files."""
    return bool(request.config.getoption("--update-golden"))
