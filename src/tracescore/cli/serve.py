"""`tracescore serve --config FILE`: score live OTLP traffic and re-emit the scores.

The config is loaded and checked (tokens, certificates, exporter) before any port is bound:
a problem exits 2 naming its YAML path. At start, one line says which OTLP wire codec runs and
why (`tracescore serve: OTLP wire codec: native: ...` or `...: pure Python ...: ...`, see
`otlp.native`). Once listening, one line per receiver goes to stderr
(`tracescore serve: otlp/grpc listening on HOST:PORT`), then `tracescore serve: ready`.
SIGTERM or SIGINT stops accepting, scores what can be scored, forwards everything held and
flushes events and metrics within `service.shutdown_grace_period`, then exits 0; it exits 1,
saying how much, when it had to drop anything it had accepted (the exporter was down, the
grace period too short), or when shutdown itself did not finish in time.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import logging
import os
import signal
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from tracescore.config import load_config
from tracescore.config.serve import split_endpoint
from tracescore.errors import ConfigError
from tracescore.otlp import native

if TYPE_CHECKING:
    from tracescore.pipeline import Pipeline

__all__ = ["add_parser", "run"]

log = logging.getLogger("tracescore.serve")
_PREFIX = "tracescore serve:"
_GC_YOUNG = 50_000
_SWITCH_INTERVAL_S = 0.001


def add_parser(subparsers: Any) -> None:
    """Register the subcommand on the `tracescore` parser."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "serve",
        help="receive OTLP traces, score agent runs live, forward spans with their scores",
        description=(
            "Run the live service: OTLP/gRPC and OTLP/HTTP receivers, assembly, scoring, "
            "and export of spans, gen_ai.evaluation.result events and metrics."
        ),
    )
    parser.add_argument("--config", required=True, metavar="FILE", help="the YAML config file")
    parser.add_argument(
        "--log-level",
        default="info",
        choices=["debug", "info", "warning", "error"],
        help="log verbosity on stderr (default: info)",
    )
    parser.add_argument(
        "--event-loop",
        default=os.environ.get("TRACESCORE_EVENT_LOOP", "asyncio"),
        choices=["asyncio", "uvloop"],
        help=(
            "event loop: asyncio's own (the default) or uvloop (pip install "
            "'tracescore[uvloop]'); also TRACESCORE_EVENT_LOOP"
        ),
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Serve until SIGTERM or SIGINT; returns the exit code."""
    logging.basicConfig(
        level=getattr(logging, args.log_level.upper()),
        format="tracescore: %(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    # Imported here, not at the top: the service stack (grpc, aiohttp) is not needed to print
    # `tracescore --help` or to run the offline subcommands.
    from tracescore.pipeline import Pipeline, preflight

    try:
        config = load_config(args.config)
        secrets = preflight(config, source=args.config)
    except ConfigError as exc:
        print(exc, file=sys.stderr)
        return 2
    if args.event_loop not in ("asyncio", "uvloop"):  # argparse leaves defaults unchecked
        print(
            f"{_PREFIX} TRACESCORE_EVENT_LOOP={args.event_loop!r}: expected asyncio or uvloop",
            file=sys.stderr,
        )
        return 2
    try:
        loop_factory = event_loop_factory(args.event_loop)
    except ImportError:
        print(
            f"{_PREFIX} --event-loop uvloop: uvloop is not installed "
            "(pip install 'tracescore[uvloop]')",
            file=sys.stderr,
        )
        return 2
    pipeline = Pipeline(config, secrets)
    loop_name = "asyncio" if loop_factory is None else "uvloop"
    log.info("event loop: %s", loop_name)
    try:
        with asyncio.Runner(loop_factory=loop_factory) as runner:
            return runner.run(_serve(pipeline))
    except OSError as exc:  # a port in use, a certificate the TLS stack refused
        print(f"{_PREFIX} cannot start: {exc}", file=sys.stderr)
        return 2


def event_loop_factory(choice: str) -> Callable[[], asyncio.AbstractEventLoop] | None:
    """The loop `serve` runs on: None (asyncio's own) or uvloop's; raises ImportError for
    `uvloop` without uvloop installed.

    asyncio's is the default: the whole service on uvloop measured no faster per CPU-second
    (0.96x over HTTP and gRPC, bench/event_loop.py, README "Event loop").
    """
    if choice == "asyncio":
        return None
    import uvloop

    factory: Callable[[], asyncio.AbstractEventLoop] = uvloop.new_event_loop
    return factory


def settle_collector() -> None:
    """The garbage collector as `serve` runs it once started (`bench/pipeline_cpu.py` too).

    What exists by then (modules, pydantic schemas, the config) lives as long as the process:
    moved out of the collector's view, full collections only walk what traffic creates. The
    hot path makes no reference cycles, so young collections find little garbage: a larger
    first threshold cut the collector's share of scoring live from ~10% to ~1% (in-process
    replay of bench/throughput.py's stream) for a few MB of memory at most.
    """
    gc.collect()
    gc.freeze()
    gc.set_threshold(_GC_YOUNG, *gc.get_threshold()[1:])


async def _serve(pipeline: Pipeline) -> int:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    codec = native.status()
    print(f"{_PREFIX} {native.describe()}", file=sys.stderr)
    if not codec.well_formed:
        log.warning("%s holds a value that is neither 0 nor 1: %s", native.ENV, codec.reason)
    await pipeline.start()
    receivers = pipeline.config.receivers
    for name, settings, server in (
        ("grpc", receivers.grpc, pipeline.grpc),
        ("http", receivers.http, pipeline.http),
    ):
        if settings is not None and server is not None:
            host, _ = split_endpoint(settings.endpoint)
            print(f"{_PREFIX} otlp/{name} listening on {host}:{server.port}", file=sys.stderr)
    settle_collector()
    # A large request is scanned in a worker thread, whose native scan lets the GIL go every
    # 1,024 spans (2-4 ms) and takes it straight back. A thread waiting for the GIL asks for it
    # only after a switch interval without any switch, so with the default 5 ms the event loop
    # never got it while a 512k-span request was scanned: /healthz waited 100-800 ms. At 1 ms
    # it takes the GIL at the scan's next release (tests/adversarial/measure.py flood).
    sys.setswitchinterval(_SWITCH_INTERVAL_S)
    print(f"{_PREFIX} ready", file=sys.stderr, flush=True)
    await stop.wait()
    print(f"{_PREFIX} shutting down", file=sys.stderr, flush=True)
    grace = pipeline.config.service.shutdown_grace_period
    try:
        await asyncio.wait_for(pipeline.shutdown(), timeout=grace + 1.0)
    except TimeoutError:
        log.error("shutdown did not finish within the grace period (%.1fs)", grace)
        return 1
    lost = {what: n for what, n in pipeline.shutdown_losses.items() if n}
    if lost:
        what = ", ".join(f"{n} {kind}" for kind, n in sorted(lost.items()))
        print(
            f"{_PREFIX} stopped, but dropped {what} it could not deliver within "
            f"service.shutdown_grace_period ({grace:g}s); see the export warnings above",
            file=sys.stderr,
            flush=True,
        )
        return 1
    print(f"{_PREFIX} stopped", file=sys.stderr, flush=True)
    return 0
