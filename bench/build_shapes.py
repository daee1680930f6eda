"""CPU per trajectory build of bench/capacity.py's two trace shapes, as the service reads them.

    .venv/bin/python bench/build_shapes.py [--mix checks|matching] [--traces 40] [--repeat 7]

The stream's traces (bench/shapes.py: `tool_spans_trace`, and `messages_trace`, whose chat
spans record the tool calls the tool spans answer) decoded with the attribute keys a service
running bench/pipeline_cpu.py's mix keeps, then built one trace at a time as the assembler
calls `build_trajectories`. Printed per shape: the best of `--repeat` rounds, in CPU µs per
20-span trace, and whether the flat-run fast path built it. Compare two engines by running
each in turn, several times (the machine drifts).

Instructions per build, under callgrind (deterministic on a busy machine): `--callgrind N`
builds each shape's traces once to warm up, then N times inside a C trampoline of its own
(`itertools.starmap` for the tool spans shape, `itertools.takewhile` for the messages shape),
and prints nothing else; a build costs the trampoline's inclusive instructions / (N * traces):

    PYTHONHASHSEED=0 valgrind --tool=callgrind --callgrind-out-file=/tmp/build.cg \\
        .venv/bin/python bench/build_shapes.py --mix checks --callgrind 5
    callgrind_annotate --inclusive=yes --threshold=100 /tmp/build.cg \\
        | grep -E "(starmap|takewhile)_next "
"""

from __future__ import annotations

import argparse
import importlib.util
import itertools
import sys
import time
from pathlib import Path

from tracescore.config import parse_config
from tracescore.model import SpanRecord
from tracescore.otlp.scan import SpanReader
from tracescore.pipeline.scoring import AGENT_CANDIDATES, key_filter
from tracescore.trajectory import _build, build_trajectories

_HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(_HERE))
import capacity_load  # noqa: E402

_spec = importlib.util.spec_from_file_location("_pipeline_cpu", _HERE / "pipeline_cpu.py")
assert _spec is not None
assert _spec.loader is not None
pipeline_cpu = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(pipeline_cpu)


def traces_by_shape(mix: str, n_traces: int) -> dict[str, list[list[SpanRecord]]]:
    """The stream's traces, decoded as a service with `mix` decodes them, by shape."""
    config = parse_config(pipeline_cpu.CONFIG.format(mix=pipeline_cpu.MIXES[mix]))
    reader = SpanReader(key_filter(config), AGENT_CANDIDATES)
    batches, _ = capacity_load.make_stream(n_traces, 0)
    traces: dict[str, list[SpanRecord]] = {}
    for body in batches:
        groups, _ = reader.grouped(body)
        for trace_id, group in groups.items():
            traces.setdefault(trace_id, []).extend(group[0])
    shapes: dict[str, list[list[SpanRecord]]] = {"tool_spans": [], "messages": []}
    for spans in traces.values():
        messages = any("gen_ai.output.messages" in s.attributes for s in spans)
        shapes["messages" if messages else "tool_spans"].append(spans)
    return shapes


def count_builds(mix: str, n_traces: int, rounds: int) -> None:
    """Each shape's traces built `rounds` times in a trampoline of its own (see above)."""
    shapes = traces_by_shape(mix, n_traces)
    for traces in shapes.values():
        for spans in traces:
            build_trajectories(spans, trace_id="t")

    def build(spans: list[SpanRecord]) -> bool:
        build_trajectories(spans, trace_id="t")
        return True

    list(itertools.starmap(build, [(spans,) for spans in shapes["tool_spans"]] * rounds))
    list(itertools.takewhile(build, shapes["messages"] * rounds))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mix", choices=sorted(pipeline_cpu.MIXES), default="checks")
    parser.add_argument("--traces", type=int, default=40)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--callgrind", type=int, default=0, metavar="N")
    args = parser.parse_args()
    if args.callgrind:
        count_builds(args.mix, args.traces, args.callgrind)
        return
    taken: list[bool] = []
    fast = _build._flat_run
    assert fast is not None

    def recording(*call: object) -> object:
        built = fast(*call)  # type: ignore[arg-type]
        taken.append(built is not None)
        return built

    for shape, traces in traces_by_shape(args.mix, args.traces).items():
        taken.clear()
        _build._flat_run = recording  # type: ignore[assignment]
        for spans in traces:
            build_trajectories(spans, trace_id="t")
        _build._flat_run = fast
        best = float("inf")
        for _ in range(args.repeat):
            started = time.process_time()
            for _ in range(20):
                for spans in traces:
                    build_trajectories(spans, trace_id="t")
            best = min(best, (time.process_time() - started) / (20 * len(traces)))
        print(
            f"mix={args.mix} shape={shape} traces={len(traces)} "
            f"build_us_per_trace={best * 1e6:.1f} fast_path={sum(taken)}/{len(traces)}"
        )


if __name__ == "__main__":
    sys.exit(main())
