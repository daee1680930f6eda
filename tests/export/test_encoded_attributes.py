"""The score attributes `serve` encodes while building them, against the generic encoding.

`encoded_score_attributes` keeps per-name and per-run pieces between calls; these tests
alternate configs, prefixes and kinds of score so that a piece kept for one would show up in
the bytes of another.
"""

from __future__ import annotations

import dataclasses

import pytest
from opentelemetry.proto.common.v1.common_pb2 import KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import Span

from export.scored_runs import scored_run
from pipeline.test_scoring_pinned import VARIED_CONFIG, _varied_runs
from tracescore.config import parse_config
from tracescore.export import wire
from tracescore.export.attributes import score_attributes
from tracescore.export.encoded_attributes import (
    SPAN_ATTRIBUTES,
    EncodedAttributes,
    encoded_score_attributes,
)
from tracescore.export.spans import annotate_span_bytes
from tracescore.model import Score
from tracescore.scenarios import RunResult, evaluate_run

OTHER_CONFIG = """
scenarios:
  - name: refunds
    match: {agent: "shop*"}
    scorers:
      - {type: called_tool, tool: lookup, name: max_tool_calls}
      - {type: max_tool_calls, max: 1, name: called_tool}
  - name: rest
    match: {agent: "*"}
    gates: [{type: no_tool_errors, name: called_tool}]
"""


def _assert_same(result: RunResult, prefix: str) -> None:
    expected = score_attributes(result, prefix)
    encoded = encoded_score_attributes(result, prefix)
    assert list(encoded.items()) == list(expected.items())
    assert list(map(type, encoded.values())) == list(map(type, expected.values()))
    assert encoded.span_fields == wire.attribute_fields(SPAN_ATTRIBUTES, expected)
    assert repr(encoded) == repr(expected)


def _results() -> list[RunResult]:
    configs = [parse_config(VARIED_CONFIG), parse_config(OTHER_CONFIG)]
    out = []
    for index, trajectory in enumerate(_varied_runs()):
        for config in configs:  # the same score names under two configs, alternating
            out.append(evaluate_run(config, trajectory, deterministic_only=index % 2 == 0))
    return out


def test_varied_runs_under_two_configs_and_prefixes_encode_as_the_generic_path() -> None:
    results = _results()
    assert {r.verdict for r in results} >= {"passed", "scored", "failed", None}
    assert any(s.error for r in results for s in r.scores)  # a scorer that failed
    assert any(not r.sampled for r in results)
    assert any(r.scenario is None for r in results)
    for index, result in enumerate(results):
        _assert_same(result, ("eval", "ev", "acme.quality")[index % 3])


def test_odd_scores_encode_as_the_generic_path() -> None:
    base = scored_run()  # failing, passing, own label, error and unscorable scores
    long_text = "é" * 70  # 140 bytes: past the one-byte lengths
    odd = (
        Score("a", "t", 1, True, "", "d"),  # an int value and an empty explanation
        Score("b", "t", 0.25, None, long_text, "d"),  # a value and no label
        Score("c", "t", 0.0, False, "x" * 101, "d", label="l" * 130),
        Score("d", "t", None, None, "y" * 127, "d", label="custom"),
    )
    variants = [
        base,
        dataclasses.replace(base, verdict=None, digest=None),
        dataclasses.replace(base, trajectory=dataclasses.replace(base.trajectory, complete=False)),
        dataclasses.replace(base, scores=odd),
        dataclasses.replace(base, scores=()),
        dataclasses.replace(base, scores=(odd[0], odd[0])),  # one name twice: one key
        dataclasses.replace(base, scores=(odd[1], dataclasses.replace(odd[0], name="b"))),
        dataclasses.replace(base, scenario=None, scores=()),
        dataclasses.replace(base, sampled=False, scores=()),
    ]
    for _ in range(2):  # the second time from the kept pieces
        for index, result in enumerate(variants):
            _assert_same(result, ("eval", "ev")[index % 2])


def test_an_empty_prefix_is_refused() -> None:
    with pytest.raises(ValueError, match="prefix"):
        encoded_score_attributes(scored_run(), "")


def test_encoded_attributes_are_read_only() -> None:
    encoded = encoded_score_attributes(scored_run())
    with pytest.raises(TypeError):
        encoded["tracescore.scenario"] = "changed"  # type: ignore[index]
    assert encoded == score_attributes(scored_run())


def _agent_span(existing: str | None) -> bytes:
    span = Span(name="invoke_agent", trace_id=bytes(range(16)), span_id=bytes(range(8)))
    span.attributes.append(KeyValue(key="gen_ai.agent.name"))
    span.attributes[0].value.string_value = "shop"
    if existing is not None:  # a key the scores also write: replaced, not duplicated
        span.attributes.append(KeyValue(key=existing))
        span.attributes[1].value.string_value = "upstream"
    return span.SerializeToString()


def test_annotating_with_encoded_attributes_gives_the_same_span_bytes() -> None:
    results = [*_results()[:60], scored_run()]
    for existing in (None, "tracescore.scenario", "eval.tool_calls.score", "eval."):
        span_bytes = _agent_span(existing)
        for result in results:
            expected = annotate_span_bytes(span_bytes, score_attributes(result))
            encoded = encoded_score_attributes(result)
            assert isinstance(encoded, EncodedAttributes)
            assert annotate_span_bytes(span_bytes, encoded) == expected
