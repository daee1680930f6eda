"""The `judge:` config section, per-scorer overrides and per-scenario judge keys."""

from __future__ import annotations

import re

import pytest

from tracescore.config._loader import parse_config
from tracescore.errors import ConfigError
from tracescore.judges.base import JudgeScorerBase
from tracescore.judges.endpoint import JudgeEndpoint, ResolvedEndpoint
from tracescore.judges.settings import JudgeFields

FULL = """
judge:
  base_url: http://127.0.0.1:8000/v1
  model: judge-1
  api_key_env: JUDGE_API_KEY
  temperature: 0.2
  timeout_s: 20
  max_retries: 3
  max_concurrency: 8
  headers: {X-Team: evals}
  max_calls_per_minute: 60
  max_tokens_per_hour: 200000
  queue_size: 50
  cache: {max_entries: 500, path: /tmp/judge-cache.sqlite}
  redaction: {builtin: true, patterns: ["ACME-[0-9]+"]}
  max_content_chars: 8000
  judge_wait: 500ms
scenarios:
  - name: support
    judge_sample: 0.25
    judge_fields: {exclude: [results, lookup_customer.arguments]}
    scorers:
      - type: llm_rubric
        criteria: polite
        judge: {model: judge-2, timeout_s: 5}
"""


def test_every_key_is_read() -> None:
    config = parse_config(FULL)
    judge = config.judge
    assert judge is not None
    assert (judge.model, judge.temperature, judge.timeout_s, judge.judge_wait) == (
        "judge-1", 0.2, 20.0, 0.5,
    )  # fmt: skip
    assert (judge.max_calls_per_minute, judge.max_tokens_per_hour, judge.queue_size) == (
        60, 200_000, 50,
    )  # fmt: skip
    assert (judge.cache.max_entries, judge.redaction.patterns) == (500, ("ACME-[0-9]+",))
    scenario = config.scenarios[0]
    assert scenario.judge_sample == 0.25
    assert scenario.judge_fields.hides("results", "any_tool")
    assert scenario.judge_fields.hides("arguments", "lookup_customer")
    assert not scenario.judge_fields.hides("arguments", "other_tool")
    (rubric,) = scenario.scorers
    assert isinstance(rubric, JudgeScorerBase)
    resolved = ResolvedEndpoint.merge(judge, rubric.judge)
    assert (resolved.model, resolved.timeout_s, resolved.max_retries) == ("judge-2", 5.0, 3)
    assert resolved.headers == {"X-Team": "evals"}


def test_headers_stay_out_of_reprs() -> None:
    config = parse_config(FULL)
    assert "evals" not in repr(config.judge)
    assert config.judge is not None
    assert "evals" not in repr(ResolvedEndpoint.merge(config.judge))


def test_defaults_for_a_minimal_section() -> None:
    config = parse_config("judge: {base_url: 'https://api.openai.com/v1', model: gpt-4o-mini}")
    judge = config.judge
    assert judge is not None
    assert (judge.temperature, judge.max_retries, judge.judge_wait, judge.queue_size) == (
        0.0, 2, 0.0, 1000,
    )  # fmt: skip
    assert judge.api_key_env is None
    assert judge.redaction.builtin


def test_a_judge_entry_without_any_judge_is_refused_at_its_path() -> None:
    with pytest.raises(ConfigError, match=r"scenarios\[0\]\.scorers\[0\]: 'answer_relevancy' is"):
        parse_config("scenarios: [{name: s, scorers: [{type: answer_relevancy}]}]")


def test_a_complete_per_scorer_judge_needs_no_top_level_section() -> None:
    config = parse_config(
        "scenarios: [{name: s, scorers: [{type: answer_relevancy, "
        "judge: {base_url: 'http://127.0.0.1:1/v1', model: m}}]}]"
    )
    assert config.judge is None


def test_a_key_pasted_as_the_variable_name_is_refused_without_echoing_it() -> None:
    key = "sk-proj-AbCdEfGhIjKlMnOpQrSt"
    with pytest.raises(ConfigError) as caught:
        parse_config(f"judge: {{base_url: 'http://h:1/v1', model: m, api_key_env: {key}}}")
    assert "not the key itself" in str(caught.value)
    assert key not in str(caught.value)


@pytest.mark.parametrize(
    ("yaml", "message"),
    [
        ("judge: {base_url: ftp://x, model: m}", "expected an http(s) URL"),
        ("judge: {base_url: 'http://h:1/v1', model: m, redaction: {patterns: ['(']}}", "invalid"),
        ("judge: {base_url: 'http://h:1/v1', model: m, redaction: {patterns: ['a*']}}", "empty"),
        ("judge: {base_url: 'http://h:1/v1', model: m, judge_wait: soon}", "duration"),
        ("judge: {base_url: 'http://h:1/v1', model: m, max_retries: 11}", "max_retries"),
        ("judge: {base_url: 'http://h:1/v1', model: m, modle: x}", "unknown key 'modle'"),
    ],
)
def test_bad_judge_sections_are_refused(yaml: str, message: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(message)):
        parse_config(yaml)


def test_unknown_judge_fields_are_refused() -> None:
    with pytest.raises(ValueError, match=r"unknown judge field 'arguments\.tool'"):
        JudgeFields(exclude=("arguments.tool",))


def test_later_layers_win_key_by_key() -> None:
    top = JudgeEndpoint(base_url="http://a:1/v1", model="m1", timeout_s=10)
    own = JudgeEndpoint(model="m2")
    merged = ResolvedEndpoint.merge(top, own)
    assert (merged.base_url, merged.model, merged.timeout_s) == ("http://a:1/v1", "m2", 10.0)
    with pytest.raises(ValueError, match="no judge base_url configured"):
        ResolvedEndpoint.merge(own)
