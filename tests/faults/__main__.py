"""python -m tests.faults [--backend slurm|mpirun|local] [--jobs N] [--seed S] [--kinds a,b] [--report FILE.json]
[--dir CLUSTER_DIR]: a fault campaign (tests/faults/__init__.py). Exit 0 only with no violation."""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from tests.faults import runner
from tests.faults.catalog import CATALOG, kinds_for
from tests.faults.unlisted import UNLISTED

ROOT = Path(__file__).resolve().parents[2]


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m tests.faults", description=__doc__)
    p.add_argument("--backend", choices=["slurm", "mpirun", "local"], default="slurm")
    p.add_argument("--jobs", type=int, default=10)
    p.add_argument("--seed", type=int, default=None, help="default: drawn, and printed")
    p.add_argument("--kinds", default=None, help=f"comma-separated, of: {', '.join(CATALOG)} (default: all that apply); "
                   f"in no list: {', '.join(UNLISTED)}")
    p.add_argument("--report", default=None, help="write the JSON report there")
    p.add_argument("--dir", default=None, help="an existing test cluster's dir (CPU nodes, at least 4)")
    p.add_argument("--work", default=None, help="where the jobs' folders go (default: a temporary folder)")
    a = p.parse_args(argv)
    listed = kinds_for(a.backend)  # the default; the faults in no list only when asked for
    allowed = listed + [name for name, f in UNLISTED.items() if a.backend in f.backends]
    a.kinds = [k.strip() for k in a.kinds.split(",") if k.strip()] if a.kinds else listed
    bad = [k for k in a.kinds if k not in allowed]
    if bad:
        p.error(f"--kinds: {', '.join(bad)} not in the catalog for {a.backend} ({', '.join(allowed)})")
    if a.jobs < 1:
        p.error("--jobs: at least 1")
    if a.seed is None:
        a.seed = random.SystemRandom().randrange(1, 10**6)
    return a


def campaign(a: argparse.Namespace, cluster, out=sys.stdout) -> dict:
    rng = random.Random(a.seed)
    work = Path(a.work or tempfile.mkdtemp(prefix="faults-"))
    work.mkdir(parents=True, exist_ok=True)
    print(f"campaign: backend {a.backend}, {a.jobs} job(s), seed {a.seed}, kinds {','.join(a.kinds)}", file=out)
    print(f"{'#':>3} {'fault':<12} {'at':<5} {'victim':<12} {'outcome':<10} {'rc':>3} {'s':>4} {'why':<28} violations",
          file=out, flush=True)  # fmt: skip
    jobs: list = []

    def report() -> dict:
        return {"seed": a.seed, "backend": a.backend, "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                "command": "python -m tests.faults " + " ".join(sys.argv[1:]), "done": len(jobs), "asked": a.jobs,
                "jobs": [r.report() for r in jobs]}  # fmt: skip

    for i in range(a.jobs):
        kind, moment, rank, step = runner.draw(rng, a.kinds)
        r = runner.run_one(cluster, a.backend, kind, moment, rank, step, work / f"job{i:03d}-{kind}")
        jobs.append(r)
        w = r.why or {}
        why = f"{w.get('category')}: {','.join(w.get('nodes') or []) or ','.join(map(str, w.get('ranks') or []))}"
        victim = f"rank {rank}@{r.node or '?'}"
        print(f"{i:>3} {kind:<12} {moment:<5} {victim:<12} {str(r.state):<10} {str(r.rc):>3} {r.elapsed:>4.0f} "
              f"{why if w else '-':<28} {'; '.join(r.violations) or 'none'}"
              + ("" if r.landed else " (the fault found nothing to act on)"), file=out, flush=True)  # fmt: skip
        if a.report:  # as it goes: a campaign stopped midway keeps its figures
            Path(a.report).write_text(json.dumps(report(), indent=1) + "\n")
    totals(report(), out)
    return report()


def totals(report: dict, out=sys.stdout) -> None:
    jobs = report["jobs"]
    per = Counter(j["fault"] for j in jobs)
    bad = Counter(j["fault"] for j in jobs if j["violations"])
    print(f"totals: {len(jobs)} job(s), {len(per)} kind(s), {sum(len(j['violations']) for j in jobs)} violation(s)",
          file=out)  # fmt: skip
    for k in sorted(per):
        print(f"  {k:<12} {per[k]:>3} job(s), {bad[k]} with violations", file=out)
    print(file=out, flush=True)


def main(argv: list[str] | None = None) -> int:
    a = parse(argv)
    from tests.cluster import Cluster

    own = a.dir is None
    d = Path(a.dir) if a.dir else Path(tempfile.mkdtemp(prefix="faults-cluster-"))
    cluster = Cluster(d, nodes=runner.NODES + 1, spec=ROOT / "tests" / "cluster" / "cpu.yaml") if own else Cluster(d)
    if own:
        cluster.up()
    try:
        report = campaign(a, cluster)
    finally:
        if own:
            cluster.down()
            shutil.rmtree(d, ignore_errors=True)
    if a.report:
        Path(a.report).write_text(json.dumps(report, indent=1) + "\n")
    return 1 if any(j["violations"] for j in report["jobs"]) else 0


if __name__ == "__main__":
    sys.exit(main())
