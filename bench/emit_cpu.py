"""Instructions of scoring and emitting alone: bench/pipeline_cpu.py with the trajectory build
left out, for callgrind to count.

    valgrind --tool=callgrind --callgrind-out-file=/dev/null --toggle-collect=starmap_next \\
        .venv/bin/python bench/emit_cpu.py --mix checks --stream capacity --passes 1  # and 3

Same arguments and output as bench/pipeline_cpu.py. `RunScorer.score_traces` and the held
spans' annotation run inside an `itertools.starmap` (a C function nothing in the service
calls), and so does the trajectory build inside `score_traces`: callgrind's
`--toggle-collect=starmap_next` switches counting on when scoring starts, off again while a
trajectory is built and on after it, so what it counts is scoring, counting the run in the
metrics, its evaluation events, its score attributes and annotating its held spans, without
receiving, assembling, building or forwarding. (I(3) - I(1)) over two passes' spans is that
part's instructions per span.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable
from itertools import starmap
from pathlib import Path
from typing import Any

from tracescore.pipeline import scoring, service


def counted(function: Callable[..., Any]) -> Callable[..., Any]:
    """`function`, called through `starmap_next` (callgrind's toggle)."""

    def call(*args: Any) -> Any:
        return next(starmap(function, (args,)))

    return call


scoring.RunScorer.score_traces = counted(scoring.RunScorer.score_traces)  # type: ignore[method-assign]
scoring.RunScorer._trajectories = counted(scoring.RunScorer._trajectories)  # type: ignore[method-assign]
service.annotate_span_bytes = counted(service.annotate_span_bytes)  # type: ignore[assignment]

_spec = importlib.util.spec_from_file_location(
    "_pipeline_cpu", Path(__file__).resolve().parent / "pipeline_cpu.py"
)
assert _spec is not None
assert _spec.loader is not None
pipeline_cpu = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(pipeline_cpu)

if __name__ == "__main__":
    sys.exit(pipeline_cpu.main())
