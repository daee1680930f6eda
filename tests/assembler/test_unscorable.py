"""Traces whose runs no scenario may score are released unbuilt, and nothing else changes."""

from __future__ import annotations

from pathlib import Path

import pytest

from assembler._harness import Harness
from support.agent_spans import TESTDATA, agent_run, framework_request, span_ids
from support.otlp_sink import attrs
from tracescore import semconv
from tracescore.config import parse_config
from tracescore.otlp.proto import decode_proto_request
from tracescore.receiver import parse_json_request
from tracescore.scenarios import evaluate_run
from tracescore.trajectory import build_trajectories

WAIT = 2.0  # the default decision_wait
FRAMEWORK_TRACES = sorted((TESTDATA / "frameworks").glob("*.otlp.json"))


def _scenario(match: str, sample: float = 1.0) -> str:
    return (
        f"scenarios:\n  - name: s\n    match: {{{match}}}\n    sample: {sample}\n"
        "    gates: [{type: max_tool_calls, max: 50}]\n"
    )


def test_a_run_no_scenario_matches_is_forwarded_without_being_built() -> None:
    h = Harness()  # scores shop_agent only
    billing, shop = agent_run(agent="billing_agent", seed=1), agent_run(seed=2)
    h.send(billing.spans)
    h.send(shop.spans)
    assert h.tick(WAIT) == 2, "both traces are released"
    assert [r.trace_id for r in h.ready] == [shop.trace_id.hex()], "only shop's run is built"
    assert sorted(span_ids(h.forwarded_spans())) == sorted(span_ids(billing.spans + shop.spans))
    assert h.assembler.buffered_bytes == 0
    assert {r.trace_id for r in h.log_records()} == {shop.trace_id}


def test_a_trace_is_built_when_any_of_its_agents_may_be_scored() -> None:
    h = Harness(_scenario("agent: billing_agent"))  # the sub-agent, not its parent
    req = framework_request("pydantic_ai-subagent")
    h.send(req)
    h.tick(WAIT)
    assert len(h.ready) == 1
    out = h.forwarded_spans()
    scored = {s.name for s in out if semconv.TRACESCORE_VERDICT in attrs(s.attributes)}
    assert scored == {"invoke_agent billing_agent"}


def _scored_by_service(yaml: str, path: Path) -> set[tuple[str, str]]:
    h = Harness(yaml)
    h.send(parse_json_request(path.read_bytes()))
    h.tick(WAIT)
    h.tick(10 * WAIT + h.config.assembly.max_trace_age)  # (a trace with no agent span)
    return {(r.trace_id.hex(), r.span_id.hex()) for r in h.log_records()}


def _scored_offline(yaml: str, path: Path) -> set[tuple[str, str]]:
    config = parse_config(yaml)
    records = decode_proto_request(parse_json_request(path.read_bytes())).spans
    runs = build_trajectories(records).trajectories
    results = [evaluate_run(config, t, deterministic_only=True) for t in runs]
    return {
        (r.trajectory.trace_id, r.trajectory.span_id)
        for r in results
        if r.scenario is not None and r.sampled
    }


@pytest.mark.parametrize("path", FRAMEWORK_TRACES, ids=lambda p: p.name.split(".")[0])
def test_the_service_scores_exactly_the_runs_scoring_offline_scores(path: Path) -> None:
    records = decode_proto_request(parse_json_request(path.read_bytes())).spans
    agents = {t.agent for t in build_trajectories(records).trajectories if t.agent}
    matches = [f'agent: "{a}"' for a in sorted(agents)] + ['agent: "*"', 'agent: "nobody"']
    seen_some = False
    for match in matches:
        for sample in (1.0, 0.5):
            yaml = _scenario(match, sample)
            expected = _scored_offline(yaml, path)
            assert _scored_by_service(yaml, path) == expected, (match, sample)
            seen_some = seen_some or bool(expected)
    assert seen_some, "some configuration scores some run of every trace"


def test_an_unnamed_agent_is_built_as_its_span_name_says() -> None:
    # Unnamed, the run is named after its span when built: `may_match` cannot tell.
    run = agent_run(agent="")
    del run.agent.attributes[1]  # gen_ai.agent.name
    yaml = _scenario('agent: "invoke_agent*"')
    h = Harness(yaml)
    h.send(run.spans)
    h.tick(WAIT)
    assert {r.span_id for r in h.log_records()} == {run.agent.span_id}
