"""`tracescore serve`: the config is checked before any port is bound; problems exit 2."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from tracescore.cli import main


def test_a_config_problem_exits_2_naming_the_yaml_path(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "serve.yaml"
    path.write_text("exporter: {endpoint: 'http://x:4318'}\nassembly:\n  decision_wait: soon\n")
    assert main(["serve", "--config", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"{path}:3: assembly.decision_wait" in err


def test_start_up_checks_exit_2_before_binding(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TS_CLI_TOKEN", raising=False)
    path = tmp_path / "serve.yaml"
    path.write_text("receivers:\n  http: {auth: {bearer_token_env: TS_CLI_TOKEN}}\n")
    assert main(["serve", "--config", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"{path}: 2 problem(s):" in err
    assert "exporter: tracescore serve needs a downstream OTLP endpoint" in err
    assert "receivers.http.auth.bearer_token_env: environment variable 'TS_CLI_TOKEN'" in err


@pytest.mark.parametrize("receiver", ["grpc", "http"])
def test_a_port_in_use_exits_2(
    receiver: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        other = "grpc" if receiver == "http" else "http"
        path = tmp_path / "serve.yaml"
        path.write_text(
            f"receivers: {{{receiver}: {{endpoint: '127.0.0.1:{port}'}}, {other}: null}}\n"
            "exporter: {endpoint: 'http://127.0.0.1:9'}\n"
        )
        assert main(["serve", "--config", str(path)]) == 2
    err = capsys.readouterr().err
    assert "tracescore serve: cannot start:" in err
    assert str(port) in err
