"""Before/after: the same clusterdoc commands on the one-machine test cluster, with the code of an earlier
commit and with this tree's, outputs normalised (timings, job ids, paths, pids, ports) and diffed.

    flock /tmp/cluster-tests.lock .venv/bin/python scripts/before_after.py [--before 52ae05d] [--tree DIR] [--out DIR]

The earlier commit is checked out detached (`git worktree add --detach`, default
.cache/before-after/tree-REF, kept for the next run) with a venv of its own: its `clusterdoc` first on sys.path,
every other package the one this python has. One cluster (tests/cluster, this tree's; 4 nodes, Slurm) serves
both runs, so both meet the same nodes. What runs, in order, for each version (see SCENARIOS):
`check HOSTFILE` as a table and `--json` on the default GPU nodes, and with node2's kernel planted too old;
then on CPU nodes with real torch: `submit --wait` of a small job through Slurm (its preflight on) and local,
`status` of each, a job whose rank 1 raises through Slurm, its `status`, `why` and `why --json`.
Each output lands in OUT/{before,after}/NAME.txt (rc, stdout, stderr); `diff -u` of the two trees goes to
OUT/diff.txt and its summary to stdout. Exit 0 when the outputs are the same, 1 when they differ, 2 on a
setup error. Root only (the cluster needs namespaces); about 6 min on 2 idle cores.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.cluster import Cluster, ClusterError, missing_tools  # noqa: E402

CPU_NODE = {"gpus": [], "torch": "real", "deepspeed": None}  # as tests/conftest.py

HELLO = "import os, socket\nprint('hello from rank', os.environ['RANK'], 'on', socket.gethostname())\n"
# rank 1 fails once rank 0 has ended (its exit record, then 10 s for its process to go): which of them Slurm
# ends first is then always the same, so the job's state, rank 0's record and `why`'s evidence are too
FAIL = (
    "import os, pathlib, time\n"
    "rank = int(os.environ['RANK'])\n"
    "print('rank', rank, 'starting', flush=True)\n"
    "if rank == 1:\n"
    "    done = pathlib.Path(os.environ['CLUSTERDOC_LOG_DIR'], 'rank0.exit')\n"
    "    deadline = time.monotonic() + 120\n"
    "    while not done.exists() and time.monotonic() < deadline:\n"
    "        time.sleep(0.2)\n"
    "    time.sleep(10)\n"
    "    raise RuntimeError('CUDA error: an illegal memory access was encountered')\n"
)

SLEEP = "import os, time\nprint('rank', os.environ['RANK'], 'sleeping', flush=True)\ntime.sleep(300)\n"


class Step(NamedTuple):
    """One command: its name (its output's file), the nodes' plant (PLANTS), argv after `clusterdoc`, and a
    regex its stdout is waited for (run again every 2 s, up to 2 min) when the state it shows moves on.
    In argv: {H} the hostfile, {S} the ssh_config, {M} mpirun, {W} the job scripts' folder, {J:NAME} the job
    that step NAME made."""

    name: str
    plant: str
    argv: list[str]
    until: str = ""


GPU, CPU = "gpu", "cpu"
DONE = r": (COMPLETED|FAILED|CANCELLED|LOST)"
SLURM2 = ["submit", "--backend", "slurm", "--nodes", "2"]
SCENARIOS: list[Step] = [
    Step("help-check", GPU, ["check", "--help"]),
    Step("help-submit", GPU, ["submit", "--help"]),
    Step("help-why", GPU, ["why", "--help"]),
    Step("check-table", GPU, ["check", "{H}", "--ssh-config", "{S}"]),
    Step("check-json", GPU, ["check", "{H}", "--ssh-config", "{S}", "--json"]),
    Step("check-old-kernel", "old-kernel", ["check", "{H}", "--ssh-config", "{S}"]),
    Step("check-srun", GPU, ["check", "--transport", "srun", "--nodes", "4"]),
    Step("submit-slurm", CPU, [*SLURM2, "--wait", "{W}/hello.py"]),
    Step("status-slurm", CPU, ["status", "{J:submit-slurm}"]),
    Step("logs-slurm", CPU, ["logs", "{J:submit-slurm}", "--rank", "1"]),
    Step("submit-local", CPU, ["submit", "--backend", "local", "--tasks-per-node", "2", "--wait", "{W}/hello.py"]),
    Step("status-local", CPU, ["status", "{J:submit-local}"]),
    Step(
        "submit-mpirun",
        CPU,
        [
            "submit",
            "--backend",
            "mpirun",
            "--nodes",
            "2",
            "--hostfile",
            "{H}",
            "--ssh-config",
            "{S}",
            "--mpirun",
            "{M}",
            "--wait",
            "{W}/hello.py",
        ],
    ),
    Step("status-mpirun", CPU, ["status", "{J:submit-mpirun}"]),
    Step("submit-slurm-old-kernel", "cpu-old-kernel", [*SLURM2, "--wait", "{W}/hello.py"]),
    # --straggler 0: rank 0's pace summary at exit races the launcher ending the job once rank 1 failed (seen
    # both ways with either version), so it is left out
    Step("submit-fail", CPU, [*SLURM2, "--no-preflight", "--straggler", "0", "--wait", "{W}/fail.py"]),
    Step("status-fail", CPU, ["status", "{J:submit-fail}"]),
    Step("why-fail", CPU, ["why", "{J:submit-fail}", "--ssh-config", "{S}"]),
    Step("why-fail-json", CPU, ["why", "{J:submit-fail}", "--ssh-config", "{S}", "--json"]),
    Step("submit-nowait-slurm", CPU, [*SLURM2, "--no-preflight", "--no-wait", "{W}/sleep.py"]),
    Step("status-running-slurm", CPU, ["status", "{J:submit-nowait-slurm}"], until=": RUNNING"),
    Step("cancel-slurm", CPU, ["cancel", "{J:submit-nowait-slurm}"]),
    Step("status-cancelled-slurm", CPU, ["status", "{J:submit-nowait-slurm}"], until=DONE),
    Step("submit-nowait-local", CPU, ["submit", "--backend", "local", "--no-wait", "{W}/sleep.py"]),
    Step("status-running-local", CPU, ["status", "{J:submit-nowait-local}"], until=": RUNNING"),
    Step("cancel-local", CPU, ["cancel", "{J:submit-nowait-local}"]),
    Step("status-cancelled-local", CPU, ["status", "{J:submit-nowait-local}"], until=DONE),
]
CPU_OLD_KERNEL = {**CPU_NODE, "kernel": "4.4.0-210-generic"}
PLANTS = {
    GPU: {},
    "old-kernel": {"node2": {"kernel": "4.4.0-210-generic"}},
    CPU: {n: CPU_NODE for n in ("node1", "node2", "node3", "node4")},
    "cpu-old-kernel": {**{n: CPU_NODE for n in ("node1", "node3", "node4")}, "node2": CPU_OLD_KERNEL},
}


def sh(*cmd: str, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, check=True, capture_output=True, text=True, **kw)


def before_tree(ref: str, tree: Path) -> Path:
    """The commit checked out detached at TREE, with a venv whose python imports that tree's clusterdoc."""
    if not (tree / ".git").exists():
        tree.parent.mkdir(parents=True, exist_ok=True)
        sh("git", "-C", str(ROOT), "worktree", "add", "--detach", str(tree), ref)
    head = sh("git", "-C", str(tree), "rev-parse", "HEAD").stdout.strip()
    want = sh("git", "-C", str(ROOT), "rev-parse", ref + "^{commit}").stdout.strip()
    if head != want:
        sh("git", "-C", str(tree), "checkout", "--detach", "-q", want)
    python = tree / ".venv" / "bin" / "python"
    if not python.exists():
        sh(sys.executable, "-m", "venv", "--without-pip", str(tree / ".venv"))
    purelib = sh(str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])").stdout.strip()
    # the tree first; then what this python reaches beyond the standard library (its site-packages and theirs)
    base = (sys.base_prefix, sys.base_exec_prefix)
    # (not a folder holding a clusterdoc, this tree's: the checkout itself, or here)
    ours = [
        p
        for p in sys.path
        if os.path.isabs(p)
        and Path(p).is_dir()
        and not p.startswith(base)
        and not (Path(p) / "clusterdoc").exists()
        and Path(p).resolve() != ROOT / "scripts"
    ]
    (Path(purelib) / "before-after.pth").write_text("\n".join([str(tree), *ours]) + "\n")
    return python


