"""Versioned prompt templates and the chat messages of one judge call.

Templates ship as package files `templates/<name>.v<N>.txt` with a `=== system ===` and a
`=== user ===` section and `$placeholders`. A changed prompt gets a new file (a new version),
so old scores keep their meaning; the digest also covers the text's sha256 in case an edit
forgot to bump the version.

A request separates trusted `fields` (written by whoever wrote the config, or by tracescore)
from untrusted `data` (recorded from the run): only data is fenced, and data is substituted in
the same single pass, so `$name` inside recorded content is never expanded.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from string import Template
from typing import Any, Generic, TypeVar
from weakref import WeakKeyDictionary

from pydantic import BaseModel

from tracescore.judges.sanitize import Fence

__all__ = ["JudgeRequest", "PromptTemplate", "build_messages", "load_template", "output_schema"]

T = TypeVar("T", bound=BaseModel)

# Answer models are module-level classes (or the rubric's, built once per label set), so this
# stays small.
# Weak: answer models made per run shape (judges.answer_schema) leave with their LRU entry.
_SCHEMAS: WeakKeyDictionary[type[BaseModel], tuple[dict[str, Any], str]] = WeakKeyDictionary()
_SYSTEM = "=== system ==="
_USER = "=== user ==="


@dataclass(frozen=True, slots=True)
class PromptTemplate:
    """One versioned template: system and user text with `$placeholders`."""

    name: str
    version: int
    system: str
    user: str
    sha256: str

    @property
    def id(self) -> str:
        """`<name>.v<version>`, the file's stem, carried in digests and score details."""
        return f"{self.name}.v{self.version}"

    def placeholders(self) -> set[str]:
        """Names used as `$name` / `${name}` in either section."""
        names: set[str] = set()
        for text in (self.system, self.user):
            for match in Template.pattern.finditer(text):
                name = match.group("named") or match.group("braced")
                if name:
                    names.add(name)
        return names


@cache
def load_template(name: str, version: int) -> PromptTemplate:
    """The packaged template `<name>.v<version>.txt`; raises FileNotFoundError if absent."""
    resource = resources.files("tracescore.judges").joinpath("templates", f"{name}.v{version}.txt")
    raw = resource.read_text(encoding="utf-8")
    _header, sep, rest = raw.partition(_SYSTEM + "\n")
    system, sep2, user = rest.partition(_USER + "\n")
    if not sep or not sep2:
        raise ValueError(f"template {name}.v{version} lacks {_SYSTEM!r} or {_USER!r} sections")
    digest = hashlib.sha256(raw.encode("utf-8")).hexdigest()
    return PromptTemplate(name, version, system.strip(), user.strip(), digest)


def output_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The JSON schema sent as `response_format` (and shown in the prompt as a fallback).

    Cached per model class: generating it costs more than the rest of a request's preparation.
    Callers must not modify the returned dict.
    """
    cached = _SCHEMAS.get(model)
    if cached is None:
        schema = model.model_json_schema()
        cached = _SCHEMAS[model] = (schema, json.dumps(schema, separators=(",", ":")))
    return cached[0]


def _schema_text(model: type[BaseModel]) -> str:
    output_schema(model)
    return _SCHEMAS[model][1]


@dataclass(frozen=True, slots=True)
class JudgeRequest(Generic[T]):
    """One question for a judge: template, trusted fields, untrusted data, output model.

    `check` validates beyond the schema (e.g. one evaluation per call); a message it returns
    is a problem that earns the reply one repair attempt, like invalid JSON does.
    """

    template: PromptTemplate
    output: type[T]
    digest: str
    fields: Mapping[str, str] = field(default_factory=dict)
    data: Mapping[str, str] = field(default_factory=dict)
    check: Callable[[T], str | None] | None = None

    def content_key(self) -> str:
        """sha256 of what is judged (digest, template, fields, data): the cache key."""
        payload = {
            "digest": self.digest,
            "template": [self.template.id, self.template.sha256],
            "fields": dict(self.fields),
            "data": dict(self.data),
        }
        canonical = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
        return hashlib.sha256(canonical.encode()).hexdigest()


def build_messages(
    request: JudgeRequest[Any], fence: Fence, *, schema_in_prompt: bool
) -> list[dict[str, str]]:
    """System and user messages: template + fence rules (+ the schema when not enforced)."""
    values: dict[str, str] = dict(request.fields)
    for name, content in request.data.items():
        values[name] = fence.wrap(name, content)
    missing = request.template.placeholders() - values.keys()
    if missing:
        raise KeyError(f"template {request.template.id} needs {sorted(missing)}")
    system = Template(request.template.system).substitute(values)
    user = Template(request.template.user).substitute(values)
    parts = [system, fence.rules()]
    schema = _schema_text(request.output)
    if schema_in_prompt:
        parts.append(
            "Reply with one JSON object and nothing else. It must match this JSON schema: " + schema
        )
    else:
        parts.append("Reply with one JSON object matching the response schema.")
    return [
        {"role": "system", "content": "\n\n".join(parts)},
        {"role": "user", "content": user},
    ]
