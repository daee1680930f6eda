"""Instructions of scoring and emitting alone: bench/pipeline_cpu.py with only that part
counted by callgrind.

    valgrind --tool=callgrind --callgrind-out-file=/dev/null --toggle-collect=starmap_next \\
        .venv/bin/python bench/emit_cpu.py --mix checks --stream capacity --passes 1  # and 3

Same arguments and output as bench/pipeline_cpu.py. Each stage after a run is built runs
inside an `itertools.starmap` (a C function nothing in the service calls), and callgrind's
`--toggle-collect=starmap_next` counts only inside it: scoring and counting a trace's runs
(`RunScorer._scored_runs`), their evaluation events, judges' hand-off and score attributes
(`RunScorer._emit`), the logs request (`EvaluationLogs.encode`) and annotating the held spans
(`annotate_span_bytes`); not receiving, assembling, building or forwarding. The stages are
never nested (a toggle inside a toggle would switch counting off). (I(3) - I(1)) over two
passes' spans is that part's instructions per span.
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


scoring.RunScorer._scored_runs = counted(scoring.RunScorer._scored_runs)  # type: ignore[method-assign]
scoring.RunScorer._emit = counted(scoring.RunScorer._emit)  # type: ignore[method-assign]
scoring.EvaluationLogs.encode = counted(scoring.EvaluationLogs.encode)  # type: ignore[method-assign]
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
