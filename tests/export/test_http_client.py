"""HttpClient against real servers on loopback: aiohttp's, and a scripted one for the replies
an HTTP/1.1 server may send that aiohttp's does not (close-delimited, interim, malformed)."""

from __future__ import annotations

import asyncio
import gzip
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import TypeVar

import pytest
from aiohttp import web
from hypothesis import given, settings
from hypothesis import strategies as st

from tracescore.export import http_client
from tracescore.export.http_client import HttpClient, HttpProtocolError, HttpReply, _parse

T = TypeVar("T")
BODY = bytes(range(256)) * 1300  # 332,800 bytes: larger than a socket buffer


def run(coro: Awaitable[T]) -> T:
    return asyncio.run(coro)  # type: ignore[arg-type]


@asynccontextmanager
async def aiohttp_server(
    handler: Callable[[web.Request], Awaitable[web.StreamResponse]],
) -> AsyncIterator[tuple[str, list[object]]]:
    """An aiohttp server answering POSTs with `handler`; its URL and the connections seen."""
    connections: list[object] = []

    async def wrapped(request: web.Request) -> web.StreamResponse:
        if request.transport not in connections:
            connections.append(request.transport)
        return await handler(request)

    app = web.Application(client_max_size=64 << 20)
    app.router.add_post("/{tail:.*}", wrapped)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    try:
        yield f"http://127.0.0.1:{port}", connections
    finally:
        await runner.cleanup()


@asynccontextmanager
async def scripted_server(
    replies: list[bytes], close_after: bool = False, connections: list[object] | None = None
) -> AsyncIterator[tuple[str, list[bytes]]]:
    """A server that reads each request whole, then writes the next scripted reply (and
    closes with `close_after`); its URL and the requests it read (and in `connections`, each
    connection it accepted)."""
    requests: list[bytes] = []

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if connections is not None:
            connections.append(writer)
        try:
            while replies:
                head = await reader.readuntil(b"\r\n\r\n")
                length = int(head.split(b"Content-Length: ")[1].split(b"\r\n")[0])
                requests.append(head + await reader.readexactly(length))
                writer.write(replies.pop(0))
                await writer.drain()
                if close_after:
                    break
            await asyncio.sleep(0.05)
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}", requests
    finally:
        server.close()


def test_posts_the_body_with_its_headers_and_reuses_the_connection() -> None:
    seen: list[tuple[dict[str, str], bytes]] = []

    async def handler(request: web.Request) -> web.Response:
        seen.append((dict(request.headers), await request.read()))
        return web.Response(body=b"ok " + request.path.encode(), status=200)

    async def main() -> tuple[list[HttpReply], int]:
        async with aiohttp_server(handler) as (url, connections):
            client = HttpClient(url, {"Authorization": "Bearer t", "Content-Type": "x/y"}, None)
            replies = [await client.post(f"/v1/traces{i}", BODY, 5.0) for i in range(3)]
            await client.close()
            return replies, len(connections)

    replies, connections = run(main())
    assert [r.body for r in replies] == [b"ok /v1/traces0", b"ok /v1/traces1", b"ok /v1/traces2"]
    assert {r.status for r in replies} == {200}
    assert connections == 1  # kept alive
    headers, body = seen[0]
    assert body == BODY
    assert headers["Authorization"] == "Bearer t"
    assert headers["Content-Type"] == "x/y"
    assert headers["Content-Length"] == str(len(BODY))
    assert headers["Host"].startswith("127.0.0.1:")


def test_concurrent_posts_each_get_their_own_reply() -> None:
    async def handler(request: web.Request) -> web.Response:
        body = await request.read()
        await asyncio.sleep(0.01)
        return web.Response(body=body[:4])

    async def main() -> list[bytes]:
        async with aiohttp_server(handler) as (url, _):
            client = HttpClient(url, {}, None)
            bodies = [bytes([i]) * 4 + BODY for i in range(8)]
            replies = await asyncio.gather(*(client.post("/", b, 5.0) for b in bodies))
            await client.close()
            return [r.body for r in replies]

    assert run(main()) == [bytes([i]) * 4 for i in range(8)]


