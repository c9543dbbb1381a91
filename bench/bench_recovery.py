"""Recovery after a node dies: from the failure to the job running again on healthy nodes, and steps lost.

On the test cluster (5 CPU nodes, Slurm; needs root), a 4-rank jobs/train_resume.py run checkpointing every
K steps; halfway between its second and third checkpoints (step 2K + K/2), every process of node3 (rank 2's
node) is killed with its slurmd.
Measured from that kill:
- clusterdoc: `submit --retries 1`: `why` blames node3, the job is submitted again without it;
- anchor, plain resubmit: `submit` without retries, and the same command again as soon as it returns (no
  human delay counted; Slurm chooses the nodes);
"running again" is the moment every rank of the new attempt wrote its start record (rank<R>.start);
"steps lost" is the last step reached before the kill minus the step the new attempt resumed from.
torchelastic's restart (torchrun --max-restarts on the same nodes) is not measured here: its workers restart
in place, and with node3 gone its rendezvous waits for a node that never comes back (no recovery to time).
Usage: python bench/bench_recovery.py [--repeat 3] [--every 5]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.cluster import Cluster  # noqa: E402
from tests.test_why_cluster import kill_node  # noqa: E402

JOB = ROOT / "jobs" / "train_resume.py"


def env_for(cluster, home):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLUSTERDOC_", "SLURM_", "PMI_", "OMPI_"))}
    return {**env, **cluster.env(), "HOME": str(home)}


def submit(cluster, cwd, ckpt, every, retries):
    cmd = [
        sys.executable,
        "-m",
        "clusterdoc",
        "submit",
        "--backend",
        "slurm",
        "--nodes",
        "4",
        "--no-preflight",
        "--retries",
        str(retries),
        "--wait",
        "--hang-timeout",
        "0",
        str(JOB),
        "--steps",
        "60",
        "--every",
        str(every),
        "--step-time",
        "0.1",
        "--print-steps",
        "--ckpt",
        str(ckpt),
    ]
    return subprocess.Popen(
        cmd, cwd=cwd, env=env_for(cluster, cwd), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )


def last_step(jd: Path) -> int:
    text = (jd / "rank0.out").read_text(errors="replace") if (jd / "rank0.out").exists() else ""
    steps = [int(s) for s in re.findall(r"rank 0: step (\d+)", text)]
    return max(steps, default=0)


def wait_step(jd_root: Path, step: int, timeout=180) -> Path:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for jd in jd_root.glob("*"):
            if last_step(jd) >= step:
                return jd
        time.sleep(0.1)
    raise SystemExit(f"no checkpoint at step {step} in {jd_root}")


def running_again(jd: Path, after: float, proc, timeout=300) -> tuple[float, int]:
    """(when every rank of an attempt started after `after` had written its start record, resumed step);
    (nan, -1) when the submit ends first (the job never ran again)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ended = proc.poll() is not None
        starts = []
        for r in range(4):
            try:
                rec = json.loads((jd / f"rank{r}.start").read_text())
            except (OSError, ValueError):
                break
            if rec["time"] > after:
                starts.append(rec["time"])
        if len(starts) == 4:
            m = re.search(r"resumed from step (\d+)", (jd / "rank0.out").read_text(errors="replace"))
            if m:
                return max(starts), int(m.group(1))
        if ended:
            break
        time.sleep(0.1)
    return float("nan"), -1


def revive(cluster: Cluster, name: str) -> None:
    node = cluster.node(name)
    holder = cluster.holder_pid(node)
    cluster.slurm.start_slurmd(node, holder)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if cluster.slurm.node_states().get(name, "").startswith("idle"):
            return
        time.sleep(0.5)
    print(f"warning: {name} did not come back idle: {cluster.slurm.node_states()}", file=sys.stderr)


def one_run(cluster: Cluster, mode: str, every: int) -> tuple[float, int]:
    cwd = Path(tempfile.mkdtemp(prefix=f"bench-recovery-{mode}-"))
    ckpt = cwd / "ckpt"
    try:
        proc = submit(cluster, cwd, ckpt, every, 1 if mode == "clusterdoc" else 0)
        jd = wait_step(cwd / "clusterdoc-jobs", 2 * every + every // 2)
        t0 = time.time()
        kill_node(cluster, "node3")
        reached = last_step(jd)
        if mode == "clusterdoc":
            when, resumed = running_again(jd, t0, proc)
            proc.wait(300)
        else:  # the same command again, the moment the failed one returns
            proc.wait(300)
            proc2 = submit(cluster, cwd, ckpt, every, 0)
            deadline = time.monotonic() + 300
            jds = []
            while time.monotonic() < deadline and len(jds) < 2:
                jds = sorted((cwd / "clusterdoc-jobs").glob("*"))
                time.sleep(0.1)
            when, resumed = running_again(jds[-1], t0, proc2)
            try:
                proc2.wait(300)
            except subprocess.TimeoutExpired:
                proc2.send_signal(signal.SIGINT)
                proc2.wait(60)
        return when - t0, reached - resumed if resumed >= 0 else -1
    finally:
        revive(cluster, "node3")
        shutil.rmtree(cwd, ignore_errors=True)


def summary(values):
    vals = [v for v in values if v == v]
    if not vals:
        return "did not recover"
    return f"{min(vals):.1f} / {statistics.median(vals):.1f} / {max(vals):.1f}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--every", type=int, default=5)
    args = ap.parse_args()
    if os.geteuid() != 0:
        raise SystemExit("the test cluster needs root")
    d = ROOT / ".cache" / f"bench-recovery-{os.getpid()}"
    cluster = Cluster(d, nodes=5, spec=ROOT / "tests" / "cluster" / "cpu.yaml")
    cluster.up()
    try:
        results = {"clusterdoc": [], "resubmit": []}
        for i in range(args.repeat):
            for mode in results:
                results[mode].append(one_run(cluster, mode, args.every))
                print(
                    f"run {i + 1} {mode}: {results[mode][-1][0]:.1f} s to running again, "
                    f"{results[mode][-1][1]} steps lost",
                    flush=True,
                )
        print(
            f"\n| restart | failure -> running again on healthy nodes (min/median/max) | steps lost, K={args.every} |"
        )
        print("|---|---|---|")
        for mode, rows in results.items():
            times = [t for t, _ in rows]
            lost = [s for _, s in rows]
            print(f"| {mode} | {summary(times)} s | {', '.join(map(str, lost))} |")
        anchor = [t for t, _ in results["resubmit"] if t == t]
        if anchor:
            ratio = statistics.median([t for t, _ in results["clusterdoc"]]) / statistics.median(anchor)
            print(f"\nratio clusterdoc / plain resubmit (median time, runs that recovered): {ratio:.2f}")
    finally:
        cluster.down()
        shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    main()
