"""Fixtures shared by the whole test suite."""

import subprocess
from pathlib import Path

import pytest

from frameworks.fixtures import (
    agent_framework_traces,
    agno_traces,
    framework_testdata_updates,
    openai_agents_traces,
    pydantic_ai_traces,
    traceloop_traces,
)
from support.fixtures import fake_openai, fake_openai_factory

__all__ = [
    "agent_framework_traces",
    "agno_traces",
    "certificate",
    "fake_openai",
    "fake_openai_factory",
    "framework_testdata_updates",
    "openai_agents_traces",
    "pydantic_ai_traces",
    "traceloop_traces",
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


@pytest.fixture(scope="session")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 and its key (made by the openssl CLI)."""
    folder = tmp_path_factory.mktemp("tls")
    cert, key = folder / "cert.pem", folder / "key.pem"
    try:
        subprocess.run(
            [
                "openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
                "-keyout", str(key), "-out", str(cert),
            ],
            check=True,
            capture_output=True,
        )  # fmt: skip
    except (OSError, subprocess.CalledProcessError) as exc:
        pytest.skip(f"openssl cannot make a test certificate: {exc}")
    return cert, key
