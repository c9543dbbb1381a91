"""Step 1 of the doctor (gather): the facts. One round trip per node (SSH, srun, this machine, or saved files:
doctor/transports/, chosen in one place, transports.resolve).

Remote (transports/ssh.py): one paramiko session per node (bounded fan-out, per-node timeout) runs the probe,
with the node-to-node ssh test inside that same round trip; meanwhile the head runs one mpirun across
all nodes. A dead node costs one timeout, once. Nothing here judges: see rules.py.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import threading
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

from clusterdoc import private
from clusterdoc.checks import net, registry
from clusterdoc.doctor import jobenv, mesh, mpirun, ranks, transports
from clusterdoc.doctor.options import CheckOptions
from clusterdoc.doctor.transports.base import ProbeRequest
from clusterdoc.doctor.transports.local import LOCAL, gather_local
from clusterdoc.doctor.transports.saved import MAX_FACTS_FILE, RUN_FILE, load, node_files, valid_name
from clusterdoc.errors import UsageError
from clusterdoc.hostfile import natural_key
from clusterdoc.untrusted import MAX_TEXT, escape_all, printable

__all__ = ["LOCAL", "MAX_FACTS_FILE", "RUN_FILE", "Gathered", "gather", "gather_local", "read_facts", "save_facts"]


@dataclass
class Gathered:
    """What the doctor knows before judging: each node's facts and how reaching it went, plus the head's runs."""

    nodes: list[str]  # in hostfile order
    conns: dict[str, dict]  # {node: {status, message, elapsed, exit_code}}
    facts: dict[str, dict | None]  # {node: probe facts, None when it gave none}
    checks: list[str]  # the checks that apply (one node: nothing to compare)
    head_mpirun: dict | None = None  # the head's mpirun: path, flavour, version
    mpirun: dict | None = None  # the run across the nodes
    comm: dict | None = None  # the --comm all_reduce
    started: float = field(default_factory=time.monotonic)
    perf: dict | None = None  # the --perf compute and link rounds
    transport: str = "ssh"  # how the facts came: ssh | srun | local | saved
    not_applicable: list[str] = field(default_factory=list)  # asked for, but the transport cannot do them
    job_env: jobenv.JobEnv = field(default_factory=jobenv.JobEnv)  # what the probe was told on top of the node's

    def answered(self) -> dict[str, dict]:
        return {n: f for n, f in self.facts.items() if f}


def gather(opts: CheckOptions) -> Gathered:
    """The facts `opts` asks for: saved ones (--facts DIR), this machine's (--local), or every node's."""
    opts.validate()
    checks = opts.selected()
    if not opts.facts_dir:
        opts.job_env = job_environment(opts)
    name = transports.resolve(
        opts.transport, opts.given, opts.local, opts.facts_dir, opts.partition, opts.srun_nodes
    )  # the one place the way to the nodes is chosen
    if name == "saved":
        g = read_facts(Path(opts.facts_dir or ""), checks)
        g.transport = "saved"
    elif name == "srun":
        g = gather_srun(opts, checks, [h.host for h in opts.hosts()] if opts.given else None)
    elif name == "local":
        g = gather_here(opts, checks)
        g.transport = "local"
    else:
        g = gather_nodes(opts, checks)
        answers = {n: transports.Answer(g.conns[n]["status"]) for n in g.nodes}
        if transports.fall_back(opts.transport, answers, opts.timeout):
            g = gather_srun(opts, checks, g.nodes)  # the cluster allows Slurm, not SSH (pam_slurm_adopt)
    if not opts.facts_dir and isinstance(opts.job_env, jobenv.JobEnv):
        g.job_env = opts.job_env
    if opts.save_facts:
        try:
            save_facts(g, Path(opts.save_facts))
        except OSError as err:
            raise UsageError(
                f"--save-facts: cannot write {printable(err.filename or opts.save_facts)}: {err.strerror or err}",
                hint="give a folder you can write to (it is created if missing)",
            ) from None
    return g


# --- the job's environment -------------------------------------------------------------------------


def resolve_launcher(opts: CheckOptions) -> str:
    """--launcher, else what will start the ranks: Slurm inside an allocation, through srun or where sbatch is on
    PATH; this machine's ranks with --local; else the head's mpirun flavour ('none' without one)."""
    if opts.launcher != "auto":
        return opts.launcher
    if opts.uses_srun:
        return "slurm"
    if opts.is_local:
        return "local"
    if shutil.which("sbatch"):
        return "slurm"
    try:
        flavour = (mpirun.head_mpirun(opts.mpirun) or {}).get("flavour")
    except UsageError:  # a bad --mpirun: the mpi check says so (when it runs)
        flavour = None
    return flavour if flavour in ("mpich", "openmpi") else "none"


def job_environment(opts: CheckOptions) -> jobenv.JobEnv:
    """What the probe is told on top of each node's environment: the shell's judged variables where the launcher
    passes them on, then --env."""
    given = dict(opts.env) if isinstance(opts.env, dict) else {}
    shell = os.environ if opts.environ is None else opts.environ
    return jobenv.merge(shell, given, resolve_launcher(opts))


def _probe_env(opts: CheckOptions) -> dict[str, str]:
    if isinstance(opts.job_env, jobenv.JobEnv):
        return dict(opts.job_env.values)
    return dict(opts.env) if isinstance(opts.env, dict) else {}


# --- through srun (Slurm) ----------------------------------------------------------------------------

# checks that need SSH by nature (node-to-node logins for mpirun; the head's mpirun and port plan over SSH; a
# check's `ssh_only`): not applicable through srun, said so in the report. One machine (a check's `local=False`):
# nothing to compare or to connect to; the net check judges only its interfaces and InfiniBand there.


def gather_srun(opts: CheckOptions, checks: list[str], nodes: list[str] | None) -> Gathered:
    """Every node's facts from one srun step (transports/srun.py): the same probe and facts as over SSH."""
    started = time.monotonic()
    head = mpirun.head_mpirun(opts.mpirun) if "mpi" in checks else None
    prefix = shlex.split(opts.wrap) if opts.wrap else None
    carrier = transports.SrunTransport(opts.partition, opts.srun_nodes, opts.srun_options, prefix)
    names, answers = carrier.probe(nodes or [], probe_request(opts, python_only=True))
    conns = {n: a.conn() for n, a in answers.items()}
    facts = {n: a.facts for n, a in answers.items()}
    applicable = [c for c in checks if c not in registry.ssh_only()]
    if len(names) < 2:
        applicable = [c for c in applicable if c not in registry.not_local()]
    g = Gathered(names, conns, facts, applicable, head, None, None, started, transport="srun")
    g.not_applicable = [c for c in checks if c in registry.ssh_only()]
    return g


