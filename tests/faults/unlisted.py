"""Faults in no list (issue 43's last "Must show"): node faults that none of the catalog's kinds covers, each a
real act on the test cluster, each differing in how it looks from outside. Under `--retries 1` of the
checkpointing job every one must end the same way: attempt 1 fails, `why` names the node, attempt 2 runs without
it, resumed from the checkpoint, and completes. Same interface as catalog.py; kept out of the campaign's default
kinds (`make faults`): `python -m tests.faults --kinds linkdown,freeze,reboot,reject` runs them.

    linkdown  the node's interface set down inside its namespace: its ranks' sends fail (no route), its peers
              hear nothing from it (a NIC or switch port that went down; no nft drop, which is silence both ways)
    freeze    SIGSTOP to every process of the node (ranks, slurmstepd, slurmd, sshd's sessions): a hung kernel,
              nothing ends, nothing answers; thawed once the job is over
    reboot    every process of the node killed (slurmd first; its sshd daemon, the namespace holder, stays),
              its slurmd back 10 s later, empty: the node answers again. The retry still runs without it, as
              Slurm's default does (ReturnToService=1 keeps a node that rebooted unexpectedly DOWN until an admin
              resumes it; the test cluster's ReturnToService=2 takes it back at once): a node that lost a job's
              processes without a word is suspect until someone has looked at it
    reject    the node still answers SSH and srun, but every TCP connection from the other nodes to any other port
              (the store, gloo's pairs) is refused with a reset (an nft reject, not a drop)
"""

from __future__ import annotations

import os
import signal
import subprocess
import time

from tests.cluster.procs import alive, read_pid, wait_for
from tests.faults.catalog import Fault, signal_all

IP = "/usr/sbin/ip" if os.path.exists("/usr/sbin/ip") else "/sbin/ip"
NFT = "/usr/sbin/nft"


class NodeFault(Fault):
    """A node fault under --retries 1: completed by attempt 2 without the node; why of attempt 1 names it."""

    moments = ("step", "ckpt")
    backends = ("slurm", "mpirun")
    outcome = "COMPLETED"
    why = ("node", "network")
    culprit = "node"
    retried = True

    def heal(self, ctx) -> None:
        if has_slurm(ctx):  # under mpirun too: the node's slurmd went down with it
            back_in_slurm(ctx)


def in_netns(ctx, argv: list[str], stdin: str | None = None) -> subprocess.CompletedProcess:
    ns = ctx.cluster.netns(ctx.planted.node)
    return subprocess.run(["nsenter", f"--net=/run/netns/{ns}", *argv], input=stdin, capture_output=True, text=True,
                          timeout=30)  # fmt: skip


def has_slurm(ctx) -> bool:
    return bool(getattr(ctx.cluster, "use_slurm", False))


def slurmd_pid(ctx) -> int | None:
    return read_pid(ctx.cluster.slurm.dir / f"slurmd-{ctx.planted.node}.pid") if has_slurm(ctx) else None


def back_in_slurm(ctx, restart: bool = False) -> None:
    """The node idle in Slurm again (slurmd restarted where it was killed, the node resumed), or a note."""
    cl, node = ctx.cluster, ctx.planted.node
    if restart or not slurmd_pid(ctx) or not os.path.exists(f"/proc/{slurmd_pid(ctx)}"):
        cl.slurm.start_slurmd(cl.node(node), cl.holder_pid(cl.node(node)))
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        state = cl.slurm.node_states().get(node, "")
        shown = subprocess.run(["scontrol", "-o", "show", "node", node], env=ctx.env, capture_output=True,
                               text=True, timeout=20).stdout  # fmt: skip
        if state.startswith(("idle", "mix", "alloc")) and "*" not in state and "NOT_RESPONDING" not in shown:
            return
        if not state.startswith(("idle", "mix", "alloc", "compl")):
            subprocess.run(["scontrol", "update", f"NodeName={node}", "State=RESUME"], env=ctx.env,
                           capture_output=True, timeout=20)  # fmt: skip
        time.sleep(1)
    ctx.planted.note += f" {node} did not come back idle ({cl.slurm.node_states().get(node)})"


