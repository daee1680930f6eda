"""Where admission stops and how long a tick holds the event loop, at given rates (in process).

    .venv/bin/python bench/ticks.py [--rates 2000,4000,6000] [--seconds 6] [--mix bench]

A `tracescore serve` pipeline (no network: the exporter takes everything) is fed
bench/capacity_load.py's stream on a simulated clock: `rate` runs/s (20 spans each) in
512-span requests, the tick every 0.25 s as the service runs it. Measured in CPU time of this
process, so a busy machine does not change the figures much:
- the longest stretch one tick keeps the event loop (no request is answered meanwhile),
  scoring a tick's due runs in one go (as before) and in slices of 48 (as `serve` does now);
  (a full collection of the garbage collector, every few seconds under load, is not counted:
  it holds the loop for tens of milliseconds, wherever it falls);
- the peak runs and estimated bytes buffered, and the requests refused with their reason,
  under the assembly limits given (`--limits`, YAML; default: the shipped ones).
"""

from __future__ import annotations

import argparse
import functools
import gc
import time
from collections import Counter

from capacity import MIXES
from capacity_load import make_stream
from shapes import tag
from tracescore.config import parse_config
from tracescore.errors import OverloadedError
from tracescore.pipeline.service import Pipeline

TICK_S = 0.25
SLICE = 48


class TakeAll:
    """An exporter that takes everything at once."""

    def has_capacity(self) -> bool:
        return True

    def submit_traces(self, body: object, n: object = None) -> bool:
        return True

    submit_logs = submit_metrics = submit_traces


@functools.cache
def stream(shard: int) -> tuple[list[bytes], list[int]]:
    return make_stream(2000, shard)


def simulate(rate_runs: float, seconds: float, mix: str, limits: str, sliced: bool) -> dict:
    config = parse_config(
        MIXES[mix] + f'exporter: {{endpoint: "http://127.0.0.1:1"}}\nassembly: {limits}\n'
    )
    pipeline = Pipeline(config, exporter=TakeAll())  # type: ignore[arg-type]
    assembler = pipeline.assembler
    now = [0.0]
    assembler._clock = lambda: now[0]
    batches, counts = stream(0)
    per_request = sum(counts) / len(counts)
    step = per_request / (rate_runs * 20)
    refused: Counter[str] = Counter()
    stalls: list[float] = []
    peak_runs = peak_bytes = 0
    next_tick, index = TICK_S, 0
    while now[0] < seconds:
        try:
            assembler.check_capacity()
            n_pass, i = divmod(index, len(batches))
            assembler.consume(None, batches[i].replace(tag(0), tag(n_pass)))
            index += 1
        except OverloadedError as exc:
            refused[exc.args[0].split("(")[-1].rstrip(")")] += 1
        peak_runs = max(peak_runs, assembler.runs)
        peak_bytes = max(peak_bytes, assembler.buffered_bytes)
        now[0] += step
        if now[0] >= next_tick:
            next_tick += TICK_S
            if sliced:
                while True:
                    t0 = time.thread_time()
                    scored = assembler.tick(now[0], limit=SLICE)
                    stalls.append(time.thread_time() - t0)
                    if scored < SLICE:
                        break
            else:
                t0 = time.thread_time()
                assembler.tick(now[0])
                stalls.append(time.thread_time() - t0)
    return {
        "max_stall_ms": max(stalls) * 1000,
        "peak_runs": peak_runs,
        "peak_mib": peak_bytes / 2**20,
        "refused": dict(refused),
        "requests": index,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rates", default="2000,4000,6000", help="runs/s (20 spans each)")
    parser.add_argument("--seconds", type=float, default=6.0, help="simulated seconds")
    parser.add_argument("--mix", default="bench", choices=sorted(MIXES))
    parser.add_argument("--limits", default="{}", help='e.g. "{max_runs: 10000}"')
    args = parser.parse_args()
    # The collector as `tracescore serve` sets it up (cli/serve.py): what exists at start is
    # frozen, young collections every 50,000 allocations.
    gc.collect()
    gc.freeze()
    gc.set_threshold(50_000, *gc.get_threshold()[1:])
    for rate in (float(r) for r in args.rates.split(",")):
        one_go = simulate(rate, args.seconds, args.mix, args.limits, sliced=False)
        sliced = simulate(rate, args.seconds, args.mix, args.limits, sliced=True)
        print(
            f"{rate:>6,.0f} runs/s ({rate * 20:>7,.0f} spans/s), {args.mix} mix, limits"
            f" {args.limits}: longest tick {one_go['max_stall_ms']:.0f} ms in one go,"
            f" {sliced['max_stall_ms']:.0f} ms in slices of {SLICE}; peak {sliced['peak_runs']:,}"
            f" runs, {sliced['peak_mib']:.0f} MiB estimated; refused"
            f" {sum(sliced['refused'].values())} of {sliced['requests']} requests"
            + (f" ({sliced['refused']})" if sliced["refused"] else ""),
            flush=True,
        )


if __name__ == "__main__":
    main()