# --- this machine -----------------------------------------------------------------------------


def gather_here(opts: CheckOptions, checks: list[str]) -> Gathered:
    started = time.monotonic()
    head = mpirun.head_mpirun(opts.mpirun) if "mpi" in checks else None
    facts = gather_local(opts.python, opts.timeout, (head or {}).get("path"), probe_request(opts).args(), opts.wrap)
    conns = {LOCAL: {"status": "local", "message": "", "elapsed": 0.0, "exit_code": 0}}
    checks = [c for c in checks if c not in registry.not_local()]  # one node: nothing to compare or connect to
    comm_result = ranks.comm_local(facts, opts.timeout) if "comm" in checks else None
    return Gathered([LOCAL], conns, {LOCAL: facts}, checks, head, None, comm_result, started)


def probe_request(opts: CheckOptions, head_mpirun: str | None = None, python_only: bool = False) -> ProbeRequest:
    """What `opts` asks every node's probe, once, whatever carries it. `python_only`: the srun step's probe gets
    --env alone, as it always has (its wrap goes in as the step's prefix)."""
    return ProbeRequest(
        timeout=opts.timeout,
        python=opts.python,
        wrap=None if python_only else opts.wrap,
        head_mpirun=head_mpirun,
        env=_probe_env(opts),
        space=() if python_only else ((opts.job_folder,) if opts.job_folder else ()),
        files=() if python_only else tuple(opts.files or []),
    )


# --- every node over SSH --------------------------------------------------------------------------


REACH_WINDOW = 1.0  # seconds: how long the head waits for every node's TCP connect before starting


