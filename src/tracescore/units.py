"""Durations and sizes as config files write them (`500ms`, `2s`, `32MiB`).

Below every layer: the config sections and the judges' settings both read them.
"""

from __future__ import annotations

import math
import re
from typing import Annotated, TypeAlias

from pydantic import AfterValidator, BeforeValidator

__all__ = [
    "MIB",
    "ByteSize",
    "Duration",
    "OptionalDuration",
    "PositiveDuration",
    "parse_duration",
    "parse_optional_duration",
    "parse_size",
]

MIB = 1024 * 1024

_DURATION_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}
_SIZE_UNITS = {
    "b": 1,
    "kb": 1000,
    "mb": 1000**2,
    "gb": 1000**3,
    "kib": 1024,
    "mib": 1024**2,
    "gib": 1024**3,
}
_NUMBER_UNIT = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*([a-zA-Z]*)\s*$")


def parse_duration(value: object) -> float:
    """Seconds from a number of seconds or a string such as `500ms`, `2s`, `1m`, `1h`."""
    # bool before int: bool subclasses int, and `true` is not a duration.
    if isinstance(value, bool):
        raise ValueError(f"expected a duration like 2s or 500ms, got {value!r}")
    if isinstance(value, int | float):
        seconds = float(value)
    elif isinstance(value, str) and (match := _NUMBER_UNIT.match(value)):
        number, unit = match.groups()
        scale = _DURATION_UNITS.get(unit.lower() or "s")
        if scale is None:
            raise ValueError(f"unknown duration unit {unit!r} in {value!r}; use ms, s, m or h")
        seconds = float(number) * scale
    else:
        raise ValueError(f"expected a duration like 2s or 500ms, got {value!r}")
    if not math.isfinite(seconds) or seconds < 0:
        raise ValueError(f"a duration must be a finite number of seconds >= 0, got {value!r}")
    return seconds


def parse_size(value: object) -> int:
    """Bytes from a number of bytes or a string such as `32MiB`, `512KB`, `1GiB`."""
    if isinstance(value, bool):
        raise ValueError(f"expected a size like 32MiB or 1048576, got {value!r}")
    if isinstance(value, int):
        size = value
    elif isinstance(value, float) and value.is_integer():
        size = int(value)
    elif isinstance(value, str) and (match := _NUMBER_UNIT.match(value)):
        number, unit = match.groups()
        scale = _SIZE_UNITS.get(unit.lower() or "b")
        if scale is None:
            raise ValueError(
                f"unknown size unit {unit!r} in {value!r}; use B, KB, KiB, MB, MiB, GB or GiB"
            )
        size = int(float(number) * scale)
    else:
        raise ValueError(f"expected a size like 32MiB or 1048576, got {value!r}")
    if size < 0:
        raise ValueError(f"a size must be >= 0 bytes, got {value!r}")
    return size


def _positive(seconds: float) -> float:
    if seconds <= 0:
        raise ValueError(f"must be a duration greater than 0 such as 500ms or 2s, got {seconds:g}")
    return seconds


Duration: TypeAlias = Annotated[float, BeforeValidator(parse_duration)]
"""Seconds; YAML may say `2`, `2.5`, `500ms`, `2s`, `1m` or `1h`."""


def parse_optional_duration(value: object) -> float | None:
    """`parse_duration`, where null turns the setting off and 0 is an error that says so."""
    if value is None:
        return None
    seconds = parse_duration(value)
    if seconds <= 0:
        raise ValueError(
            f"must be a duration greater than 0 such as 30s, got {value!r} (null turns it off)"
        )
    return seconds


PositiveDuration: TypeAlias = Annotated[
    float, BeforeValidator(parse_duration), AfterValidator(_positive)
]
"""A Duration where 0 makes no sense (a deadline, a retry interval): 0 is a config error."""
OptionalDuration: TypeAlias = Annotated[float | None, BeforeValidator(parse_optional_duration)]
"""A Duration that null turns off; 0 is a config error that says so."""
ByteSize: TypeAlias = Annotated[int, BeforeValidator(parse_size)]
"""Bytes; YAML may say `1048576`, `512KB`, `32MiB` or `1GiB`."""
