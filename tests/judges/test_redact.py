"""Redaction: no secret of a run leaves the process for a judge."""

from __future__ import annotations

import pytest

from tracescore.judges.redact import BUILTIN_RULES, REDACTED, Redactor

SECRETS = {
    "openai_key": ("key sk-proj-AbCdEfGhIjKlMnOpQrStUv12", "sk-proj-AbCdEfGhIjKlMnOpQrStUv12"),
    "bearer": ("Authorization: Bearer abc.def-ghi_jkl012", "abc.def-ghi_jkl012"),
    "url_password": ("postgres://admin:hunter2pass@db:5432/app", "hunter2pass"),
    "email": ("write to alice.smith+x@mail.example.com now", "alice.smith+x@mail.example.com"),
    "aws_access_key": ("id AKIAIOSFODNN7EXAMPLE here", "AKIAIOSFODNN7EXAMPLE"),
    "github_token": ("ghp_" + "a1B2" * 9, "ghp_" + "a1B2" * 9),
    "jwt": (
        "token eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NSJ9.c2lnbmF0dXJlMTIz",
        "eyJzdWIiOiIxMjM0NSJ9",
    ),
    "secret_assignment": ('{"password": "correct-horse"}', "correct-horse"),
}


@pytest.mark.parametrize("name", sorted(SECRETS))
def test_each_builtin_pattern_removes_its_secret(name: str) -> None:
    text, secret = SECRETS[name]
    redacted, count = Redactor().redact(text)
    assert secret not in redacted
    assert REDACTED in redacted
    assert count >= 1


def test_every_builtin_pattern_has_a_case() -> None:
    assert {name for name, *_ in BUILTIN_RULES} == set(SECRETS) | {
        "slack_token",
        "google_api_key",
    }


def test_context_around_a_secret_is_kept_so_the_judge_knows_what_was_there() -> None:
    redacted, _ = Redactor().redact("postgres://admin:hunter2pass@db/app and Bearer abcdefghijk")
    assert redacted == f"postgres://admin:{REDACTED}@db/app and Bearer {REDACTED}"


def test_custom_patterns_and_literals_are_redacted_and_builtins_can_be_turned_off() -> None:
    redactor = Redactor([r"ACME-\d{6}"], builtin=False, literals=["zz-judge-key"])
    text, count = redactor.redact("order ACME-123456 by bob@example.com with zz-judge-key")
    assert text == f"order {REDACTED} by bob@example.com with {REDACTED}"
    assert count == 2


def test_with_literals_adds_exact_strings_to_an_existing_redactor() -> None:
    redactor = Redactor([r"ACME-\d+"]).with_literals("plain-looking-value")
    text, _ = redactor.redact("ACME-1 plain-looking-value")
    assert text == f"{REDACTED} {REDACTED}"
    assert "plain-looking-value" not in repr(redactor)


def test_ordinary_text_is_left_alone() -> None:
    text = 'lookup_order({"order_id": "A-42"}) -> {"eta": "tomorrow", "tokens": 12}'
    assert Redactor().redact(text) == (text, 0)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("mytoken: abcdef", "mytoken: abcdef"),  # not a `token` key
        ("TOKEN=abcdef", f"TOKEN={REDACTED}"),
        ("Api-Key: 'abcdef'", f"Api-Key: '{REDACTED}'"),
        ('"access_token": "abcdef"', f'"access_token": "{REDACTED}"'),
        ('"input_tokens": 12345', '"input_tokens": 12345'),
        ("mail ÉLODIE token=abcdef", f"mail ÉLODIE token={REDACTED}"),
        ("İstanbul token=abcdef", f"İstanbul token={REDACTED}"),  # lowercasing grows the text
        ("@handle.com and a@b.io", f"@handle.com and {REDACTED}"),
        ("xsk-abcdefghijklmnopqrst", "xsk-abcdefghijklmnopqrst"),
    ],
)
def test_boundaries_and_case(text: str, expected: str) -> None:
    assert Redactor().redact(text)[0] == expected


def test_text_without_hints_skips_the_slower_rules_and_is_unchanged() -> None:
    text = '{"k": "' + "v" * 5000 + '"}'
    assert Redactor().redact(text) == (text, 0)
