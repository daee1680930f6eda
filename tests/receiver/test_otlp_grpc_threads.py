"""The gRPC receiver accepts calls on grpcio's threads and takes them on the event loop."""

from __future__ import annotations

import asyncio
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import grpc
import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse

from support.agent_spans import agent_run, request
from support.otlp_sink import OtlpSink
from support.serve_thread import ServeThread
from tracescore.config.serve import GrpcReceiver as GrpcReceiverSettings
from tracescore.receiver import otlp_grpc

METHOD = "/opentelemetry.proto.collector.trace.v1.TraceService/Export"
CALLS = 16


def _threads(prefix: str) -> int:
    return sum(thread.name.startswith(prefix) for thread in threading.enumerate())


def test_calls_wait_on_their_threads_while_the_loop_is_busy_and_are_taken_on_the_loop(
    serve: ServeThread, sink: OtlpSink, monkeypatch: pytest.MonkeyPatch
) -> None:
    """While the loop is held (as by a scoring slice) every call is already accepted and
    waiting; once the loop is free each is taken on the loop's own thread and answered."""
    taken_on: list[str] = []
    consume = serve.pipeline.consume

    def recording(*args: object, **kwargs: object) -> object:
        taken_on.append(threading.current_thread().name)
        return consume(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(serve.pipeline, "consume", recording)
    runs = [agent_run(agent="other") for _ in range(CALLS)]
    held, release = threading.Event(), threading.Event()

    def hold() -> None:
        held.set()
        release.wait(60)  # longer than the wait for the threads below

    holder = threading.Thread(target=serve.call, args=(hold,))
    holder.start()
    assert held.wait(10)
    channel = grpc.insecure_channel(f"127.0.0.1:{serve.grpc_port}")
    call = channel.unary_unary(METHOD)
    try:
        with ThreadPoolExecutor(CALLS) as senders:
            answers = [
                senders.submit(call, request(run.spans).SerializeToString(), timeout=30)
                for run in runs
            ]
            deadline = time.monotonic() + 20
            while _threads("otlp-grpc") < CALLS and time.monotonic() < deadline:
                time.sleep(0.01)
            waiting = _threads("otlp-grpc")
            assert not taken_on  # the loop is still held
            release.set()
            responses = [ExportTraceServiceResponse.FromString(a.result()) for a in answers]
    finally:
        release.set()
        holder.join()
        channel.close()
    assert waiting >= CALLS
    assert all(not r.HasField("partial_success") for r in responses)
    assert taken_on == ["tracescore-serve"] * CALLS
    total = sum(len(run.spans) for run in runs)
    sink.wait_for(lambda: len(sink.spans()) == total)


def test_a_call_whose_loop_has_closed_is_refused_and_its_work_dropped_unstarted() -> None:
    """After shutdown a late call gets UNAVAILABLE (the sender keeps the data), and the work it
    would have handed to the loop is closed, not left as a never-awaited coroutine."""
    receiver = otlp_grpc.GrpcReceiver(GrpcReceiverSettings(endpoint="127.0.0.1:0"), None)  # type: ignore[arg-type]
    loop = asyncio.new_event_loop()
    loop.close()
    receiver._loop = loop
    started = False

    async def work() -> bytes:
        nonlocal started
        started = True
        return b""

    coroutine = work()
    with pytest.raises(otlp_grpc._Stopped):
        receiver._on_loop(coroutine)
    assert not started
    assert coroutine.cr_frame is None  # closed
