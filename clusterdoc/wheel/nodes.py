"""The nodes' side: their facts (the doctor's probe, one round trip each) and installing the wheel, both through
the doctor's transports (SSH, or srun where only Slurm reaches the nodes: doctor/transports/).

Install per node: make a private temporary directory, copy the wheel there (SFTP, or a Slurm step's stdin),
install it with the node's own python (`python -m pip install --no-deps`), import it there (and run ds_report
where it is installed), clean up. Every step has a timeout; a node that fails never stops the others.

Clusters often share one environment over NFS: nodes naming the same python may be one directory, and
several `pip install --force-reinstall` into it at once break each other. So the first node of each
python path installs alone; the others go after it, and skip pip when they already see this very build
(its embedded manifest, which is unique per build, is on disk).
"""

from __future__ import annotations

import json
import shlex
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from clusterdoc.doctor import transports
from clusterdoc.doctor.transports import ProbeRequest, Transport
from clusterdoc.untrusted import MAX_TEXT, printable

INSTALL_TIMEOUT = 600.0  # pip install + import deepspeed (imports torch) + ds_report on a busy node


def gather_facts(
    carrier: Transport, nodes: list[str], timeout: float, choice: str = "ssh"
) -> tuple[Transport, dict, dict]:
    """(the transport that answered, {node: facts}, {node: problem sentence}): the doctor's one probe round trip
    per node; under `choice` auto, SSH refused by every node goes on through srun (transports.probe)."""
    carrier, names, answers = transports.probe(choice, carrier, nodes, ProbeRequest(timeout=timeout))
    facts, problems = {}, {}
    for name in names:
        a = answers[name]
        if a.facts is not None and a.status in ("ok", "local"):
            facts[name] = a.facts
        elif a.status == "ok":
            problems[name] = f"the probe gave no facts: {a.message[:200]}"
        else:
            problems[name] = printable(a.message or a.status, MAX_TEXT)
    return carrier, facts, problems


INSTALL_SCRIPT = r"""
set -u
py={py}; whl={whl}; dir=$(dirname "$whl")
trap 'rm -rf "$dir"' EXIT
have=$("$py" -c 'import hashlib, importlib.util, os
s = importlib.util.find_spec("deepspeed")
p = os.path.join(list(s.submodule_search_locations)[0], "clusterdoc-wheel.json") if s and s.submodule_search_locations else ""
print(hashlib.sha256(open(p, "rb").read()).hexdigest() if p and os.path.exists(p) else "none")' 2>/dev/null)
echo "@@pip"
if [ "$have" = {digest} ]; then
  echo "this build is already installed for $py (a shared filesystem?)"; echo "@@rc skip"
else
  "$py" -m pip install --no-deps --force-reinstall --no-index --disable-pip-version-check -q "$whl" 2>&1 | tail -n 20
  echo "@@rc ${{PIPESTATUS[0]}}"
fi
echo "@@import"
"$py" -c 'import json, os, deepspeed
from deepspeed.git_version_info import installed_ops, accelerator_name
m = os.path.join(os.path.dirname(deepspeed.__file__), "clusterdoc-wheel.json")
print(json.dumps({{"version": deepspeed.__version__, "path": os.path.dirname(deepspeed.__file__),
  "ops": sorted(k for k, v in installed_ops.items() if v), "accelerator": accelerator_name,
  "manifest": json.load(open(m)) if os.path.exists(m) else None}}))' 2>&1 | tail -n 20
echo "@@rc ${{PIPESTATUS[0]}}"
echo "@@ds_report"
dsr="$(dirname "$py")/ds_report"
if [ -x "$dsr" ]; then "$dsr" >/dev/null 2>&1; echo "@@rc $?"; else echo "@@rc missing"; fi
"""  # noqa: E501 (a shell script with python -c code: its lines stay as the node runs them)


@dataclass
class InstallResult:
    host: str
    python: str = ""
    copied: bool = False
    installed: bool = False
    shared: bool = False  # found this very build already there: pip was skipped
    imported: bool = False
    ds_report: str = "-"  # "ok" | "failed" | "missing" | "-"
    version: str = ""
    ops: list | None = None
    manifest_ok: bool = False
    message: str = ""

    @property
    def ok(self) -> bool:
        return self.installed and self.imported and self.manifest_ok and self.ds_report != "failed"


