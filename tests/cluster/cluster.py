"""The one-machine test cluster: N SSH nodes in their own namespaces and network, plus a real Slurm.

    c = Cluster(".cluster", nodes=4)
    c.up()            # starts, or notices it is already running
    c.nodes           # [Node(name="node1", addr="198.18.0.2"), ...]; c.head_addr: "198.18.0.1"
    with c.planted({"node2": {"kernel": "5.4.0-150-generic"}}): ...
    c.down()          # no process, mount, namespace or interface left behind

Everything lives in the cluster dir; nothing is written to ~/.ssh or /etc. Outside it: /run/sshd (sshd needs
it for privilege separation), /run/netns/PREFIX-nodeN (one per node, made by `ip netns`), the bridge PREFIXbr
and the host ends of the veths PREFIXvN (net.py: the address plan and why no packet leaves the machine), and for
a node planted with cpu_quota the cgroup /sys/fs/cgroup/cpu/PREFIX-nodeN (limits.py).
"""
from __future__ import annotations

import contextlib
import fcntl
import json
import os
import resource
import shlex
import shutil
import signal
import socket
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from . import limits, net
from . import spec as specs
from .fakes import REPO, StubLibs, realise, write
from .nodes import Node, make_nodes, memlock, remount, ssh_client_config, start, write_node_files
from .procs import (ClusterError, alive, all_pids, args, cmdline, exe_name, kill_all, listeners, mnt_ns, net_ns,
                    read_pid, tail, wait_for, free_ports)
from .site import PACKAGES as SITE_PACKAGES
from .site import Site, missing_site_tools
from .slurm import Slurm

MPIRUN = "/usr/bin/mpirun.mpich"
REQUIRED = {"sshd": "/usr/sbin/sshd", "ssh": "/usr/bin/ssh", "ssh-keygen": "/usr/bin/ssh-keygen",
            "unshare": "/usr/bin/unshare", "nsenter": "/usr/bin/nsenter", "ip": net.IP, "nft": "/usr/sbin/nft",
            "prlimit": "/usr/bin/prlimit"}
REQUIRED_SLURM = {"munged": "/usr/sbin/munged", "slurmctld": "/usr/sbin/slurmctld", "slurmd": "/usr/sbin/slurmd",
                  "srun": "/usr/bin/srun"}
DAEMONS = {"sshd", "ssh", "munged", "slurmctld", "slurmd", "slurmstepd", "unshare", "nsenter", "sleep",
           "hydra_pmi_proxy", "mpiexec.hydra", "mpirun.mpich", "mpiexec.mpich", "mariadbd", "slurmdbd"}
FORBIDDEN_PARENTS = ("/usr/local", "/etc", "/usr/bin", "/root/.ssh", "/proc")


def default_dir() -> Path:
    return Path(os.environ.get("CLUSTERDOC_CLUSTER_DIR") or REPO / ".cluster")


def missing_tools(slurm: bool = True, site: bool = False) -> list[str]:
    need = dict(REQUIRED, **(dict(REQUIRED_SLURM, mpirun=MPIRUN) if slurm else {}))
    return sorted([name for name, path in need.items() if not os.access(path, os.X_OK)]
                  + (missing_site_tools() if site else []))


PORTS_PER_BLOCK = 1000  # Slurm ports of one cluster: 32 address blocks x 1000 from 17000 stay under 60000


def ports_from(block: int) -> int:
    """Where a cluster's search for free Slurm ports starts: its address block's own range. Searched from 17000
    by every cluster, a cluster whose slurmctld was stopped for a while (issue 43's campaign, test_slurm_faults)
    found its port taken by another cluster's new slurmctld, and its own could not come back."""
    return 17000 + PORTS_PER_BLOCK * block


