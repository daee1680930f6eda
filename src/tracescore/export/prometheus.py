"""Prometheus text exposition format 0.0.4, from a snapshot of instruments.

Names follow the collector's OTLP-to-Prometheus translation: characters outside `[a-zA-Z0-9_:]`
become `_`, the unit becomes a suffix (`s` -> `_seconds`, `By` -> `_bytes`; annotations like
`{span}` add nothing) and counters end in `_total`. Label names lose their dots the same way.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable

from tracescore.export.instruments import Attrs, Instrument

__all__ = ["CONTENT_TYPE", "label_name", "metric_name", "render"]

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
_UNIT_SUFFIX = {"s": "seconds", "ms": "milliseconds", "By": "bytes"}
_BAD_METRIC_CHARS = re.compile(r"[^a-zA-Z0-9_:]")
_BAD_LABEL_CHARS = re.compile(r"[^a-zA-Z0-9_]")


def metric_name(inst: Instrument) -> str:
    """The Prometheus name of an instrument (for histograms, before `_bucket` etc.)."""
    name = _BAD_METRIC_CHARS.sub("_", inst.name)
    if name[:1].isdigit():
        name = "_" + name
    suffix = _UNIT_SUFFIX.get(inst.unit)
    if suffix and not name.endswith("_" + suffix):
        name += "_" + suffix
    if inst.kind == "counter" and not name.endswith("_total"):
        name += "_total"
    return name


def label_name(key: str) -> str:
    """An attribute key as a Prometheus label name (`gen_ai.tool.name` -> `gen_ai_tool_name`)."""
    name = _BAD_LABEL_CHARS.sub("_", key)
    return "_" + name if name[:1].isdigit() else name


def render(instruments: Iterable[Instrument]) -> str:
    """Every non-empty instrument as HELP, TYPE and sample lines; ends with a newline."""
    lines: list[str] = []
    for inst in instruments:
        if not inst.values and not inst.points:
            continue
        name = metric_name(inst)
        lines.append(f"# HELP {name} {_escape_help(inst.description)}")
        lines.append(f"# TYPE {name} {inst.kind}")
        if inst.kind != "histogram":
            for attrs, value in sorted(inst.values.items()):
                lines.append(f"{name}{_labels(attrs)} {_number(value)}")
            continue
        for attrs, point in sorted(inst.points.items()):
            cumulative = 0
            for bound, count in zip((*inst.bounds, math.inf), point.counts, strict=True):
                cumulative += count
                le = "+Inf" if math.isinf(bound) else repr(float(bound))
                lines.append(f"{name}_bucket{_labels(attrs, le)} {cumulative}")
            lines.append(f"{name}_sum{_labels(attrs)} {_number(point.sum)}")
            lines.append(f"{name}_count{_labels(attrs)} {point.count}")
    return "\n".join(lines) + "\n" if lines else ""


def _labels(attrs: Attrs, le: str | None = None) -> str:
    pairs = [f'{label_name(k)}="{_escape_value(v)}"' for k, v in attrs]
    if le is not None:
        pairs.append(f'le="{le}"')
    return "{" + ",".join(pairs) + "}" if pairs else ""


def _escape_value(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _escape_help(text: str) -> str:
    return text.replace("\\", "\\\\").replace("\n", "\\n")


def _number(value: float) -> str:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    if float(value).is_integer() and abs(value) < 2**53:
        return str(int(value))
    return repr(float(value))
