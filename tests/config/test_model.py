"""The config models: scenario digests, cross-entry rules, compiled matchers."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from tracescore.config import Config, Scenario
from tracescore.config.model import SCENARIO_DIGEST_VERSION

BASE: dict[str, Any] = {
    "name": "refunds",
    "match": {"agent": "support-*"},
    "gates": [{"type": "tool_order", "tools": ["lookup_order", "process_refund"]}],
    "scorers": [{"type": "no_tool_errors", "threshold": 1.0}],
}


def digest(**changes: Any) -> str:
    return Scenario.model_validate({**BASE, **changes}).digest


def test_the_digest_is_versioned_and_stable() -> None:
    first = digest()
    assert first.startswith(f"{SCENARIO_DIGEST_VERSION}:")
    assert len(first.split(":")[1]) == 64
    assert digest() == first


@pytest.mark.parametrize(
    "changes",
    [
        {"name": "renamed"},
        {"match": {"agent": "other"}},
        {"sample": 0.5},
    ],
)
def test_which_runs_are_scored_does_not_change_the_digest(changes: dict[str, Any]) -> None:
    assert digest(**changes) == digest()


@pytest.mark.parametrize(
    "changes",
    [
        {"scorers": [{"type": "no_tool_errors", "threshold": 0.5}]},  # a threshold
        {"scorers": [{"type": "no_tool_errors", "threshold": 1.0, "name": "errors"}]},  # a name
        {"scorers": [{"type": "no_tool_errors"}]},  # no threshold
        {"gates": [{"type": "tool_order", "tools": ["process_refund", "lookup_order"]}]},
        {"gates": [], "scorers": [*BASE["gates"], *BASE["scorers"]]},  # a gate becomes a scorer
        {"scorers": [*BASE["scorers"], {"type": "used_no_tools"}]},  # one more scorer
    ],
)
def test_how_runs_are_scored_changes_the_digest(changes: dict[str, Any]) -> None:
    assert digest(**changes) != digest()


def test_entries_list_gates_first_with_their_role() -> None:
    scenario = Scenario.model_validate(BASE)
    assert [(e.score_name, is_gate) for e, is_gate in scenario.entries] == [
        ("tool_order", True),
        ("no_tool_errors", False),
    ]


def test_duplicate_names_are_refused_when_built_in_code_too() -> None:
    with pytest.raises(ValidationError, match="duplicate name 'no_tool_errors'"):
        Scenario.model_validate({**BASE, "gates": [{"type": "no_tool_errors"}]})
    with pytest.raises(ValidationError, match="duplicate scenario name 'refunds'"):
        Config.model_validate({"scenarios": [BASE, BASE]})


def test_a_scenario_that_checks_nothing_is_refused() -> None:
    with pytest.raises(ValidationError, match="needs at least one gate or scorer"):
        Scenario.model_validate({"name": "empty"})


def test_the_input_regex_is_compiled_once_at_load() -> None:
    scenario = Scenario.model_validate({**BASE, "match": {"input": "(?i)refund"}})
    pattern = scenario.match.pattern
    assert pattern is not None
    assert pattern.search("A REFUND please")
    assert scenario.match.pattern is pattern
    assert Scenario.model_validate(BASE).match.pattern is None


# --- the digest of a scenario with LLM judges covers the judge that answers -----------------

# The digest of BASE before judges were part of any digest: deterministic scenarios keep it.
BASE_DIGEST = "scenario-v1:3de401c9b998fcd0a52db93e7c399776a591f111f28328e6673f748b008c00ac"
TONE: dict[str, Any] = {
    "name": "tone",
    "scorers": [{"type": "llm_rubric", "criteria": "The answer is polite."}],
}
JUDGE: dict[str, Any] = {"base_url": "http://judge:8000/v1", "model": "m1"}


def config_digests(judge: dict[str, Any] | None = None, tone: Any = TONE) -> tuple[str, str]:
    config = Config.model_validate({"judge": {**JUDGE, **(judge or {})}, "scenarios": [BASE, tone]})
    return config.scenarios[0].digest, config.scenarios[1].digest


def test_deterministic_digests_do_not_change_with_the_judge_section() -> None:
    assert digest() == BASE_DIGEST
    assert config_digests()[0] == BASE_DIGEST
    assert config_digests({"model": "m2", "temperature": 1.0})[0] == BASE_DIGEST
    assert Config.model_validate({"scenarios": [BASE]}).scenarios[0].digest == BASE_DIGEST


@pytest.mark.parametrize(
    "judge", [{"model": "m2"}, {"temperature": 0.7}, {"base_url": "http://other:8000/v1"}]
)
def test_what_changes_a_judges_answers_changes_the_digest(judge: dict[str, Any]) -> None:
    assert config_digests(judge)[1] != config_digests()[1]


@pytest.mark.parametrize(
    "judge",
    [
        {"api_key_env": "JUDGE_KEY"},
        {"headers": {"x-team": "a"}},
        {"timeout_s": 5},
        {"max_retries": 0},
        {"max_concurrency": 1},
        {"judge_wait": "2s"},
        {"queue_size": 3},
        {"max_calls_per_minute": 10},
    ],
)
def test_keys_headers_and_limits_do_not_change_the_digest(judge: dict[str, Any]) -> None:
    assert config_digests(judge)[1] == config_digests()[1]


def test_a_judge_entry_counts_with_its_own_overrides() -> None:
    own = {"name": "tone", "scorers": [{**TONE["scorers"][0], "judge": {"model": "m9"}}]}
    # The entry's own model answers: the top-level model no longer matters, its URL still does.
    assert config_digests({"model": "m2"}, own)[1] == config_digests(tone=own)[1]
    assert config_digests({"base_url": "http://o:1/v1"}, own)[1] != config_digests(tone=own)[1]
    assert config_digests(tone=own)[1] != config_digests()[1]


def test_a_scenario_shared_by_two_configs_keeps_each_configs_digest() -> None:
    tone = Scenario.model_validate(TONE)
    first = Config.model_validate({"judge": JUDGE, "scenarios": [tone]})
    second = Config.model_validate({"judge": {**JUDGE, "model": "m2"}, "scenarios": [tone]})
    assert first.scenarios[0].digest != second.scenarios[0].digest
    assert first.scenarios[0].digest == config_digests()[1]
    assert first.scenarios[0].entries == tone.entries
