"""`tracescore score`: JSON and table output, exit codes, input errors, stdin, the judge seam."""

from __future__ import annotations

import copy
import io
import json
from pathlib import Path
from typing import Any, ClassVar, Literal

import pytest

from cli._traces import agent_trace, jsonl
from tracescore.cli import main
from tracescore.cli._score_table import render_table
from tracescore.cli.score import PendingRun, score_deferred, score_runs
from tracescore.config import Config, Scenario, ScenarioMatch, parse_config
from tracescore.model import Trajectory
from tracescore.scenarios import conclude
from tracescore.scorers.base import Outcome, ScorerBase
from tracescore.summary import summarize

CONFIG = """
scenarios:
  - name: refunds
    match: {agent: support-agent, input: "(?i)refund"}
    gates:
      - {type: tool_order, name: lookup_first, tools: [lookup_order, process_refund]}
    scorers:
      - {type: no_tool_errors, threshold: 1}
  - name: status
    match: {agent: support-agent, input: "(?i)where"}
    sample: 0
    gates:
      - {type: called_tool, tool: lookup_order}
"""

GOOD_REFUND = agent_trace(
    "support-agent",
    "Refund order 7",
    [("lookup_order", {"order_id": "7"}, True), ("process_refund", {"order_id": "7"}, True)],
    seed=1,
)
RETRIED_REFUND = agent_trace(
    "support-agent",
    "Refund order 8",
    [
        ("lookup_order", {"order_id": "8"}, True),
        ("process_refund", {"order_id": "8"}, False),
        ("process_refund", {"order_id": "8", "reason": "late"}, True),
    ],
    seed=2,
)
BAD_REFUND = agent_trace(
    "support-agent", "Refund order 9", [("process_refund", {"order_id": "9"}, True)], seed=3
)
STATUS = agent_trace("support-agent", "Where is order 5?", [("lookup_order", {}, True)], seed=4)
OTHER_AGENT = agent_trace("billing-bot", "Refund order 6", [], seed=5)

RUN_KEYS = [
    "kind",
    "trace_id",
    "span_id",
    "agent",
    "scenario",
    "complete",
    "tool_calls",
    "scores",
    "verdict",
]
SCORE_KEYS = ["name", "type", "value", "passed", "label", "explanation", "digest", "error"]
SCENARIO_KEYS = [
    "kind",
    "name",
    "n_runs",
    "n_scored",
    "n_passed",
    "pass_rate",
    "in_learning_zone",
    "verdict",
    "n_errors",
]


@pytest.fixture
def config_path(tmp_path: Path) -> str:
    path = tmp_path / "tracescore.yaml"
    path.write_text(CONFIG, encoding="utf-8")
    return str(path)


def write(tmp_path: Path, name: str, *requests: dict[str, Any]) -> str:
    path = tmp_path / name
    path.write_text(jsonl(*requests), encoding="utf-8")
    return str(path)


def score_json(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, list[dict[str, Any]]]:
    code = main(["score", "--output", "json", *argv])
    out = capsys.readouterr().out
    return code, [json.loads(line) for line in out.splitlines()]


