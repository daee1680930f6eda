"""A snapshot of instruments as an OTLP ExportMetricsServiceRequest (cumulative temporality)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
)
from opentelemetry.proto.metrics.v1.metrics_pb2 import AggregationTemporality, NumberDataPoint

from tracescore import __version__, semconv
from tracescore.export.attributes import add_attributes
from tracescore.export.instruments import Instrument
from tracescore.model.span import AttrValue

__all__ = ["metrics_request"]

_CUMULATIVE = AggregationTemporality.AGGREGATION_TEMPORALITY_CUMULATIVE


def metrics_request(
    instruments: Iterable[Instrument],
    resource: Mapping[str, AttrValue],
    start_ns: int,
    now_ns: int,
) -> ExportMetricsServiceRequest:
    """Every non-empty instrument under one resource and the `tracescore` scope.

    Cumulative points all start at `start_ns` (the service start), which is what a
    cumulative-to-delta processor downstream needs to detect restarts.
    """
    request = ExportMetricsServiceRequest()
    rm = request.resource_metrics.add()
    add_attributes(rm.resource.attributes, resource)
    sm = rm.scope_metrics.add()
    sm.scope.name = semconv.SCOPE_NAME
    sm.scope.version = __version__
    for inst in instruments:
        if not inst.values and not inst.points:
            continue
        metric = sm.metrics.add()
        metric.name = inst.name
        metric.unit = inst.unit
        metric.description = inst.description
        if inst.kind == "counter":
            metric.sum.aggregation_temporality = _CUMULATIVE
            metric.sum.is_monotonic = True
            points = metric.sum.data_points
        elif inst.kind == "gauge":
            points = metric.gauge.data_points
        else:
            metric.histogram.aggregation_temporality = _CUMULATIVE
            for attrs, hp in sorted(inst.points.items()):
                dp = metric.histogram.data_points.add(
                    start_time_unix_nano=start_ns,
                    time_unix_nano=now_ns,
                    count=hp.count,
                    sum=hp.sum,
                    bucket_counts=hp.counts,
                    explicit_bounds=inst.bounds,
                )
                if hp.count and not math.isinf(hp.min):
                    dp.min = hp.min
                    dp.max = hp.max
                add_attributes(dp.attributes, dict(attrs))
            continue
        for attrs, value in sorted(inst.values.items()):
            point: NumberDataPoint = points.add(time_unix_nano=now_ns)
            if inst.kind == "counter":
                point.start_time_unix_nano = start_ns
            if float(value).is_integer():
                point.as_int = int(value)
            else:
                point.as_double = float(value)
            add_attributes(point.attributes, dict(attrs))
    return request
