"""`tracescore validate-config FILE`: exit 0 with a summary, or 2 with every problem."""

from __future__ import annotations

from pathlib import Path

import pytest

from tracescore.cli import main

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.mark.parametrize(
    ("example", "summary"),
    [
        ("support-agent", "ok: 4 scenarios, 10 gates, 4 scorers"),
        ("shipping-dispatch", "ok: 2 scenarios, 1 gate, 2 scorers"),
    ],
)
def test_a_valid_config_prints_one_summary_line(
    example: str, summary: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = str(EXAMPLES / example / "tracescore.yaml")
    assert main(["validate-config", path]) == 0
    captured = capsys.readouterr()
    assert captured.out == f"{path}: {summary}\n"
    assert captured.err == ""


def test_an_invalid_config_prints_every_problem_and_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(
        "scenarios:\n"
        "  - name: s\n"
        "    scorers:\n"
        "      - type: tool_calls\n"
        "        expected_tools: lookup_order\n"
        "      - {type: max_tool_calls, max: 3, threshold: 2}\n",
        encoding="utf-8",
    )
    assert main(["validate-config", str(path)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.splitlines() == [
        f"{path}: 2 problem(s):",
        f"  {path}:5: scenarios[0].scorers[0].expected_tools: expected a list of tool names, "
        "got the bare string 'lookup_order'",
        f"  {path}:6: scenarios[0].scorers[1].threshold: threshold min must be between 0 and 1, "
        "got 2.0",
    ]


def test_a_missing_file_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate-config", str(tmp_path / "nope.yaml")]) == 2
    assert "cannot read" in capsys.readouterr().err


SECRETS = """
receivers:
  http: {auth: {bearer_token_env: TS_TEST_HTTP_TOKEN}}
judge: {base_url: "http://127.0.0.1:9/v1", model: m, api_key_env: TS_TEST_JUDGE_KEY}
scenarios:
  - name: s
    scorers: [{type: llm_rubric, criteria: polite}]
"""


def test_an_unset_judge_key_or_token_variable_is_a_problem_unless_no_env(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TS_TEST_JUDGE_KEY", raising=False)
    monkeypatch.delenv("TS_TEST_HTTP_TOKEN", raising=False)
    path = tmp_path / "c.yaml"
    path.write_text(SECRETS, encoding="utf-8")
    assert main(["validate-config", str(path)]) == 2
    err = capsys.readouterr().err
    assert "judge.api_key_env: environment variable 'TS_TEST_JUDGE_KEY' is not set" in err
    assert "receivers.http.auth.bearer_token_env: environment variable 'TS_TEST_HTTP_TOKEN'" in err
    assert "--no-env" in err
    assert main(["validate-config", "--no-env", str(path)]) == 0
    assert capsys.readouterr().out.startswith(f"{path}: ok: 1 scenario")
    monkeypatch.setenv("TS_TEST_JUDGE_KEY", "sk-x")
    monkeypatch.setenv("TS_TEST_HTTP_TOKEN", "t")
    assert main(["validate-config", str(path)]) == 0
