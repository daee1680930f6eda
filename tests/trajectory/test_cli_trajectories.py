"""`tracescore trajectories`: JSON Lines, the table view, and exit 2 on unreadable input.

(Kept next to the builder's tests: the CLI module is a thin view over `build_trajectories`.)
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tracescore.cli import main

CASE = Path(__file__).parent.parent / "testdata" / "traces" / "pydantic_ai_retry_and_crash"


def test_json_lines_are_the_golden_trajectories(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["trajectories", str(CASE / "input.otlp.json")]) == 0
    out = capsys.readouterr().out
    lines = [json.loads(line) for line in out.splitlines()]
    golden = [json.loads(line) for line in (CASE / "trajectory.jsonl").read_text().splitlines()]
    assert lines == golden
    assert set(lines[0]) >= {
        "trace_id",
        "span_id",
        "agent",
        "input",
        "output",
        "available_tools",
        "steps",
    }
    assert set(lines[0]["steps"][1]) >= {
        "kind",
        "name",
        "call_id",
        "arguments",
        "result",
        "status",
        "error_type",
        "span_id",
        "start_ns",
        "end_ns",
    }


def test_table_is_an_indented_tree(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["trajectories", "--output", "table", str(CASE / "input.otlp.json")]) == 0
    out = capsys.readouterr().out
    assert "run shop_agent  trace 631746129e43515e08ce234439ed3b98" in out
    assert (
        '  - tool charge_card({"amount_cents": -5}) -> error pydantic_ai.exceptions.ToolRetryError'
        in out
    )
    assert "  - model scripted-ok  63/10 tokens  20.9 ms" in out


def test_sub_agents_are_nested_in_the_table(capsys: pytest.CaptureFixture[str]) -> None:
    case = CASE.parent / "langfuse_openai_agents_openinference" / "input.otlp.json"
    assert main(["trajectories", "--output", "table", str(case)]) == 0
    assert "  - agent Hello world  span d950b668796240b5" in capsys.readouterr().out
    assert main(["trajectories", "--output", "table", str(case)]) == 0
    assert "    - tool get_weather(" in capsys.readouterr().out


def test_missing_file_exits_2_naming_it(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    missing = tmp_path / "nope.json"
    assert main(["trajectories", str(missing)]) == 2
    err = capsys.readouterr().err
    assert f"{missing}: cannot read" in err


def test_broken_json_lines_name_the_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text('{"resourceSpans": []}\n{oops\n')
    assert main(["trajectories", str(path)]) == 2
    assert f"{path}: line 2: invalid JSON" in capsys.readouterr().err


def test_stdin_and_warnings_on_stderr(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    body = {
        "resourceSpans": [
            {
                "scopeSpans": [
                    {
                        "spans": [
                            {
                                "traceId": "0af7651916cd43dd8448eb211c80319c",
                                "spanId": "00f067aa0ba902b7",
                                "parentSpanId": "00f067aa0ba902b8",
                                "name": "invoke_agent lonely",
                                "attributes": [
                                    {
                                        "key": "gen_ai.operation.name",
                                        "value": {"stringValue": "invoke_agent"},
                                    }
                                ],
                            }
                        ]
                    }
                ]
            }
        ]
    }
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(json.dumps(body).encode())))
    assert main(["trajectories", "-"]) == 0
    captured = capsys.readouterr()
    (line,) = captured.out.splitlines()
    assert json.loads(line)["complete"] is False
    assert "1 warning(s)" in captured.err
    assert "parent never arrived" in captured.err


def test_console_script_runs() -> None:
    exe = Path(sys.executable).with_name("tracescore")
    done = subprocess.run(
        [str(exe), "trajectories", str(CASE / "input.otlp.json")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert len(done.stdout.splitlines()) == 2