class Cluster:
    def __init__(self, directory: Path | str | None = None, nodes: int | None = None,
                 spec: Path | str | None = None, slurm: bool | None = None, port: int | None = None,
                 site: bool | None = None, min_job_age: int | None = None):
        """site: a real site's Slurm (slurmdbd on MariaDB, associations, QOS, Lmod modules: site.py);
        min_job_age: slurmctld's MinJobAge in seconds (None: Slurm's 300)."""
        self.dir = Path(directory or default_dir()).absolute()
        if any(str(self.dir) == p or str(self.dir).startswith(p + "/") for p in FORBIDDEN_PARENTS):
            raise ClusterError(f"{self.dir}: a cluster dir cannot live under a path the nodes mount over")
        self.slurm = Slurm(self.dir)
        self.site = Site(self.dir)
        state = self._state() or {}
        # What was asked for wins for `up`; otherwise an existing cluster's facts (so `down`/`status` need
        # only the dir).
        self.count = nodes if nodes is not None else state.get("nodes", 4)
        self.use_slurm = slurm if slurm is not None else state.get("slurm", True)
        self.use_site = site if site is not None else state.get("site", False)
        if self.use_site and not self.use_slurm:
            raise ClusterError("a site cluster is a Slurm cluster: --site and --no-slurm do not go together")
        self.min_job_age = min_job_age if min_job_age is not None else state.get("min_job_age")
        if self.min_job_age is not None and not (isinstance(self.min_job_age, int) and 2 <= self.min_job_age
                                                 <= 86400):
            raise ClusterError(f"min_job_age: expected seconds from 2 to 86400, got {self.min_job_age!r}")
        self.spec_given = spec is not None
        self.spec_path = Path(spec).absolute() if spec else Path(state.get("spec") or specs.DEFAULT_SPEC)
        self.want_port = port
        self.port = port or state.get("port", 22)
        self.prefix = net.prefix_for(self.dir)  # names of the bridge, veths and namespaces
        self.block = (state.get("net") or {}).get("block", 0)
        self.nodes: list[Node] = make_nodes(self.count, self.block)
        self.mpirun = MPIRUN

    # ------------------------------------------------------------ paths
    ssh_config = property(lambda self: self.dir / "ssh_config")
    key = property(lambda self: self.dir / "id_ed25519")
    known_hosts = property(lambda self: self.dir / "known_hosts")
    ssh_wrapper = property(lambda self: self.dir / "bin" / "ssh")  # `ssh -F ssh_config`, for mpirun / pdsh
    state_file = property(lambda self: self.dir / "cluster.json")

    head_addr = property(lambda self: net.addr_of(self.block, 0))  # the head's address on the bridge
    bridge = property(lambda self: net.bridge_name(self.prefix))

    def netns(self, node: Node | str) -> str:
        """The node's network namespace (`ip netns exec NAME ...`, /run/netns/NAME)."""
        return net.netns_name(self.prefix, node if isinstance(node, str) else node.name)

    def node_dir(self, node: Node | str) -> Path:
        return self.dir / "nodes" / (node if isinstance(node, str) else node.name)

    def node(self, name: str) -> Node:
        for n in self.nodes:
            if n.name == name:
                return n
        raise KeyError(f"no node {name!r} in this cluster ({self.nodes[0].name}..{self.nodes[-1].name})")

    def env(self) -> dict:
        """Variables for Slurm commands (add to a copy of os.environ); on a site also what a login there has
        (MODULEPATH, Lmod's BASH_ENV), which sbatch passes on to the job as it does from a real login."""
        return dict(self.slurm.env(), **(self.site.env() if self.use_site else {})) if self.use_slurm else {}

    def hostfile(self, flavour: str = "plain", by: str = "name") -> Path:
        if flavour not in ("plain", "mpich", "openmpi") or by not in ("name", "addr"):
            raise ValueError("hostfile(flavour='plain'|'mpich'|'openmpi', by='name'|'addr')")
        hosts = [getattr(n, by) for n in self.nodes]
        fmt = {"plain": "{}", "mpich": "{}:1", "openmpi": "{} slots=1"}[flavour]
        path = self.dir / "hostfiles" / f"{flavour}-{by}.txt"
        write(path, "".join(fmt.format(h) + "\n" for h in hosts))
        return path

    def mpirun_cmd(self, *args: str, hostfile: Path | None = None) -> list[str]:
        """MPICH mpirun reaching the nodes through the cluster's ssh_config."""
        return [self.mpirun, "-launcher", "ssh", "-launcher-exec", str(self.ssh_wrapper),
                "-f", str(hostfile or self.hostfile("mpich")), *args]

    def pdsh_env(self) -> dict:
        """Variables that make pdsh reach the nodes through the cluster's ssh_config (`pdsh -R ssh -w ...`)."""
        return {"PDSH_RCMD_TYPE": "ssh", "PDSH_SSH_ARGS": f"-F {self.ssh_config} -x -l%u %h"}

    def ssh(self, node: Node | str, command: str, timeout: float = 30, **kw) -> subprocess.CompletedProcess:
        """Run a command on a node with the system ssh client and the cluster's config."""
        name = node if isinstance(node, str) else node.name
        return subprocess.run(["ssh", "-F", str(self.ssh_config), name, command], capture_output=True, text=True,
                              timeout=timeout, **kw)

    # ------------------------------------------------------------ state
    def _state(self) -> dict | None:
        try:
            return json.loads((self.dir / "cluster.json").read_text())
        except (OSError, ValueError):
            return None

    @contextlib.contextmanager
    def _lock(self):
        self.dir.mkdir(parents=True, exist_ok=True)
        with open(self.dir / ".lock", "w") as fh:
            fcntl.flock(fh, fcntl.LOCK_EX)
            yield

    def holder_pid(self, node: Node) -> int | None:
        """The node's sshd (namespace holder), if it is ours and alive."""
        pid = read_pid(self.node_dir(node) / "sshd.pid")
        if alive(pid) and str(self.node_dir(node) / "sshd_config") in args(pid):
            return pid
        return None

    def node_pids(self, name: str) -> list[int]:
        """Every process in the node's network namespace but its holder (sshd): what dies when the node dies."""
        ns = os.stat(f"/run/netns/{self.netns(name)}").st_ino
        holder = self.holder_pid(self.node(name))
        out = []
        for p in Path("/proc").iterdir():
            if p.name.isdigit() and int(p.name) != holder:
                try:
                    if os.stat(p / "ns" / "net").st_ino == ns:
                        out.append(int(p.name))
                except OSError:
                    continue
        return out

    def is_running(self) -> bool:
        state = self._state()
        if not state:
            return False
        for node in self.nodes:
            pid = self.holder_pid(node)
            if not pid or (node.addr, self.port) not in listeners(pid):
                return False
        if self.use_slurm:
            pids = self.slurm.pids()
            want = {read_pid(self.slurm.munge_dir / "munged.pid"), read_pid(self.slurm.dir / "slurmctld.pid")}
            want |= {read_pid(self.slurm.dir / f"slurmd-{n.name}.pid") for n in self.nodes}
            if None in want or not want <= pids:
                return False
        if self.use_site and not all(self.site.running().values()):
            return False
        return True

    def status(self) -> dict:
        out = {"dir": str(self.dir), "running": self.is_running(), "port": self.port, "head": self.head_addr,
               "bridge": self.bridge, "nodes": []}
        for node in self.nodes:
            pid = self.holder_pid(node)
            out["nodes"].append({"name": node.name, "addr": node.addr, "netns": self.netns(node), "sshd": bool(pid),
                                 "listening": bool(pid) and (node.addr, self.port) in listeners(pid)})
        if self.use_slurm:
            out["slurm"] = {"munged": alive(read_pid(self.slurm.munge_dir / "munged.pid")),
                            "slurmctld": alive(read_pid(self.slurm.dir / "slurmctld.pid")),
                            "slurmd": {n.name: alive(read_pid(self.slurm.dir / f"slurmd-{n.name}.pid"))
                                       for n in self.nodes},
                            "states": self.slurm.node_states() if out["running"] else {}}
        if self.use_site:
            out["site"] = self.site.running()
        return out

    # ------------------------------------------------------------ up
    def up(self, timeout: float | None = None) -> bool:
        """Start the cluster; returns False when it was already running (then nothing changes)."""
        if os.geteuid() != 0:
            raise ClusterError("the test cluster needs root (namespaces, mounts, several sshd)")
        missing = missing_tools(self.use_slurm, self.use_site)
        if missing:
            raise ClusterError(f"missing tools: {', '.join(missing)} (apt-get install openssh-server "
                               "openssh-client mpich slurm-wlm munge iproute2 nftables"
                               f"{' ' + SITE_PACKAGES if self.use_site else ''})")
        with self._lock():
            state = self._state()
            if state and self.is_running():
                if state["nodes"] != self.count or (self.spec_given and state["spec"] != str(self.spec_path)) \
                        or state.get("site", False) != self.use_site \
                        or state.get("min_job_age") != self.min_job_age:
                    raise ClusterError(f"{self.dir}: a {state['nodes']}-node {'site ' if state.get('site') else ''}"
                                       f"cluster with spec {state['spec']} (MinJobAge "
                                       f"{state.get('min_job_age') or 300}) is already running; run `down` first "
                                       "to start a different one")
                return False
            self._stop()  # whatever a crashed run left behind
            make_nodes(self.count)  # a bad count fails here, before anything starts
            timeout = timeout or 30 + 0.5 * self.count
            t0 = time.monotonic()
            for attempt in range(3):
                try:
                    self._start(timeout)
                    break
                except BaseException as exc:
                    self._stop()
                    # another cluster took a port between our pick and our bind: pick again
                    if not (isinstance(exc, ClusterError) and "already in use" in str(exc) and attempt < 2
                            and not self.want_port):
                        raise
            state = self._state()
            state["up_seconds"] = round(time.monotonic() - t0, 2)
            write(self.state_file, json.dumps(state, indent=1) + "\n")
            return True

    def _pick_port(self) -> int:
        """Each node has its own network namespace, so any port is free on its address."""
        return self.want_port or 22

    def _make_network(self, base: dict) -> None:
        """Take a free address block and make the bridge, namespaces and veths (under a lock shared by every
        test cluster on this machine, so two clusters never take the same block)."""
        with net.address_lock():
            free = [b for b in range(net.BLOCKS) if b not in net.blocks_in_use()]
            if not free:
                raise ClusterError(f"all {net.BLOCKS} address blocks of {net.RANGE} are in use by other clusters")
            self.block = free[0]
            self.nodes = make_nodes(self.count, self.block)
            net.create(self.prefix, self.block, self.nodes, {n.name: base[n.name]["ifname"] for n in self.nodes})

    def _keygen(self, path: Path, comment: str) -> None:
        if path.exists() and path.with_suffix(".pub").exists():
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        for p in (path, path.with_suffix(".pub")):
            p.unlink(missing_ok=True)
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", comment, "-f", str(path)],
                       check=True, timeout=30, stdin=subprocess.DEVNULL)

    def _start(self, timeout: float) -> None:
        d = self.dir
        for sub in ("nodes", "bin", "hostfiles", "shared"):
            (d / sub).mkdir(parents=True, exist_ok=True)
        os.makedirs("/run/sshd", mode=0o755, exist_ok=True)
        self.port = self._pick_port()
        spec = specs.load(self.spec_path)
        base = {n.name: specs.resolve(spec, n.name) for n in make_nodes(self.count)}
        for name, node_spec in base.items():
            specs.check_network(node_spec, f"{self.spec_path}: {name}")
            specs.check_features(node_spec, f"{self.spec_path}: {name}")
        self._make_network(base)
        shared = d / "shared"
        if not (shared / "uname.real").exists():  # the node's fake /usr/bin/uname wraps this copy
            shutil.copy2("/usr/bin/uname", shared / "uname.real")
        libs = StubLibs(shared)
        preload = libs.uname_preload()
        host_name = socket.gethostname().split(".")[0]

        # keys: the client's, a spare one whose public half plays a "wrong" host key, and one per node
        self._keygen(self.key, "clusterdoc-test-cluster")
        self._keygen(shared / "wrong_host_key", "wrong-host-key")
        with ThreadPoolExecutor(4) as pool:
            list(pool.map(lambda n: self._keygen(self.node_dir(n) / "ssh_host_ed25519_key", n.name), self.nodes))
        write(d / "authorized_keys", self.key.with_suffix(".pub").read_text(), 0o600)
        os.chmod(self.key, 0o600)

        def host_entry(n: Node, keyfile: Path) -> str:
            key = " ".join(keyfile.read_text().split()[:2])
            names = [n.name, n.addr] if self.port == 22 else [f"[{n.name}]:{self.port}", f"[{n.addr}]:{self.port}"]
            return f"{','.join(names)} {key}\n"
        write(self.known_hosts, "".join(host_entry(n, self.node_dir(n) / "ssh_host_ed25519_key.pub")
                                        for n in self.nodes))
        write(d / "wrong_known_hosts", "".join(host_entry(n, shared / "wrong_host_key.pub") for n in self.nodes))
        write(self.ssh_config, ssh_client_config(self.nodes, self.port, self.key, self.known_hosts))
        write(self.ssh_wrapper, f"#!/bin/sh\n# ssh with the test cluster's config (for mpirun -launcher-exec, pdsh)\n"
                                f"exec /usr/bin/ssh -F {shlex.quote(str(self.ssh_config))} \"$@\"\n", 0o755)

        state = {"nodes": self.count, "port": self.port, "slurm": self.use_slurm, "site": self.use_site,
                 "min_job_age": self.min_job_age, "spec": str(self.spec_path),
                 "net": {"block": self.block, "head": self.head_addr, "bridge": self.bridge, "prefix": self.prefix},
                 "base": base, "current": base, "started": time.time()}
        write(self.state_file, json.dumps(state, indent=1) + "\n")
        for n in self.nodes:
            self._write_node(n, base[n.name], libs, preload, host_name)

        procs = {n.name: start(self.node_dir(n), self.netns(n), base[n.name]) for n in self.nodes}

        def nodes_ready():
            for n in self.nodes:
                if procs[n.name].poll() is not None:
                    nd = self.node_dir(n)
                    raise ClusterError(f"{n.name}: sshd/namespace setup exited with {procs[n.name].returncode}; "
                                       f"{nd / 'holder.log'}:\n{tail(nd / 'holder.log')}\n{nd / 'sshd.log'}:\n"
                                       f"{tail(nd / 'sshd.log')}")
            return all((n.addr, self.port) in listeners(procs[n.name].pid) for n in self.nodes)
        wait_for(nodes_ready, timeout, f"{self.count} sshd to listen on port {self.port}")

        if self.use_slurm:
            # from the cluster's own range (its address block is its own among the clusters up): a port another
            # cluster picks while this one's slurmctld is stopped (a restart test) is never this one's
            ports = free_ports(self.count + 1 + 2 * self.use_site, start=ports_from(self.block), avoid={self.port})
            gpus = {n.name: sum(int(g.get("count", 1)) for g in base[n.name].get("gpus") or []) for n in self.nodes}
            features = {n.name: base[n.name]["features"] for n in self.nodes}
            dbd_port, db_port = ports[self.count + 1:] or (None, None)
            self.slurm.write_config(self.nodes, ports[0], ports[1:self.count + 1], gpus, self.head_addr, features,
                                    self.min_job_age, self.site.slurm_conf_lines(dbd_port) if self.use_site else None)
            state["slurm_ports"] = ports
            write(self.state_file, json.dumps(state, indent=1) + "\n")
            self.slurm.start_munge()
            if self.use_site:  # the database, slurmdbd and the associations before slurmctld asks for them
                self.site.write_dbd_conf(dbd_port, db_port)
                self.site.start_db(db_port)
                self.site.start_dbd(dbd_port)
                self.site.register()
            self.slurm.start_ctld(ports[0])
            slurmds = {n.name: self.slurm.start_slurmd(n, procs[n.name].pid, memlock(base[n.name]))
                       for n in self.nodes}
            self.slurm.wait_nodes_idle(self.nodes, slurmds, timeout=max(60, timeout))
        for n in self.nodes:
            self._limit(n, base[n.name], procs[n.name].pid)

    def _write_node(self, node: Node, node_spec: dict, libs, preload, host_name, before: dict | None = None) -> dict:
        nd = self.node_dir(node)
        env = realise(nd, node.name, node_spec, self.dir / "shared", libs)
        if self.use_site:
            self.site.write_modules()
            env = dict(self.site.env(), **env)
        write_node_files(nd, node, self.nodes, port=self.port, cluster_dir=self.dir, spec=node_spec, env=env,
                         host_name=host_name, head_addr=self.head_addr, preload=preload, before=before)
        return env

    # ------------------------------------------------------------ planting
    def plant(self, changes: dict[str, dict]) -> dict[str, dict]:
        """Merge per-node spec changes into the running nodes (on top of what they show now).
        Returns the specs those nodes had before, for put_back()."""
        with self._lock():
            state = self._state()
            if not state:
                raise ClusterError(f"{self.dir}: no cluster is running")
            before = {}
            for name, change in changes.items():
                self.node(name)
                specs.check_keys(change, f"plant {name}")
                before[name] = state["current"][name]
                state["current"][name] = specs.merge(state["current"][name], change)
                specs.check_network(state["current"][name], f"plant {name}")
            self._apply(state, list(changes))
            return before

    def put_back(self, before: dict[str, dict]) -> None:
        """Give nodes exactly these specs again (what plant() returned)."""
        with self._lock():
            state = self._state()
            if not state:
                return
            state["current"].update(before)
            self._apply(state, list(before))

    def restore(self, names: list[str] | None = None) -> None:
        """Put nodes back to the spec they started with."""
        with self._lock():
            state = self._state()
            if not state:
                return
            names = names or [n.name for n in self.nodes]
            for name in names:
                state["current"][name] = state["base"][name]
            self._apply(state, names)

    @contextlib.contextmanager
    def planted(self, changes: dict[str, dict]):
        """Plant per-node changes for the with-block; on exit the nodes show what they showed before
        (so plants nest)."""
        before = self.plant(changes)
        try:
            yield self
        finally:
            self.put_back(before)

    def _apply(self, state: dict, names: list[str]) -> None:
        write(self.state_file, json.dumps(state, indent=1) + "\n")
        libs = StubLibs(self.dir / "shared")
        preload = libs.uname_preload()
        host_name = socket.gethostname().split(".")[0]
        for name in names:
            node = self.node(name)
            nd = self.node_dir(node)
            old_env = (nd / "env.json").read_text() if (nd / "env.json").exists() else ""
            old_spec = json.loads((nd / "spec.json").read_text())
            pid = self.holder_pid(node)
            if not pid:
                raise ClusterError(f"{name} is not running (see {nd / 'sshd.log'})")
            self._write_node(node, state["current"][name], libs, preload, host_name, before=old_spec)
            remount(pid, nd)
            # sshd (so every later ssh session) and slurmd get the node's memlock limit, or the head's back
            soft, hard = resource.getrlimit(resource.RLIMIT_MEMLOCK)
            for daemon in (pid, read_pid(self.slurm.dir / f"slurmd-{name}.pid")):
                if alive(daemon):
                    resource.prlimit(daemon, resource.RLIMIT_MEMLOCK, (memlock(state["current"][name]) or soft, hard))
            if (nd / "env.json").read_text() != old_env:
                self._reload_sshd(node, pid)
            self._limit(node, state["current"][name], pid)

    def _limit(self, node: Node, node_spec: dict, sshd_pid: int) -> None:
        """The node's link rate (both ends of its veth) and CPU share (its sshd and slurmd), as its spec says."""
        rate = node_spec.get("link_rate_mbit")
        limits.shape(net.host_veth(self.prefix, node.index), rate)
        limits.shape(node_spec["ifname"], rate, netns=self.netns(node))
        slurmd = read_pid(self.slurm.dir / f"slurmd-{node.name}.pid") if self.use_slurm else None
        daemons = [p for p in (sshd_pid, slurmd) if alive(p)]
        limits.limit_cpu(self.prefix, node.name, node_spec.get("cpu_quota"), daemons)

    def _reload_sshd(self, node: Node, pid: int) -> None:
        """SIGHUP makes sshd re-exec itself (same pid, same namespaces) and re-read SetEnv."""
        before = _listen_inode(pid, node.addr, self.port)
        os.kill(pid, signal.SIGHUP)
        wait_for(lambda: _listen_inode(pid, node.addr, self.port) not in (None, before), 15,
                 f"{node.name} sshd to reload", self.node_dir(node) / "sshd.log")

    # ------------------------------------------------------------ down
    def down(self) -> None:
        with self._lock():
            self._stop()

    def our_pids(self) -> set[int]:
        """Every process of this cluster: by pid file, by the cluster dir in its command line, and every
        process inside a node's namespaces (job steps, planted hangs, ssh sessions)."""
        prefix = str(self.dir) + "/"
        found = set()
        files = list(self.dir.glob("nodes/*/sshd.pid")) + [self.slurm.munge_dir / "munged.pid"]
        files += list(self.slurm.dir.glob("*.pid"))
        for f in files:
            pid = read_pid(f)
            if alive(pid) and prefix in args(pid):
                found.add(pid)
        for pid in all_pids():
            line = args(pid)
            if prefix not in line:
                continue
            exe = exe_name(pid)
            argv = cmdline(pid)
            if exe in DAEMONS or (exe in ("sh", "dash", "bash") and len(argv) > 1 and argv[1].startswith(prefix)):
                found.add(pid)
        host_ns = mnt_ns(os.getpid())
        node_ns = {mnt_ns(p) for p in found if exe_name(p) in ("sshd", "slurmd")} - {None, host_ns}
        node_net = {f"net:[{ino}]" for ino in net.netns_inodes(self.prefix)}  # outlives a crash: /run/netns
        if node_ns or node_net:
            found |= {p for p in all_pids() if mnt_ns(p) in node_ns or net_ns(p) in node_net}
        return found

    def _stop(self) -> None:
        if not self.dir.exists():
            net.teardown(self.prefix)
            for group in limits.our_cgroups(self.prefix):
                limits.remove_cgroup(group)
            return
        kill_all(self.our_pids())
        leftovers = self.our_pids()
        if leftovers:
            kill_all(leftovers)
        for f in list(self.dir.glob("nodes/*/sshd.pid")) + list(self.slurm.dir.glob("*.pid")):
            f.unlink(missing_ok=True)
        for f in (self.slurm.munge_dir / "munged.pid", self.site.dir / "mariadbd.pid", self.slurm.socket, self.slurm.socket.with_name(
                "munge.socket.lock"), self.state_file):
            f.unlink(missing_ok=True)
        net.teardown(self.prefix)  # after the processes: a namespace something still runs in would linger
        for group in limits.our_cgroups(self.prefix):  # (a link's qdiscs went with its veth)
            limits.remove_cgroup(group)


def _listen_inode(pid: int, addr: str, port: int) -> str | None:
    """The inode of the socket listening on addr:port in the network namespace of pid."""
    want = f"{socket.inet_aton(addr)[::-1].hex().upper()}:{port:04X}"
    try:
        for line in Path(f"/proc/{pid}/net/tcp").read_text().splitlines()[1:]:
            parts = line.split()
            if parts[1] == want and parts[3] == "0A":
                return parts[9]
    except OSError:
        pass
    return None
