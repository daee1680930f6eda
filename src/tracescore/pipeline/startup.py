"""What `Pipeline.start` does besides binding: replaying storage and the metrics push."""

from __future__ import annotations

import logging

from tracescore.assembler import Assembler
from tracescore.config.model import Config
from tracescore.export.metrics import Telemetry
from tracescore.export.otlp_metrics import CountingExporter, metric_exporter_for
from tracescore.storage import Journal

__all__ = ["replay_storage", "start_metrics_push"]

log = logging.getLogger("tracescore.pipeline.service")  # the service's messages, as before


def replay_storage(storage: Journal, assembler: Assembler) -> None:
    """Replay what an earlier process left in storage, before any receiver opens."""
    left = storage.recover()
    storage.start()
    for recovered in left:
        storage.resume(recovered)
        assembler.restore(recovered.request, recovered.parts, recovered.released)
        storage.resumed()
    if left:
        log.info(
            "storage: %d request(s) replayed; %d trace(s) buffered for scoring",
            len(left),
            assembler.runs,
        )


def start_metrics_push(config: Config, telemetry: Telemetry) -> None:
    """Push the metrics over OTLP every `service.metrics_interval`, unless turned off."""
    interval = config.service.metrics_interval
    settings = config.exporter
    if settings is not None and not settings.metrics.enabled:
        log.info("metrics: OTLP push off (exporter.metrics.enabled: false)")
    elif settings is not None and interval is not None:
        metrics_to = settings.for_signal("metrics")  # exporter.metrics over exporter.*
        exporter = metric_exporter_for(metrics_to)
        counting = CountingExporter(exporter, telemetry, metrics_to.endpoint)
        telemetry.push_to(counting, interval, metrics_to.timeout)
        log.info("metrics: pushed over OTLP to %s every %gs", metrics_to.endpoint, interval)
    elif interval is None:
        log.info("metrics: OTLP push off (service.metrics_interval: null)")