class LinkDown(NodeFault):
    name = "linkdown"

    def plant(self, ctx) -> None:
        links = in_netns(ctx, [IP, "-o", "link", "show"]).stdout.splitlines()
        ifname = next((ln.split(":")[1].strip().split("@")[0] for ln in links if ": lo:" not in ln), None)
        ctx.planted.landed = bool(ifname) and in_netns(ctx, [IP, "link", "set", "dev", ifname, "down"]).returncode == 0

    def heal(self, ctx) -> None:
        res = in_netns(ctx, [IP, "-batch", str(ctx.cluster.node_dir(ctx.planted.node) / "net.batch")])
        if res.returncode != 0:
            ctx.planted.note += f" link not back up: {res.stderr.strip()[:200]}"
        super().heal(ctx)


class Freeze(NodeFault):
    name = "freeze"

    def _pids(self, ctx) -> list[int]:
        cl, node = ctx.cluster, ctx.planted.node
        return [p for p in [slurmd_pid(ctx), cl.holder_pid(cl.node(node)), *cl.node_pids(node)] if p]

    def plant(self, ctx) -> None:
        # twice: a process forked while the first round went is stopped in the second
        ctx.planted.landed = any([signal_all(self._pids(ctx), signal.SIGSTOP) for _ in range(2)])

    def heal(self, ctx) -> None:
        slurmd = slurmd_pid(ctx)
        for pid in self._pids(ctx):
            try:
                os.kill(pid, signal.SIGCONT)
            except ProcessLookupError:
                pass
        if slurmd:  # as an admin does after a hang: slurmd restarted, it registers at
            try:  # once (a thawed one is marked not responding, then DOWN, a minute later: the next job's nodes)
                os.kill(slurmd, signal.SIGKILL)
            except ProcessLookupError:
                pass
            wait_for(lambda: not alive(slurmd), 30, "the thawed slurmd to exit")
            back_in_slurm(ctx, restart=True)


class Reboot(NodeFault):
    name = "reboot"
    down_for = 10.0  # the node's daemons are back this long after (a fast reboot)

    def plant(self, ctx) -> None:
        hit = False
        for pid in [slurmd_pid(ctx), *ctx.cluster.node_pids(ctx.planted.node)]:
            try:
                if pid:
                    os.kill(pid, signal.SIGKILL)
                    hit = True
            except ProcessLookupError:
                pass
        ctx.planted.landed = hit
        time.sleep(self.down_for)
        if has_slurm(ctx):  # back, empty: it registers with slurmctld again
            cl = ctx.cluster
            cl.slurm.start_slurmd(cl.node(ctx.planted.node), cl.holder_pid(cl.node(ctx.planted.node)))


class Reject(NodeFault):
    name = "reject"
    TABLE = "unlisted"

    def plant(self, ctx) -> None:
        cl, node = ctx.cluster, ctx.planted.node
        others = [n.addr for n in cl.nodes if n.name != node]
        keep = {22, getattr(cl, "port", 22) or 22}
        conf = (ctx.cluster.slurm.conf.read_text() if has_slurm(ctx) else "").split()
        keep |= {int(w.split("=")[1]) for w in conf if w.startswith("Port=") and w.split("=")[1].isdigit()}
        rules = (f"table inet {self.TABLE} {{\n chain input {{\n  type filter hook input priority -10; policy accept;\n"
                 f"  ip saddr {{ {', '.join(others)} }} tcp dport != {{ {', '.join(map(str, sorted(keep)))} }} "
                 "reject with tcp reset\n }\n}\n")  # fmt: skip
        res = in_netns(ctx, [NFT, "-f", "-"], stdin=rules)
        ctx.planted.landed = res.returncode == 0
        if res.returncode != 0:
            ctx.planted.note += f" nft: {res.stderr.strip()[:200]}"

    def heal(self, ctx) -> None:
        in_netns(ctx, [NFT, "delete", "table", "inet", self.TABLE])
        super().heal(ctx)


UNLISTED: dict[str, type[Fault]] = {f.name: f for f in (LinkDown, Freeze, Reboot, Reject)}