class Normaliser:
    """What changes from run to run and is not behaviour: paths, ids, times, pids, ports."""

    def __init__(self, paths: dict[str, str]):
        self.paths = sorted(paths.items(), key=lambda kv: -len(kv[0]))  # longest first
        self.ids: dict[str, str] = {}

    def _id(self, kind: str, value: str) -> str:
        key = f"{kind}:{value}"
        if key not in self.ids:
            self.ids[key] = f"<{kind}{sum(k.startswith(kind + ':') for k in self.ids) + 1}>"
        return self.ids[key]

    def __call__(self, text: str) -> str:
        text = "\n".join(rank_blocks_sorted(text.split("\n")))
        for path, name in self.paths:
            text = text.replace(path, name)
        text = re.sub(
            r"\b(local|slurm|mpirun)-\d{8}-\d{6}-[0-9a-f]{8}\b",
            lambda m: self._id("JOB-" + m.group(1), m.group(0)),
            text,
        )
        # Slurm's job ids and mpirun's pid, where clusterdoc prints them
        text = re.sub(
            r"(slurm job |\(id |\(slurm |\"backend_id\": \"|\"job\": \"|jobid=|JobId=|job_id: |job allocation |"
            r"mpirun job |srun: job )(\d+)\b",
            lambda m: m.group(1) + self._id("ID", m.group(2)),
            text,
        )
        text = re.sub(
            r"\b\d+(_0)?(_log\.(?:out|err)|_submitted\.pkl|_0_result\.pkl)",
            lambda m: "<N>" + (m.group(1) or "") + m.group(2),
            text,
        )
        text = re.sub(r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(\.\d+)?([+-]\d\d:?\d\d|Z)?", "<TIME>", text)
        text = re.sub(r"\b\d\d:\d\d:\d\d(\.\d+)?\b", "<TIME>", text)
        text = re.sub(r"\b1[6-9]\d{8}(\.\d+)?\b", "<EPOCH>", text)  # time.time() in JSON facts
        text = re.sub(r"\b\d+(\.\d+)?(\s?)(ms|s|sec|seconds|min)\b", r"<T>\2\3", text)
        text = re.sub(r"\b\d+(\.\d+)?( ?)(MiB|GiB|KiB|MB|GB)\b", r"<N>\2\3", text)  # RSS, free space
        text = re.sub(
            r"(\"(?:elapsed|duration|seconds|took|wall|time|started|ended|start|end|free_mib|attempts)"
            r"[a-z_]*\": )[0-9.e+-]+",
            r"\1<N>",
            text,
        )
        text = re.sub(r"\b(pid|port|PID|MASTER_PORT)([ =:]+\"?)\d+", r"\1\2<N>", text)
        text = re.sub(r"(/tmp/(?:tmp|(?:[A-Za-z.]+-)+))[a-z0-9_]{8}\b", r"\1<TMP>", text)  # tempfile's names
        return text


RANK_LINE = re.compile(r"^(?:\[preflight\] )?\[rank (\d+)\]")


def rank_blocks_sorted(lines: list[str]) -> list[str]:
    """Each run of rank-prefixed lines ordered by rank, each rank's lines in their order: how the ranks' streams
    interleave is the scheduler's, not clusterdoc's."""
    out: list[str] = []
    block: list[str] = []
    for line in [*lines, ""]:
        if RANK_LINE.match(line):
            block.append(line)
            continue
        out += sorted(block, key=lambda x: int(RANK_LINE.match(x).group(1)))  # type: ignore[union-attr]
        block = []
        out.append(line)
    return out[:-1]


def canonical(stdout: str) -> str:
    """JSON output re-indented (one key a line: readable diffs), with lists whose order is the network's sorted
    (mpirun's hostnames)."""
    try:
        data = json.loads(stdout)
    except ValueError:
        return stdout

    def walk(x):
        if isinstance(x, dict):
            return {k: sorted(v) if k == "names" and isinstance(v, list) else walk(v) for k, v in x.items()}
        if isinstance(x, list):
            return [walk(i) for i in x]
        return x

    return json.dumps(walk(data), indent=1) + "\n"


def clusterdoc(python: Path, args: list[str], cwd: Path, env: dict) -> tuple[str, str, str]:
    try:
        res = subprocess.run(
            [str(python), "-m", "clusterdoc", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=420
        )
    except subprocess.TimeoutExpired as exc:
        return "timeout", str(exc.stdout or ""), str(exc.stderr or "")
    return str(res.returncode), res.stdout, res.stderr


def run_version(label: str, python: Path, cluster: Cluster, out: Path, work: Path) -> None:
    """Every scenario with this python; each answer kept raw in OUT/LABEL/NAME.raw.json."""
    cwd = work / label
    shutil.rmtree(cwd, ignore_errors=True)
    cwd.mkdir(parents=True)
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("CLUSTERDOC_", "SLURM_", "PMI_", "OMPI_", "PYTHON"))
    }
    env.update(cluster.env(), HOME=str(cwd))
    subs = {
        "{H}": str(cluster.hostfile("plain")),
        "{S}": str(cluster.ssh_config),
        "{W}": str(work),
        "{M}": str(cluster.mpirun),
    }
    made: dict[str, str] = {}
    planted, before = None, None
    shutil.rmtree(out / label, ignore_errors=True)
    (out / label).mkdir(parents=True)
    try:
        for name, plant, argv, until in SCENARIOS:
            if plant != planted:
                if before is not None:
                    cluster.put_back(before)
                before, planted = cluster.plant(PLANTS[plant]), plant
            jobs = cwd / "clusterdoc-jobs"
            had = set(jobs.iterdir()) if jobs.exists() else set()
            args = []
            for a in argv:
                for k, v in subs.items():
                    a = a.replace(k, v)
                a = re.sub(r"\{J:([\w-]+)\}", lambda m: made.get(m.group(1), "NO-JOB"), a)
                args.append(a)
            t0 = time.monotonic()
            while True:
                rc, stdout, stderr = clusterdoc(python, args, cwd, env)
                if not until or re.search(until, stdout) or time.monotonic() > t0 + 120:
                    break
                time.sleep(2)
            new = sorted(set(jobs.iterdir()) - had) if jobs.exists() else []
            if new:
                made[name] = new[-1].name
            print(f"  {label} {name}: rc {rc} ({time.monotonic() - t0:.0f} s)", flush=True)
            raw = {"args": args, "rc": rc, "stdout": stdout, "stderr": stderr}
            (out / label / f"{name}.raw.json").write_text(json.dumps(raw, indent=1))
    finally:
        if before is not None:
            cluster.put_back(before)


