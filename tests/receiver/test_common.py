"""Body limits, decompression and bearer tokens shared by both receivers."""

from __future__ import annotations

import gzip
import zlib

import pytest

from tracescore.errors import InputError
from tracescore.receiver._common import BodyTooLargeError, bearer_ok, decompress


def test_gzip_and_deflate_are_inflated() -> None:
    data = b"spans" * 100
    assert decompress(gzip.compress(data), "gzip", 1000) == data
    assert decompress(zlib.compress(data), "Deflate", 1000) == data
    assert decompress(data, "identity", 1000) == data
    assert decompress(data, "", 1000) == data


def test_inflating_past_the_limit_stops_at_the_limit() -> None:
    bomb = gzip.compress(bytes(50 * 1024 * 1024))
    with pytest.raises(BodyTooLargeError, match="inflates to more than 4096 bytes"):
        decompress(bomb, "gzip", 4096)
    assert decompress(gzip.compress(bytes(4096)), "gzip", 4096) == bytes(4096)


@pytest.mark.parametrize(
    ("body", "encoding", "message"),
    [
        (b"plain", "gzip", "not valid gzip"),
        (gzip.compress(b"x" * 100)[:-12], "gzip", "truncated gzip"),
        (b"x", "zstd", "unsupported Content-Encoding 'zstd'"),
    ],
)
def test_bad_encodings_are_input_errors(body: bytes, encoding: str, message: str) -> None:
    with pytest.raises(InputError, match=message):
        decompress(body, encoding, 1000)


def test_bearer_tokens() -> None:
    assert bearer_ok(None, None)
    assert bearer_ok("anything", None)
    assert bearer_ok("Bearer abc", "abc")
    assert bearer_ok("bearer abc ", "abc")
    assert not bearer_ok(None, "abc")
    assert not bearer_ok("Bearer abd", "abc")
    assert not bearer_ok("Basic abc", "abc")
    assert not bearer_ok("abc", "abc")
