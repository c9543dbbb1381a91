"""Command line: argument parsing and one function per subcommand.

Each `cmd_*` function parses nothing itself: it hands the parsed arguments to the module that
does the work and returns that module's exit code (0 ok, 1 problems found, 2 usage error).
User mistakes are raised as `UsageError` anywhere below and printed here, without a traceback.
"""

from __future__ import annotations

import argparse
import os
import sys

from clusterdoc import __version__
from clusterdoc.errors import UsageError

EXIT_OK, EXIT_PROBLEMS, EXIT_USAGE = 0, 1, 2


class _Parser(argparse.ArgumentParser):
    """argparse that exits 2 with one line of advice (its default is also 2, kept explicit)."""

    def error(self, message: str):  # pragma: no cover - exercised through main()
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n  (run '{self.prog} --help' for the options)\n")


class _QuietPipe:
    """stdout that stops writing once the reader has gone (`clusterdoc check | head`), so the command
    still finishes and returns its own exit code: a broken pipe must not turn a failure into 0."""

    def __init__(self, stream):
        self._stream, self.broken = stream, False

    def write(self, text):
        if not self.broken:
            try:
                return self._stream.write(text)
            except BrokenPipeError:
                self._close()
        return len(text)

    def flush(self):
        if not self.broken:
            try:
                self._stream.flush()
            except BrokenPipeError:
                self._close()

    def _close(self):
        self.broken = True
        # what is still buffered must not fail again when Python flushes stdout at exit
        os.dup2(os.open(os.devnull, os.O_WRONLY), self._stream.fileno())

    def __getattr__(self, name):
        return getattr(self._stream, name)


# --- subcommands -----------------------------------------------------------------------------


def cmd_hosts(args) -> int:
    from clusterdoc import hostfile

    return hostfile.main(args.hostfile, args.nodelist or [], args.to, args.duplicates)


def _targets(args) -> dict:
    """The shared target options (see _add_target_options) as keyword arguments."""
    return dict(
        hostfile=getattr(args, "hostfile", None),
        nodelist=args.nodelist or [],
        ssh_config=args.ssh_config,
        identity=args.identity or [],
        user=args.user,
        timeout=args.timeout,
        fanout=args.fanout,
        accept_new_host_keys=args.accept_new_host_keys,
    )


def cmd_check(args) -> int:
    from clusterdoc import doctor

    opts = doctor.CheckOptions(
        **_targets(args),
        local=args.local,
        facts_dir=args.facts,
        save_facts=args.save_facts,
        checks=args.checks,
        skip=args.skip,
        comm=args.comm,
        perf=args.perf,
        perf_mib=args.perf_mib,
        compute_fraction=args.compute_fraction,
        busbw_fraction=args.busbw_fraction,
        min_busbw=args.min_busbw,
        mesh="off" if args.no_mesh else args.mesh,
        mesh_k=args.mesh_k,
        arch_list=args.arch_list,
        mpirun=args.mpirun,
        python=args.python,
        strict=args.strict,
        verbose=args.verbose,
        port=args.port,
        env=args.env or None,
        launcher=args.launcher,
        gpus_per_node=args.gpus_per_node,
        tasks_per_node=args.tasks_per_node,
        transport=args.transport,
        partition=args.partition,
        srun_nodes=args.nodes,
        srun_options=args.srun_option or None,
        wrap=args.wrap,
    )
    if args.slurm_health and not opts.is_local:
        raise UsageError("--slurm-health judges this node: use it with --local (as slurm.conf's HealthCheckProgram)")
    if args.slurm_health and opts.gpus_per_node is None:
        from clusterdoc import slurm_health

        opts.gpus_per_node = slurm_health.gres_gpus(slurm_health.node_name())  # the GPUs Slurm schedules here
    report = doctor.check(opts)
    print(report.to_json() if args.json else report.render(), flush=True)
    if args.slurm_health:
        from clusterdoc import slurm_health

        print(f"clusterdoc slurm-health: {slurm_health.apply(report).note}", file=sys.stderr)
    return report.exit_code