def gather_nodes(opts: CheckOptions, checks: list[str]) -> Gathered:
    """Every node over SSH (transports/ssh.py), in one round trip each, with the head's mpirun meanwhile."""
    from clusterdoc.doctor.render import Progress

    started = time.monotonic()
    ssh = opts.ssh_options()
    everyone = opts.hosts()
    progress = Progress(len(everyone) if opts.progress else 0)
    carrier = transports.SSHTransport(everyone, ssh, fanout=opts.fanout)
    try:
        # A name that does not resolve, a refused connection, no route: known in milliseconds. Such a
        # node is reported now and left out of the rest (no mpirun, mesh or port test towards it).
        dead = carrier.reach([h.host for h in everyone], min(REACH_WINDOW, ssh.timeout / 4))
        for _ in dead:
            progress.update(True)
        hosts = [h for h in everyone if h.host not in dead]
        g = _gather_reachable(opts, checks, carrier, hosts, progress)
    finally:
        carrier.close()
        progress.close()
    for name, a in dead.items():
        g.conns[name], g.facts[name] = a.conn(), None
    g.nodes, g.started = [h.host for h in everyone], started
    return g


def _gather_reachable(
    opts: CheckOptions, checks: list[str], carrier: transports.SSHTransport, hosts, progress
) -> Gathered:
    """gather_nodes for the nodes not known to be unreachable."""
    head = mpirun.head_mpirun(opts.mpirun) if "mpi" in checks else None
    test_mpi = "mpi" in checks and bool(hosts)
    # The head's mpirun runs while the probes run. MPICH: its proxies start inside the probes' round
    # trips (HydraManual); other flavours: mpirun's own ssh launcher, in a thread.
    box: dict = {}
    thread = manual = proxies = None
    if test_mpi and head and head.get("flavour") == "mpich":
        manual = mpirun.HydraManual(hosts, head, opts.timeout)
        proxies = manual.proxies()
    elif test_mpi:

        def run():
            box["r"] = mpirun.run_mpirun(opts, hosts, head, None, opts.timeout)

        thread = threading.Thread(target=run, daemon=True)
        thread.start()
    try:
        request = ssh_request(opts, [h.host for h in hosts], checks, progress, proxies, (head or {}).get("path"))
        _, answers = carrier.probe([h.host for h in hosts], request)
    except BaseException:
        if manual:  # Ctrl-C or a bad ssh config: the waiting mpirun must not outlive the check
            manual.stop()
        raise
    conns, facts = {n: a.conn() for n, a in answers.items()}, {n: a.facts for n, a in answers.items()}
    reachable = [h for h in hosts if facts.get(h.host)]
    if test_mpi:
        progress.note("waiting for the mpirun test")
    result = None
    if manual and len(reachable) < len(hosts):
        # a node that did not run its probe never started its proxy: mpirun would wait for it until the
        # timeout. Stop it now and judge the others by a run without that node.
        manual.stop()
        result = mpirun.run_mpirun(opts, reachable, head, None, opts.timeout) if reachable else None
    elif manual:
        result = manual.finish()
    if thread:
        thread.join(opts.timeout + 5)
        result = box.get("r", {"error": "mpirun did not return"})
        if len(reachable) < len(hosts) and reachable and not mpirun.all_answered(result, reachable, facts):
            # One dead node aborts the whole mpirun: judge the others by a run without it.
            result = mpirun.run_mpirun(opts, reachable, head, None, opts.timeout)
    if result is not None and reachable:
        python = mpirun.mpi4py_python(facts, head)
        if python and not result.get("error"):
            result = mpirun.run_mpirun(opts, reachable, head, python, opts.timeout)
    if "comm" in checks:
        progress.note("running the all_reduce test (--comm)")
    comm_result = ranks.comm_test(carrier.ssh, hosts, facts, max(opts.timeout, 30.0)) if "comm" in checks else None
    if "perf" in checks:
        progress.note("timing compute and links (--perf)")
    perf_result = ranks.perf_test(carrier.ssh, hosts, facts, opts) if "perf" in checks else None
    return Gathered([h.host for h in hosts], conns, facts, checks, head, result, comm_result, perf=perf_result)


