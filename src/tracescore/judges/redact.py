"""Redaction of run content before it leaves the process for a judge.

Built-in rules remove API keys, bearer tokens, passwords in URLs, JWTs, `secret: value` pairs
and e-mail addresses; configured regexes and literal strings (the judge's own API key) are
removed too. Replacements keep the harmless context (the scheme, the header or key name, the
user in a URL) so the judge still sees what kind of value was there.

Speed matters: this runs on the event loop, next to the receivers, for every judge call. So
patterns start with a literal where they can (the regex engine then skips ahead instead of
trying every position) with the word-boundary check as a lookbehind after the literal;
case-insensitive rules match a lowercased copy with a case-sensitive pattern (several times
faster than `re.I`); e-mail addresses are found from their `@`; and rules with `hints` run only
when a hint occurs in the text.
"""

from __future__ import annotations

import re
import string
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal, TypeAlias

__all__ = ["BUILTIN_RULES", "REDACTED", "Redactor"]

REDACTED = "[REDACTED]"

Kind: TypeAlias = Literal["sub", "lowered", "email"]

# (name, kind, pattern, replacement, hints). `lowered` patterns are written in lowercase, are
# matched against the lowercased text, must not follow a letter or digit, and keep group 1.
BUILTIN_RULES: tuple[tuple[str, Kind, str, str, tuple[str, ...]], ...] = (
    ("url_password", "sub", r"://([^\s/:@]+:)[^\s/@]+@", r"://\1" + REDACTED + "@", ()),
    ("bearer", "lowered", r"(bearer\s+)[a-z0-9._~+/=-]{8,}", "", ("bearer",)),
    ("jwt", "sub",
     r"eyJ(?<![A-Za-z0-9_-]eyJ)[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}",
     REDACTED, ()),
    # OpenAI / Anthropic style (sk-..., sk-proj-..., sk-ant-...).
    ("openai_key", "sub", r"sk-(?<![A-Za-z0-9]sk-)[A-Za-z0-9_-]{16,}", REDACTED, ()),
    ("aws_access_key", "sub", r"A(?:KIA|SIA)(?<![A-Za-z0-9]A[KS]IA)[0-9A-Z]{16}(?![0-9A-Za-z])",
     REDACTED, ()),
    ("github_token", "sub", r"gh[pousr]_(?<![A-Za-z0-9]gh[pousr]_)[A-Za-z0-9]{30,}"
     r"|github_pat_(?<![A-Za-z0-9]github_pat_)[A-Za-z0-9_]{30,}", REDACTED, ()),
    ("slack_token", "sub", r"xox[abposr]-(?<![A-Za-z0-9]xox[abposr]-)[A-Za-z0-9-]{10,}",
     REDACTED, ()),
    ("google_api_key", "sub", r"AIza(?<![A-Za-z0-9]AIza)[0-9A-Za-z_-]{35}", REDACTED, ()),
    # key=value / "key": "value" where the key names a secret: keep the key, drop the value.
    ("secret_assignment", "lowered",
     r"((?:api[_-]?key|secret|passw(?:or)?d|token|access[_-]?key)[\"']?\s*[:=]\s*[\"']?)"
     r"[^\s\"',;&}]{4,}", "", ("key", "secret", "passw", "token")),
    # Found from the `@`: the domain by regex, the local part by a backwards scan.
    ("email", "email", r"@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}(?![A-Za-z0-9-])",
     REDACTED, ("@",)),
)  # fmt: skip

_LOCAL_PART = frozenset(string.ascii_letters + string.digits + "._%+-")


@dataclass(frozen=True, slots=True)
class _Rule:
    pattern: re.Pattern[str]
    replacement: str = REDACTED
    hints: tuple[str, ...] = ()
    kind: Kind = "sub"
    fallback: re.Pattern[str] | None = None  # `lowered` rules when lowercasing changes lengths

    def apply(self, text: str, lowered: str) -> tuple[str, int]:
        if self.kind == "sub":
            return self.pattern.subn(self.replacement, text)
        if self.kind == "email":
            return _emails(self.pattern, text)
        if len(lowered) != len(text):  # non-ASCII case folding moved the offsets
            assert self.fallback is not None
            return self.fallback.subn(r"\1" + REDACTED, text)
        return _lowered(self.pattern, text, lowered)


def _rule(kind: Kind, pattern: str, replacement: str, hints: tuple[str, ...]) -> _Rule:
    fallback = re.compile("(?i)(?<![a-z0-9])" + pattern) if kind == "lowered" else None
    return _Rule(re.compile(pattern), replacement, hints, kind, fallback)


def _literal(secret: str) -> _Rule:
    return _Rule(re.compile(re.escape(secret)))


def _lowered(pattern: re.Pattern[str], text: str, lowered: str) -> tuple[str, int]:
    out: list[str] = []
    pos = count = 0
    for match in pattern.finditer(lowered):
        start = match.start()
        if start and lowered[start - 1].isalnum():
            continue  # `mytoken: x` is not a token
        out.append(text[pos : match.end(1)])
        out.append(REDACTED)
        pos = match.end()
        count += 1
    if not count:
        return text, 0
    out.append(text[pos:])
    return "".join(out), count


def _emails(domain: re.Pattern[str], text: str) -> tuple[str, int]:
    out: list[str] = []
    pos = count = 0
    for match in domain.finditer(text):
        at = start = match.start()
        while start > pos and text[start - 1] in _LOCAL_PART:
            start -= 1
        if start == at:
            continue  # `@handle.com` with no local part is not an address
        out.append(text[pos:start])
        out.append(REDACTED)
        pos = match.end()
        count += 1
    if not count:
        return text, 0
    out.append(text[pos:])
    return "".join(out), count


class Redactor:
    """Replaces secrets in text; counts what it replaced so the metric can show it works."""

    def __init__(
        self,
        patterns: Iterable[str] = (),
        *,
        builtin: bool = True,
        literals: Iterable[str] = (),
    ) -> None:
        """Build from custom regexes, the built-in rules, and literal secrets.

        `literals` are exact strings that must never leave (the judge's own API key): they are
        removed even when no pattern would recognise them.
        """
        rules = [_literal(x) for x in literals if x]
        if builtin:
            rules.extend(_rule(kind, p, r, hints) for _, kind, p, r, hints in BUILTIN_RULES)
        rules.extend(_Rule(re.compile(p)) for p in patterns)
        self._rules = tuple(rules)

    def __repr__(self) -> str:
        # Never show the patterns: a literal rule is the API key itself.
        return f"Redactor(rules={len(self._rules)})"

    def with_literals(self, *literals: str) -> Redactor:
        """A redactor that also removes these exact strings (checked first)."""
        redactor = Redactor(builtin=False)
        redactor._rules = tuple(_literal(x) for x in literals if x) + self._rules
        return redactor

    def redact(self, text: str) -> tuple[str, int]:
        """`text` with every secret replaced, and how many replacements were made."""
        total = 0
        lowered: str | None = None
        for rule in self._rules:
            if rule.hints or rule.kind == "lowered":
                lowered = text.lower() if lowered is None else lowered
                if rule.hints and not any(h in lowered for h in rule.hints):
                    continue
            text, n = rule.apply(text, lowered or "")
            if n:
                total += n
                lowered = None  # the text changed
        return text, total
