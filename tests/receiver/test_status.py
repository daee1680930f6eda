"""Hand-encoded google.rpc messages parse with the real generated classes."""

from __future__ import annotations

import json

import pytest
from google.rpc.error_details_pb2 import RetryInfo
from google.rpc.status_pb2 import Status

from tracescore.receiver import _status


@pytest.mark.parametrize("seconds", [0.0, 1.0, 1.5, 30.25, 3600.0])
def test_retry_info_round_trips(seconds: float) -> None:
    info = RetryInfo.FromString(_status.retry_info(seconds))
    assert info.retry_delay.seconds + info.retry_delay.nanos / 1e9 == pytest.approx(seconds)


def test_status_with_retry_info_detail() -> None:
    status = Status.FromString(_status.status_proto(_status.UNAVAILABLE, "büsy: full", 2.0))
    assert (status.code, status.message) == (14, "büsy: full")
    (detail,) = status.details
    assert detail.type_url == "type.googleapis.com/google.rpc.RetryInfo"
    info = RetryInfo()
    assert detail.Unpack(info)
    assert info.retry_delay.seconds == 2


def test_status_without_details_and_json_form() -> None:
    status = Status.FromString(_status.status_proto(_status.INVALID_ARGUMENT, "bad"))
    assert (status.code, status.message, list(status.details)) == (3, "bad", [])
    assert json.loads(_status.status_json(3, "bad")) == {"code": 3, "message": "bad"}
