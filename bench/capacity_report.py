"""bench/capacity.py's verdicts and tables: is a step sustainable, and what stopped it."""

from __future__ import annotations

import dataclasses
import math
from collections import Counter
from typing import Any

ACCEPTED_MIN = 0.999
P99_MAX_S = 0.250
SENDER_LAG_MAX_S = 0.050
# Buffers are steady when the runs held at the end of a step's second half exceed those at its
# start by at most this fraction (plus a few runs: a tick's worth of runs comes and goes).
GROWTH_MAX = 0.20
GROWTH_SLACK_RUNS = 100
# A service that keeps up has scored and forwarded everything a short while after the load
# stops: the last runs wait `decision_wait` (2 s by default) and one tick (0.25 s). Longer
# means it was behind and a step's buffer (512 MiB holds ~20 s of runs at these rates) hid it:
# a 5-8 s step can be accepted in full at twice the rate one core can score.
DRAIN_MAX_S = 3.5


@dataclasses.dataclass
class Step:
    rate: float
    achieved: float  # spans/s accepted over the step
    accepted: float  # fraction of requests accepted (after retries, within the deadline)
    first_try: float  # fraction accepted at the first attempt
    p50: float
    p99: float
    cores: float  # the server's CPU use while loaded
    us_per_span: float  # CPU idle to idle, less the server's idle use, / spans accepted
    runs: tuple[float, float] | None  # buffered runs at the start and end of the second half
    refusals: dict[str, int]
    failures: dict[str, int]
    delivered: int | None
    spans: int
    other: float  # cores used by other processes on the machine meanwhile
    sender_lag: float
    why: list[str]
    drain_s: float | None = None  # from the end of the load until all was scored and delivered
    confirming: bool = False  # a long step that confirms the search's result (`Ladder`)
    settle_s: float = 0.0  # waited before the step for the service's buffers to empty
    loaded_s: float = 0.0  # from the first request due until the senders' last answer

    @property
    def ok(self) -> bool:
        return not self.why

    @property
    def sender_limited(self) -> bool:
        return self.sender_lag > SENDER_LAG_MAX_S


def _quantile(values: list[float], q: float) -> float:
    if not values:
        return math.inf
    values = sorted(values)
    return values[min(len(values) - 1, int(len(values) * q))]


