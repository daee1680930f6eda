"""YAML to `Config`, with every problem reported at once as `<file>:<line>: <path>: <message>`.

The YAML is composed into nodes first so each value's line is known, then constructed and
validated by the frozen pydantic models. Pydantic's `loc` becomes a YAML path
(`scenarios[1].scorers[0].expected_tools`): the segments pydantic inserts for unions (the
discriminator tag of a scorer entry, the member type of a `str | int` value) are dropped, and
its messages are rewritten where they are unclear to someone editing YAML.

Two YAML 1.1 surprises are switched off: only `true`/`false` are booleans (`yes`, `no`, `on`,
`off` stay strings) and dates stay strings, so `effective_date: 2026-07-20` compares equal to
the string a tool received.
"""

from __future__ import annotations

import difflib
import re
import types
import typing
from collections.abc import Mapping, Sequence
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from tracescore.config.model import (
    CHECKS_NOTHING,
    Config,
    LocatedError,
    duplicate_entry_names,
    duplicate_scenario_names,
)
from tracescore.errors import ConfigError
from tracescore.scorers.registry import scorer_types

__all__ = ["load_config", "parse_config"]

Path = tuple[str | int, ...]
Problem = tuple[Path, int, str]  # YAML path, line, message

_BOOL_TAG = "tag:yaml.org,2002:bool"
_TIMESTAMP_TAG = "tag:yaml.org,2002:timestamp"


class _Loader(yaml.SafeLoader):
    """SafeLoader with YAML 1.2 booleans and no implicit timestamps."""


_Loader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag not in (_BOOL_TAG, _TIMESTAMP_TAG)]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_Loader.add_implicit_resolver(
    _BOOL_TAG, re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF")
)


def load_config(path: str) -> Config:
    """Read and validate a config file; raises ConfigError listing every problem in it."""
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except OSError as exc:
        raise ConfigError([f"{path}: cannot read: {exc.strerror or exc}"], source=path) from exc
    except UnicodeDecodeError as exc:
        raise ConfigError([f"{path}: not UTF-8 text: {exc.reason}"], source=path) from exc
    return parse_config(text, source=path)


def parse_config(text: str, source: str = "<config>") -> Config:
    """Validate config text; `source` names it in problems. Raises ConfigError."""
    data, lines, problems = _read_yaml(text, source)
    if problems:
        raise ConfigError(problems, source=source)
    if data is None:
        raise ConfigError([f"{source}:1: the file is empty; expected scenarios"], source=source)
    if not isinstance(data, Mapping):
        raise ConfigError(
            [f"{source}:1: expected a mapping at the top level, got {_kind(data)}"], source=source
        )
    try:
        return Config.model_validate(data)
    except ValidationError as exc:
        found = _merge_union_alternatives([_problem(e, data, lines) for e in exc.errors()])
        # Cross-entry rules live in model validators, which pydantic skips while an entry is
        # invalid; check them on the raw data too so one run of validate-config shows all.
        for path, message in _raw_cross_checks(data):
            found.append((path, _line(lines, path), message))
        raise ConfigError(_render(found, source), source=source) from None


# --- YAML with line numbers ----------------------------------------------------------------


def _read_yaml(text: str, source: str) -> tuple[Any, dict[Path, int], list[str]]:
    loader = _Loader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None, {}, []
        duplicates = _duplicate_keys(node, loader, source)
        data = loader.construct_document(node)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else 1
        what = exc.problem or exc.context or "cannot be parsed"
        if exc.problem and exc.context and exc.context_mark is not None:
            what += f" ({exc.context} on line {exc.context_mark.line + 1})"
        return None, {}, [f"{source}:{line}: invalid YAML: {what}"]
    except yaml.YAMLError as exc:
        return None, {}, [f"{source}:1: invalid YAML: {exc}"]
    finally:
        loader.dispose()
    if duplicates:
        return None, {}, duplicates
    lines: dict[Path, int] = {}
    _index_lines(node, (), loader, lines)
    return data, lines, []


