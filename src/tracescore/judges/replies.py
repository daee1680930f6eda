"""Judge replies: the text of a completion, the JSON in it, validation.

Kept apart from the client so the lenient parsing rules (a bare object, a fenced block, the
first `{...}` in prose) are tested on their own.
"""

from __future__ import annotations

import json
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from tracescore.judges.prompts import JudgeRequest

__all__ = ["extract_json", "parse_reply", "reply_text", "validate_reply"]

T = TypeVar("T", bound=BaseModel)


def reply_text(response: Any) -> str:
    """The first choice's text (empty when the server sent none)."""
    if not response.choices:
        return ""
    message = response.choices[0].message
    return str(message.content or "")


def extract_json(text: str) -> Any:
    """The JSON object in a reply: the whole text, a fenced block, or the first `{...}`."""
    stripped = text.strip()
    try:
        return json.loads(stripped)
    except ValueError:
        pass
    decoder = json.JSONDecoder()
    start = stripped.find("{")
    while start != -1:
        try:
            value, _ = decoder.raw_decode(stripped, start)
        except ValueError:
            start = stripped.find("{", start + 1)
            continue
        if isinstance(value, dict):
            return value
        start = stripped.find("{", start + 1)
    raise ValueError("the reply holds no JSON object")


def parse_reply(text: str, request: JudgeRequest[T]) -> tuple[T | None, str | None]:
    """The validated answer in `text`, or None and the problem to tell the judge."""
    if not text.strip():
        return None, "the reply was empty"
    try:
        data = extract_json(text)
    except ValueError as exc:
        return None, str(exc)
    return validate_reply(data, request)


def validate_reply(data: Any, request: JudgeRequest[T]) -> tuple[T | None, str | None]:
    """`data` validated by the request's model and its `check`, or None and the problem."""
    try:
        value = request.output.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or 'reply'}: {err['msg']}"
            for err in exc.errors()[:5]
        )
        return None, f"it does not match the schema ({problems})"
    if request.check is not None:
        problem = request.check(value)
        if problem is not None:
            return None, problem
    return value, None
