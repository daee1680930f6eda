"""Start-up checks name every problem with its YAML path, before any port is bound."""

from __future__ import annotations

from pathlib import Path

import pytest

from tracescore.config import parse_config
from tracescore.errors import ConfigError
from tracescore.pipeline import preflight


def test_every_problem_is_reported_at_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TS_MISSING_TOKEN", raising=False)
    config = parse_config(
        "receivers:\n"
        "  grpc: {auth: {bearer_token_env: TS_MISSING_TOKEN}}\n"
        f"  http: {{tls: {{cert_file: '{tmp_path}/nope.pem', key_file: '{tmp_path}/k.pem'}}}}\n"
    )
    with pytest.raises(ConfigError) as caught:
        preflight(config, source="serve.yaml")
    problems = caught.value.problems
    assert problems[0].startswith("exporter: tracescore serve needs a downstream OTLP endpoint")
    assert problems[1] == (
        "receivers.grpc.auth.bearer_token_env: environment variable 'TS_MISSING_TOKEN' "
        "is not set or empty"
    )
    assert problems[2].startswith(
        f"receivers.http.tls.cert_file: cannot read '{tmp_path}/nope.pem'"
    )
    assert problems[3].startswith("receivers.http.tls.key_file: cannot read")
    assert str(caught.value).startswith("serve.yaml: 4 problem(s):")


def test_both_receivers_off_is_a_problem() -> None:
    config = parse_config(
        "receivers: {grpc: null, http: null}\nexporter: {endpoint: 'http://x:1'}\n"
    )
    with pytest.raises(ConfigError, match="receivers: both grpc and http are off"):
        preflight(config)


def test_a_certificate_that_does_not_load_is_a_problem(tmp_path: Path) -> None:
    junk = tmp_path / "junk.pem"
    junk.write_text("not a certificate")
    config = parse_config(
        f"receivers: {{http: {{tls: {{cert_file: '{junk}', key_file: '{junk}'}}}}}}\n"
        "exporter: {endpoint: 'http://x:1', tls: {cert_file: /no/such/cert.pem}}\n"
    )
    with pytest.raises(ConfigError) as caught:
        preflight(config)
    text = str(caught.value)
    assert "receivers.http.tls: certificate and key do not load" in text
    assert "exporter.tls.cert_file: cannot read '/no/such/cert.pem'" in text
    assert "exporter.tls: cert_file and key_file go together" in text


def test_tokens_are_read_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TS_TOKEN", " abc ")
    config = parse_config(
        "receivers: {grpc: null, http: {auth: {bearer_token_env: TS_TOKEN}}}\n"
        "exporter: {endpoint: 'http://x:1'}\n"
    )
    secrets = preflight(config)
    assert (secrets.grpc_token, secrets.http_token) == (None, "abc")