def cmd_submit(args) -> int:
    from clusterdoc.launch import submit
    from clusterdoc.launch.options import SubmitOptions
    from clusterdoc.optiontable import from_args

    opts = SubmitOptions(script=args.script, script_args=args.script_args or [], **from_args(args))
    return submit.main(opts)


def cmd_status(args) -> int:
    from clusterdoc.launch import submit

    return submit.status_main(args.job, args.folder)


def cmd_logs(args) -> int:
    from clusterdoc.launch import submit

    return submit.logs_main(args.job, args.folder, args.rank)


def cmd_cancel(args) -> int:
    from clusterdoc.launch.submit import cancel_main

    return cancel_main(args.job, args.folder)


def cmd_stacks(args) -> int:
    from clusterdoc.launch.inspect import stacks_main

    return stacks_main(args.job, args.folder, full=args.full)


def cmd_why(args) -> int:
    from clusterdoc.why.main import main

    if args.job is None and args.log is None:
        raise UsageError(
            "why needs a JOB (a job id, its folder, a Slurm job id) or --log FILE",
            hint="clusterdoc why JOB, or clusterdoc why --log slurm-1234.out",
        )
    return main(
        args.job,
        args.folder,
        as_json=args.json,
        attempt=args.attempt,
        probe=not args.no_probe,
        ssh_config=args.ssh_config,
        log=args.log,
        transport=args.transport,
    )


def cmd_trace(args) -> int:
    from clusterdoc.launch.inspect import trace_main

    return trace_main(args.job, args.folder, args.output)


def cmd_build_wheel(args) -> int:
    from clusterdoc import wheel

    opts = wheel.WheelOptions(
        **_targets(args),
        arch_list=args.arch_list,
        source=args.source,
        ops=args.ops,
        aio=args.aio,
        jobs=args.jobs,
        out=args.out,
        cache=args.cache,
        install=args.install,
        wheel=args.wheel,
        no_ptx=args.no_ptx,
        dry_run=args.dry_run,
        transport=args.transport,
    )
    return wheel.build_wheel(opts, echo=True).exit_code


# --- parser ----------------------------------------------------------------------------------


def _add_transport_option(p: argparse.ArgumentParser, what: str) -> None:
    from clusterdoc.transportnames import CHOICES

    p.add_argument(
        "--transport",
        choices=list(CHOICES),
        default="auto",
        help=f"how {what} reaches the nodes: ssh, srun (a Slurm step, no SSH) or auto (default: srun inside an "
        "allocation when no nodes are named, or where SSH to every node is refused and Slurm answers)",
    )


def _add_target_options(p: argparse.ArgumentParser, hostfile_positional: bool = True) -> None:
    """Options every command that talks to nodes shares (the pdsh/clush/ssh vocabulary)."""
    if hostfile_positional:
        p.add_argument("hostfile", nargs="?", help="hostfile (MPICH, Open MPI, plain or Slurm hostlist lines)")
    p.add_argument(
        "-w",
        "--nodelist",
        metavar="EXPR",
        action="append",
        help="Slurm hostlist expression instead of a hostfile, e.g. 'gpu[001-004],cpu7'",
    )
    p.add_argument(
        "--ssh-config",
        metavar="FILE",
        help="OpenSSH client config to read (Host, HostName, Port, User, IdentityFile, UserKnownHostsFile)",
    )
    p.add_argument("-i", "--identity", metavar="KEY", action="append", help="private key file (repeatable)")
    p.add_argument("--user", "-l", metavar="USER", help="remote user (default: hostfile, ssh config, then $USER)")
    p.add_argument(
        "--timeout",
        type=float,
        default=30.0,
        metavar="SEC",
        help="per-node timeout for connecting and probing (default 30)",
    )
    p.add_argument(
        "--fanout", "-f", type=int, default=32, metavar="N", help="nodes handled at once (default 32, like pdsh)"
    )
    p.add_argument(
        "--accept-new-host-keys",
        action="store_true",
        help="accept host keys of nodes not yet in known_hosts (never a changed one), "
        "like StrictHostKeyChecking=accept-new",
    )


