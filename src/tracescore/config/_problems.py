"""Pydantic validation errors as problems a person editing YAML can act on.

Each problem is `(path, line, message)`. Pydantic's `loc` becomes a YAML path
(`scenarios[1].scorers[0].expected_tools`) by walking the input: segments that do not
navigate it are the ones pydantic inserts for unions (a scorer entry's discriminator tag, the
member type of a `str | int` value) and are dropped. Messages are rewritten where pydantic's
are unclear in YAML terms (types named as YAML names them, unknown keys with the allowed ones
and a close match, unknown scorer types with the registered ones).
"""

from __future__ import annotations

import difflib
import re
import types
import typing
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel
from pydantic_core import ErrorDetails

from tracescore.config.model import Config, LocatedError
from tracescore.config.scorers import scorer_types

__all__ = [
    "KEY",
    "Path",
    "Problem",
    "format_path",
    "line_of",
    "merge_union_alternatives",
    "problem",
    "render",
    "yaml_kind",
]

Path = tuple[str | int, ...]
Problem = tuple[Path, int, str]  # YAML path, line, message

KEY = "\x00key"  # path suffix under which the line of a mapping key is kept


def line_of(lines: Mapping[Path, int], path: Path, *, key: bool = False) -> int:
    if key and (*path, KEY) in lines:
        return lines[(*path, KEY)]
    for end in range(len(path), -1, -1):
        if path[:end] in lines:
            return lines[path[:end]]
    return 1


def problem(error: ErrorDetails, data: Any, lines: Mapping[Path, int]) -> Problem:
    kind = error["type"]
    path = _yaml_path(error["loc"], data, keep_last=kind == "missing")
    ctx = error.get("ctx") or {}
    located = ctx.get("error")
    if isinstance(located, LocatedError):
        path = (*path, *located.loc)
    message = _message(error, path, data)
    return path, line_of(lines, path, key=kind in ("extra_forbidden", "missing")), message


def _yaml_path(loc: Sequence[str | int], data: Any, *, keep_last: bool) -> Path:
    """Pydantic's loc with the segments that do not navigate the input (union tags) dropped."""
    path: list[str | int] = []
    current = data
    for position, segment in enumerate(loc):
        navigable = (isinstance(current, Mapping) and segment in current) or (
            isinstance(current, list)
            and isinstance(segment, int)
            and not isinstance(segment, bool)
            and 0 <= segment < len(current)
        )
        if navigable:
            path.append(segment)
            current = current[segment]
        elif keep_last and position == len(loc) - 1:
            path.append(segment)
        # else: a tag pydantic inserted (scorer type, `str`, `int`, `[key]`): not in the YAML
    return tuple(path)


_TYPE_WORDS = {
    "string_type": "a string",
    "int_type": "an integer",
    "int_parsing": "an integer",
    "int_from_float": "an integer",
    "float_type": "a number",
    "float_parsing": "a number",
    "bool_type": "true or false",
    "bool_parsing": "true or false",
    "list_type": "a list",
    "tuple_type": "a list",
    "set_type": "a list",
    "dict_type": "a mapping",
    "model_type": "a mapping",
    "model_attributes_type": "a mapping",
}


def _message(error: ErrorDetails, path: Path, data: Any) -> str:
    kind = error["type"]
    ctx = error.get("ctx") or {}
    got = yaml_kind(error.get("input"))
    if kind == "model_type" and path and path[-1] == "threshold":
        return f"expected a number or {{min: x, max: y}}, got {_show(error.get('input'))}"
    if kind in _TYPE_WORDS:
        return f"expected {_TYPE_WORDS[kind]}, got {got}"
    if kind == "missing":
        return "required key is missing"
    if kind == "extra_forbidden":
        return _unknown_key(path, data)
    if kind == "union_tag_invalid":
        known = ", ".join(sorted(scorer_types())) or "none registered"
        return f"unknown scorer type {ctx.get('tag')!r} (known: {known})"
    if kind == "union_tag_not_found":
        known = ", ".join(sorted(scorer_types())) or "none registered"
        return f"missing `type` (one of: {known})"
    if kind == "literal_error":
        return f"expected one of {ctx.get('expected')}, got {_show(error.get('input'))}"
    if kind in ("greater_than_equal", "greater_than", "less_than_equal", "less_than"):
        sign = {"greater_than_equal": ">=", "greater_than": ">"}.get(kind)
        sign = sign or {"less_than_equal": "<=", "less_than": "<"}[kind]
        bound = next(iter(ctx.values()), "?")
        return f"must be {sign} {bound}, got {_show(error.get('input'))}"
    if kind in ("string_too_short", "too_short") and ctx.get("min_length") == 1:
        return "must not be empty"
    if kind in ("value_error", "assertion_error") and "error" in ctx:
        return str(ctx["error"])
    message = str(error.get("msg", "invalid value"))
    return message[:1].lower() + message[1:]


