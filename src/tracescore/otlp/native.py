"""The optional C extension, `tracescore.otlp._scan`, built by `pip install` where a C compiler
is present. Each module binds what it uses of it (its classes, its Python twins) once, when it
is imported; without it the Python twins run, tested to give the same results."""

from __future__ import annotations

import importlib
from types import ModuleType

__all__ = ["extension"]


def extension() -> ModuleType | None:
    """The extension module, or None where it was not built."""
    try:
        return importlib.import_module("tracescore.otlp._scan")
    except ImportError:
        return None
