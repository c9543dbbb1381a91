"""`clusterdoc build-wheel`: arch list -> preflight -> build -> verify -> manifest -> install.

Exit codes: 0 built (and installed everywhere with --install), 1 a preflight failure, a failed build,
a missing op or a node that did not take the wheel, 2 bad input (raised as UsageError).
"""

from __future__ import annotations

import contextvars
import hashlib
import os
import platform
import re
import shlex
import shutil
import sys
import time
import zipfile
from pathlib import Path
from typing import TYPE_CHECKING

from clusterdoc import gpuarch as coverage
from clusterdoc.checks import FAIL
from clusterdoc.checks import cuda as cuda_check
from clusterdoc.checks.arch import covers, parse_arch_entries
from clusterdoc.errors import UsageError
from clusterdoc.tables import cap_str, format_arch_list
from clusterdoc.untrusted import printable
from clusterdoc.wheel import archlist, build, manifest, preflight
from clusterdoc.wheel.options import WheelOptions, WheelResult
from clusterdoc.wheel.preflight import Finding

if TYPE_CHECKING:  # doctor.payload imports wheel.fatbin: the transports are imported where used (_probe)
    from clusterdoc.doctor.transports.base import Transport

EXIT_OK, EXIT_PROBLEMS = 0, 1

# The run in progress: out() records its lines (and prints them when echo is on).
_RUN: contextvars.ContextVar[tuple[WheelResult, bool]] = contextvars.ContextVar("wheel_run")


def out(text: str = "") -> None:
    """Print; lines quote what nodes sent (install output, facts), so each is escaped (untrusted.py)."""
    lines = [printable(line) for line in str(text).split("\n")]
    result, echo = _RUN.get((WheelResult(), True))
    result.lines += lines
    if echo:
        print("\n".join(lines), flush=True)


def build_wheel(opts: WheelOptions, echo: bool = False) -> WheelResult:
    """Arch list -> preflight -> build -> verify -> manifest -> install, as `clusterdoc build-wheel`.
    `echo`: print as it goes (the CLI); the lines are in the result either way."""
    result = WheelResult()
    token = _RUN.set((result, echo))
    try:
        result.exit_code = _run(opts, result)
    finally:
        _RUN.reset(token)
    return result


def shell_value(value: str) -> str:
    """KEY=value as a shell would take it: bare when safe, else in double quotes ("8.0;9.0+PTX")."""
    if re.fullmatch(r"[\w@%+=:,./-]+", value) and "+" not in value[:1]:
        return value if ";" not in value else f'"{value}"'
    return '"' + re.sub(r'(["\\$`])', r"\\\1", value) + '"'


def print_findings(title: str, findings: list[Finding]) -> None:
    out(title)
    for f in findings:
        out(f"  {f.status.upper():<5} {f.message}")
        if f.fix and f.status != "ok":
            out(f"        fix: {f.fix}")


# --- 1. arch list ------------------------------------------------------------------------------------


def derive_arch_list(arch_list: str | None, facts: dict) -> tuple[list, str, dict, list[Finding]]:
    """(archs, where they came from, {node: [capability]}, findings about the nodes: a node whose GPUs are
    unknown (malformed facts) is a fail, the others' GPUs still decide or are checked)."""
    found, per_host, unknown = archlist.archs_from_facts(facts)
    findings = [
        preflight.fail(f"{host}: {why}", "fix the node (clusterdoc check shows it), or leave it out of the hostfile")
        for host, why in unknown.items()
    ]
    if not arch_list:
        return found, "nodes", per_host, findings
    archs = archlist.parse_arch_list(arch_list)
    entries, _ = parse_arch_entries(format_arch_list(archs))
    for host, caps in per_host.items():
        for cap in sorted(set(caps)):
            how = covers(entries, tuple(int(x) for x in cap.split(".")))
            if how is None:
                findings.append(
                    preflight.fail(
                        f"{host} has a GPU of capability {cap}, which --arch-list {arch_list} does not cover: "
                        "DeepSpeed's kernels would fail there with 'no kernel image is available'",
                        f"add {cap} to --arch-list, or leave --arch-list out to take it from the nodes",
                    )
                )
            elif how == "ptx":
                findings.append(
                    preflight.warn(
                        f"{host}'s {cap} is covered only through PTX JIT (slow first start)",
                        f"add {cap} to --arch-list",
                    )
                )
    return archs, "--arch-list", per_host, findings


