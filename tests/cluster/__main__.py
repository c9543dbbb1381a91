"""`python -m tests.cluster up --nodes N [--dir DIR] [--spec FILE] [--no-slurm] [--site] [--min-job-age S]
| down [--dir DIR] | status`."""
from __future__ import annotations

import argparse
import json
import sys
import time

from .cluster import Cluster, ClusterError, default_dir
from .spec import SpecError


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.cluster", description="the one-machine test cluster")
    sub = parser.add_subparsers(dest="cmd", required=True)
    up = sub.add_parser("up", help="start N ssh nodes (+ Slurm); harmless when already running")
    up.add_argument("--nodes", "-n", type=int, default=4)
    up.add_argument("--spec", help="node spec YAML (default: tests/cluster/default.yaml)")
    up.add_argument("--no-slurm", action="store_true", help="ssh nodes only (no munged/slurmctld/slurmd)")
    up.add_argument("--port", type=int, help="sshd port on every node address (default: 22)")
    up.add_argument("--site", action="store_true",
                    help="a real site's Slurm: slurmdbd on MariaDB, accounts and QOS enforced, Lmod modules")
    up.add_argument("--min-job-age", type=int, metavar="SECONDS",
                    help="slurmctld's MinJobAge: how long it remembers a finished job (default 300)")
    down = sub.add_parser("down", help="stop everything the cluster started")
    status = sub.add_parser("status", help="what is running (exit 0 when the cluster is up)")
    status.add_argument("--json", action="store_true")
    for p in (up, down, status):
        p.add_argument("--dir", help=f"cluster dir (default: $CLUSTERDOC_CLUSTER_DIR or {default_dir()})")
    args = parser.parse_args(argv)
    try:
        if args.cmd == "up":
            cluster = Cluster(args.dir, nodes=args.nodes, spec=args.spec, slurm=not args.no_slurm, port=args.port,
                              site=args.site or None, min_job_age=args.min_job_age)
            t0 = time.monotonic()
            started = cluster.up()
            how = f"started in {time.monotonic() - t0:.1f}s" if started else "already running"
            print(f"cluster {how}: {cluster.count} nodes {cluster.nodes[0].addr}..{cluster.nodes[-1].addr} "
                  f"port {cluster.port}{', Slurm' if cluster.use_slurm else ''}"
                  f"{' with accounting (slurmdbd), QOS and Lmod modules' if cluster.use_site else ''}; head {cluster.head_addr} on bridge "
                  f"{cluster.bridge}", file=sys.stderr)
            print(f"  ssh -F {cluster.ssh_config} node1 hostname")
            for key, value in cluster.env().items():
                print(f"  export {key}={value}")
            print(f"  {' '.join(cluster.mpirun_cmd('-n', str(cluster.count), '-ppn', '1', 'hostname'))}")
            return 0
        cluster = Cluster(args.dir)
        if args.cmd == "down":
            t0 = time.monotonic()
            cluster.down()
            print(f"cluster in {cluster.dir} stopped in {time.monotonic() - t0:.1f}s", file=sys.stderr)
            return 0
        info = cluster.status()
        if args.json:
            print(json.dumps(info, indent=1))
        else:
            print(f"{info['dir']}: {'running' if info['running'] else 'not running'} (port {info['port']}, "
                  f"head {info['head']} on bridge {info['bridge']})")
            for n in info["nodes"]:
                print(f"  {n['name']:8} {n['addr']:15} sshd {'up' if n['sshd'] else 'down'}"
                      f"{'' if n['listening'] else ' (not listening)'}")
            if "slurm" in info:
                s = info["slurm"]
                up = sum(s["slurmd"].values())
                if not (s["munged"] or s["slurmctld"] or up):
                    print("  Slurm down (munged, slurmctld and every slurmd stopped)")
                else:
                    daemons = f"munged {'up' if s['munged'] else 'down'}, slurmctld {'up' if s['slurmctld'] else 'down'}"
                    print(f"  {daemons}, slurmd up on {up}/{len(s['slurmd'])}; states {s['states']}")
            if "site" in info:
                print("  site: " + ", ".join(f"{k} {'up' if v else 'down'}" for k, v in info["site"].items()))
        return 0 if info["running"] else 1
    except (ClusterError, SpecError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