def build_parser() -> argparse.ArgumentParser:
    from clusterdoc import optiontable  # submit's options, each declared once
    from clusterdoc.checks import registry  # the check names, each declared once (checks/registry.py)

    parser = _Parser(
        prog="clusterdoc",
        description="A doctor for distributed PyTorch training on SLURM/MPI clusters.",
        epilog="Exit codes: 0 ok, 1 problems found, 2 usage error.",
    )
    parser.add_argument("--version", action="version", version=f"clusterdoc {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True

    # hosts
    p = sub.add_parser(
        "hosts",
        help="expand a hostfile or hostlist and print it in another form",
        description="Parse a hostfile (MPICH host[:slots], Open MPI 'host slots=N', plain, "
        "Slurm hostlist expressions, user@host, # comments) and print the hosts.",
    )
    p.add_argument("hostfile", nargs="?", help="hostfile to read ('-' for standard input)")
    p.add_argument("-w", "--nodelist", metavar="EXPR", action="append", help="Slurm hostlist expression (repeatable)")
    p.add_argument(
        "--to",
        choices=["plain", "mpich", "openmpi", "slurm", "json"],
        default="plain",
        help="output form (default plain: one host a line)",
    )
    p.add_argument(
        "--duplicates",
        choices=["merge", "refuse"],
        default="merge",
        help="a host listed twice: add its slots (merge, default) or refuse the file",
    )
    p.set_defaults(func=cmd_hosts)

    # check
    p = sub.add_parser(
        "check",
        help="check every node of a cluster for what breaks distributed training",
        description="Probe every node in parallel (one SSH round trip each) and judge the facts: "
        "ssh, mpi, kernel, cuda, arch, gpu and fabric health, consistency, and with --comm a real all_reduce. "
        "With no hostfile, checks this machine only (--local).",
    )
    _add_target_options(p)
    p.add_argument(
        "--local", action="store_true", help="check this machine only, without SSH (default with no hostfile)"
    )
    p.add_argument(
        "--facts", metavar="DIR", help="judge saved facts (DIR/NODE.json, see --save-facts) instead of probing"
    )
    p.add_argument(
        "--slurm-health",
        action="store_true",
        help="with --local, as slurm.conf's HealthCheckProgram: drain this node on a failure "
        "(Reason='clusterdoc: ...'), resume it when healthy if clusterdoc drained it (NHC's contract)",
    )
    p.add_argument("--save-facts", metavar="DIR", help="also write each node's facts to DIR (what --facts reads back)")
    p.add_argument("--json", action="store_true", help="print the result as JSON on stdout")
    p.add_argument(
        "--checks",
        metavar="LIST",
        help=f"comma-separated checks to run ({', '.join(registry.names())})",
    )
    p.add_argument(
        "--tasks-per-node",
        type=int,
        metavar="N",
        help="ranks the job will start per node: each needs a GPU of its own (nccl check)",
    )
    p.add_argument(
        "--transport",
        choices=["ssh", "srun", "auto"],
        default="auto",
        help="how the probe reaches the nodes: ssh, srun (one Slurm task per node, no SSH), or auto (default: "
        "srun inside an allocation or with --partition/--nodes, or where SSH to every node is refused and Slurm "
        "answers)",
    )
    p.add_argument("--partition", "-p", metavar="NAME", help="srun: the partition of the check's own step")
    p.add_argument("--nodes", "-N", type=int, metavar="N", help="srun: how many nodes the check's own step takes")
    p.add_argument(
        "--srun-option",
        action="append",
        metavar="OPT",
        help="more srun options, as the job's ranks get them (e.g. --srun-option=--container-image=IMG for "
        "pyxis); repeatable",
    )
    p.add_argument(
        "--wrap",
        metavar="CMD",
        help="a command prefix the probe runs under, as the job's ranks do (e.g. 'apptainer exec IMAGE.sif'): "
        "CUDA/NCCL/torch are the wrapped environment's, driver/devices/kernel the host's",
    )
    p.add_argument(
        "--gpus-per-node",
        type=int,
        metavar="N",
        help="GPUs every node must show (gpu check; default: the count most nodes show)",
    )
    p.add_argument("--skip", metavar="LIST", help="comma-separated checks to skip")
    p.add_argument(
        "--comm", action="store_true", help="also run a real torch.distributed all_reduce, one rank per node"
    )
    p.add_argument(
        "--perf",
        action="store_true",
        help="also time each node's compute (a fixed matmul) and find slow links with pair rounds "
        "(torch.distributed, one rank per node); nodes below the others are named",
    )
    p.add_argument(
        "--perf-mib",
        type=float,
        default=16.0,
        metavar="MIB",
        help="MiB each rank of a pair sends and receives per exchange (--perf; default 16)",
    )
    p.add_argument(
        "--compute-fraction",
        type=float,
        default=0.2,
        metavar="F",
        help="--perf: name nodes more than F below the median compute or memory (default 0.2)",
    )
    p.add_argument(
        "--busbw-fraction",
        type=float,
        default=0.5,
        metavar="F",
        help="--perf: a link below F x the reference busbw is slow (default 0.5)",
    )
    p.add_argument(
        "--min-busbw",
        type=float,
        metavar="GBPS",
        help="--perf: a link below GBPS Gb/s busbw is slow (instead of --busbw-fraction)",
    )
    p.add_argument(
        "--mesh",
        choices=["sample", "full", "off"],
        default="sample",
        help="node-to-node ssh: log in to --mesh-k sampled peers per node and judge every other pair "
        "from facts (sample, default), log in to every pair (full: N x N), or skip it (off)",
    )
    p.add_argument("--mesh-k", type=int, default=3, metavar="K", help="peers each node logs in to with --mesh sample")
    p.add_argument("--no-mesh", action="store_true", help="skip the node-to-node SSH test (--mesh off)")
    p.add_argument("--arch-list", metavar="LIST", help="TORCH_CUDA_ARCH_LIST to judge instead of each node's")
    p.add_argument("--mpirun", metavar="CMD", help="mpirun to use (default: mpirun on PATH)")
    p.add_argument(
        "--port",
        type=int,
        default=29500,
        metavar="PORT",
        help="rendezvous port the first node listens on during the check (default 29500, torchrun's "
        "MASTER_PORT); PORT+1 carries the sampled node-to-node TCP test",
    )
    p.add_argument(
        "--env",
        action="append",
        metavar="K=V",
        help="a variable the probe sees instead of the node's (NCCL_SOCKET_IFNAME, GLOO_SOCKET_IFNAME); repeatable; "
        "it wins over the same variable of this shell",
    )
    p.add_argument(
        "--launcher",
        choices=["auto", "slurm", "mpich", "openmpi", "local", "none"],
        default="auto",
        help="what will start the ranks, so which of this shell's NCCL_*, GLOO_SOCKET_IFNAME, CUDA_VISIBLE_DEVICES "
        "and TORCH_CUDA_ARCH_LIST reach them and are judged: slurm (--export=ALL), mpich and local pass them on, "
        "openmpi (only -x names) and none do not; auto: slurm where sbatch is here or through srun, local with "
        "--local, else the head's mpirun flavour",
    )
    p.add_argument(
        "--python",
        metavar="PATH",
        default=None,
        help="python the job's ranks run: the probe runs under it, so its torch and packages are judged "
        "(default: python3 on each node's PATH; with --local, this python)",
    )
    p.add_argument("--strict", action="store_true", help="exit 1 on warnings too")
    p.add_argument("-v", "--verbose", action="count", default=0, help="show ok findings and details")
    p.set_defaults(func=cmd_check)

    # submit
    p = sub.add_parser(
        "submit",
        help="run a training script through Slurm, mpirun or locally, after a preflight check",
        description="Run SCRIPT on N nodes with the clusterdoc shim switched on. Options go "
        "before SCRIPT; what follows it is the script's. Every option can also come "
        "from CLUSTERDOC_<OPTION> or a YAML config (flag > env > file > default).",
    )
    optiontable.add_arguments(p)  # every option, one row each (clusterdoc/optiontable.py)
    p.add_argument(
        "script",
        help="Python training script, or your own batch script (#SBATCH lines; submitted with sbatch as it is)",
    )
    p.add_argument("script_args", nargs=argparse.REMAINDER, help="arguments for the script")
    p.set_defaults(func=cmd_submit)

    p = sub.add_parser("status", help="state of a submitted job")
    p.add_argument("job", help="job id (or its log folder)")
    p.add_argument("--folder", metavar="DIR", default=None, help="log folder root (default ./clusterdoc-jobs)")
    p.set_defaults(func=cmd_status)

    p = sub.add_parser("logs", help="print a submitted job's logs")
    p.add_argument("job", help="job id (or its log folder)")
    p.add_argument("--rank", type=int, default=None, help="only this rank")
    p.add_argument("--folder", metavar="DIR", default=None, help="log folder root (default ./clusterdoc-jobs)")
    p.set_defaults(func=cmd_logs)

    p = sub.add_parser("cancel", help="stop a submitted job's ranks (any backend)")
    p.add_argument("job", help="job id (or its log folder, or a Slurm job id)")
    p.add_argument("--folder", metavar="DIR", default=None, help="log folder root (default ./clusterdoc-jobs)")
    p.set_defaults(func=cmd_cancel)

    p = sub.add_parser("stacks", help="where every rank of a running job is (grouped), without stopping it")
    p.add_argument("job", help="job id (or its log folder)")
    p.add_argument("--full", action="store_true", help="also print every rank's stacks (all threads)")
    p.add_argument("--folder", metavar="DIR", default=None, help="log folder root (default ./clusterdoc-jobs)")
    p.set_defaults(func=cmd_stacks)

    p = sub.add_parser(
        "why",
        help="why a job failed, stalled or ended: one cause with its evidence and the next step",
        description="Judge a job from its folder (exit records, tracebacks, hang report, OOM records), Slurm, "
        "and a probe of its nodes after the failure. JOB: a clusterdoc job id, its folder, or a Slurm job id "
        "(one clusterdoc did not start: its output files are read). Exit 0: the job completed; 1: it failed.",
    )
    p.add_argument(
        "job", nargs="?", default=None, help="job id, its log folder, or a Slurm job id (optional with --log)"
    )
    p.add_argument("--json", action="store_true", help="the verdict and the evidence as JSON")
    p.add_argument("--attempt", type=int, default=None, metavar="N", help="judge attempt N (default the last)")
    p.add_argument("--no-probe", action="store_true", help="do not probe the job's nodes (XIDs, ECC, lost GPUs)")
    p.add_argument("--ssh-config", metavar="FILE", default=None, help="OpenSSH config to reach the nodes")
    _add_transport_option(p, "the probe of the job's nodes")
    p.add_argument(
        "--log", metavar="FILE", default=None, help="judge this output file (a job not started by clusterdoc)"
    )
    p.add_argument("--folder", metavar="DIR", default=None, help="log folder root (default ./clusterdoc-jobs)")
    p.set_defaults(func=cmd_why)

    p = sub.add_parser("trace", help="write a job's collectives (submit --trace) as a Chrome/Perfetto trace")
    p.add_argument("job", help="job id (or its log folder)")
    p.add_argument("-o", "--output", metavar="FILE", default=None, help="where (default JOBDIR/trace.json)")
    p.add_argument("--folder", metavar="DIR", default=None, help="log folder root (default ./clusterdoc-jobs)")
    p.set_defaults(func=cmd_trace)

    # build-wheel
    p = sub.add_parser(
        "build-wheel",
        help="build a DeepSpeed wheel for exactly the cluster's GPUs, and install it",
        description="Build DeepSpeed ops ahead of time for the GPUs the cluster has.",
    )
    _add_target_options(p, hostfile_positional=False)
    p.add_argument("--hostfile", metavar="FILE", help="nodes whose GPUs set the arch list (and to --install on)")
    p.add_argument(
        "--arch-list", metavar="LIST", help="TORCH_CUDA_ARCH_LIST instead of asking the nodes, e.g. '8.0;9.0'"
    )
    p.add_argument("--source", metavar="DIR|SDIST|VERSION", help="DeepSpeed checkout, sdist, or version to fetch")
    p.add_argument("--ops", metavar="LIST", default="cpu_adam,utils", help="ops to build (default cpu_adam,utils)")
    p.add_argument("--aio", action="store_true", help="also build the async I/O op (needs libaio)")
    p.add_argument("--jobs", "-j", type=int, default=None, help="parallel compile jobs (default: cores)")
    p.add_argument("--out", metavar="DIR", default="dist", help="where the wheel and its manifest go (default dist)")
    p.add_argument("--cache", metavar="DIR", default=None, help="where downloaded sdists are kept")
    p.add_argument("--install", action="store_true", help="copy the wheel to every node and install it there")
    p.add_argument(
        "--wheel", metavar="WHEEL", help="with --install: install this wheel (made by build-wheel) instead of building"
    )
    p.add_argument(
        "--no-ptx", action="store_true", help="SASS only: no +PTX on the highest arch (newer GPUs cannot JIT-compile)"
    )
    p.add_argument("--dry-run", action="store_true", help="print the environment and commands, build nothing")
    _add_transport_option(p, "reading the nodes' GPUs and --install")
    p.set_defaults(func=cmd_build_wheel)
    return parser


def main(argv: list[str] | None = None) -> int:
    code = _main(argv)
    if argv is None:  # the program itself (not a caller in-process): its exit must not abort
        _leave_if_a_look_is_under_way(code)
    return code


def _leave_if_a_look_is_under_way(code: int) -> None:
    """A launcher's store look still inside torch's C++ (launch/watchthread.py): the interpreter's teardown would
    abort the process ("terminate called without an active exception", rc -6, whatever the job's outcome), so
    flush and leave with the outcome's code now."""
    watch = sys.modules.get("clusterdoc.launch.watchthread")
    if watch is None or not watch.look_under_way():
        return
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe: nothing more to say there
            pass
    os._exit(code)


def _main(argv: list[str] | None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    stdout = sys.stdout = _QuietPipe(sys.stdout)
    try:
        code = args.func(args)
        stdout.flush()
        return code
    except UsageError as err:
        print(f"clusterdoc {args.command}: error: {err}", file=sys.stderr)
        return EXIT_USAGE
    except PermissionError as err:  # another user's job folder or file: theirs to look at, not a crash
        from clusterdoc.untrusted import printable

        print(
            f"clusterdoc {args.command}: error: {printable(err.filename or '')}: {err.strerror or err}"
            "\n  (it belongs to another user, or is not open to you: run the command as its owner)",
            file=sys.stderr,
        )
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("clusterdoc: interrupted", file=sys.stderr)
        return 130
    finally:
        sys.stdout = stdout._stream


if __name__ == "__main__":
    raise SystemExit(main())