def test_chunked_and_gzip_replies_are_read_whole() -> None:
    async def handler(request: web.Request) -> web.StreamResponse:
        await request.read()
        response = web.StreamResponse(status=503, headers={"Retry-After": "7"})
        response.enable_chunked_encoding()
        if request.path == "/gzip":
            response.headers["Content-Encoding"] = "gzip"
        await response.prepare(request)
        payload = b"overloaded " * 1000
        if request.path == "/gzip":
            payload = gzip.compress(payload)
        for i in range(0, len(payload), 777):
            await response.write(payload[i : i + 777])
        await response.write_eof()
        return response

    async def main() -> list[HttpReply]:
        async with aiohttp_server(handler) as (url, connections):
            client = HttpClient(url, {}, None)
            replies = [await client.post(p, b"x", 5.0) for p in ("/plain", "/gzip", "/plain")]
            await client.close()
            assert len(connections) == 1
            return replies

    for reply in run(main()):
        assert reply.status == 503
        assert reply.headers["retry-after"] == "7"
        assert reply.body == b"overloaded " * 1000


@pytest.mark.parametrize(
    "reply",
    [
        b"HTTP/1.1 200 OK\r\n\r\nthe body ends with the connection",
        b"HTTP/1.0 200 OK\r\nContent-Length: 33\r\n\r\nthe body ends with the connection",
        b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 33\r\n"
        b"Connection: close\r\n\r\nthe body ends with the connection",
    ],
    ids=["close-delimited", "http-1.0", "interim-then-close"],
)
def test_replies_that_end_the_connection_are_read_and_not_reused(reply: bytes) -> None:
    async def main() -> tuple[HttpReply, HttpReply, int]:
        async with scripted_server([reply, reply], close_after=True) as (url, requests):
            client = HttpClient(url, {}, None)
            first = await client.post("/v1/logs", b"abc", 5.0)
            second = await client.post("/v1/logs", b"def", 5.0)  # a new connection
            return first, second, len(requests)

    first, second, requests = run(main())
    assert first.status == second.status == 200
    assert first.body == second.body == b"the body ends with the connection"
    assert requests == 2


def test_a_connection_the_server_closed_while_idle_is_not_used() -> None:
    ok = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"

    async def main() -> list[int]:
        # The server closes after each reply without saying so (no Connection: close).
        async with scripted_server([ok, ok], close_after=True) as (url, _):
            client = HttpClient(url, {}, None)
            first = await client.post("/", b"a", 5.0)
            await asyncio.sleep(0.2)  # the close arrives while the connection is idle
            second = await client.post("/", b"b", 5.0)
            return [first.status, second.status]

    assert run(main()) == [200, 200]


def test_a_connection_idle_too_long_is_closed_not_reused(monkeypatch: pytest.MonkeyPatch) -> None:
    async def handler(request: web.Request) -> web.Response:
        await request.read()
        return web.Response(body=b"ok")

    async def main() -> int:
        async with aiohttp_server(handler) as (url, connections):
            client = HttpClient(url, {}, None)
            await client.post("/", b"a", 5.0)
            await client.post("/", b"b", 5.0)  # kept alive: the same connection
            monkeypatch.setattr(http_client, "KEEP_IDLE_S", 0.05)
            await asyncio.sleep(0.1)
            await client.post("/", b"c", 5.0)  # idle too long: a new one
            await client.close()
            return len(connections)

    assert run(main()) == 2


