"""Every real recorded trace rebuilds to its reviewed golden trajectories.

Cases live in tests/testdata/traces/<case>/: `input.otlp.json` (read through the real file
reader) and `trajectory.jsonl` (one run per line, what `tracescore trajectories` prints).
Langfuse exports are kept as `input.langfuse.json` and converted back to OTLP here; the converted
file is kept too, so the CLI can be pointed at it. `pytest --update-golden` rewrites both kinds
of golden file and fails on purpose. What was checked by hand is in testdata/traces/README.md.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from support.otlp_proto import request_from_otlp_json
from tracescore.otlp import decode_json_request, decode_proto_request, read_trace_files
from tracescore.trajectory import build_trajectories, needed_attribute
from trajectory.langfuse import convert

TRACES = Path(__file__).parent.parent / "testdata" / "traces"
CASES = sorted(p.name for p in TRACES.iterdir() if p.is_dir())


def _lines(spans: Any) -> list[dict[str, Any]]:
    result = build_trajectories(spans)
    # Round-trip through JSON: that is what the CLI prints and what the golden holds.
    return [json.loads(json.dumps(t.to_dict())) for t in result.trajectories]


def _golden(case: str) -> list[dict[str, Any]]:
    path = TRACES / case / "trajectory.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _request(case: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((TRACES / case / "input.otlp.json").read_text())
    return loaded


def test_there_is_a_case_for_every_shared_fixture() -> None:
    # Two OTLP recordings and four Langfuse exports (reference/conventions.md §9).
    assert len(CASES) >= 6


@pytest.mark.parametrize(
    "case", [c for c in CASES if (TRACES / c / "input.langfuse.json").exists()]
)
def test_langfuse_export_converts_to_the_kept_otlp_file(case: str, update_golden: bool) -> None:
    export = json.loads((TRACES / case / "input.langfuse.json").read_text())
    converted = convert(export)
    target = TRACES / case / "input.otlp.json"
    if update_golden:
        target.write_text(json.dumps(converted, indent=1, ensure_ascii=False) + "\n")
        pytest.fail(f"rewrote {target}; review the diff")
    assert json.loads(target.read_text()) == converted


@pytest.mark.parametrize("case", CASES)
def test_trajectories_match_golden(case: str, update_golden: bool) -> None:
    decoded = read_trace_files([str(TRACES / case / "input.otlp.json")])
    assert decoded.rejected == 0, decoded.problems
    lines = _lines(decoded.spans)
    if update_golden:
        text = "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines)
        (TRACES / case / "trajectory.jsonl").write_text(text)
        pytest.fail(f"rewrote {case}/trajectory.jsonl; review the diff")
    assert lines == _golden(case)


@pytest.mark.parametrize("case", CASES)
def test_only_needed_attributes_give_the_same_trajectories(case: str) -> None:
    # The receiver decodes only the keys the builder reads; nothing it shows may change.
    filtered = decode_json_request(_request(case), key_filter=needed_attribute)
    assert _lines(filtered.spans) == _golden(case)


@pytest.mark.parametrize("case", CASES)
def test_protobuf_with_the_key_filter_gives_the_same_trajectories(case: str) -> None:
    message = request_from_otlp_json(_request(case))
    body = message.SerializeToString()
    decoded = decode_proto_request(body, key_filter=needed_attribute)
    assert decoded.rejected == 0, decoded.problems
    assert _lines(decoded.spans) == _golden(case)


@pytest.mark.parametrize("case", CASES)
def test_the_filter_drops_attributes_the_builder_does_not_read(case: str) -> None:
    # A filter that kept everything would pass the two tests above trivially.
    full = decode_json_request(_request(case))
    filtered = decode_json_request(_request(case), key_filter=needed_attribute)
    kept = sum(len(s.attributes) for s in filtered.spans)
    assert kept < sum(len(s.attributes) for s in full.spans)
