"""What LLM judges cost on tracescore's event loop, against building the run, same process.

    .venv/bin/python bench/judges.py [--repeat 7] [--number 300]

Judges run off the ingestion path, but two pieces of their work still run on the event loop
that also serves the receivers: handing a run to the judge queue (`JudgeRunner.submit`), and
preparing each judge request (rendering the run, redacting it, capping it, building the fenced
messages). This prints both per run, as ratios to `build_trajectories` of the same run:

- small: the longest support-agent run of examples/support-agent/traces.jsonl (real
  pydantic-ai spans), with its recorded arguments and results;
- large: the same run with every tool result padded to ~4 kB of JSON holding an e-mail address
  and a `token: ...` pair, so every redaction rule runs and the run text hits the 24k cap.

Each figure is the best of `--repeat` rounds of `--number` calls; rounds interleave the timed
functions so machine load affects them alike. Targets: submit / build < 0.1 (handing a run to
the judges is noise next to building it) and prepare (large) / build < 1.5 (one judge request,
even at the content cap, costs the loop about what building the run does; requests are sampled
and budgeted, runs are not). Exit 1 if missed.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from tracescore.judges.prompts import JudgeRequest, build_messages
from tracescore.judges.redact import Redactor
from tracescore.judges.relevancy import AnswerRelevancy, RelevancyAnswer
from tracescore.judges.render import render_run
from tracescore.judges.runner import JudgeJob, JudgeRunner
from tracescore.judges.sanitize import Fence, truncate_middle
from tracescore.judges.settings import JudgeSettings
from tracescore.model import SpanRecord, ToolCall, Trajectory
from tracescore.otlp import read_trace_files
from tracescore.trajectory import build_trajectories

ROOT = Path(__file__).resolve().parent.parent
TRACES = ROOT / "examples" / "support-agent" / "traces.jsonl"
MAX_CONTENT = 24_000


def _pad(trajectory: Trajectory) -> Trajectory:
    filler = {"note": "x" * 3800, "contact": "carol@example.com", "auth": "token: abcdef123456"}
    steps = tuple(
        replace(s, result={"original": s.result, **filler}) if isinstance(s, ToolCall) else s
        for s in trajectory.steps
    )
    return replace(trajectory, steps=steps)


def _prepare(trajectory: Trajectory, redactor: Redactor) -> int:
    """The per-request work `JudgeClient.ask` does before any I/O."""
    text = render_run(trajectory, value_limit=MAX_CONTENT // 4).text
    text, _ = redactor.redact(text)
    text = truncate_middle(text, MAX_CONTENT)
    request = JudgeRequest(AnswerRelevancy.template(), RelevancyAnswer, "d", data={"run": text})
    request.content_key()
    messages = build_messages(request, Fence.fresh(text), schema_in_prompt=False)
    return sum(len(m["content"]) for m in messages)


def _best(fns: dict[str, Callable[[], object]], repeat: int, number: int) -> dict[str, float]:
    best = dict.fromkeys(fns, float("inf"))
    for _ in range(repeat):
        for name, fn in fns.items():
            started = time.perf_counter()
            for _ in range(number):
                fn()
            best[name] = min(best[name], (time.perf_counter() - started) / number)
    return best


async def _submit_cost(trajectory: Trajectory, number: int, repeat: int) -> float:
    """Seconds per `submit` into a queue nobody drains (the ingestion-path cost alone)."""
    scorer = AnswerRelevancy(type="answer_relevancy")
    settings = JudgeSettings(base_url="http://127.0.0.1:9/v1", model="m", queue_size=10**6)
    best = float("inf")
    for _ in range(repeat):
        runner = JudgeRunner(settings)
        runner.workers = 0  # measure the hand-over only; nothing is sent anywhere
        await runner.start()
        job = JudgeJob(trajectory, (scorer,))
        started = time.perf_counter()
        for _ in range(number):
            runner.submit(job)
        best = min(best, (time.perf_counter() - started) / number)
        await runner.shutdown(drain=False)
    return best


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--number", type=int, default=300)
    args = parser.parse_args()
    decoded = read_trace_files([str(TRACES)])
    by_trace: dict[str, list[SpanRecord]] = {}
    for span in decoded.spans:
        by_trace.setdefault(span.trace_id, []).append(span)
    spans = max(by_trace.values(), key=len)  # the longest run of the example
    small = build_trajectories(spans).trajectories[0]
    large = _pad(small)
    redactor = Redactor()
    large_chars = len(render_run(large, value_limit=MAX_CONTENT // 4).text)
    times = _best(
        {
            "build": lambda: build_trajectories(spans),
            "prepare small": lambda: _prepare(small, redactor),
            "prepare large": lambda: _prepare(large, redactor),
        },
        args.repeat,
        args.number,
    )
    submit = asyncio.run(_submit_cost(small, args.number * 10, args.repeat))
    build = times["build"]
    print(f"run: {len(spans)} spans, {len(small.tool_calls())} tool calls; "
          f"large run text {large_chars} chars (capped at {MAX_CONTENT})")  # fmt: skip
    print(f"build_trajectories       {build * 1e6:9.1f} us")
    for name in ("prepare small", "prepare large"):
        print(f"{name:24s} {times[name] * 1e6:9.1f} us   / build = {times[name] / build:.2f}")
    print(f"{'submit':24s} {submit * 1e6:9.1f} us   / build = {submit / build:.3f}")
    ok = submit / build < 0.1 and times["prepare large"] / build < 1.5
    print("targets met" if ok else "TARGET MISSED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
