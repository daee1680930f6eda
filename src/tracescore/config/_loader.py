"""YAML to `Config`, with every problem reported at once as `<file>:<line>: <path>: <message>`.

The YAML is composed into nodes first so each value's line is known, then constructed and
validated by the frozen pydantic models; `_problems` turns pydantic's errors into YAML paths
and plain messages. Rules that span entries (unique names, a scenario that checks nothing) are
also checked on the raw YAML, because pydantic skips model validators while an entry inside is
invalid, and a config should show every problem in one run.

Two YAML 1.1 surprises are switched off: only `true`/`false` are booleans (`yes`, `no`, `on`,
`off` stay strings) and dates stay strings, so `effective_date: 2026-07-20` compares equal to
the string a tool received.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import yaml
from pydantic import ValidationError

from tracescore.config._problems import (
    KEY,
    Path,
    line_of,
    merge_union_alternatives,
    problem,
    render,
    yaml_kind,
)
from tracescore.config.model import (
    CHECKS_NOTHING,
    Config,
    duplicate_entry_names,
    duplicate_scenario_names,
)
from tracescore.errors import ConfigError

__all__ = ["load_config", "parse_config"]

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
            [f"{source}:1: expected a mapping at the top level, got {yaml_kind(data)}"],
            source=source,
        )
    try:
        return Config.model_validate(data)
    except ValidationError as exc:
        found = merge_union_alternatives([problem(e, data, lines) for e in exc.errors()])
        # Cross-entry rules live in model validators, which pydantic skips while an entry is
        # invalid; check them on the raw data too so one run of validate-config shows all.
        for path, message in _raw_cross_checks(data):
            found.append((path, line_of(lines, path), message))
        raise ConfigError(render(found, source), source=source) from None


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
            lines[(*child, KEY)] = key_node.start_mark.line + 1
            _index_lines(value_node, child, loader, lines)
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            lines[(*path, index)] = item.start_mark.line + 1
            _index_lines(item, (*path, index), loader, lines)


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
