"""Which node's link is slow, without testing all N(N-1)/2 pairs: pair rounds, then confirmation rounds.

Pure and standard-library only: doctor sends this file's source to the nodes inside the perf rank script
(rank 0 plans each next round from the figures so far), and the perf check, the unit tests and
bench/bench_perf.py call the same functions.

A round is a set of disjoint node pairs tested at once; a test gives the pair's bus bandwidth. A slow NIC,
cable or switch port makes every pair of that node slow, so:
  1. screening: SCREEN_ROUNDS rounds of the circle method's perfect matchings over a fixed shuffle of the
     nodes (each node meets a different partner each round, and neighbours in the hostfile, often failing
     together, are not each other's partners; with N odd one node sits out per round);
  2. the reference is the upper median of each node's best figure; the floor is `min_busbw` when given,
     else `fraction` x the reference. A node with a pair at or above the floor is cleared; a node whose
     pairs are all below it is a suspect;
  3. confirmation: each suspect is paired with a cleared node it has not met (fastest first): slow again
     confirms it; fast clears it (its earlier partner was the slow one). A slow pair of two
     cleared nodes is tested once more (a slow link between them, or noise). Repeated while suspects are left
     that can still meet a cleared node, within max_rounds(N) = 2 log2 N + 4.
With f slow nodes that is SCREEN_ROUNDS + about ceil(f / (N - f)) rounds: constant in N at equal fault count.
"""

from __future__ import annotations

import math
import random
from typing import Callable, Dict, List, Optional, Tuple

SCREEN_ROUNDS = 2
DEFAULT_FRACTION = 0.5

Pair = Tuple[int, int]
Test = Tuple[int, int, float, int]  # node a < node b, their busbw (any unit, the same for all), the round


def max_rounds(n: int) -> int:
    return 2 * math.ceil(math.log2(max(n, 2))) + 4