def describe_gpus(per_host: dict) -> str:
    groups: dict[str, list[str]] = {}
    for host, caps in per_host.items():
        key = ",".join(sorted(set(caps))) or "no GPU"
        groups.setdefault(key, []).append(host)

    def order(item):  # by capability as numbers ("10.0" after "9.0"); nodes without GPUs last
        return [tuple(map(int, c.split("."))) for c in item[0].split(",") if c[0].isdigit()] or [(999,)]

    return "; ".join(f"{', '.join(hosts)}: {key}" for key, hosts in sorted(groups.items(), key=order))


# --- 2. preflight ------------------------------------------------------------------------------------


def build_host_facts(timeout: float = 40.0) -> dict:
    """This machine's facts. Generous timeouts: a busy build host may take long to import torch, and
    nothing here waits on a remote node."""
    from clusterdoc import probe

    return probe.gather(timeout=timeout)


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def run_preflight(
    host: dict, archs: list, ops: list[str], aio: bool, env: dict, per_host: dict | None = None
) -> tuple[list[Finding], dict]:
    """All build-host findings, and the facts the manifest records about the toolchain."""
    findings: list[Finding] = []
    nvcc = host.get("nvcc")
    checked = archlist.check_against_nvcc(archs, nvcc)
    if checked.refused and nvcc:  # (only an nvcc refuses)
        buildable = archlist.nvcc_buildable(nvcc) or []
        whose = [
            f"{a} ({', '.join(h for h, caps in (per_host or {}).items() if a in caps)})"
            if any(a in caps for caps in (per_host or {}).values())
            else a
            for a in checked.refused
        ]
        findings.append(
            preflight.fail(
                f"nvcc {nvcc.get('version')} ({nvcc.get('home') or nvcc.get('path')}) cannot build "
                f"{', '.join(whose)}" + (f"; it builds {archlist.describe_buildable(buildable)}" if buildable else ""),
                f"build on a host with a CUDA toolkit that supports {', '.join(checked.refused)} "
                "(put its bin/ first on PATH or set CUDA_HOME), or leave those GPUs out with --arch-list",
            )
        )
    findings += [
        preflight.warn(w, "build a separate wheel for the old GPUs if the others need BF16")
        for w in checked.warnings
        if "BF16" in w
    ]
    findings += [preflight.warn(w) for w in checked.warnings if "BF16" not in w]
    findings += preflight.torch_rules(host, ops)
    findings += preflight.cuda_rules(host, cuda_check.check("build host", host), ops)
    home = (nvcc or {}).get("home")
    compiler, how = preflight.nvcc_host_compiler(env, home)
    version = preflight.compiler_version(compiler) if compiler else None
    findings += preflight.gcc_rule(
        nvcc,
        host.get("toolkits") or [],
        compiler,
        how,
        version,
        [g for g in preflight.installed_gccs() if g != compiler],
    )
    if aio:
        links, detail = preflight.libaio_links(env.get("CC") or "gcc")
        findings += preflight.aio_rule(links, detail, preflight.package_hint())
    toolchain = {
        "nvcc": {"version": (nvcc or {}).get("version"), "path": (nvcc or {}).get("path"), "home": home}
        if nvcc
        else None,
        "gcc": {"path": compiler, "version": version, "chosen_by": how},
    }
    return findings, toolchain


# --- 3-4. build and verify ---------------------------------------------------------------------------


