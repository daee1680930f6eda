"""Does a long-lived pipeline cost more per span than a fresh one? Side by side, in process.

    .venv/bin/python bench/process_age.py [--passes 10] [--rounds 14] [--mix capacity-matching]

One pipeline (bench/pipeline_cpu.py's `PipelineRun`, over bench/capacity.py's stream of 2,000
runs, fresh trace ids on every pass) lives through every round; each round it runs `--passes`
passes between two blocks of as many passes of a pipeline started for that round, all pinned
to CPU 0. Printed
per round: the medians of CPU µs per span and old / fresh. The host's speed drifts by half
within minutes here, so only the ratio of adjacent blocks means anything.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def worker(mix: str) -> None:
    """Read a number of passes per line; answer the median CPU µs per span of those passes."""
    from pipeline_cpu import PipelineRun

    run = PipelineRun(mix, "capacity", traces=2000)
    print("ready", flush=True)
    for line in sys.stdin:
        costs = []
        for _ in range(int(line)):
            spans, cpu = run.run_pass()
            costs.append(cpu / spans * 1e6)
        print(f"{sorted(costs)[len(costs) // 2]:.3f}", flush=True)


class Worker:
    def __init__(self, mix: str) -> None:
        env = {**os.environ, "PYTHONHASHSEED": "0", "PYTHONPATH": str(HERE)}
        self.proc = subprocess.Popen(
            [sys.executable, __file__, "--worker", "--mix", mix],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
            preexec_fn=lambda: os.sched_setaffinity(0, {0}),
        )
        assert self.proc.stdout is not None
        assert self.proc.stdout.readline().strip() == "ready"

    def run(self, passes: int) -> float:
        assert self.proc.stdin is not None
        assert self.proc.stdout is not None
        self.proc.stdin.write(f"{passes}\n")
        self.proc.stdin.flush()
        return float(self.proc.stdout.readline())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--passes", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=14)
    parser.add_argument("--mix", default="capacity-matching")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.mix)
        return
    old = Worker(args.mix)
    k = args.passes
    for r in range(args.rounds):
        fresh = Worker(args.mix)
        before = fresh.run(k)
        aged = old.run(k)
        after = fresh.run(k)
        fresh.proc.kill()
        print(
            f"round {r:>2}: old (passes {r * k}-{r * k + k - 1}) {aged:6.2f}  fresh {before:6.2f}"
            f" / {after:6.2f}  old/fresh {aged / ((before + after) / 2):.2f}",
            flush=True,
        )
    old.proc.kill()


if __name__ == "__main__":
    main()
