"""The JSON values of OTLP/JSON, checked and converted: ids, integers, doubles, enums, strings.

Each raises InputError naming the JSON path of a value it cannot take (`where`).
"""

from __future__ import annotations

import base64
import binascii
import math
from collections.abc import Mapping
from typing import Any

from tracescore.errors import InputError

__all__ = [
    "as_double",
    "as_enum",
    "as_id",
    "as_int",
    "as_list",
    "as_object",
    "as_str",
    "kind_of",
]

_SPECIAL_DOUBLES = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}


def as_id(raw: object, size: int, where: str) -> bytes:
    """Hex (the OTLP/JSON rule) or base64 (protobuf's generic mapping); empty when absent.

    Text that is neither raises InputError. Hex of the wrong length is returned as it is, for
    the assembler to reject that one span (partial success) rather than the whole request.
    """
    if raw is None or raw == "":
        return b""
    if not isinstance(raw, str):
        raise InputError(f"{where}: expected a hex string, got {kind_of(raw)}")
    text = raw.strip()
    try:
        if len(text) % 2 == 0 and all(c in "0123456789abcdefABCDEF" for c in text):
            return bytes.fromhex(text)
        data = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        data = None
    if data is None or len(data) != size:
        raise InputError(f"{where}: expected {2 * size} hex digits, got {raw[:40]!r}")
    return data


def as_object(raw: object, where: str) -> Mapping[str, Any]:
    if not isinstance(raw, Mapping):
        raise InputError(f"{where}: expected a JSON object, got {kind_of(raw)}")
    return raw


def as_list(raw: object, where: str) -> list[Any]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise InputError(f"{where}: expected a list, got {kind_of(raw)}")
    return raw


def as_str(raw: object, where: str) -> str:
    if raw is None:
        return ""
    if not isinstance(raw, str):
        raise InputError(f"{where}: expected a string, got {kind_of(raw)}")
    return raw


def as_int(raw: object, where: str, *, signed: bool = False) -> int:
    # bool before int: bool subclasses int, and true is not a timestamp.
    value: int | None = None
    if isinstance(raw, int) and not isinstance(raw, bool):
        value = raw
    elif isinstance(raw, float) and raw.is_integer():
        value = int(raw)
    elif isinstance(raw, str):
        try:
            value = int(raw.strip())
        except ValueError:
            value = None
    limit = 1 << 63 if signed else 1 << 64
    if value is None or not (-limit if signed else 0) <= value < limit:
        raise InputError(f"{where}: expected an integer, got {raw!r}")
    return value


def as_double(raw: object, where: str) -> float:
    if isinstance(raw, int | float) and not isinstance(raw, bool):
        return float(raw)
    if isinstance(raw, str):
        if raw in _SPECIAL_DOUBLES:
            return _SPECIAL_DOUBLES[raw]
        try:
            return float(raw)
        except ValueError:
            pass
    raise InputError(f"{where}: expected a number, got {raw!r}")


def as_enum(raw: object, names: Mapping[str, int], where: str) -> int:
    if isinstance(raw, str) and raw in names:
        return names[raw]
    value = as_int(raw, where, signed=True)
    if not -(1 << 31) <= value < (1 << 31):
        raise InputError(f"{where}: expected an enum number, got {raw!r}")
    return value


def kind_of(value: object) -> str:
    return "null" if value is None else type(value).__name__