def parse_sections(text: str) -> dict[str, tuple[str | None, list[str]]]:
    """'@@name' ... '@@rc N' blocks -> {name: (rc, lines)}."""
    out: dict[str, tuple[str | None, list[str]]] = {}
    name: str | None = None
    lines: list[str] = []
    for line in text.splitlines():
        if line.startswith("@@rc "):
            if name:
                out[name] = (line[5:].strip(), lines)
            name, lines = None, []
        elif line.startswith("@@"):
            name, lines = line[2:].strip(), []
        elif name:
            lines.append(line)
    return out


def judge_install(host: str, python: str, text: str, expected: dict) -> InstallResult:
    res = InstallResult(host, python, copied=True)
    sec = parse_sections(text)
    rc, lines = sec.get("pip", (None, []))
    res.installed = rc in ("0", "skip")
    res.shared = rc == "skip"
    if not res.installed:
        res.message = "pip install failed: " + (lines[-1] if lines else "no output")
        return res
    rc, lines = sec.get("import", (None, []))
    info = None
    for line in lines:
        if line.startswith("{"):
            try:
                info = json.loads(line)
            except ValueError:
                pass
    res.imported = rc == "0" and info is not None
    if not res.imported or info is None:
        res.message = "import deepspeed failed: " + (lines[-1] if lines else "no output")
        return res
    res.version, res.ops = info.get("version", ""), info.get("ops") or []
    manifest = info.get("manifest")
    res.manifest_ok = manifest == expected
    if not manifest:
        res.message = "the installed deepspeed carries no clusterdoc-wheel.json"
    elif not res.manifest_ok:
        res.message = "the installed deepspeed carries another build's clusterdoc-wheel.json"
    rc, _ = sec.get("ds_report", ("-", []))
    reports: dict[str | None, str] = {"0": "ok", "missing": "missing", "-": "-"}
    res.ds_report = reports.get(rc, "failed")
    if res.ds_report == "failed" and not res.message:
        res.message = f"ds_report exited {rc}"
    return res


def install_one(
    carrier: Transport, host: str, wheel: Path, python: str, timeout: float, expected: dict, digest: str
) -> InstallResult:
    res = InstallResult(host, python)
    mk = carrier.run([host], "mktemp -d /tmp/clusterdoc-wheel.XXXXXX", timeout)[host]
    if not mk.ok or not mk.stdout.strip().startswith("/tmp/clusterdoc-wheel."):
        res.message = mk.message or f"mktemp failed: {mk.stderr.strip()[:200]}"
        return res
    folder = mk.stdout.strip().splitlines()[0]
    target = f"{folder}/{wheel.name}"
    put = carrier.put(host, wheel, target, timeout)
    if put.status != "ok":
        carrier.run([host], f"rm -rf {shlex.quote(folder)}", timeout)
        res.message = f"copy failed: {put.message}"
        return res
    script = INSTALL_SCRIPT.format(py=shlex.quote(python), whl=shlex.quote(target), digest=shlex.quote(digest))
    run = carrier.run([host], "bash -s", max(timeout, INSTALL_TIMEOUT), stdin=script.encode())[host]
    if run.status != "ok":
        res.copied = True
        res.message = run.message
        return res
    return judge_install(host, python, run.stdout, expected)


def install_all(
    carrier: Transport,
    hosts: list[str],
    wheel: Path,
    pythons: dict[str, str],
    timeout: float,
    expected: dict,
    digest: str,
    fanout: int = 32,
) -> list[InstallResult]:
    """Install everywhere: first one node per python path (in parallel), then all the others."""
    firsts, seen = [], set()
    for h in hosts:
        py = pythons.get(h) or "python3"
        if py not in seen:
            seen.add(py)
            firsts.append(h)
    rest = [h for h in hosts if h not in firsts]
    results: dict[str, InstallResult] = {}
    with ThreadPoolExecutor(max_workers=max(1, min(fanout, len(hosts)))) as pool:
        for batch in (firsts, rest):
            futures = {
                h: pool.submit(install_one, carrier, h, wheel, pythons.get(h) or "python3", timeout, expected, digest)
                for h in batch
            }
            results.update({name: f.result() for name, f in futures.items()})
    return [results[h] for h in hosts]