def test_json_lines_one_per_run_then_one_per_scenario(
    tmp_path: Path, config_path: str, capsys: pytest.CaptureFixture[str]
) -> None:
    traces = write(tmp_path, "t.jsonl", GOOD_REFUND, RETRIED_REFUND, STATUS, OTHER_AGENT)
    code, lines = score_json(capsys, "--config", config_path, traces)
    assert code == 0  # the retried refund missed a threshold, but no gate failed
    assert [line["kind"] for line in lines] == ["run"] * 4 + ["scenario"] * 2
    for line in lines[:4]:
        assert list(line) == RUN_KEYS
        for score in line["scores"]:
            assert list(score) == SCORE_KEYS
    for line in lines[4:]:
        assert list(line) == SCENARIO_KEYS
    good, retried, status, other = lines[:4]
    assert good["agent"] == "support-agent"
    assert (
        good["trace_id"] == GOOD_REFUND["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["traceId"]
    )
    assert len(good["span_id"]) == 16
    assert good["complete"] is True
    assert good["tool_calls"] == [
        {
            "name": "lookup_order",
            "call_id": "call_0",
            "status": "ok",
            "arguments": {"order_id": "7"},
        },
        {
            "name": "process_refund",
            "call_id": "call_1",
            "status": "ok",
            "arguments": {"order_id": "7"},
        },
    ]
    assert [(s["name"], s["value"], s["passed"]) for s in good["scores"]] == [
        ("lookup_first", 1.0, True),
        ("no_tool_errors", 1.0, True),
    ]
    assert good["scores"][0]["digest"].startswith("scorer-v1:")
    assert (good["scenario"], good["verdict"]) == ("refunds", "passed")
    assert [s["status"] for s in retried["tool_calls"]] == ["ok", "error", "ok"]
    assert [(s["name"], s["value"], s["passed"]) for s in retried["scores"]] == [
        ("lookup_first", 1.0, True),
        ("no_tool_errors", 0.0, False),
    ]
    assert retried["verdict"] == "scored"
    # sampled out (sample: 0): the scenario is named, nothing is scored
    assert (status["scenario"], status["scores"], status["verdict"]) == ("status", [], None)
    # no scenario matched: scenario null and no scores
    assert (other["scenario"], other["scores"], other["verdict"]) == (None, [], None)
    assert lines[4] == {
        "kind": "scenario",
        "name": "refunds",
        "n_runs": 2,
        "n_scored": 2,
        "n_passed": 1,
        "pass_rate": 0.5,
        "in_learning_zone": True,
        "verdict": "scored",
        "n_errors": 0,
    }
    assert lines[5]["n_runs"] == 0
    assert lines[5]["verdict"] is None


@pytest.mark.parametrize(("fail_on", "code"), [("gate", 0), ("error", 0), ("scored", 1)])
def test_a_missed_threshold_fails_the_command_only_under_fail_on_scored(
    tmp_path: Path, config_path: str, capsys: pytest.CaptureFixture[str], fail_on: str, code: int
) -> None:
    traces = write(tmp_path, "t.jsonl", GOOD_REFUND, RETRIED_REFUND)  # the retry: "scored"
    assert main(["score", "--fail-on", fail_on, "--config", config_path, traces]) == code
    capsys.readouterr()


def test_a_failed_gate_exits_1(
    tmp_path: Path, config_path: str, capsys: pytest.CaptureFixture[str]
) -> None:
    traces = write(tmp_path, "t.jsonl", GOOD_REFUND, BAD_REFUND)
    code, lines = score_json(capsys, "--config", config_path, traces)
    assert code == 1
    assert [line.get("verdict") for line in lines] == ["passed", "failed", "failed", None]
    assert lines[1]["scores"][0]["passed"] is False
    assert "process_refund" in lines[1]["scores"][0]["explanation"]


def test_several_files_and_stdin(
    tmp_path: Path,
    config_path: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    single = tmp_path / "one.json"
    single.write_text(json.dumps(GOOD_REFUND, indent=2), encoding="utf-8")  # one request, not JSONL
    stdin = io.TextIOWrapper(io.BytesIO(jsonl(BAD_REFUND).encode()))
    monkeypatch.setattr("sys.stdin", stdin)
    code, lines = score_json(capsys, "--config", config_path, str(single), "-")
    assert code == 1
    assert [line.get("verdict") for line in lines if line["kind"] == "run"] == ["passed", "failed"]


def test_a_broken_json_lines_line_is_named_and_exits_2(
    tmp_path: Path, config_path: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "broken.jsonl"
    path.write_text(
        jsonl(GOOD_REFUND) + '{"resourceSpans": [\n' + jsonl(BAD_REFUND), encoding="utf-8"
    )
    assert main(["score", "--config", config_path, str(path)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert f"{path}: line 2: invalid JSON" in captured.err


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "cannot read"),
        ("[1, 2]", "expected a JSON object with resourceSpans, got list"),
    ],
)
def test_unusable_input_exits_2_naming_the_file(
    tmp_path: Path,
    config_path: str,
    capsys: pytest.CaptureFixture[str],
    content: str | None,
    message: str,
) -> None:
    path = tmp_path / "input.json"
    if content is not None:
        path.write_text(content, encoding="utf-8")
    assert main(["score", "--config", config_path, str(path)]) == 2
    err = capsys.readouterr().err
    assert str(path) in err
    assert message in err


def test_a_bad_config_exits_2_with_every_problem(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "bad.yaml"
    config.write_text(
        "scenarios:\n  - name: s\n    gates: [{type: nope}]\n    sampel: 1\n", encoding="utf-8"
    )
    traces = write(tmp_path, "t.jsonl", GOOD_REFUND)
    assert main(["score", "--config", str(config), traces]) == 2
    err = capsys.readouterr().err
    assert f"{config}:3: scenarios[0].gates[0]: unknown scorer type 'nope'" in err
    assert f"{config}:4: scenarios[0].sampel: unknown key 'sampel'" in err


@pytest.mark.parametrize(
    "argv",
    [
        ["score", "t.jsonl"],  # no --config
        ["score", "--config", "c.yaml"],  # no file
        ["score", "--config", "c.yaml", "--output", "xml", "t.jsonl"],
    ],
)
def test_usage_errors_exit_2(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    assert "usage:" in capsys.readouterr().err


def test_stderr_counts_rejected_spans_and_warnings(
    tmp_path: Path, config_path: str, capsys: pytest.CaptureFixture[str]
) -> None:
    request = copy.deepcopy(GOOD_REFUND)
    spans = request["resourceSpans"][0]["scopeSpans"][0]["spans"]
    broken = copy.deepcopy(spans[0])
    broken["traceId"] = "not-hex"
    orphan = copy.deepcopy(spans[0])
    orphan["spanId"] = "aaaaaaaaaaaaaaaa"
    orphan["parentSpanId"] = "ffffffffffffffff"  # a parent that never arrived
    spans.extend([broken, orphan])
    traces = write(tmp_path, "t.jsonl", request)
    assert main(["score", "--output", "json", "--config", config_path, traces]) == 0
    err = capsys.readouterr().err
    assert "tracescore score: 1 span(s) rejected" in err
    assert "traceId" in err
    assert "warning(s)" in err
    assert "ffffffffffffffff" in err


# --- table ---------------------------------------------------------------------------------


class _Terminal(io.StringIO):
    encoding = "utf-8"

    def isatty(self) -> bool:
        return True


def table(out: io.StringIO, *requests: dict[str, Any]) -> str:
    from tracescore.otlp import decode_json_request
    from tracescore.trajectory import build_trajectories

    config = parse_config(CONFIG)
    spans = [s for r in requests for s in decode_json_request(r).spans]
    results = score_runs(config, build_trajectories(spans).trajectories)
    return render_table(results, summarize(config, results), config, out)


def test_the_table_has_a_row_per_run_and_per_scenario_and_says_what_went_wrong(
    tmp_path: Path, config_path: str, capsys: pytest.CaptureFixture[str]
) -> None:
    traces = write(tmp_path, "t.jsonl", GOOD_REFUND, BAD_REFUND, RETRIED_REFUND, OTHER_AGENT)
    assert main(["score", "--config", config_path, traces]) == 1
    out = capsys.readouterr().out
    assert "\x1b[" not in out  # not a terminal: no colour
    lines = out.splitlines()
    assert lines[0].split() == ["RUN", "AGENT", "SCENARIO", "VERDICT", "SCORES"]
    rows = [line.split() for line in lines if line[:8].strip() and not line.startswith(" ")]
    run_rows = rows[1:5]
    assert sorted(r[1:4] for r in run_rows) == [  # runs come in the builder's order
        ["billing-bot", "-", "-"],
        ["support-agent", "refunds", "failed"],
        ["support-agent", "refunds", "passed"],
        ["support-agent", "refunds", "scored"],
    ]
    assert "(no scenario matched)" in out
    assert "✗ lookup_first (gate failed): " in out
    assert "✗ no_tool_errors (below threshold): " in out
    scenario_header = lines.index(next(line for line in lines if line.startswith("SCENARIO")))
    assert lines[scenario_header + 1].split()[:8] == [
        "refunds",
        "3",
        "3",
        "1",
        "0.33",
        "yes",
        "failed",
        "lookup_first",
    ]
    assert lines[-1] == "4 run(s), 3 matched a scenario, 1 failed a gate"


def test_colour_only_on_a_terminal_and_never_with_no_color(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm-256color")
    coloured = table(_Terminal(), GOOD_REFUND, BAD_REFUND)
    assert "\x1b[31mfailed" in coloured
    assert "\x1b[32mpassed" in coloured
    assert "\x1b[" not in table(io.StringIO(), GOOD_REFUND, BAD_REFUND)
    monkeypatch.setenv("NO_COLOR", "1")
    assert "\x1b[" not in table(_Terminal(), GOOD_REFUND, BAD_REFUND)


def test_a_terminal_without_unicode_gets_ascii_marks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NO_COLOR", "1")

    class Ascii(io.StringIO):
        encoding = "ascii"

    text = table(Ascii(), BAD_REFUND)
    text.encode("ascii")
    assert "x lookup_first (gate failed)" in text


# --- the seam for judge scorers ------------------------------------------------------------


class _NeedsJudge(ScorerBase):
    """A stand-in for an LLM judge: not deterministic, so scored after the others."""

    type: Literal["needs_judge"] = "needs_judge"
    deterministic: ClassVar[bool] = False
    calls: ClassVar[list[str]] = []

    def evaluate(self, trajectory: Trajectory) -> Outcome:
        self.calls.append(trajectory.trace_id)
        return Outcome(value=0.0, explanation="judged")


def test_scorers_that_need_a_judge_are_deferred_to_one_batch(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from tracescore.otlp import decode_json_request
    from tracescore.trajectory import build_trajectories

    judge = _NeedsJudge(name="judge")
    # Built without validation: the stand-in is not in the registry's union.
    scenario = Scenario.model_construct(
        name="s", match=ScenarioMatch(), sample=1.0, gates=(judge,), scorers=()
    )
    config = Config.model_construct(scenarios=(scenario,))
    spans = [s for r in (GOOD_REFUND, BAD_REFUND) for s in decode_json_request(r).spans]
    runs = build_trajectories(spans).trajectories
    batches: list[list[PendingRun]] = []

    def batch(pending: list[PendingRun]) -> None:
        batches.append(list(pending))
        assert all(p.scores == {} for p in pending)  # nothing judged before the batch
        score_deferred(pending)

    monkeypatch.setattr("tracescore.cli.score.score_deferred", batch)
    results = score_runs(config, runs)
    assert [len(b) for b in batches] == [2]
    assert [r.verdict for r in results] == ["failed", "failed"]
    assert conclude(scenario, runs[0], {}).skipped == ("judge",)  # not run: named, no verdict