def _unknown_key(path: Path, data: Any) -> str:
    key = path[-1] if path else "?"
    allowed = _allowed_keys(path[:-1], data)
    if not allowed:
        return f"unknown key {key!r}"
    hint = difflib.get_close_matches(str(key), allowed, n=1)
    suggestion = f"did you mean {hint[0]!r}? " if hint else ""
    return f"unknown key {key!r}; {suggestion}allowed: {', '.join(allowed)}"


def _allowed_keys(path: Path, data: Any) -> list[str]:
    """The keys the model at `path` accepts, found by walking the config models."""
    annotation: Any = Config
    current = data
    for segment in path:
        model = _model_of(annotation, current)
        if model is not None and isinstance(segment, str) and segment in model.model_fields:
            annotation = model.model_fields[segment].annotation
        else:
            args = [a for a in typing.get_args(_unwrap(annotation)) if a is not Ellipsis]
            if not args:
                return []
            annotation = args[-1]  # tuple[X, ...], list[X], dict[str, X]
        current = _child(current, segment)
    model = _model_of(annotation, current)
    return sorted(model.model_fields) if model is not None else []


def _child(value: Any, segment: str | int) -> Any:
    if isinstance(value, Mapping):
        return value.get(segment)
    if isinstance(value, list) and isinstance(segment, int) and 0 <= segment < len(value):
        return value[segment]
    return None


def _model_of(annotation: Any, value: Any) -> type[BaseModel] | None:
    annotation = _unwrap(annotation)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        if isinstance(value, Mapping) and isinstance(value.get("type"), str):
            registered = scorer_types().get(value["type"])
            if registered is not None and issubclass(registered, annotation):
                return registered
        return annotation
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        members = typing.get_args(annotation)
        if isinstance(value, Mapping) and isinstance(value.get("type"), str):
            registered = scorer_types().get(value["type"])
            if registered in members:  # a scorer entry: the member its `type` names
                return registered
        for member in members:
            found = _model_of(member, value)
            if found is not None:
                return found
    return None


def _unwrap(annotation: Any) -> Any:
    while typing.get_origin(annotation) is typing.Annotated:
        annotation = typing.get_args(annotation)[0]
    return annotation


def merge_union_alternatives(found: list[Problem]) -> list[Problem]:
    """One problem per path when pydantic reports each member of a `str | int` union."""
    merged: list[Problem] = []
    by_path: dict[Path, tuple[int, list[str]]] = {}
    for path, line, message in found:
        alternative = _TYPE_MESSAGE.fullmatch(message)
        if path in by_path and alternative:
            index, wanted = by_path[path]
            if wanted:
                wanted.append(alternative.group(1))
                text = ", ".join(wanted[:-1]) + f" or {wanted[-1]}"
                merged[index] = (path, line, f"expected {text}, got {alternative.group(2)}")
                continue
        if path not in by_path:
            by_path[path] = (len(merged), [alternative.group(1)] if alternative else [])
        merged.append((path, line, message))
    return merged


_TYPE_MESSAGE = re.compile(r"expected (.+), got (\w+)")


def render(found: list[Problem], source: str) -> list[str]:
    rendered: list[tuple[int, int, str]] = []
    seen: set[str] = set()
    for order, (path, line, message) in enumerate(found):
        where = format_path(path)
        text = f"{where}: {message}" if where else message
        if text in seen:  # the raw re-check repeats what a model validator already said
            continue
        seen.add(text)
        rendered.append((line, order, f"{source}:{line}: {text}"))
    return [text for _, _, text in sorted(rendered)]


def format_path(path: Path) -> str:
    """`("scenarios", 1, "scorers", 0, "tool")` as `scenarios[1].scorers[0].tool`."""
    out = ""
    for segment in path:
        if isinstance(segment, int):
            out += f"[{segment}]"
        elif re.fullmatch(r"[A-Za-z_][A-Za-z0-9_-]*", segment):
            out += f".{segment}" if out else segment
        else:
            out += f"[{segment!r}]"
    return out


def _show(value: object) -> str:
    """A value as YAML spells it: `true`, `null`, `'text'`, `1.5`."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    return repr(value)


def yaml_kind(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, Mapping):
        return "mapping"
    return type(value).__name__
