"""Cumulative in-memory instruments (counter, gauge, histogram), with no locking of their own.

`Telemetry` (metrics.py) owns the lock and the cardinality caps; these classes only hold numbers.
A series is keyed by its attribute pairs in a fixed key order, so equal label sets always land
in the same series whatever order the caller built them in.
"""

from __future__ import annotations

import bisect
import math
import operator
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import reduce
from typing import Literal, TypeAlias

__all__ = ["Attrs", "HistogramPoint", "Instrument", "Kind"]

Kind: TypeAlias = Literal["counter", "gauge", "histogram"]
# Attribute pairs of one series, in the instrument's key order.
Attrs: TypeAlias = tuple[tuple[str, str], ...]


@dataclass(slots=True)
class HistogramPoint:
    """One histogram series: per-bucket counts (not cumulative), sum, count, min, max."""

    counts: list[int]
    sum: float = 0.0
    count: int = 0
    min: float = math.inf
    max: float = -math.inf

    def copy(self) -> HistogramPoint:
        """An independent snapshot, so rendering can happen outside the lock."""
        return HistogramPoint(list(self.counts), self.sum, self.count, self.min, self.max)

    def observe(self, value: float, bounds: tuple[float, ...]) -> None:
        """Count one value; NaN is ignored (it would poison sum, min and max)."""
        if math.isnan(value):
            return
        # OTLP explicit buckets are (bounds[i-1], bounds[i]]: bisect_left puts a value equal
        # to a bound into that bound's bucket, the same as Prometheus `le`.
        self.counts[bisect.bisect_left(bounds, value)] += 1
        self.sum += value
        self.count += 1
        if value < self.min:
            self.min = value
        if value > self.max:
            self.max = value

    def observe_all(self, values: Iterable[float], bounds: tuple[float, ...]) -> None:
        """`observe` of each value in turn, in bulk: the same counts, sum, min and max (the sum
        is added up in the values' order, from the running sum, as `observe` adds it)."""
        kept = [v for v in map(float, values) if not math.isnan(v)]
        if not kept:
            return
        counts = self.counts
        for value, n in Counter(kept).items():
            counts[bisect.bisect_left(bounds, value)] += n
        # reduce, not sum(): sum() of floats compensates rounding from Python 3.12 on.
        self.sum = reduce(operator.add, kept, self.sum)
        self.count += len(kept)
        low, high = min(kept), max(kept)
        if low < self.min:
            self.min = low
        if high > self.max:
            self.max = high


@dataclass(slots=True)
class Instrument:
    """One metric: its name, kind, unit, description and every series recorded so far."""

    name: str
    kind: Kind
    unit: str
    description: str
    keys: tuple[str, ...] = ()
    """Attribute keys, in the order series keys use them."""
    bounds: tuple[float, ...] = ()
    """Histogram bucket upper bounds (inclusive), ascending."""
    values: dict[Attrs, float] = field(default_factory=dict)
    points: dict[Attrs, HistogramPoint] = field(default_factory=dict)

    def series_key(self, attributes: dict[str, str]) -> Attrs:
        """The series key; an attribute left out is absent, not empty."""
        return tuple((k, attributes[k]) for k in self.keys if k in attributes)

    def add(self, key: Attrs, amount: float) -> None:
        """Counter increment (monotonic: negative amounts are refused)."""
        if amount < 0:
            raise ValueError(f"counter {self.name} cannot decrease, got {amount!r}")
        self.values[key] = self.values.get(key, 0) + amount

    def set(self, key: Attrs, value: float) -> None:
        """Gauge update: the last value wins."""
        self.values[key] = value

    def observe(self, key: Attrs, value: float) -> None:
        """Histogram observation; NaN is ignored (it would poison sum, min and max)."""
        self.point(key).observe(value, self.bounds)

    def point(self, key: Attrs) -> HistogramPoint:
        """A histogram series, created empty on first use; callers may keep it to observe."""
        point = self.points.get(key)
        if point is None:
            point = self.points[key] = HistogramPoint([0] * (len(self.bounds) + 1))
        return point

    def snapshot(self) -> Instrument:
        """A copy of the instrument's numbers at this moment."""
        return Instrument(
            self.name,
            self.kind,
            self.unit,
            self.description,
            self.keys,
            self.bounds,
            dict(self.values),
            {k: p.copy() for k, p in self.points.items()},
        )
