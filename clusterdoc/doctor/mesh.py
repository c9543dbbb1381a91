"""Which node-to-node ssh logins the doctor really tries: all pairs (`--mesh full`, N x (N-1)), or k sampled
peers per node (the default, k = 3): every node a source and a target exactly k times, the same sample for
the same nodes and seed. The other pairs are judged from facts (checks/ssh.py: check_trust)."""

from __future__ import annotations

import random

MODES = ("sample", "full", "off")


def sample(names: list[str], k: int = 3, seed: int = 0) -> dict[str, list[str]]:
    """{node: the peers it logs in to}. A seeded permutation of the nodes, and k distinct shifts along it:
    node p[i] tries p[i + s] for each shift s, so every node is tried by exactly k others."""
    n = len(names)
    k = max(0, min(k, n - 1))
    rng = random.Random(f"{seed}:{n}")
    order = list(names)
    rng.shuffle(order)
    shifts = sorted(rng.sample(range(1, n), k)) if k else []
    return {order[i]: [order[(i + s) % n] for s in shifts] for i in range(n)}


def targets(names: list[str], mode: str, k: int = 3, seed: int = 0) -> dict[str, list[str]]:
    if mode == "full":
        return {a: [b for b in names if b != a] for a in names}
    if mode == "off" or len(names) < 2:
        return {a: [] for a in names}
    return sample(names, k, seed)