def _run(args: WheelOptions, result: WheelResult) -> int:
    ops = build.parse_ops(args.ops, aio=args.aio)
    jobs = args.jobs or build.default_jobs()
    if jobs < 1:
        raise UsageError(f"--jobs must be at least 1, got {jobs}")
    hosts = args.hosts() if args.given else allocation_hosts(args)
    if args.install and not hosts:
        raise UsageError("--install needs the nodes", hint="give --hostfile FILE or -w/--nodelist EXPR")
    if args.wheel:
        if not args.install:
            raise UsageError("--wheel is the wheel to install", where="--wheel", hint="add --install and the nodes")
        return _install_prebuilt(args, hosts)
    if not args.arch_list and not hosts:
        raise UsageError(
            "no arch list and no nodes to take it from",
            hint='give --hostfile FILE (the GPUs of its nodes decide) or --arch-list "8.0;9.0"',
        )
    if args.arch_list:
        archlist.parse_arch_list(args.arch_list)  # bad input: exit 2 before touching any node
    cache = build.cache_dir(args.cache)
    source = build.resolve_source(args.source, cache)
    python = sys.executable
    out_dir = Path(args.out).resolve()

    # nodes: their GPUs decide the arch list; their pythons take the wheel
    facts: dict[str, dict] = {}
    carrier = None
    if hosts:
        carrier, probed = _probe(args, hosts, "take the wheel" if args.arch_list else "know its GPUs")
        if probed is None:
            return EXIT_PROBLEMS
        facts = probed

    archs, arch_source, per_host, node_findings = derive_arch_list(args.arch_list, facts)
    if not archs:
        if node_findings:
            print_findings("the nodes:", node_findings)
        out(f"no GPU on any node ({describe_gpus(per_host)}): there is nothing to build CUDA code for")
        out('  fix: check nvidia-smi on the nodes (clusterdoc check), or give --arch-list "8.0;9.0" to build anyway')
        return EXIT_PROBLEMS
    arch_list = format_arch_list(archs).replace("+PTX", "") if args.no_ptx else format_arch_list(archs)
    result.arch_list, result.arch_source = arch_list, arch_source
    out(f"arch list: {arch_list}  (from {arch_source}" + (f"; GPUs: {describe_gpus(per_host)})" if per_host else ")"))

    host = build_host_facts()
    env = dict(os.environ)
    findings, toolchain = run_preflight(host, archs, ops, args.aio, env, per_host)
    findings = node_findings + findings
    result.findings = findings
    missing_deps = preflight.missing_build_deps(python)
    if missing_deps:
        findings.append(Finding("ok", f"build requirements to install into {python}: {' '.join(missing_deps)}"))
    else:
        findings += preflight.ninja_rule(preflight.find_ninja(python, env), python)
    print_findings(f"preflight on {host.get('hostname')} (python {python}):", findings)
    failed = [f for f in findings if f.status == FAIL]

    accelerator = "cuda"  # the wheel is for GPU nodes, whatever the build host has (see build.build_env)
    added = build.build_env(arch_list, ops, jobs, accelerator, env)
    result.env = dict(added)
    work = out_dir / ".clusterdoc-build"
    log_path = out_dir / "build.log"
    dist_tmp = work / "dist"
    cmd = build.build_command(python, jobs, dist_tmp)

    if args.dry_run:
        result.commands = plan(added, python, missing_deps, source, cache, work, cmd, log_path, out_dir)
        out("dry run: nothing is built. Environment and commands:")
        out("\n".join(result.commands))
        return EXIT_PROBLEMS if failed else EXIT_OK
    if failed:
        out(f"{len(failed)} problem(s) found: nothing was built")
        return EXIT_PROBLEMS

    out_dir.mkdir(parents=True, exist_ok=True)
    log_path.write_text("")

    def log(text: str) -> None:
        out(text)
        _append(log_path, text)

    if missing_deps:
        code = build.run_logged(
            [python, "-m", "pip", "install", *missing_deps], out_dir, env, log_path, "installing build requirements"
        )
        if code != 0:
            out(f"installing the build requirements failed (exit {code}); log: {log_path}")
            out(build.log_tail(log_path, 10))
            return EXIT_PROBLEMS
        ninja = preflight.ninja_rule(preflight.find_ninja(python, env), python)
        if ninja[0].status == FAIL:
            print_findings("after installing the build requirements:", ninja)
            return EXIT_PROBLEMS
    sdist = build.fetch(source, python, log) if source.kind == "version" else source.path
    tree = build.prepare_tree(source, sdist, work)
    build_env = dict(env, **added)
    build_env["PATH"] = os.path.dirname(python) + os.pathsep + env.get("PATH", "")
    out(f"building DeepSpeed from {sdist or source.path} (ops {', '.join(ops)}, -j{jobs}); log: {log_path}")
    start = time.monotonic()
    code = build.run_logged(cmd, tree, build_env, log_path, "building DeepSpeed")
    log_text = log_path.read_text(errors="replace")
    wheels = sorted(dist_tmp.glob("deepspeed-*.whl")) if dist_tmp.is_dir() else []
    if code != 0 or not wheels:
        out(f"the build failed (exit {code}) after {time.monotonic() - start:.0f}s; the end of {log_path}:")
        out(build.log_tail(log_path))
        cause = build.likely_cause(log_text)
        out(f"likely cause: {cause}" if cause else "likely cause: unknown; read the first 'error' in the log")
        return EXIT_PROBLEMS
    wheel = result.wheel = out_dir / wheels[-1].name
    os.replace(wheels[-1], wheel)
    shutil.rmtree(work, ignore_errors=True)
    out(f"built {wheel} in {time.monotonic() - start:.0f}s")

    built, missing = manifest.verify_ops(manifest.wheel_names(wheel), ops)
    info = manifest.installed_info(wheel)
    for op, path in built.items():
        out(f"  ok    {op}: {path}")
    if missing:
        for op in missing:
            out(f"  FAIL  {op}: not in the wheel: {manifest.skip_reason(op, log_text, info.get('accelerator_name'))}")
        out(f"the wheel lacks requested ops; it stays at {wheel} but was not installed")
        return EXIT_PROBLEMS

    archs_found = check_binary_archs(wheel, archs, archlist.nvcc_buildable(host.get("nvcc")))
    if archs_found is None:
        return EXIT_PROBLEMS
    torch = host.get("torch") or {}
    record = manifest.make_manifest(
        wheel=wheel,
        arch_list=arch_list,
        arch_source=arch_source,
        gpus=per_host,
        ops=ops,
        built=built,
        info=info,
        build_host={
            "hostname": host.get("hostname"),
            "python": (host.get("python") or {}).get("version"),
            "torch_version": torch.get("version"),
            "torch_cuda": torch.get("cuda"),
            "nvcc": toolchain["nvcc"],
            "gcc": toolchain["gcc"],
            "cpu": cpu_model(),
        },
        jobs=jobs,
        source=str(sdist or source.path),
        archs=archs_found,
    )
    digest = manifest.embed(wheel, record)
    beside = manifest.write_beside(wheel, record)
    out(f"manifest: {beside} (also inside the wheel as deepspeed/{manifest.MANIFEST_NAME})")

    if not args.install:
        return EXIT_OK
    assert carrier is not None  # --install needs the nodes (checked above): they were probed
    return install(carrier, args, hosts, wheel, facts, record, digest)


