"""The one way into the optional C extension, `tracescore.otlp._scan`: the OTLP wire codec.

The extension reads and checks the bytes of OTLP trace requests (scan the spans decoding only
the kept attribute keys, validate against the schema, group by trace, cut held spans out of a
forwarded request); `pip install` builds it where a C compiler is present. Everything it does
has a pure-Python path that gives the same results (the tests run the suite on both); the
whole service then spends 2-3x the CPU per span (bench/pipeline_cpu.py). Every module that uses
the extension asks `extension()` once, when it is imported; `TRACESCORE_NATIVE=0` makes it
answer None, so the whole process runs the pure-Python path. `describe()` says which path runs
and why (`tracescore serve` prints it at start).
"""

from __future__ import annotations

import importlib
import os
from types import ModuleType

__all__ = ["ENV", "Status", "describe", "disabled", "extension", "status"]

ENV = "TRACESCORE_NATIVE"
_OFF = frozenset({"0", "false", "no", "off"})
_ON = frozenset({"", "1", "true", "yes", "on"})


class Status:
    """Whether the extension runs (`active`), and why (`reason`); `well_formed`: False when
    `TRACESCORE_NATIVE` holds a value that is neither on nor off (then it counts as on)."""

    __slots__ = ("active", "reason", "well_formed")

    def __init__(self, active: bool, reason: str, well_formed: bool = True) -> None:
        self.active, self.reason, self.well_formed = active, reason, well_formed


def disabled() -> bool:
    """Whether `TRACESCORE_NATIVE` chose the pure-Python path (0, false, no or off)."""
    return os.environ.get(ENV, "").strip().lower() in _OFF


def status() -> Status:
    """Which path runs: the extension, unless `TRACESCORE_NATIVE` is off or it was not built."""
    if disabled():
        return Status(False, f"{ENV}={os.environ[ENV]} chose the pure-Python path")
    setting = os.environ.get(ENV, "").strip().lower()
    note = "" if setting in _ON else f"; {ENV}={os.environ[ENV]!r} is neither 0 nor 1, read as 1"
    try:
        module = importlib.import_module("tracescore.otlp._scan")
    except ImportError as exc:
        # Built by `pip install` only where a C compiler was present (setup.py).
        return Status(
            False, f"the C extension was not built or cannot load ({exc}){note}", not note
        )
    return Status(True, f"C extension {module.__name__} from {module.__file__}{note}", not note)


def extension() -> ModuleType | None:
    """The extension module, or None where it was not built or `TRACESCORE_NATIVE` is off."""
    if not status().active:
        return None
    return importlib.import_module("tracescore.otlp._scan")


def describe() -> str:
    """One line for a log: which OTLP wire codec runs, and why."""
    current = status()
    path = "native" if current.active else "pure Python (2-3x the CPU per span)"
    return f"OTLP wire codec: {path}: {current.reason}"
