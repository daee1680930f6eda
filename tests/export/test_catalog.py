"""The metric catalog: every instrument named once, from semconv, with usable buckets."""

from __future__ import annotations

from tracescore import semconv
from tracescore.export.catalog import CAPPED_KEYS, instruments


def test_every_instrument_is_named_by_semconv_and_keyed_by_its_name() -> None:
    names = {v for k, v in vars(semconv).items() if k.startswith("METRIC_")}
    catalog = instruments()
    assert set(catalog) <= names
    assert all(name == inst.name for name, inst in catalog.items())


def test_histograms_have_ascending_buckets_and_counters_none() -> None:
    for inst in instruments().values():
        if inst.kind == "histogram":
            assert list(inst.bounds) == sorted(set(inst.bounds)), inst.name
        else:
            assert inst.bounds == (), inst.name


def test_capped_keys_are_attribute_keys_of_some_instrument() -> None:
    keys = {k for inst in instruments().values() for k in inst.keys}
    assert keys >= CAPPED_KEYS


def test_each_call_gives_fresh_instruments() -> None:
    first, second = instruments(), instruments()
    first[semconv.METRIC_RUNS].add((), 1)
    assert not second[semconv.METRIC_RUNS].values