def normalise(out: Path) -> list[str]:
    """OUT/{before,after}/NAME.txt from the raw answers, OUT/diff.txt; the names that differ."""
    paths = json.loads((out / "paths.json").read_text())
    differ = []
    for label in ("before", "after"):
        norm = Normaliser(paths)  # ids numbered per version, in the order they first show
        for name, *_ in SCENARIOS:
            raw_file = out / label / f"{name}.raw.json"
            raw = (
                json.loads(raw_file.read_text())
                if raw_file.exists()
                else {"args": [], "rc": "not run", "stdout": "", "stderr": ""}
            )
            text = (
                f"$ clusterdoc {' '.join(raw['args'])}\nrc: {raw['rc']}\n--- stdout\n{canonical(raw['stdout'])}"
                f"--- stderr\n{raw['stderr']}"
            )
            (out / label / f"{name}.txt").write_text(norm(text))
    for name, *_ in SCENARIOS:
        if (out / "before" / f"{name}.txt").read_text() != (out / "after" / f"{name}.txt").read_text():
            differ.append(name)
    res = subprocess.run(
        ["diff", "-ru", "-x", "*.raw.json", str(out / "before"), str(out / "after")], capture_output=True, text=True
    )
    (out / "diff.txt").write_text(res.stdout)
    return differ


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--before", default="52ae05d", help="the earlier commit (default 52ae05d, before the seams)")
    ap.add_argument("--tree", type=Path, help="where it is checked out (default .cache/before-after/tree-REF)")
    ap.add_argument("--out", type=Path, default=ROOT / ".cache" / "before-after" / "out")
    ap.add_argument("--only", choices=("before", "after"), help="run one version (the other's answers stay)")
    ap.add_argument("--normalise", action="store_true", help="no run: normalise and diff the answers kept in OUT")
    args = ap.parse_args(argv)
    out = args.out.absolute()
    if not args.normalise:
        code = run_both(args, out)
        if code:
            return code
    differ = normalise(out)
    names = [name for name, *_ in SCENARIOS]
    print(
        json.dumps(
            {"same": [n for n in names if n not in differ], "differ": differ, "diff": str(out / "diff.txt")}, indent=1
        )
    )
    return 1 if differ else 0