@pytest.mark.parametrize(
    ("reply", "error"),
    [
        (b"SMTP ready\r\n\r\n", "not an HTTP/1.x status line"),
        (b"HTTP/1.1 200 OK\r\nno colon here\r\n\r\n", "malformed header line"),
        (b"HTTP/1.1 200 OK\r\nContent-Length: -3\r\n\r\n", "unusable Content-Length"),
        (b"HTTP/1.1 200 OK\r\nContent-Length: 99999999\r\n\r\n", "unusable Content-Length"),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", "bad chunk size"),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n-1\r\n", "bad chunk size"),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0x1\r\n", "bad chunk size"),
        (b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort", "before the reply's body"),
        (b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: 3\r\n\r\nabc", "gzip"),
        (b"HTTP/1.1 200", "without a complete header"),
    ],
)
def test_unreadable_replies_are_connection_errors_naming_the_problem(
    reply: bytes, error: str
) -> None:
    async def main() -> None:
        async with scripted_server([reply], close_after=True) as (url, _):
            client = HttpClient(url, {}, None)
            await client.post("/", b"x", 5.0)

    with pytest.raises(HttpProtocolError, match=error):
        run(main())


def test_no_reply_in_time_is_a_timeout_and_the_connection_is_dropped() -> None:
    async def main() -> tuple[int, int]:
        async def slow(request: web.Request) -> web.Response:
            await request.read()
            if request.path == "/slow":
                await asyncio.sleep(2)
            return web.Response(body=b"")

        async with aiohttp_server(slow) as (url, connections):
            client = HttpClient(url, {}, None)
            with pytest.raises(TimeoutError):
                await client.post("/slow", b"x", 0.2)
            reply = await client.post("/fast", b"x", 5.0)
            await client.close()
            return reply.status, len(connections)

    assert run(main()) == (200, 2)


def test_a_refused_connection_is_an_os_error() -> None:
    async def main() -> None:
        server = await asyncio.start_server(lambda r, w: None, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        server.close()
        await server.wait_closed()
        await HttpClient(f"http://127.0.0.1:{port}", {}, None).post("/", b"x", 5.0)

    with pytest.raises(ConnectionRefusedError):
        run(main())


@pytest.mark.parametrize(
    ("origin", "headers"),
    [
        ("ftp://host", {}),
        ("http://host", {"X-Evil": "a\r\nInjected: yes"}),
        ("http://host", {"Bad Name": "v"}),
        ("http://host", {"": "v"}),
    ],
)
def test_unusable_origins_and_headers_are_refused_at_construction(
    origin: str, headers: dict[str, str]
) -> None:
    with pytest.raises(ValueError, match=r"expected an http|invalid HTTP header"):
        HttpClient(origin, headers, None)


REPLIES = [
    b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nRetry-After: 3\r\n\r\nhello",
    b"HTTP/1.1 429 Too Many\r\ntransfer-encoding: chunked\r\n\r\n"
    b"3;ext=1\r\nabc\r\n2\r\nde\r\n0\r\nX-Trailer: 1\r\n\r\n",
    b"HTTP/1.1 204 No Content\r\n\r\n",
]


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(REPLIES), st.lists(st.integers(1, 40), max_size=20))
def test_a_reply_parses_the_same_however_its_bytes_arrive(reply: bytes, cuts: list[int]) -> None:
    whole = _parse(bytearray(reply), ended=False)
    assert whole is not None
    buffer, at, answer = bytearray(), 0, None
    for size in [*cuts, len(reply)]:
        buffer += reply[at : at + size]
        at += size
        answer = _parse(buffer, ended=False)
        if answer is not None:
            break
        assert at < len(reply)  # nothing parses as whole before the last byte has come
    assert answer == whole
    assert whole[0].headers.get("retry-after", "3") == "3"
    assert whole[0].body in (b"hello", b"abcde", b"")
    assert whole[2] == len(reply)  # where the reply ends: nothing of it is left over


def test_a_reply_followed_by_bytes_nobody_asked_for_drops_its_connection() -> None:
    ok = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"

    async def main() -> tuple[int, int]:
        connections: list[object] = []
        replies = [ok + b"HTTP/1.1 200 OK\r\n", ok]
        async with scripted_server(replies, connections=connections) as (url, _):
            client = HttpClient(url, {}, None)
            first = await client.post("/", b"a", 5.0)
            second = await client.post("/", b"b", 5.0)  # on a new connection
            await client.close()
            return first.status + second.status, len(connections)

    assert run(main()) == (400, 2)


def test_a_closed_client_keeps_no_connection_of_a_request_in_flight() -> None:
    async def handler(request: web.Request) -> web.Response:
        await request.read()
        await asyncio.sleep(0.1)
        return web.Response(body=b"ok")

    async def main() -> int:
        async with aiohttp_server(handler) as (url, _):
            client = HttpClient(url, {}, None)
            flight = asyncio.create_task(client.post("/", b"x", 5.0))
            await asyncio.sleep(0.02)
            await client.close()
            await flight
            return len(client._idle)

    assert run(main()) == 0