def read_binary_archs(wheel: Path) -> tuple[dict, list[str]]:
    """manifest.binary_archs, said: one line per CUDA extension, one FAIL per binary that could not be read."""
    found, problems = manifest.binary_archs(wheel)
    for path, a in found.items():
        out(f"  archs {os.path.basename(path).split('.')[0]}: {manifest.describe_archs(a)} (read from the binary)")
    for problem in problems:
        out(f"  FAIL  {problem}")
    return found, problems


def check_binary_archs(wheel: Path, archs: list, buildable: list | None) -> dict | None:
    """The SASS and PTX of each CUDA extension, read from the binaries, checked against the arch list asked for
    (None: a capability without SASS in a binary, or a binary that could not be read). `buildable`: what the
    build's nvcc can build, for the note on newer GPUs."""
    found, problems = read_binary_archs(wheel)
    missing = [
        f"{path}: {cap_str(cap)}"
        for path, a in found.items()
        for cap in archs
        if coverage.covered_by(cap, a["sass"], a["ptx"]) != "sass"
    ]
    for line in missing:
        out(f"  FAIL  asked for but not in the binary: {line}")
    if problems or missing:
        out(f"the wheel's binaries could not be read or lack what was asked; it stays at {wheel}, not installed")
        return None
    note = coverage.future_note(found, max(buildable) if buildable else None)
    if note:
        out(f"  WARN  {note}")
    return found