def matching(n: int, r: int) -> List[Pair]:
    """Round r of the circle method (round-robin tournament): disjoint pairs covering every node (N odd:
    all but one). Rounds 0..N-2 (N even) meet every pair exactly once."""
    m = n + n % 2
    if m < 2:
        return []
    ring = [m - 1] + [(r + i) % (m - 1) for i in range(m - 1)]
    pairs = [(min(ring[i], ring[m - 1 - i]), max(ring[i], ring[m - 1 - i])) for i in range(m // 2)]
    return sorted(p for p in pairs if p[1] < n)


def screen_rounds(n: int) -> int:
    return min(SCREEN_ROUNDS, n - 1 + n % 2)


def screening(n: int, r: int) -> List[Pair]:
    """Screening round r: the circle method's round r over a fixed shuffle of the nodes."""
    order = list(range(n))
    random.Random(n).shuffle(order)
    return sorted((min(order[a], order[b]), max(order[a], order[b])) for a, b in matching(n, r))


def best_of_pairs(tests: List[Test]) -> Dict[Pair, float]:
    """Each tested pair's best figure (a slow link is slow every time; a noisy dip is not)."""
    best: Dict[Pair, float] = {}
    for a, b, bw, _ in tests:
        key = (min(a, b), max(a, b))
        best[key] = max(bw, best.get(key, bw))
    return best


def node_best(n: int, pairs: Dict[Pair, float]) -> List[Optional[float]]:
    out: List[Optional[float]] = [None] * n
    for (a, b), bw in pairs.items():
        for x in (a, b):
            cur = out[x]
            out[x] = bw if cur is None else max(cur, bw)
    return out


def upper_median(values: List[float]) -> Optional[float]:
    """The median, the higher middle value for an even count (with half the nodes slow it stays a healthy one)."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[len(ordered) // 2]


def floor_of(tests: List[Test], n: int, fraction: float = DEFAULT_FRACTION, min_busbw: Optional[float] = None) -> float:
    if min_busbw is not None:
        return min_busbw
    ref = upper_median([b for b in node_best(n, best_of_pairs(tests)) if b is not None])
    return fraction * ref if ref is not None else 0.0


def classify(n: int, tests: List[Test], floor: float) -> dict:
    """cleared: a pair at or above the floor. slow: all pairs below it, one of them with a cleared node in a
    confirmation round. undecided: the rest of those below it (or untested). slow_links: pairs below it
    between two cleared nodes."""
    pairs = best_of_pairs(tests)
    best = node_best(n, pairs)
    cleared = {x for x, bw in enumerate(best) if bw is not None and bw >= floor}
    confirmed = {x for a, b, _, r in tests if r >= screen_rounds(n) for x, y in ((a, b), (b, a)) if y in cleared}
    slow: List[int] = []
    undecided: List[int] = []
    for x in range(n):
        if x not in cleared:
            (slow if x in confirmed else undecided).append(x)
    links = [(a, b, bw) for (a, b), bw in sorted(pairs.items()) if bw < floor and a in cleared and b in cleared]
    return {"cleared": sorted(cleared), "slow": slow, "undecided": undecided, "slow_links": links}


def next_round(
    n: int, tests: List[Test], done: int, fraction: float = DEFAULT_FRACTION, min_busbw: Optional[float] = None
) -> List[Pair]:
    """The pairs of round `done` (0-based) given the tests so far; [] when nothing is left to learn."""
    if done < screen_rounds(n):
        return screening(n, done)
    if done >= max_rounds(n):
        return []
    floor = floor_of(tests, n, fraction, min_busbw)
    c = classify(n, tests, floor)
    pairs_seen = best_of_pairs(tests)
    best = node_best(n, pairs_seen)
    partners = sorted(c["cleared"], key=lambda x: (-(best[x] or 0.0), x))  # the fastest confirm first
    busy: set = set()
    out: List[Pair] = []
    for u in c["undecided"]:
        for v in partners:
            if v not in busy and (min(u, v), max(u, v)) not in pairs_seen:
                out.append((min(u, v), max(u, v)))
                busy |= {u, v}
                break
    counts: Dict[Pair, int] = {}
    for a, b, _, _ in tests:
        counts[(min(a, b), max(a, b))] = counts.get((min(a, b), max(a, b)), 0) + 1
    for a, b, _ in c["slow_links"]:
        if counts[(a, b)] < 2 and not {a, b} & busy:
            out.append((a, b))
            busy |= {a, b}
    return sorted(out)


def localize(
    n: int,
    measure: Callable[[List[Pair]], List[float]],
    fraction: float = DEFAULT_FRACTION,
    min_busbw: Optional[float] = None,
) -> dict:
    """Run rounds until nothing is left to learn. `measure(pairs)` tests one round's pairs at once and returns
    their busbw in the same order. Returns the rounds, the tests, the floor, the reference and classify()."""
    tests: List[Test] = []
    rounds: List[List[Pair]] = []
    while True:
        pairs = next_round(n, tests, len(rounds), fraction, min_busbw)
        if not pairs:
            break
        figures = measure(pairs)
        rounds.append(pairs)
        tests += [(a, b, float(bw), len(rounds) - 1) for (a, b), bw in zip(pairs, figures)]
    return verdict(n, tests, rounds, fraction, min_busbw)


def verdict(
    n: int,
    tests: List[Test],
    rounds: List[List[Pair]],
    fraction: float = DEFAULT_FRACTION,
    min_busbw: Optional[float] = None,
) -> dict:
    floor = floor_of(tests, n, fraction, min_busbw)
    c = classify(n, tests, floor)
    pairs = best_of_pairs(tests)
    healthy = [bw for (a, b), bw in pairs.items() if a in c["cleared"] and b in c["cleared"] and bw >= floor]
    ref = upper_median([b for b in node_best(n, pairs) if b is not None])
    return dict(
        c,
        rounds=rounds,
        tests=tests,
        floor=floor,
        reference=ref,
        median=median(healthy) if healthy else ref,
        best=node_best(n, pairs),
    )


def median(values: List[float]) -> float:
    s = sorted(values)
    mid = len(s) // 2
    return s[mid] if len(s) % 2 else (s[mid - 1] + s[mid]) / 2
