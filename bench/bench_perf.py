"""Benchmark: finding the slow node with `check --perf`'s localization against testing all pairs, in the same run.

THE NETWORK IS MODELLED: 64 real nodes cannot run here. Each pair test takes payload / min(rate_a, rate_b) +
latency, from a link-rate table (healthy nodes HEALTHY_GBPS with +-NOISE jitter per test, one planted slow node
at SLOW_GBPS: a NIC that negotiated 10 Gb/s instead of 100); a round of disjoint pairs takes its slowest pair's
time. The localization itself is the real code (clusterdoc.checks.linkplan.localize, as rank 0 runs it on the
nodes), fed by that model; its planning CPU time is measured and added.

Anchors, measured on the same model in the same run:
  all pairs, in rounds: the circle method's N-1 perfect matchings (every pair once, N/2 pairs at a time),
      judged from all figures (a node whose median pair is below 0.5 x the median of all pairs);
  all pairs by hand: nccl-tests' way, one pair at a time, each run paying LAUNCH_S of mpirun + NCCL start-up.
For 8, 32 and 64 nodes, --repeat runs (each with another slow node and other jitter) print min/median/max of the
rounds, the modelled time to a correct verdict, and the ratios. Goals: the right node in every run, rounds <=
2 log2 N + 4, and at 64 nodes >= 10x faster than all pairs by hand (the issue's anchor; the ratio against all
pairs in rounds is printed beside it, with and without the launch every method pays once).

    .venv/bin/python bench/bench_perf.py [--repeat 7] [--sizes 8,32,64]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time

from clusterdoc.checks import linkplan

PAYLOAD_BYTES = 64 << 20  # per direction, per pair test (nccl-tests' sendrecv at 64 MiB)
ITERS = 2
HEALTHY_GBPS = 100.0
SLOW_GBPS = 10.0
NOISE = 0.2
LATENCY_S = 50e-6
LAUNCH_S = 2.0  # one mpirun + NCCL init: once for a process group, once per pair when testing by hand


class Model:
    """The link-rate table of one run, and the modelled time its tests take."""

    def __init__(self, n: int, slow: int, seed: int):
        self.rate = [SLOW_GBPS if x == slow else HEALTHY_GBPS for x in range(n)]
        self.rng = random.Random(seed)
        self.seconds = 0.0

    def pair(self, a: int, b: int) -> tuple[float, float]:
        """(seconds, busbw in bytes/s) of one pair test."""
        gbps = min(self.rate[a], self.rate[b]) * (1 + self.rng.uniform(-NOISE, NOISE))
        seconds = ITERS * (PAYLOAD_BYTES * 8 / (gbps * 1e9) + LATENCY_S)
        return seconds, ITERS * PAYLOAD_BYTES / seconds

    def round(self, pairs) -> list[float]:
        timed = [self.pair(a, b) for a, b in pairs]
        self.seconds += max(t for t, _ in timed)
        return [bw for _, bw in timed]


def ours(n: int, slow: int, seed: int) -> dict:
    model = Model(n, slow, seed)
    t0 = time.process_time()
    v = linkplan.localize(n, model.round)
    planning = time.process_time() - t0
    return {"rounds": len(v["rounds"]), "seconds": LAUNCH_S + model.seconds + planning, "network": model.seconds,
            "right": v["slow"] == [slow]}


def all_pairs_judged(n: int, figures: dict) -> list[int]:
    everything = statistics.median(figures.values())
    mine = {x: statistics.median(bw for p, bw in figures.items() if x in p) for x in range(n)}
    return [x for x in range(n) if mine[x] < 0.5 * everything]


def all_pairs(n: int, slow: int, seed: int) -> dict:
    model = Model(n, slow, seed)
    figures = {}
    t0 = time.process_time()
    for r in range(n - 1 + n % 2):
        pairs = linkplan.matching(n, r)
        figures.update(zip(pairs, model.round(pairs)))
    right = all_pairs_judged(n, figures) == [slow]
    rounds_s = LAUNCH_S + model.seconds + time.process_time() - t0
    by_hand = Model(n, slow, seed)
    seconds = sum(LAUNCH_S + by_hand.pair(a, b)[0] for a, b in figures)
    return {"rounds": n - 1 + n % 2, "seconds": rounds_s, "network": model.seconds, "by_hand": seconds, "right": right}


def spread(values) -> str:
    return f"{min(values):.3g} / {statistics.median(values):.3g} / {max(values):.3g}"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--sizes", default="8,32,64")
    args = ap.parse_args()
    print("check --perf localization vs all pairs, NETWORK MODELLED (not measured): pair test = "
          f"{ITERS} x ({PAYLOAD_BYTES >> 20} MiB / min(rate_a, rate_b) + {LATENCY_S * 1e6:.0f} us), healthy "
          f"{HEALTHY_GBPS:g} Gb/s +-{NOISE:.0%}, one slow node at {SLOW_GBPS:g} Gb/s, {LAUNCH_S:g} s per launch; "
          f"real linkplan code; {args.repeat} runs per size, min / median / max")  # fmt: skip
    met = True
    for n in [int(x) for x in args.sizes.split(",")]:
        runs = []
        for rep in range(args.repeat):
            slow = random.Random(rep * 7919 + n).randrange(n)  # another slow node each run (the first host too)
            if rep == 0:
                slow = 0
            runs.append((ours(n, slow, rep), all_pairs(n, slow, rep)))
        bound = linkplan.max_rounds(n)
        rounds = [o["rounds"] for o, _ in runs]
        ratio = [a["seconds"] / o["seconds"] for o, a in runs]
        hand = [a["by_hand"] / o["seconds"] for o, a in runs]
        net = [a["network"] / o["network"] for o, a in runs]
        right = sum(o["right"] for o, _ in runs)
        print(f"N={n:3d}: right node {right}/{len(runs)} (all pairs: {sum(a['right'] for _, a in runs)}/{len(runs)}); "
              f"rounds {spread(rounds)} (bound 2 log2 N + 4 = {bound}; all pairs {runs[0][1]['rounds']})")  # fmt: skip
        print(f"       time to a correct verdict {spread([o['seconds'] for o, _ in runs])} s; all pairs in rounds "
              f"{spread([a['seconds'] for _, a in runs])} s (ratio {spread(ratio)}x; network time alone "
              f"{spread(net)}x); all pairs by hand {spread([a['by_hand'] for _, a in runs])} s (ratio {spread(hand)}x)")
        met &= right == len(runs) and max(rounds) <= bound and (n != 64 or min(hand) >= 10)
    print("goals (right node every run, rounds <= 2 log2 N + 4, >= 10x faster than all pairs by hand at 64):",
          "met" if met else "NOT met")  # fmt: skip
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