def carrier_for(args: WheelOptions) -> Transport:
    """The transport to the nodes, chosen by name where the doctor chooses it (doctor/transports.resolve)."""
    from clusterdoc.doctor import transports

    name = transports.resolve(args.transport, given=args.given)
    if name == "srun":
        return transports.SrunTransport(fanout=args.fanout)
    return transports.SSHTransport(args.hosts(), args.ssh_options(), fanout=args.fanout)


def allocation_hosts(args: WheelOptions) -> list:
    """No nodes named: inside an allocation (--transport auto or srun), its nodes, as `clusterdoc check` takes them."""
    from clusterdoc.doctor import srun, transports
    from clusterdoc.hostfile import Host

    if transports.resolve(args.transport, given=False) != "srun":
        return []
    return [Host(n) for n in srun.allocation_nodes()]


def _probe(args: WheelOptions, hosts: list, purpose: str) -> tuple[Transport, dict[str, dict] | None]:
    """The transport that reached the nodes and every node's facts, or None (each silent node said) when one did
    not answer."""
    from clusterdoc.wheel import nodes

    out(f"probing {len(hosts)} node(s) ...")
    carrier, facts, problems = nodes.gather_facts(carrier_for(args), [h.host for h in hosts], args.timeout,
                                                  args.transport)  # fmt: skip
    if carrier.name != "ssh":
        out(f"  (through {carrier.name}: no SSH to the nodes)")
    if not problems:
        return carrier, facts
    for host, why in problems.items():
        out(f"  FAIL  {host}: {why}")
    out(f"every node must answer to {purpose}; fix them (clusterdoc check shows why) or leave them out of the hostfile")
    return carrier, None


def _install_prebuilt(args: WheelOptions, hosts: list) -> int:
    """--install --wheel: a wheel build-wheel made before (its manifest inside), its archs read again from the
    binaries, judged against every node's GPUs before it is copied anywhere."""
    wheel = Path(args.wheel or "").resolve()
    if not wheel.is_file() or not zipfile.is_zipfile(wheel):
        raise UsageError(f"{args.wheel}: not a wheel file", where="--wheel")
    record = manifest.read_embedded(wheel)
    if not isinstance(record, dict):
        raise UsageError(
            f"{wheel.name} carries no deepspeed/{manifest.MANIFEST_NAME}: it was not made by clusterdoc build-wheel",
            where="--wheel",
            hint="build it with clusterdoc build-wheel (it records what it built), or install it with pip",
        )
    with zipfile.ZipFile(wheel) as z:
        digest = hashlib.sha256(z.read(f"deepspeed/{manifest.MANIFEST_NAME}")).hexdigest()
    found, problems = read_binary_archs(wheel)
    if problems:
        return EXIT_PROBLEMS
    carrier, facts = _probe(args, hosts, "take the wheel")
    if facts is None:
        return EXIT_PROBLEMS
    return install(carrier, args, hosts, wheel, facts, dict(record, binary_archs=found), digest, record)


def _append(path: Path, text: str) -> None:
    with open(path, "a") as f:
        f.write(text + "\n")


