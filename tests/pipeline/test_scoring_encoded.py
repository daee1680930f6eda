"""`RunScorer` hands the assembler encoded score attributes: the spans they annotate and the
logs it sends are those of the generic path, configs and prefixes alternating."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from pipeline.test_scoring_pinned import NOW_NS, VARIED_CONFIG, _span_bytes, _varied_runs
from tracescore.assembler import ReadyTrace
from tracescore.config import parse_config
from tracescore.export import events
from tracescore.export.attributes import score_attributes
from tracescore.export.encoded_attributes import EncodedAttributes
from tracescore.export.events import encode_evaluation_logs
from tracescore.export.metrics import Telemetry
from tracescore.export.spans import annotate_span_bytes
from tracescore.pipeline import scoring
from tracescore.scenarios import evaluate_run
from tracescore.trajectory import BuildResult

OTHER_CONFIG = """
scenarios:
  - name: rest
    match: {agent: "*"}
    gates: [{type: no_tool_errors, name: called_tool}]
    scorers: [{type: max_tool_calls, max: 2, name: no_tool_errors}]
"""


class _Sink:
    def __init__(self) -> None:
        self.sent: list[bytes] = []

    def send(self, body: bytes, n: int) -> None:
        self.sent.append(body)


def test_scorers_of_two_configs_annotate_and_log_as_the_generic_path(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    runs = {f"{i:032x}": run for i, run in enumerate(_varied_runs())}
    monkeypatch.setattr(
        scoring, "build_trajectories", lambda spans, **_: BuildResult([runs[spans]])
    )
    monkeypatch.setattr(events.time, "time_ns", lambda: NOW_NS)
    configs = [parse_config(VARIED_CONFIG), parse_config(OTHER_CONFIG)]
    sinks = [_Sink(), _Sink()]
    scorers = [
        scoring.RunScorer(config, Telemetry(), sink, None, prefix=prefix)  # type: ignore[arg-type]
        for config, sink, prefix in zip(configs, sinks, ("eval", "ev"), strict=True)
    ]
    annotated = 0
    for index, (key, trajectory) in enumerate(runs.items()):
        for which in (0, 1):
            config, sink, scorer = configs[which], sinks[which], scorers[which]
            complete = index % 5 != 0  # else its runs are scored incomplete
            ready: Any = ReadyTrace(trajectory.trace_id, key, complete, "quiet")  # type: ignore[arg-type]
            sent = len(sink.sent)
            annotations = scorer(ready)
            scored = trajectory if complete else dataclasses.replace(trajectory, complete=False)
            result = evaluate_run(config, scored, deterministic_only=True)
            if result.scores:
                assert sink.sent[sent:] == [encode_evaluation_logs([result])]
            prefix = ("eval", "ev")[which]
            expected = score_attributes(result, prefix) if trajectory.span_id else {}
            if not expected:
                assert annotations == {}
                continue
            attributes = annotations[trajectory.span_id or ""]
            assert isinstance(attributes, EncodedAttributes)
            assert dict(attributes) == expected
            span_bytes = _span_bytes(trajectory, index)  # some already carry a score key
            assert annotate_span_bytes(span_bytes, attributes) == annotate_span_bytes(
                span_bytes, expected
            )
            annotated += 1
    assert annotated > 100