def ssh_request(
    opts: CheckOptions, names: list[str], checks: list[str], progress=None, proxies=None, head_path=None
) -> ProbeRequest:
    """What the full SSH gather asks the nodes `names`: probe_request's, and each node's part: the ssh logins it
    tries (the mesh), the port plan in its start order, the peers it resolves and judges trust towards, its MPI
    proxy (`proxies`: HydraManual's, one per node in order)."""
    assert isinstance(opts.mesh, str)  # CheckOptions.__post_init__ turned True/False into sample/off
    trust = "mesh" in checks and opts.mesh == "sample" and len(names) > 1
    # every node resolves (net) and judges ssh trust towards (mesh) all the others: one --peers list
    peers = names if len(names) > 1 and ("net" in checks or trust) else []
    return replace(
        probe_request(opts, head_path),
        peers=tuple(peers),
        mesh=mesh.targets(names, opts.mesh if "mesh" in checks else "off", opts.mesh_k, opts.mesh_seed),
        trust=trust,
        ports=net.plan(names, opts.port) if "port" in checks else {},
        order=tuple(net.schedule(names)),
        proxies=dict(zip(names, proxies)) if proxies else {},
        on_done=progress.update if progress else None,
    )


# --- saved facts ------------------------------------------------------------------------------------


def save_facts(g: Gathered, folder: Path) -> None:
    """<node>.json per node that answered (the probe's facts, as it prints them) and _run.json with the
    head's side (how reaching each node went, mpirun, comm), so `--facts` gives the same findings."""
    private.mkdir(folder, parents=True)
    for node, f in g.facts.items():
        if f is not None:
            private.write(folder / f"{node}.json", json.dumps(f))
    run = {
        "nodes": g.nodes,
        "conns": g.conns,
        "checks": g.checks,
        "head_mpirun": g.head_mpirun,
        "mpirun": g.mpirun,
        "comm": g.comm,
        "perf": g.perf,
        "job_env": g.job_env.to_json(),
    }
    private.write(folder / RUN_FILE, json.dumps(run, indent=1))


def read_facts(folder: Path, checks: list[str]) -> Gathered:
    """Facts saved by `--save-facts`, or collected by hand (`python3 - < probe.py > NODE.json` on each node,
    probe.py from `python -m clusterdoc.probe --payload`:
    then every node counts as reached, and what only the head saw, mpirun and comm, is not judged)."""
    facts: dict[str, dict | None] = {node: load(path, node) for node, path in node_files(folder).items()}
    run = load(folder / RUN_FILE, None) if (folder / RUN_FILE).is_file() else {}
    nodes = _names(run.get("nodes"), folder) or sorted(facts, key=natural_key)
    for n in nodes:
        facts.setdefault(n, None)
    if not nodes:
        raise UsageError(
            f"--facts {printable(folder)}: no NODE.json file in it",
            hint="save them with `clusterdoc check ... --save-facts DIR`",
        )
    ok = {"status": "ok", "message": "", "elapsed": 0.0, "exit_code": 0}
    saved_conns = run.get("conns")
    if not isinstance(saved_conns, dict):
        saved_conns = {}
    found = {n: _conn(saved_conns.get(n)) or (dict(ok) if facts[n] else None) for n in nodes}
    conns = {
        n: c or {"status": "error", "message": "no facts saved for this node", "elapsed": 0.0, "exit_code": None}
        for n, c in found.items()
    }
    if len(nodes) == 1 and conns[nodes[0]]["status"] == "local":
        checks = [c for c in checks if c not in registry.not_local()]
    return Gathered(
        nodes,
        conns,
        facts,
        checks,
        _dict(run.get("head_mpirun")),
        _dict(run.get("mpirun")),
        _dict(run.get("comm")),
        perf=_dict(run.get("perf")),
        job_env=jobenv.JobEnv.from_json(run.get("job_env")),
    )


def _names(value, folder: Path) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(n, str) and valid_name(n) for n in value):
        raise UsageError(f"{RUN_FILE}: 'nodes' must be a list of host names", where=str(folder / RUN_FILE))
    return value


def _conn(value) -> dict | None:
    if not isinstance(value, dict) or not isinstance(value.get("status"), str):
        return None
    return {
        "status": value["status"],
        "message": printable(value.get("message") or "", MAX_TEXT),
        "elapsed": value.get("elapsed") if isinstance(value.get("elapsed"), (int, float)) else 0.0,
        "exit_code": value.get("exit_code") if isinstance(value.get("exit_code"), int) else None,
    }


def _dict(value) -> dict | None:
    return escape_all(value) if isinstance(value, dict) else None
