"""`tracescore score` exits 2 on input that holds no OTLP span, naming what it holds instead.

Each of these exited 0 with "0 run(s)" before: a CI gate must not pass on an empty or foreign
file.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import ConsoleSpanExporter, SimpleSpanProcessor

from cli._traces import agent_trace, jsonl
from tracescore.cli import main

CONFIG = "scenarios:\n  - name: all\n    scorers: [{type: no_tool_errors}]\n"


@pytest.fixture
def config_path(tmp_path: Path) -> str:
    path = tmp_path / "tracescore.yaml"
    path.write_text(CONFIG, encoding="utf-8")
    return str(path)


def console_exporter_output(*, pretty: bool) -> str:
    """What the OpenTelemetry SDK's ConsoleSpanExporter prints for two spans."""
    out = io.StringIO()
    # The exporter's default formatter pretty-prints (indent 4); the other is one line a span.
    exporter = (
        ConsoleSpanExporter(out=out)
        if pretty
        else ConsoleSpanExporter(out=out, formatter=lambda span: span.to_json(indent=None) + "\n")
    )
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("test")
    with tracer.start_as_current_span("invoke_agent"), tracer.start_as_current_span("tool"):
        pass
    provider.shutdown()
    return out.getvalue()


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("", "empty input, no OTLP spans"),
        ("  \n\n", "empty input, no OTLP spans"),
        (
            '{"foo": 1, "bar": []}',
            "no OTLP spans: a JSON object without resourceSpans (keys: bar, foo)",
        ),
        ('{"resourceSpans": []}', "no OTLP spans: resourceSpans with no spans"),
        ('{"resourceMetrics": []}\n', "no OTLP spans: OTLP metrics, not traces"),
        ('{"resource_spans": [{"scope_spans": []}]}', "snake_case `resource_spans`"),
        (console_exporter_output(pretty=True), "ConsoleSpanExporter output"),
        (console_exporter_output(pretty=False), "ConsoleSpanExporter output"),
    ],
    ids=[
        "empty",
        "blank",
        "object",
        "no-spans",
        "metrics",
        "snake-case",
        "console",
        "console-1line",
    ],
)
def test_input_without_otlp_spans_exits_2_naming_the_file_and_what_it_holds(
    tmp_path: Path,
    config_path: str,
    capsys: pytest.CaptureFixture[str],
    content: str,
    message: str,
) -> None:
    path = tmp_path / "input.json"
    path.write_text(content, encoding="utf-8")
    assert main(["score", "--config", config_path, str(path)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert f"{path}: " in captured.err
    assert message in captured.err
    assert "invalid JSON" not in captured.err


def test_console_exporter_output_says_how_to_export_otlp_instead(
    tmp_path: Path, config_path: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "console.txt"
    path.write_text(console_exporter_output(pretty=True), encoding="utf-8")
    assert main(["score", "--config", config_path, str(path)]) == 2
    assert "`file` exporter" in capsys.readouterr().err


def test_empty_stdin_exits_2(
    config_path: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(b"")))
    assert main(["score", "--config", config_path, "-"]) == 2
    assert "<stdin>: empty input" in capsys.readouterr().err


def test_one_empty_file_among_good_ones_still_exits_2(
    tmp_path: Path, config_path: str, capsys: pytest.CaptureFixture[str]
) -> None:
    good = tmp_path / "good.jsonl"
    good.write_text(jsonl(agent_trace("a", "hi", [("t", {}, True)], seed=1)), encoding="utf-8")
    empty = tmp_path / "empty.jsonl"
    empty.write_text("", encoding="utf-8")
    assert main(["score", "--config", config_path, str(good), str(empty)]) == 2
    assert f"{empty}: empty input" in capsys.readouterr().err


def test_a_file_of_otlp_json_lines_with_a_metrics_line_is_read(
    tmp_path: Path, config_path: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """The collector's file exporter may write every signal to one file: traces are read."""
    path = tmp_path / "mixed.jsonl"
    trace = agent_trace("a", "hi", [("t", {}, True)], seed=1)
    path.write_text(json.dumps({"resourceMetrics": []}) + "\n" + jsonl(trace), encoding="utf-8")
    assert main(["score", "--config", config_path, str(path)]) == 0
    assert "1 run(s)" in capsys.readouterr().out