def plan(added, python, missing_deps, source, cache, work, cmd, log_path, out_dir) -> list[str]:
    """The dry run's shell lines: the environment, then the commands, in order."""
    lines: list[str] = []
    out = lines.append
    for key, value in added.items():
        out(f"export {key}={shell_value(value)}")
    out(f"export PATH={shell_value(os.path.dirname(python))}:$PATH")
    if missing_deps:
        out(" ".join(shlex.quote(x) for x in [python, "-m", "pip", "install", *missing_deps]))
    if source.kind == "version":
        sdist = build.cached_sdist(cache, source.version)
        if sdist:
            out(f"# cached: {sdist}")
        else:
            sdist = cache / f"deepspeed-{source.version}.tar.gz"
            out(" ".join(shlex.quote(x) for x in build.download_command(python, source.version, cache)))
        out(f"mkdir -p {shlex.quote(str(work))} && tar -xzf {shlex.quote(str(sdist))} -C {shlex.quote(str(work))}")
        tree = work / f"deepspeed-{source.version}"
    elif source.kind == "sdist":
        out(
            f"mkdir -p {shlex.quote(str(work))} && tar -xzf {shlex.quote(str(source.path))} -C {shlex.quote(str(work))}"
        )
        tree = work / re.sub(r"\.(tar\.gz|zip)$", "", source.path.name)
    else:
        out(f"cp -a {shlex.quote(str(source.path))} {shlex.quote(str(work))}/")
        tree = work / source.path.name
    out(f"cd {shlex.quote(str(tree))}")
    out(" ".join(shlex.quote(x) for x in cmd) + f" > {shlex.quote(str(log_path))} 2>&1")
    out(f"# then: check every requested op's extension is in the wheel, write {out_dir}/{manifest.MANIFEST_NAME}")
    return lines


# --- 5. install --------------------------------------------------------------------------------------


def install(
    carrier: Transport,
    args: WheelOptions,
    hosts: list,
    wheel: Path,
    facts: dict,
    record: dict,
    digest: str,
    expected: dict | None = None,
) -> int:
    """Refuse (nothing installed anywhere) when a node's GPU cannot run the wheel's binaries, then install.
    `expected`: the manifest the nodes must end up with (default `record`)."""
    from tabulate import tabulate

    from clusterdoc.wheel import nodes

    gpus = {h: (facts.get(h) or {}).get("gpus") or [] for h in facts}
    refused = coverage.refusals(gpus, record.get("binary_archs") or {})
    if refused:
        for line in refused:
            out(f"  FAIL  {line}")
        out(f"{len(refused)} GPU kind(s) cannot run this wheel: nothing was installed on any node")
        return EXIT_PROBLEMS
    pythons = {h: ((f.get("python") or {}).get("executable") or "python3") for h, f in facts.items()}
    names = [h.host for h in hosts]
    out(f"installing {wheel.name} on {len(names)} node(s) ...")
    results = nodes.install_all(
        carrier, names, wheel, pythons, args.timeout, expected or record, digest, fanout=args.fanout
    )
    rows = []
    for r in results:
        notes = [r.message] if r.message else []
        notes += ["already there (shared filesystem): pip skipped"] if r.shared else []
        notes += runtime_notes(facts.get(r.host) or {}, record)
        rows.append(
            [
                r.host,
                r.python,
                "ok" if r.installed else "FAIL",
                "ok" if r.imported else ("-" if not r.installed else "FAIL"),
                r.ds_report,
                ",".join(r.ops or []) or "-",
                "; ".join(notes),
            ]
        )
    out(tabulate(rows, headers=["node", "python", "install", "import", "ds_report", "ops", "note"]))
    bad = [r.host for r in results if not r.ok]
    if bad:
        out(f"{len(bad)} node(s) did not take the wheel: {', '.join(bad)}")
        return EXIT_PROBLEMS
    out(f"installed and imported on all {len(results)} node(s)")
    return EXIT_OK


def runtime_notes(node: dict, record: dict) -> list[str]:
    """What the node's own torch means for the prebuilt ops (DeepSpeed falls back to JIT when they don't fit)."""
    notes = []
    torch = node.get("torch") or {}
    built = (record.get("torch") or {}).get("version") or ""
    if torch.get("version") and built and torch["version"].split(".")[:2] != built.split(".")[:2]:
        notes.append(f"torch {torch['version']} here vs {built} at build: DeepSpeed will not load the prebuilt ops")
    if torch and not torch.get("cuda") and record.get("accelerator") == "cuda":
        notes.append("torch here is CPU-only: the prebuilt ops are for the CUDA accelerator")
    return notes