def run_both(args: argparse.Namespace, out: Path) -> int:
    missing = missing_tools()
    if os.geteuid() != 0 or missing:
        print(f"before_after: needs root and {', '.join(missing) or 'the test cluster tools'}", file=sys.stderr)
        return 2
    tree = (args.tree or ROOT / ".cache" / "before-after" / f"tree-{args.before}").absolute()
    try:
        before_py = before_tree(args.before, tree)
    except subprocess.CalledProcessError as exc:
        print(f"before_after: {' '.join(exc.cmd)}: {exc.stderr.strip()}", file=sys.stderr)
        return 2
    work = out / "work"
    work.mkdir(parents=True, exist_ok=True)
    (work / "hello.py").write_text(HELLO)
    (work / "fail.py").write_text(FAIL)
    (work / "sleep.py").write_text(SLEEP)
    cdir = ROOT / ".cache" / "cluster-test" / f"s{os.getpid()}"  # reaped by tests/conftest.py if we die
    cdir.mkdir(parents=True, exist_ok=True)
    (cdir / "owner.pid").write_text(f"{os.getpid()}\n")
    cluster = Cluster(cdir, nodes=4)
    paths = {
        str(before_py.parent.parent): "<TREE>/.venv",
        sys.prefix: "<TREE>/.venv",
        str(tree): "<TREE>",
        str(ROOT): "<TREE>",
        str(work / "before"): "<CWD>",
        str(work / "after"): "<CWD>",
        str(work): "<WORK>",
        str(cdir): "<CLUSTER>",
        cluster.prefix: "<PREFIX>",
    }
    (out / "paths.json").write_text(json.dumps(paths, indent=1))
    try:
        t0 = time.monotonic()
        cluster.up()
        print(f"cluster up in {time.monotonic() - t0:.0f} s", flush=True)
        for label, python in (("before", before_py), ("after", Path(sys.executable))):
            if args.only in (None, label):
                run_version(label, python, cluster, out, work)
    except ClusterError as exc:
        print(f"before_after: the test cluster: {exc}", file=sys.stderr)
        return 2
    finally:
        cluster.down()
        shutil.rmtree(cdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
