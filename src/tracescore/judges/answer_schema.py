"""Answer models whose JSON schema says everything the reply validator checks.

A judge asked about calls 1 and 3 must answer for exactly those. A list of evaluations cannot
say so in a schema that OpenAI's strict structured outputs, vLLM and llama.cpp guided decoding
all enforce (strict mode refuses `minItems`, and an item's `call` number cannot be tied to a set
of values per position). An object with one required property per call can: `call_1`,
`call_3`, `additionalProperties: false`. So the wire answer is keyed by call, built per set of
call numbers, and turned back into the scorer's list after validation.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from pydantic import BaseModel, ConfigDict, create_model

__all__ = ["call_key", "keyed_answer_model", "keyed_entries"]

_FORBID = ConfigDict(extra="forbid")


def call_key(number: int) -> str:
    """The property that holds the judge's verdict on call `number`."""
    return f"call_{number}"


# Bounded: one model per distinct (answer, call numbers); runs mostly repeat a few shapes.
@lru_cache(maxsize=256)
def keyed_answer_model(
    name: str,
    entry: type[BaseModel],
    numbers: tuple[int, ...],
    rest: tuple[tuple[str, Any], ...],
) -> type[BaseModel]:
    """`{evaluations: {call_<n>: entry, ...}, <rest>...}`, every property required."""
    evaluations: type[BaseModel] = create_model(
        f"{name}Evaluations",
        __config__=_FORBID,
        **{call_key(n): (entry, ...) for n in numbers},  # type: ignore[call-overload]
    )
    fields: dict[str, Any] = {"evaluations": (evaluations, ...)}
    fields.update((field, (annotation, ...)) for field, annotation in rest)
    model: type[BaseModel] = create_model(name, __config__=_FORBID, **fields)
    return model


def keyed_entries(answer: BaseModel, numbers: tuple[int, ...]) -> list[tuple[int, dict[str, Any]]]:
    """The validated `evaluations` object as `(call number, entry fields)` in call order."""
    evaluations = answer.evaluations  # type: ignore[attr-defined]
    return [(n, getattr(evaluations, call_key(n)).model_dump()) for n in numbers]