def _duplicate_keys(node: yaml.Node, loader: _Loader, source: str) -> list[str]:
    """PyYAML keeps the last of two equal keys silently; a config must not."""
    problems: list[str] = []
    stack: list[yaml.Node] = [node]
    seen_nodes: set[int] = set()
    while stack:
        current = stack.pop()
        if id(current) in seen_nodes:  # aliases may share nodes
            continue
        seen_nodes.add(id(current))
        if isinstance(current, yaml.MappingNode):
            keys: set[str] = set()
            for key_node, value_node in current.value:
                stack.append(value_node)
                if not isinstance(key_node, yaml.ScalarNode) or key_node.tag.endswith(":merge"):
                    continue
                if key_node.value in keys:
                    problems.append(
                        f"{source}:{key_node.start_mark.line + 1}: duplicate key {key_node.value!r}"
                    )
                keys.add(key_node.value)
        elif isinstance(current, yaml.SequenceNode):
            stack.extend(current.value)
    return problems


def _index_lines(node: yaml.Node, path: Path, loader: _Loader, lines: dict[Path, int]) -> None:
    lines.setdefault(path, node.start_mark.line + 1)
    if isinstance(node, yaml.MappingNode):
        # After construction merge keys are flattened into node.value, own keys last: the
        # last occurrence wins, as it does in the constructed dict.
        for key_node, value_node in node.value:
            if not isinstance(key_node, yaml.ScalarNode):
                continue
            key = loader.construct_object(key_node)
            if not isinstance(key, str | int | bool | float) or key is None:
                continue
            child = (*path, key if isinstance(key, str) else str(key))
            lines[child] = value_node.start_mark.line + 1
            lines[(*child, _KEY)] = key_node.start_mark.line + 1
            _index_lines(value_node, child, loader, lines)
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            lines[(*path, index)] = item.start_mark.line + 1
            _index_lines(item, (*path, index), loader, lines)


_KEY = "\x00key"  # path suffix under which the line of a mapping key is kept


def _line(lines: Mapping[Path, int], path: Path, *, key: bool = False) -> int:
    if key and (*path, _KEY) in lines:
        return lines[(*path, _KEY)]
    for end in range(len(path), -1, -1):
        if path[:end] in lines:
            return lines[path[:end]]
    return 1


# --- pydantic errors to problems -----------------------------------------------------------


def _problem(error: ErrorDetails, data: Any, lines: Mapping[Path, int]) -> Problem:
    kind = error["type"]
    path = _yaml_path(error["loc"], data, keep_last=kind == "missing")
    ctx = error.get("ctx") or {}
    located = ctx.get("error")
    if isinstance(located, LocatedError):
        path = (*path, *located.loc)
    message = _message(error, path, data)
    return path, _line(lines, path, key=kind in ("extra_forbidden", "missing")), message


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
    got = _kind(error.get("input"))
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


def _raw_cross_checks(data: Mapping[str, Any]) -> list[tuple[Path, str]]:
    scenarios = data.get("scenarios")
    if not isinstance(scenarios, list):
        return []
    names = [s.get("name") if isinstance(s, Mapping) else None for s in scenarios]
    found: list[tuple[Path, str]] = list(duplicate_scenario_names(names))
    for index, scenario in enumerate(scenarios):
        if not isinstance(scenario, Mapping):
            continue
        sections = []
        for section in ("gates", "scorers"):
            entries = scenario.get(section)
            entries = entries if isinstance(entries, list) else []
            sections.append((section, [_entry_name(e) for e in entries]))
        for loc, message in duplicate_entry_names(*sections):
            found.append((("scenarios", index, *loc), message))
        if not any(names for _, names in sections):
            found.append((("scenarios", index), CHECKS_NOTHING))
    return found


def _entry_name(entry: Any) -> object:
    if not isinstance(entry, Mapping):
        return None
    name = entry.get("name")
    return name if name is not None else entry.get("type")


def _merge_union_alternatives(found: list[Problem]) -> list[Problem]:
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


def _render(found: list[Problem], source: str) -> list[str]:
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


def _kind(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, Mapping):
        return "mapping"
    return type(value).__name__
