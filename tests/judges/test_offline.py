"""`tracescore score` with judge scorers: judged, skipped with `--no-judge`, or refused."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from judges._helpers import MODEL, TESTDATA
from support.fake_openai_process import FakeOpenAI
from tracescore.cli import main

Factory = Callable[..., FakeOpenAI]
TRACE = str(TESTDATA / "subagent.otlp.json")
KEY_ENV = "TRACESCORE_TEST_JUDGE_KEY"


def write_config(tmp_path: Path, server: FakeOpenAI, scenario_extra: str = "") -> str:
    path = tmp_path / "tracescore.yaml"
    path.write_text(
        f"""
judge:
  base_url: {server.base_url}
  model: {MODEL}
  api_key_env: {KEY_ENV}
  retry_backoff_s: 0.01
scenarios:
  - name: billing
    match: {{agent: support_agent}}{scenario_extra}
    gates:
      - type: called_tool
        tool: ask_billing
      - type: answer_relevancy
        name: relevant
    scorers:
      - type: llm_rubric
        name: tone
        criteria: The answer is polite.
        threshold: 0.5
        judge: {{model: rubric-model}}
""",
        encoding="utf-8",
    )
    return str(path)


SCRIPT = {
    "scenarios": [
        {"match": "Criterion:", "steps": [{"json": {"score": 0.8, "explanation": "polite"}}]},
        {"steps": [{"json": {"verdict": "fully", "reasoning": "explains the fee"}}]},
    ]
}


def score(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, list[Any], str]:
    code = main(["score", *argv])
    out, err = capsys.readouterr()
    return code, [json.loads(line) for line in out.splitlines()], err


def test_judges_run_in_tracescore_score_with_their_own_models(
    fake_openai_factory: Factory,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(KEY_ENV, "sk-test-offline-0123456789")
    server = fake_openai_factory(SCRIPT)
    code, lines, _ = score(["--config", write_config(tmp_path, server), "--output", "json", TRACE],
                           capsys)  # fmt: skip
    assert code == 0
    run = next(line for line in lines if line.get("agent") == "support_agent")
    scores = {s["name"]: (s["value"], s["error"]) for s in run["scores"]}
    assert scores == {"called_tool": (1.0, None), "relevant": (1.0, None), "tone": (0.8, None)}
    assert run["verdict"] == "passed"
    assert sorted(b["model"] for b in server.chat_bodies()) == [MODEL, "rubric-model"]
    assert "lookup_invoice" in json.dumps(server.chat_bodies())  # the sub-agent, shown


def test_no_judge_skips_judges_without_a_single_request(
    fake_openai_factory: Factory,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(KEY_ENV, "sk-test-offline-0123456789")
    server = fake_openai_factory(SCRIPT)
    config = write_config(tmp_path, server)
    code, lines, _ = score(["--config", config, "--output", "json", "--no-judge", TRACE], capsys)
    assert code == 0
    run = next(line for line in lines if line.get("agent") == "support_agent")
    assert [s["name"] for s in run["scores"]] == ["called_tool"]
    assert server.requests() == []


def test_a_judge_sample_of_zero_judges_nothing(
    fake_openai_factory: Factory,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(KEY_ENV, "sk-test-offline-0123456789")
    server = fake_openai_factory(SCRIPT)
    config = write_config(tmp_path, server, "\n    judge_sample: 0")
    code, lines, _ = score(["--config", config, "--output", "json", TRACE], capsys)
    assert code == 0
    run = next(line for line in lines if line.get("agent") == "support_agent")
    assert [s["name"] for s in run["scores"]] == ["called_tool"]
    assert server.requests() == []


def test_an_unset_key_variable_exits_2_naming_it(
    fake_openai_factory: Factory,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(KEY_ENV, raising=False)
    server = fake_openai_factory(SCRIPT)
    code, _, err = score(["--config", write_config(tmp_path, server), TRACE], capsys)
    assert code == 2
    assert f"environment variable '{KEY_ENV}' is not set" in err
    assert server.requests() == []


def test_a_failed_judge_gate_fails_the_run_and_says_why(
    fake_openai_factory: Factory,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(KEY_ENV, "sk-test-offline-0123456789")
    script = {
        "scenarios": [
            {"match": "Criterion:", "steps": [{"json": {"score": 0.8, "explanation": "ok"}}]},
            {"steps": [{"status": 401, "error": "bad key"}]},
        ]
    }
    server = fake_openai_factory(script)
    code, lines, _ = score(["--config", write_config(tmp_path, server), "--output", "json", TRACE],
                           capsys)  # fmt: skip
    assert code == 1
    run = next(line for line in lines if line.get("agent") == "support_agent")
    relevant = next(s for s in run["scores"] if s["name"] == "relevant")
    assert relevant["value"] is None
    assert relevant["error"].startswith("http_401: judge 'judge-model'")
    assert run["verdict"] == "failed"


def _dead_judge_config(tmp_path: Path) -> str:
    """A judge endpoint on a loopback port nothing listens on: every judge score is an error."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    path = tmp_path / "dead.yaml"
    path.write_text(
        f"""
judge:
  base_url: http://127.0.0.1:{port}/v1
  model: {MODEL}
  max_retries: 0
scenarios:
  - name: billing
    match: {{agent: support_agent}}
    gates:
      - type: called_tool
        tool: ask_billing
    scorers:
      - type: llm_rubric
        name: tone
        criteria: The answer is polite.
        threshold: 0.5
""",
        encoding="utf-8",
    )
    return str(path)


def test_a_dead_judge_fails_the_command_by_default_and_is_counted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = _dead_judge_config(tmp_path)
    code = main(["score", "--config", config, TRACE])
    out = capsys.readouterr().out
    assert code == 1
    assert "tone error" in out  # the run's row
    assert "tone n/a (1 error)" in out  # the scenario's means
    assert "1 had a scorer error (1 score(s))" in out.splitlines()[-1]
    code, lines, _ = score(["--config", config, "--output", "json", TRACE], capsys)
    assert code == 1
    scenario = next(line for line in lines if line["kind"] == "scenario")
    assert scenario["n_errors"] == 1


def test_fail_on_gate_lets_scorer_errors_pass_and_fail_on_scored_fails_thresholds(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = _dead_judge_config(tmp_path)
    assert main(["score", "--fail-on", "gate", "--config", config, TRACE]) == 0
    assert main(["score", "--fail-on", "scored", "--config", config, TRACE]) == 1
    capsys.readouterr()
