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
