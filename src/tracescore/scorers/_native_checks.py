"""The native kernels of the commonest checks (otlp/_checks.c), bound to a check's config.

`_Check.bound_score` scores every run of a scenario; for `max_tool_calls`, `no_tool_errors`
(without `compat: mastra`) and `called_tool` it returns `check_score` bound to the check's
config here, a C call per run that gives exactly the Score the Python path gives (tests compare)
and hands anything unusual, errors included, to that Python path. Without the extension, or
for any other check, the Python path scores alone.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TypeAlias

from tracescore.model.score import Score
from tracescore.model.trajectory import ToolCall, Trajectory
from tracescore.otlp.native import extension

__all__ = ["CALLED_TOOL", "MAX_TOOL_CALLS", "NO_TOOL_ERRORS", "Kernel", "native_score"]

# Kernel numbers, as otlp/_checks.c names them.
MAX_TOOL_CALLS, NO_TOOL_ERRORS, CALLED_TOOL = 1, 2, 3
Kernel: TypeAlias = tuple[int, str, bool, object, object]
"""(kernel number, call policy, include_subagents, the kernel's two arguments)."""

_check_score: Callable[..., Score] | None = None
if (_native := extension()) is not None:
    _native.bind_checks(Score, ToolCall)  # the kernels choose calls by base.py's select_calls
    _check_score = _native.check_score


def native_score(
    kernel: Kernel,
    constants: tuple[str, str, bool, bool, str, str],
    python: Callable[[Trajectory], Score],
    digest: str,
) -> Callable[[Trajectory], Score] | None:
    """`python` (a check's bound Python path) as `kernel`, or None without the extension.

    `constants`: the check's `binary_constants()`.
    """
    if _check_score is None:
        return None
    number, policy, include_subagents, first, second = kernel
    name, kind, passes, fails, pass_label, fail_label = constants
    params = (
        number,
        policy,
        include_subagents,
        name,
        kind,
        digest,
        passes,
        fails,
        pass_label,
        fail_label,
        python,
        first,
        second,
    )
    # A partial of the C function: the call per run stays in C.
    return functools.partial(_check_score, params)
