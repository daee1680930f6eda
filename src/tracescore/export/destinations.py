"""Where each signal goes: one destination (a transport and its health) per distinct route.

Signals whose settings resolve to the same endpoint, protocol, headers, TLS and compression
share a destination, so by default traces, logs and metrics share one gRPC channel or one HTTP
session. A signal turned off (`exporter.<signal>.enabled: false`) has none.
"""

from __future__ import annotations

import logging

from tracescore import semconv
from tracescore.config.serve import SIGNALS, ExporterSettings
from tracescore.export.health import DestinationHealth
from tracescore.export.transport import Transport, make_transport

__all__ = ["Destination", "destinations", "make_destinations", "refuse_signal"]

log = logging.getLogger("tracescore.export.otlp")


class Destination:
    """One transport (an endpoint, protocol, headers, TLS, compression) and its health."""

    def __init__(self, transport: Transport, health: DestinationHealth) -> None:
        self.transport = transport
        self.health = health


def make_destinations(
    settings: ExporterSettings, transport: Transport | None = None
) -> dict[str, Destination]:
    """Each enabled signal's destination; `transport` (tests) replaces every transport."""
    by_route: dict[tuple[object, ...], Destination] = {}
    routes: dict[str, Destination] = {}
    for signal in SIGNALS:
        if not settings.signal(signal).enabled:
            continue
        key = ("override",) if transport is not None else settings.route(signal)
        if key not in by_route:
            own = settings.for_signal(signal)
            health = DestinationHealth(own.endpoint, signal, settings.unready_after)
            by_route[key] = Destination(transport or make_transport(own), health)
        else:
            by_route[key].health.signals += f", {signal}"
        routes[signal] = by_route[key]
    return routes


def destinations(routes: dict[str, Destination]) -> list[Destination]:
    """The distinct destinations of `routes`, each once."""
    unique: dict[int, Destination] = {id(d): d for d in routes.values()}
    return list(unique.values())


def refuse_signal(signal: str, endpoint: str, cause: str, message: str) -> str:
    """Warn, once per signal, that a backend does not serve `signal`; the reason /readyz gives
    when it is the traces."""
    log.warning(
        "export: %s does not accept %s (%s); %s are no longer sent there and are counted "
        "as dropped (reason %s). Set exporter.%s.endpoint to a backend that takes them, or "
        "exporter.%s.enabled: false to turn them off.",
        endpoint,
        signal,
        message or cause,
        signal,
        semconv.DROP_EXPORT_UNSUPPORTED,
        signal,
        signal,
    )
    return (
        f"exporter: {endpoint} does not accept {signal} ({cause}); set "
        f"exporter.{signal}.endpoint to a backend that does, or exporter.{signal}.enabled: false"
    )
