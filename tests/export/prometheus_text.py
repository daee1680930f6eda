"""A strict parser of the Prometheus text exposition format 0.0.4, for tests.

It refuses what the format does not allow (bad names, label pairs or values, samples outside
their family, counters without `_total`, histograms whose buckets are not cumulative or whose
+Inf bucket differs from `_count`), so a test that parses `/metrics` also validates it.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

__all__ = ["Family", "parse_prometheus"]

_NAME = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
_LABEL = r"[a-zA-Z_][a-zA-Z0-9_]*"
_VALUE = r'"((?:[^"\\\n]|\\[\\"n])*)"'
_HELP = re.compile(rf"^# HELP ({_NAME}) ((?:[^\\\n]|\\[\\n])*)$")
_TYPE = re.compile(rf"^# TYPE ({_NAME}) (counter|gauge|histogram|summary|untyped)$")
_SAMPLE = re.compile(rf"^({_NAME})(?:\{{(.*)\}})? (\S+)$")
_PAIR = re.compile(rf"({_LABEL})={_VALUE}")
_NUMBER = re.compile(r"^(?:[+-]?(?:\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+)|[+-]Inf|NaN)$")


@dataclass
class Family:
    type: str
    help: str | None = None
    samples: list[tuple[str, dict[str, str], float]] = field(default_factory=list)


def parse_prometheus(text: str) -> dict[str, Family]:
    """Parse exposition text, raising AssertionError on anything the format does not allow."""
    assert text.endswith("\n"), "exposition must end with a newline"
    families: dict[str, Family] = {}
    helps: dict[str, str] = {}
    current: str | None = None
    for n, line in enumerate(text.splitlines(), 1):
        if m := _HELP.match(line):
            assert m.group(1) not in helps, f"line {n}: second HELP for {m.group(1)}"
            helps[m.group(1)] = m.group(2)
            continue
        if m := _TYPE.match(line):
            name = m.group(1)
            assert name not in families, f"line {n}: second TYPE for {name}"
            families[name] = Family(m.group(2), helps.get(name))
            current = name
            continue
        assert not line.startswith("#"), f"line {n}: malformed comment {line!r}"
        m = _SAMPLE.match(line)
        assert m, f"line {n}: malformed sample {line!r}"
        name, labels_text, value = m.groups()
        assert _NUMBER.match(value), f"line {n}: bad value {value!r}"
        labels: dict[str, str] = {}
        if labels_text:
            rest = labels_text
            while rest:
                pm = _PAIR.match(rest)
                assert pm, f"line {n}: bad label pair in {labels_text!r}"
                assert pm.group(1) not in labels, f"line {n}: duplicate label {pm.group(1)}"
                labels[pm.group(1)] = pm.group(2)
                rest = rest[pm.end() :]
                assert rest == "" or rest.startswith(","), f"line {n}: junk after label pair"
                rest = rest[1:]
        assert current is not None, f"line {n}: sample before any TYPE"
        family = families[current]
        allowed = {current}
        if family.type == "histogram":
            allowed = {current + "_bucket", current + "_sum", current + "_count"}
        assert name in allowed, f"line {n}: sample {name} outside its family {current}"
        family.samples.append((name, labels, float(value)))
    for name, family in families.items():
        if family.type == "counter":
            assert name.endswith("_total"), f"counter {name} must end in _total"
        if family.type == "histogram":
            _check_histogram(name, family)
    return families


def _check_histogram(name: str, family: Family) -> None:
    series: dict[tuple[tuple[str, str], ...], list[tuple[float, float]]] = {}
    counts: dict[tuple[tuple[str, str], ...], float] = {}
    for sample, labels, value in family.samples:
        if sample.endswith("_bucket"):
            labels = dict(labels)
            le = labels.pop("le")
            bound = math.inf if le == "+Inf" else float(le)
            series.setdefault(tuple(sorted(labels.items())), []).append((bound, value))
        elif sample.endswith("_count"):
            counts[tuple(sorted(labels.items()))] = value
    for key, buckets in series.items():
        bounds = [b for b, _ in buckets]
        assert bounds == sorted(bounds), f"{name}: le out of order"
        assert bounds[-1] == math.inf, f"{name}: no +Inf bucket"
        values = [v for _, v in buckets]
        assert values == sorted(values), f"{name}: buckets must be cumulative"
        assert values[-1] == counts[key], f"{name}: +Inf bucket must equal _count"
