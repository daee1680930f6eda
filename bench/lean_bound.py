"""How close the trajectory build and the matching mix's scoring are to a lower bound.

    .venv/bin/python bench/lean_bound.py [--traces 400] [--repeat 7]

bench/capacity.py's stream (its two 20-span shapes, bench/shapes.py), decoded with the keys a
service scoring the capacity-matching mix keeps, then per trace, best of `--repeat` rounds:

- `real`: `build_trajectories` as the assembler calls it, then the scenario's three scorers
  (`run_evaluator`);
- `lean`: what any Python code must do at the least for these two shapes and this mix, NOT
  tracescore's semantics: sort the spans, read the tool spans' name, status and arguments and
  the chat spans' model, tokens and requested calls (their output messages parsed), then
  compare the tool names with the expected tools, steps and order (arguments parsed for the
  one tool with an argument spec) and write three explanations. It handles no other shape,
  no sub-agent, handoff, paused, denied or unexecuted call, no bad input, and emits nothing.

Printed: CPU µs per span of each part and the ratios, measured in one process. The lean figures
are a bound for a redesign: a builder and scorers of the product's semantics cannot cost less.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from operator import attrgetter
from typing import Any

import capacity_load
import mixes
from tracescore import semconv as sc
from tracescore.config import parse_config
from tracescore.model.span import SpanRecord
from tracescore.otlp.scan import SpanReader
from tracescore.pipeline.scoring import AGENT_CANDIDATES, key_filter
from tracescore.scenarios import run_evaluator
from tracescore.trajectory import build_trajectories

CONFIG = "scenarios:\n  - name: agents\n    match: {agent: '*'}" + mixes.CAPACITY_MATCHING
_START = attrgetter("start_ns")
_OP, _TOOL, _ARGS = sc.GEN_AI_OPERATION_NAME, sc.GEN_AI_TOOL_NAME, sc.GEN_AI_TOOL_CALL_ARGUMENTS
_CALL_ID, _OUTPUT, _MODEL = (
    sc.GEN_AI_TOOL_CALL_ID,
    sc.GEN_AI_OUTPUT_MESSAGES,
    sc.GEN_AI_RESPONSE_MODEL,
)
_IN, _OUT = sc.GEN_AI_USAGE_INPUT_TOKENS, sc.GEN_AI_USAGE_OUTPUT_TOKENS
_EXPECTED = ("search_docs", "read_file")
_STEPS = ("search_docs", "read_file", "run_sql")
_ERROR = 2  # StatusCode.ERROR
_SPEC = {"query": "alpha bravo"}

Traces = list[tuple[str, list[SpanRecord]]]
Lean = tuple[list[tuple[Any, ...]], list[tuple[Any, ...]], dict[Any, Any]]


def lean_build(traces: Traces) -> list[Lean]:
    """Per trace: its tool calls, model calls and requested calls, read once each."""
    out: list[Lean] = []
    for _, spans in traces:
        calls: list[tuple[Any, ...]] = []
        models: list[tuple[Any, ...]] = []
        requested: dict[Any, Any] = {}
        for span in sorted(spans, key=_START):
            attrs = span.attributes
            op = attrs.get(_OP)
            if op == "execute_tool":
                calls.append(
                    (attrs.get(_TOOL), span.status_code, attrs.get(_ARGS), attrs.get(_CALL_ID))
                )
            elif op == "chat":
                models.append((attrs.get(_MODEL), attrs.get(_IN), attrs.get(_OUT), span.end_ns))
                text = attrs.get(_OUTPUT)
                if isinstance(text, str):
                    for message in json.loads(text):
                        for part in message.get("parts", ()):
                            if part.get("type") == "tool_call":
                                requested[part.get("id")] = (
                                    part.get("name"),
                                    part.get("arguments"),
                                )
        out.append((calls, models, requested))
    return out


def lean_score(built: list[Lean]) -> list[tuple[tuple[float, str], ...]]:
    """The three scores of each trace (clean calls counted), with their explanations."""
    out = []
    for calls, _, _ in built:
        clean = [c for c in calls if c[1] != _ERROR]
        names = [c[0] for c in clean]
        present = set(names)
        found = [n for n in _EXPECTED if n in present]
        matched = any(
            isinstance(args := json.loads(c[2]) if isinstance(c[2], str) else c[2], dict)
            and all(args.get(k) == v for k, v in _SPEC.items())
            for c in clean
            if c[0] == "search_docs"
        )
        satisfied = len(found) + matched
        tool_calls = (satisfied / 3, f"{satisfied}/3 checks satisfied; found: {', '.join(found)}")
        # Relaxed ordering: the longest common subsequence of the names and the steps.
        row = [0] * (len(_STEPS) + 1)
        for name in names:
            diagonal = 0
            for j, step in enumerate(_STEPS):
                diagonal, row[j + 1] = (
                    row[j + 1],
                    (diagonal + 1 if name == step else max(row[j + 1], row[j])),
                )
        common = row[-1]
        extra = ", ".join(n for n in names if n not in _STEPS)
        trajectory = (common / 3, f"relaxed ordering: {common}/3 expected steps. extra: {extra}.")
        rest = iter(names)
        in_order = all(expected in rest for expected in _EXPECTED)
        order = (float(in_order), f"expected order followed: {in_order}; calls: {', '.join(names)}")
        out.append((tool_calls, trajectory, order))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--traces", type=int, default=400)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    config = parse_config(CONFIG)
    reader = SpanReader(key_filter(config), AGENT_CANDIDATES)
    batches, _ = capacity_load.make_stream(args.traces, 0)
    by_trace: dict[str, list[SpanRecord]] = {}
    for body in batches:
        for scanned in reader.records(body):
            record = scanned[6]
            by_trace.setdefault(record.trace_id, []).append(record)
    traces = list(by_trace.items())
    spans = sum(len(s) for _, s in traces)
    evaluate = run_evaluator(config)

    def real_build() -> list[Any]:
        return [build_trajectories(s, trace_id=tid).trajectories for tid, s in traces]

    def real_score(built: list[Any]) -> list[Any]:
        return [[evaluate(run) for run in runs] for runs in built]

    best: dict[str, float] = {}

    def timed(name: str, work: Callable[..., Any], *given: Any) -> Any:
        started = time.process_time()
        result = work(*given)
        best[name] = min(best.get(name, float("inf")), time.process_time() - started)
        return result

    for _ in range(args.repeat):  # interleaved, so a drift of the machine hits both
        real_results = timed("real score", real_score, timed("real build", real_build))
        lean_results = timed("lean score", lean_score, timed("lean build", lean_build, traces))
    # The lean scores decide as the real ones do on this stream (one run per trace).
    agree = sum(
        [round(s.value, 6) for s in results[0].scores] == [round(v, 6) for v, _ in lean]
        for results, lean in zip(real_results, lean_results, strict=True)
    )
    us = {name: seconds / spans * 1e6 for name, seconds in best.items()}
    print(f"{len(traces)} traces, {spans} spans; CPU µs per span, best of {args.repeat}")
    print(f"  the lean scores equal the real ones on {agree} of {len(traces)} traces")
    for part in ("build", "score"):
        real, lean = us[f"real {part}"], us[f"lean {part}"]
        print(f"  {part:5s}  real {real:6.3f}  lean {lean:6.3f}  real/lean {real / lean:5.2f}")
    real = us["real build"] + us["real score"]
    lean = us["lean build"] + us["lean score"]
    print(f"  both   real {real:6.3f}  lean {lean:6.3f}  real/lean {real / lean:5.2f}")


if __name__ == "__main__":
    main()
