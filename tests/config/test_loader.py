"""Loading YAML configs: every problem at once, each with its file, line and YAML path."""

from __future__ import annotations

from pathlib import Path

import pytest

from tracescore.config import Config, Scenario, load_config, parse_config
from tracescore.config.scorers import scorer_types
from tracescore.errors import ConfigError

INVALID = Path(__file__).parent.parent / "testdata" / "config" / "invalid"
CASES = sorted(p.stem for p in INVALID.glob("*.yaml"))


def problems_of(text: str, source: str = "c.yaml") -> list[str]:
    with pytest.raises(ConfigError) as caught:
        parse_config(text, source=source)
    return caught.value.problems


def expected_problems(case: str) -> list[str]:
    # Lists that grow as scorers and config sections are added are filled in, not pinned.
    text = (INVALID / f"{case}.txt").read_text(encoding="utf-8")
    return text.format(
        scorer_types=", ".join(sorted(scorer_types())),
        scenario_keys=", ".join(sorted(Scenario.model_fields)),
        config_keys=", ".join(sorted(Config.model_fields)),
    ).splitlines()


def test_every_invalid_case_has_its_expected_problems() -> None:
    assert CASES, INVALID
    assert {p.stem for p in INVALID.glob("*.txt")} == set(CASES)


@pytest.mark.parametrize("case", CASES)
def test_invalid_config_lists_every_problem(case: str) -> None:
    text = (INVALID / f"{case}.yaml").read_text(encoding="utf-8")
    assert problems_of(text, source=f"{case}.yaml") == expected_problems(case)


def test_the_error_message_names_the_file_and_counts_the_problems(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("scenarios:\n  - name: s\n    sample: 2\n  - nme: t\n", encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_config(str(path))
    message = str(caught.value)
    assert message.startswith(f"{path}: 5 problem(s):\n")
    assert f"  {path}:3: scenarios[0].sample: must be <= 1.0, got 2" in message
    assert f"  {path}:2: scenarios[0]: a scenario needs at least one gate or scorer" in message
    assert f"  {path}:4: scenarios[1].nme: unknown key 'nme'" in message
    assert f"  {path}:4: scenarios[1].name: required key is missing" in message
    assert caught.value.source == str(path)


def test_a_missing_file_is_a_config_error(tmp_path: Path) -> None:
    missing = tmp_path / "nope.yaml"
    with pytest.raises(ConfigError, match=r"nope\.yaml: cannot read: No such file"):
        load_config(str(missing))


def test_a_file_that_is_not_utf8_is_a_config_error(tmp_path: Path) -> None:
    path = tmp_path / "latin1.yaml"
    path.write_bytes("scenarios: []  # caf\xe9\n".encode("latin-1"))
    with pytest.raises(ConfigError, match=r"latin1\.yaml: not UTF-8 text"):
        load_config(str(path))


def test_a_missing_key_points_at_the_mapping_that_lacks_it() -> None:
    text = "scenarios:\n  - name: s\n    gates:\n      - type: called_tool\n        times: 2\n"
    assert problems_of(text) == ["c.yaml:4: scenarios[0].gates[0].tool: required key is missing"]


def test_only_true_and_false_are_booleans_and_dates_stay_strings() -> None:
    config = parse_config(
        """
scenarios:
  - name: quotes
    scorers:
      - type: tool_calls
        expected_tools: [quote]
        allow_additional: false
        arguments:
          quote: {effective_date: 2026-07-20, express: no, region: on, flag: true}
"""
    )
    (spec,) = config.scenarios[0].scorers[0].arguments["quote"]  # type: ignore[attr-defined]
    assert spec == {"effective_date": "2026-07-20", "express": "no", "region": "on", "flag": True}
    assert config.scenarios[0].scorers[0].allow_additional is False  # type: ignore[attr-defined]


def test_anchors_and_merge_keys_are_not_duplicate_keys() -> None:
    config = parse_config(
        """
scenarios:
  - name: a
    gates: &gates
      - &no_escalation {type: did_not_call, tool: escalate_to_human, name: no_escalation}
  - name: b
    gates: *gates
  - name: c
    gates:
      - <<: *no_escalation
        tool: process_refund
"""
    )
    assert [s.gates[0].tool for s in config.scenarios] == [  # type: ignore[attr-defined]
        "escalate_to_human",
        "escalate_to_human",
        "process_refund",
    ]


def test_an_unknown_top_level_key_is_refused_even_when_it_only_holds_anchors() -> None:
    problems = problems_of("x-common: &a {type: no_tool_errors}\nscenarios: []\n")
    assert problems == [
        "c.yaml:1: x-common: unknown key 'x-common'; allowed: "
        + ", ".join(sorted(Config.model_fields))
    ]


def test_a_loaded_config_is_frozen() -> None:
    config = parse_config("scenarios:\n  - name: s\n    gates: [{type: no_tool_errors}]\n")
    with pytest.raises(ValueError, match="frozen"):
        config.scenarios[0].name = "t"  # type: ignore[misc]


def test_an_empty_scenario_list_is_valid() -> None:
    assert parse_config("scenarios: []\n").scenarios == ()


def test_problems_are_sorted_by_line() -> None:
    text = "scenarios:\n  - name: s\n    sample: -1\n    gates: [{type: x}]\nmode: 3\n"
    lines = [int(p.split(":")[1]) for p in problems_of(text)]
    assert lines == sorted(lines)
    assert len(lines) == 3
