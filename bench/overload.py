"""Goodput past capacity: what a saturated `tracescore serve` still takes, side by side.

    .venv/bin/python bench/overload.py --capacity 78000 [--loads 1.5,2] [--protocol grpc]
        [--mix matching] [--tree NAME=DIR ...] [--rounds 2] [--step-s 30]

A collector sending more than the service can score should see the service keep taking about
its capacity and refuse the rest with a wait it can trust: its queue holds the refused data.
This offers `--loads` times `--capacity` (the mix's sustainable capacity from
bench/capacity.py, in spans/s) in long open-loop steps, with bench/capacity.py's servers,
senders (which wait the advised Retry-After / RetryInfo, and give up on a request
`--deadline-s` after it was due) and sink, and prints per step:
- goodput: spans accepted a second, from the first request due until the senders' last answer
  (retries go on after the step's load), and as a fraction of `--capacity`;
- the service's CPU per accepted span, idle to idle: what refusals and retries cost it shows
  here;
- the share of requests accepted (at the first try, and within the deadline), the refusals the
  service answered, the requests the senders gave up on, the median latency.

With `--tree NAME=DIR` (the `src/` folder of another checkout, its extension built in place;
repeatable) each round runs those trees and this one in turn, so a change is read against its
base in the same minutes of a noisy host.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys

from capacity import Bench, Target
from capacity_report import Step


def print_overload(tree: str, load: float, capacity: float, step: Step) -> None:
    refused = sum(step.refusals.values())
    lost = sum(step.failures.values())
    goodput = step.spans / step.loaded_s
    print(
        f"  {tree:<6} {load:4.2f}x {step.rate:>9,.0f} offered  goodput {goodput:>9,.0f}"
        f" ({goodput / capacity:4.2f}) over {step.loaded_s:4.1f} s  {step.us_per_span:5.2f} µs a"
        f" span  accepted {step.accepted:7.2%} (first try {step.first_try:7.2%})  refusals"
        f" {refused:>6,}  gave up {lost:>5,}  p50 {step.p50:5.2f} s  cpu {step.cores:4.2f}",
        flush=True,
    )


async def run(args: argparse.Namespace) -> None:
    bench = Bench(args)
    trees: list[tuple[str, str | None]] = []
    for tree in args.tree:
        name, _, src = tree.partition("=")
        trees.append((name, src))
    trees.append(("head", None))
    loads = [float(x) for x in args.loads.split(",")]
    try:
        await bench.setup()
        print(
            f"{args.protocol}, {args.mix} mix, capacity {args.capacity:,.0f} spans/s, steps of"
            f" {args.step_s:.0f} s, deadline {args.deadline_s:.0f} s",
            flush=True,
        )
        for round_no in range(args.rounds):
            print(f"round {round_no + 1}", flush=True)
            for tree, src in trees:
                bench.args.serve_src = src
                target: Target = bench.service(args.protocol, args.mix)
                await bench.idle(target)
                for load in loads:
                    rate = args.capacity * load
                    step = await bench.step(args.protocol, target, rate, args.step_s, False)
                    print_overload(tree, load, args.capacity, step)
                target.proc.terminate()
                target.proc.wait()
    finally:
        await bench.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--capacity", type=float, required=True, help="the mix's, spans/s")
    parser.add_argument("--loads", default="1.5,2", help="multiples of --capacity offered")
    parser.add_argument("--protocol", choices=["grpc", "http"], default="grpc")
    parser.add_argument("--mix", default="matching")
    parser.add_argument(
        "--tree",
        action="append",
        default=[],
        metavar="NAME=DIR",
        help="a src/ folder to run side by side with this one",
    )
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--step-s", type=float, default=30.0)
    parser.add_argument("--deadline-s", type=float, default=10.0)
    parser.add_argument("--shards", type=int, default=2, help="sender processes")
    parser.add_argument("--traces", type=int, default=2000, help="distinct traces per pass")
    parser.add_argument(
        "--sender", choices=["go", "python"], default="go", help="as bench/capacity.py's"
    )
    args = parser.parse_args()
    # What bench/capacity.py's Bench reads; the service runs with its shipped defaults.
    args.export_protocol, args.export_compression = None, None
    args.serve_src, args.serve_env = None, []
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    asyncio.run(run(args))
    return 0


if __name__ == "__main__":
    sys.exit(main())
