"""The metric catalog: every instrument named once, from semconv, with usable buckets; every
instrument in it is what `/metrics` shows."""

from __future__ import annotations

from export.prometheus_text import parse_prometheus
from tracescore import semconv
from tracescore.export.catalog import CAPPED_KEYS, SPECS
from tracescore.export.metrics import Telemetry


def test_every_instrument_is_named_by_semconv_once() -> None:
    names = {v for k, v in vars(semconv).items() if k.startswith("METRIC_")}
    assert {spec.name for spec in SPECS} <= names
    assert len({spec.name for spec in SPECS}) == len(SPECS)


def test_histograms_have_ascending_buckets_and_counters_none() -> None:
    for spec in SPECS:
        if spec.kind == "histogram":
            assert list(spec.bounds) == sorted(set(spec.bounds)), spec.name
        else:
            assert spec.bounds == (), spec.name


def test_capped_keys_are_attribute_keys_of_some_instrument() -> None:
    keys = {k for spec in SPECS for k in spec.keys}
    assert keys >= CAPPED_KEYS


def test_each_counter_and_gauge_without_attributes_is_on_metrics_from_the_start() -> None:
    families = parse_prometheus(Telemetry().render_prometheus())
    for spec in SPECS:
        if spec.kind != "histogram" and not spec.keys:
            shown = [f for f in families.values() if f.samples and f.samples[0][1] == {}]
            assert any(s[0].startswith(spec.name.replace(".", "_")) for f in shown
                       for s in f.samples), spec.name  # fmt: skip