def _trend(samples: list[tuple[float, float, float]], seconds: float) -> tuple[float, float] | None:
    """Runs buffered at the start and at the end of the step's second half (3 samples each)."""
    window = [runs for t, runs, _ in samples if max(seconds * 0.45, 2.75) <= t <= seconds]
    if len(window) < 4:
        return None
    k = min(3, len(window) // 2)
    return sum(window[:k]) / k, sum(window[-k:]) / k


def verdict(
    rate: float,
    seconds: float,
    results: list[dict[str, Any]],
    samples: list[tuple[float, float, float]],
    cores: float,
    cpu: float,
    delivered: int | None,
    other: float,
    drain_s: float | None = None,
) -> Step:
    """Merge the senders' figures for one step and judge it."""
    offered = sum(r["offered"] for r in results)
    accepted = sum(r["accepted"] for r in results)
    spans = sum(r["spans"] for r in results)
    latencies = [x for r in results for x in r["latencies"]]
    latencies += [math.inf] * (offered - accepted)  # lost requests are the slowest of all
    refusals: Counter[str] = Counter()
    failures: Counter[str] = Counter()
    for r in results:
        refusals.update(r["refusals"])
        failures.update(r["failures"])
    lag = _quantile([x for r in results for x in r["late"]], 0.99)
    runs = _trend(samples, seconds)
    step = Step(
        rate=rate,
        achieved=spans / seconds,
        accepted=accepted / offered,
        first_try=sum(r["first_try"] for r in results) / offered,
        p50=_quantile(latencies, 0.5),
        p99=_quantile(latencies, 0.99),
        cores=cores,
        us_per_span=cpu / spans * 1e6 if spans else math.inf,
        runs=runs,
        refusals=dict(refusals),
        failures=dict(failures),
        delivered=delivered,
        spans=spans,
        other=other,
        sender_lag=lag,
        why=[],
        drain_s=drain_s,
    )
    if step.accepted < ACCEPTED_MIN:
        step.why.append(f"accepted {step.accepted:.2%} < {ACCEPTED_MIN:.1%}")
    if step.p99 > P99_MAX_S:
        step.why.append(f"p99 {step.p99 * 1000:.0f} ms > {P99_MAX_S * 1000:.0f} ms")
    if runs is not None and runs[1] > runs[0] * (1 + GROWTH_MAX) + GROWTH_SLACK_RUNS:
        step.why.append(f"buffers growing ({runs[0]:,.0f} -> {runs[1]:,.0f} runs)")
    if drain_s is not None and drain_s > DRAIN_MAX_S:
        step.why.append(f"behind: still scoring {drain_s:.1f} s after the load (> {DRAIN_MAX_S} s)")
    if step.sender_limited:
        step.why.append(f"the senders lagged (p99 {lag * 1000:.0f} ms): no verdict on the server")
    return step


def _ms(seconds: float) -> str:
    return "lost" if seconds == math.inf else f"{seconds * 1000:.0f}"


def print_step(protocol: str, name: str, step: Step) -> None:
    runs = f"{step.runs[0]:>6,.0f}->{step.runs[1]:<6,.0f}" if step.runs else " " * 14
    verdict_text = "ok" if step.ok else "FAIL: " + "; ".join(step.why)
    if step.confirming:
        verdict_text += " (confirming)"
    if step.settle_s >= 1.0:
        verdict_text += f" (settled {step.settle_s:.0f} s before)"
    print(
        f"  {protocol:<4} {name:<22} {step.rate:>9,.0f} offered {step.achieved:>9,.0f} accepted"
        f" {step.accepted:>7.2%} (first try {step.first_try:>7.2%}) p50/p99"
        f" {_ms(step.p50):>5}/{_ms(step.p99):<5} ms  cpu {step.cores:4.2f}"
        f"{'' if step.drain_s is None else f'  drain {step.drain_s:4.1f} s'}"
        f"  runs {runs} other {step.other:4.2f}  {verdict_text}",
        flush=True,
    )
    for reason, n in sorted(step.refusals.items(), key=lambda x: -x[1]):
        print(f"        refused {n:>6}x: {reason}", flush=True)
    for reason, n in sorted(step.failures.items(), key=lambda x: -x[1]):
        print(f"        failed  {n:>6}x: {reason}", flush=True)
    if step.delivered is not None and step.delivered < step.spans:
        print(f"        delivered only {step.delivered:,} of {step.spans:,} spans", flush=True)


def capacity(steps: list[Step]) -> tuple[Step | None, Step | None]:
    """The highest passing step and the lowest failing step above it. Once the search's result
    was confirmed by long steps, only they can pass: a short step is too short to tell a
    service a few percent behind its load from one that keeps up."""
    confirming = any(s.confirming for s in steps)
    passed = [s for s in steps if s.ok and (s.confirming or not confirming)]
    best = max(passed, key=lambda s: s.rate) if passed else None
    above = [s for s in steps if not s.ok and (best is None or s.rate > best.rate)]
    return best, min(above, key=lambda s: s.rate) if above else None


def print_summary(protocol: str, targets: list[Any]) -> dict[str, Any]:
    """The capacity table of one protocol; returns it as data."""
    limits = f">= {ACCEPTED_MIN:.1%} accepted, p99 <= {P99_MAX_S * 1000:.0f} ms, buffers steady"
    print(f"\n{protocol}: sustainable capacity ({limits}), servers on one core", flush=True)
    print(f"  {'server':<22} {'spans/s':>9} {'ratio':>6} {'cpu':>5} {'µs/span':>8}"
          f" {'cpu ratio':>9}  limit (first failing step above)")  # fmt: skip
    rows: dict[str, Any] = {}
    base_best, _ = capacity(targets[0].steps)
    for target in targets:
        best, limit = capacity(target.steps)
        rate = best.rate if best else 0.0
        ratio = rate / base_best.rate if base_best and best else math.nan
        # CPU per span, median over every step (a failing step's CPU per span is still right:
        # it is counted idle to idle): the second figure, and the one left on a machine too
        # busy for any step to pass.
        costs = sorted(s.us_per_span for s in target.steps if s.spans)
        base_costs = sorted(s.us_per_span for s in targets[0].steps if s.spans)
        us = costs[len(costs) // 2] if costs else math.nan
        base_us = base_costs[len(base_costs) // 2] if base_costs else math.nan
        if limit is None:
            why = "none reached (the search stopped first)"
        else:
            why = f"at {limit.rate:,.0f}: " + "; ".join(limit.why)
            if best is None and limit.confirming:
                why = "no long step passed; lowest " + why
            if limit.refusals:
                top = max(limit.refusals.items(), key=lambda x: x[1])
                why += f" [refused mostly: {top[0]}]"
        cores = best.cores if best else 0.0
        print(
            f"  {target.name:<22} {rate:>9,.0f} {ratio:>6.3f} {cores:>5.2f} {us:>8.2f}"
            f" {base_us / us:>9.3f}  {why}",
            flush=True,
        )
        rows[target.name] = {
            "capacity_spans_s": rate,
            "ratio": ratio,
            "cores_at_capacity": cores,
            "us_per_span": us,
            "cpu_ratio": base_us / us,
            "limit": why,
            "steps": [dataclasses.asdict(s) for s in target.steps],
        }
    _print_baseline_bound(targets[0].steps, rows)
    print(flush=True)
    return rows


def _print_baseline_bound(base_steps: list[Step], rows: dict[str, Any]) -> None:
    """When the senders, not parse-and-discard, stopped its ladder, its capacity is only known
    to be at least its best step: the ratios above are then upper bounds. One core at its CPU
    per span bounds it from above, which gives each ratio's lower bound."""
    best, limit = capacity(base_steps)
    if best is None or (limit is not None and not limit.sender_limited):
        return
    if limit is None and not any(s.sender_limited for s in base_steps):
        return
    costs = sorted(s.us_per_span for s in base_steps if s.spans)
    one_core = 1e6 / costs[len(costs) // 2]
    if one_core <= best.rate:  # it took about a core's worth already: its limit was reached
        return
    print(
        f"  parse-and-discard's limit was not reached (the senders lagged first): its capacity"
        f" is between {best.rate:,.0f} and about {one_core:,.0f} spans/s (one core at its CPU"
        f" per span), so each ratio lies between rate / {one_core:,.0f} and the ratio shown:",
        flush=True,
    )
    for name, row in rows.items():
        low = row["capacity_spans_s"] / one_core
        row["ratio_lower_bound"] = low
        print(f"    {name:<22} {low:.3f} to {row['ratio']:.3f}", flush=True)
