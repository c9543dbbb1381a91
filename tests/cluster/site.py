"""What a real Slurm site adds to the test cluster (`up --site`): accounting and modules.

- MariaDB (its own datadir, socket and port under DIR/site, bound to 127.0.0.1) holding slurmdbd's database;
- slurmdbd (its slurmdbd.conf beside slurm.conf, mode 0600: slurmdbd 22.05 has no -f and refuses a looser one);
- the cluster, accounts and QOS registered with sacctmgr before slurmctld starts, so slurm.conf's
  `AccountingStorageEnforce=associations,limits,qos` holds from the first job:
      account proj1: the test user's (root's) default account, QOS normal (default) and short;
      account proj2: exists, the test user has no association with it (a job asking for it is refused);
      QOS short: MaxWall=10 minutes, one node per job (MaxTRESPerJob=node=1), Flags=DenyOnLimit (sbatch refuses
      a job over the limit instead of leaving it pending);
  (sacctmgr's `add cluster` also gives root an association with the account `root`, as on every Slurm site);
- Lmod module files (cuda/12.4, nccl/2.21) in DIR/site/modules: each sets a variable and prepends a bin dir
  holding a marker command that prints which module it is and on which node; MODULEPATH and Lmod's BASH_ENV
  (what /etc/profile.d/lmod.sh exports on a real login) are in the nodes' environment and in Cluster.env(), so a
  batch script or `srun bash -c` can `module load cuda/12.4`.

Recipe and its pitfalls: ../shared/reference.md, section 7. Everything is stopped by Cluster.down() (the daemons
carry the cluster dir in their command lines).
"""
from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
from pathlib import Path

from .fakes import REPO, write
from .procs import ClusterError, alive, listeners, read_pid, tail, track, wait_for

MARIADBD = "/usr/sbin/mariadbd"
INSTALL_DB = "/usr/bin/mariadb-install-db"
MYSQL = "/usr/bin/mariadb"
SLURMDBD = "/usr/sbin/slurmdbd"
SACCTMGR = "/usr/bin/sacctmgr"
LMOD_INIT = "/usr/share/lmod/lmod/init/bash"
REQUIRED_SITE = {"mariadbd": MARIADBD, "mariadb-install-db": INSTALL_DB, "mariadb": MYSQL, "slurmdbd": SLURMDBD,
                 "sacctmgr": SACCTMGR, "lmod": "/usr/share/lmod/lmod/libexec/lmod"}
PACKAGES = "mariadb-server slurmdbd lmod"

CLUSTER_NAME = "clusterdoc"  # = ClusterName in slurm.conf
USER = "root"  # the tests run as root; Slurm runs their jobs as root
ACCOUNTS = {"proj1": "the test user's default account", "proj2": "an account the test user is not in"}
USER_ACCOUNT = "proj1"
QOS_SHORT = {"MaxWall": "00:10:00", "MaxTRESPerJob": "node=1", "Flags": "DenyOnLimit"}
USER_QOS = ("normal", "short")
DB_USER, DB_PASS, DB_NAME = "slurm", "clusterdoc-test", "slurm_acct_db"
# module name -> (variable it sets, marker command on the PATH it prepends)
MODULES = {"cuda/12.4": ("SITE_CUDA_VERSION", "site-cuda"), "nccl/2.21": ("SITE_NCCL_VERSION", "site-nccl")}
TEMPLATE = REPO / ".cache" / "site-mariadb"  # a fresh datadir, made once and copied (mariadb-install-db: ~6 s)
MYSQLD_OPTS = ["--innodb-buffer-pool-size=16M", "--innodb-log-file-size=4M", "--skip-name-resolve",
               "--innodb-flush-log-at-trx-commit=2"]


def missing_site_tools() -> list[str]:
    return sorted(name for name, path in REQUIRED_SITE.items() if not os.path.exists(path))


class Site:
    def __init__(self, cluster_dir: Path):
        self.dir = cluster_dir / "site"
        self.slurm_dir = cluster_dir / "slurm"
        self.munge_socket = cluster_dir / "munge" / "munge.socket"
        self.datadir = self.dir / "db"
        self.db_socket = self.dir / "mysqld.sock"
        self.modules = self.dir / "modules"

    # ------------------------------------------------------------ config
    def slurm_conf_lines(self, dbd_port: int) -> list[str]:
        """What slurm.conf says on a site with accounting (replacing accounting_storage/none)."""
        return [
            "AccountingStorageType=accounting_storage/slurmdbd", "AccountingStorageHost=127.0.0.1",
            f"AccountingStoragePort={dbd_port}",
            f"AccountingStoragePass={self.munge_socket}",  # clients (sacctmgr, sacct) otherwise try /run/munge's
            "AccountingStorageEnforce=associations,limits,qos",
            "JobAcctGatherType=jobacct_gather/linux", "JobAcctGatherFrequency=task=5",
        ]

    def env(self) -> dict:
        """What a login on a site with Lmod has (/etc/profile.d/lmod.sh): the nodes' and the submitter's."""
        return {"MODULEPATH": str(self.modules), "BASH_ENV": LMOD_INIT, "LMOD_ALLOW_ROOT_USE": "yes"}

    def write_modules(self) -> None:
        for name, (var, marker) in MODULES.items():
            tool, version = name.split("/")
            bin_dir = self.dir / "sw" / f"{tool}-{version}" / "bin"
            write(bin_dir / marker, f"#!/bin/sh\necho \"{name} loaded on $(hostname)\"\n", 0o755)
            write(self.modules / tool / f"{version}.lua",
                  f'-- {name}: a module of the clusterdoc test site\n'
                  f'whatis("{tool} {version} (clusterdoc test site)")\n'
                  f'setenv("{var}", "{version}")\n'
                  f'prepend_path("PATH", "{bin_dir}")\n')

    def write_dbd_conf(self, dbd_port: int, db_port: int) -> None:
        d = self.slurm_dir
        lines = [
            "# slurmdbd.conf of the clusterdoc test site (slurmdbd reads it beside $SLURM_CONF)",
            "AuthType=auth/munge", f"AuthInfo=socket={self.munge_socket}",
            "DbdHost=localhost", "DbdAddr=127.0.0.1", f"DbdPort={dbd_port}", "SlurmUser=root",
            f"LogFile={d}/log/slurmdbd.log", f"PidFile={d}/slurmdbd.pid", "DebugLevel=info",
            "StorageType=accounting_storage/mysql",
            "StorageHost=127.0.0.1",  # `localhost` makes it look for /run/mysqld's socket
            f"StoragePort={db_port}", f"StorageUser={DB_USER}", f"StoragePass={DB_PASS}", f"StorageLoc={DB_NAME}",
        ]
        path = d / "slurmdbd.conf"
        path.unlink(missing_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as fh:
            fh.write("\n".join(lines) + "\n")

    # ------------------------------------------------------------ daemons
    def _template(self) -> Path:
        """A fresh MariaDB datadir (system tables only), made once per machine and mariadbd version."""
        version = subprocess.run([MARIADBD, "--version"], capture_output=True, text=True, timeout=30).stdout
        tag = "".join(c if c.isalnum() or c in ".-" else "_" for c in (version.split() or ["x"])[2])[:60]
        template = TEMPLATE / tag
        TEMPLATE.mkdir(parents=True, exist_ok=True)
        with open(TEMPLATE / ".lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not (template / "done").exists():
                shutil.rmtree(template, ignore_errors=True)
                tmp = TEMPLATE / f"{tag}.tmp{os.getpid()}"
                shutil.rmtree(tmp, ignore_errors=True)
                log = TEMPLATE / "install.log"
                with open(log, "wb") as out:
                    rc = subprocess.run([INSTALL_DB, "--no-defaults", "--user=root", f"--datadir={tmp}",
                                         "--auth-root-authentication-method=normal", "--skip-test-db",
                                         *MYSQLD_OPTS], stdout=out, stderr=subprocess.STDOUT,
                                        stdin=subprocess.DEVNULL, timeout=180).returncode
                if rc:
                    raise ClusterError(f"mariadb-install-db exited with {rc}; log {log}:\n{tail(log)}")
                (tmp / "done").write_text(version)
                tmp.rename(template)
        return template

    def _popen(self, argv: list[str], log: Path, executable: str | None = None) -> subprocess.Popen:
        env = dict(os.environ, SLURM_CONF=str(self.slurm_dir / "slurm.conf"))
        with open(log, "ab") as out:
            return track(subprocess.Popen(argv, executable=executable, stdin=subprocess.DEVNULL, stdout=out,
                                          stderr=subprocess.STDOUT, cwd="/", env=env, start_new_session=True))

    def start_db(self, db_port: int) -> int:
        self.dir.mkdir(parents=True, exist_ok=True)
        shutil.rmtree(self.datadir, ignore_errors=True)  # every `up` starts with empty accounting
        shutil.copytree(self._template(), self.datadir, symlinks=True)
        log = self.dir / "mariadbd.log"
        proc = self._popen([MARIADBD, "--no-defaults", "--user=root", f"--datadir={self.datadir}",
                            f"--socket={self.db_socket}", f"--port={db_port}", "--bind-address=127.0.0.1",
                            f"--pid-file={self.dir / 'mariadbd.pid'}", f"--log-error={log}", *MYSQLD_OPTS],
                           self.dir / "mariadbd.out")

        def ready():
            if proc.poll() is not None:
                raise ClusterError(f"mariadbd exited with {proc.returncode}; log {log}:\n{tail(log)}")
            return ("127.0.0.1", db_port) in listeners() and self.db_socket.exists()
        wait_for(ready, 60, f"mariadbd to listen on port {db_port}", log)
        sql = (f"CREATE USER IF NOT EXISTS '{DB_USER}'@'localhost' IDENTIFIED BY '{DB_PASS}';"
               f"CREATE USER IF NOT EXISTS '{DB_USER}'@'127.0.0.1' IDENTIFIED BY '{DB_PASS}';"
               f"GRANT ALL ON {DB_NAME}.* TO '{DB_USER}'@'localhost';"
               f"GRANT ALL ON {DB_NAME}.* TO '{DB_USER}'@'127.0.0.1';")
        res = subprocess.run([MYSQL, "--no-defaults", f"--socket={self.db_socket}", "-uroot", "-e", sql],
                             capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
        if res.returncode:
            raise ClusterError(f"creating the database user failed: {(res.stderr or res.stdout).strip()[:500]}")
        return proc.pid

    def start_dbd(self, dbd_port: int) -> int:
        log = self.slurm_dir / "log" / "slurmdbd.log"
        # slurmdbd has no config option: argv[0] names the cluster dir, so Cluster.down() finds it like the rest
        proc = self._popen([str(self.slurm_dir / "slurmdbd"), "-D"], self.slurm_dir / "log" / "slurmdbd.out",
                           executable=SLURMDBD)

        def ready():
            if proc.poll() is not None:
                raise ClusterError(f"slurmdbd exited with {proc.returncode}; log {log}:\n{tail(log)}\n"
                                   f"{tail(self.slurm_dir / 'log' / 'slurmdbd.out')}")
            return ("127.0.0.1", dbd_port) in listeners() or ("0.0.0.0", dbd_port) in listeners()
        wait_for(ready, 60, f"slurmdbd to listen on port {dbd_port}", log)
        return proc.pid

    def sacctmgr(self, *args: str) -> str:
        env = dict(os.environ, SLURM_CONF=str(self.slurm_dir / "slurm.conf"))
        res = subprocess.run([SACCTMGR, "-i", *args], capture_output=True, text=True, timeout=60, env=env,
                             stdin=subprocess.DEVNULL)
        if res.returncode:
            raise ClusterError(f"sacctmgr {' '.join(args)} exited with {res.returncode}: "
                               f"{(res.stderr or res.stdout).strip()[:500]}")
        return res.stdout

    def register(self) -> None:
        """The cluster, its QOS, accounts and the test user's associations (before slurmctld starts)."""
        self.sacctmgr("add", "cluster", CLUSTER_NAME)
        self.sacctmgr("add", "qos", "short", *(f"{k}={v}" for k, v in QOS_SHORT.items()))
        for account, what in ACCOUNTS.items():
            self.sacctmgr("add", "account", account, f"Description={what}", "Organization=clusterdoc")
        self.sacctmgr("add", "user", USER, f"Account={USER_ACCOUNT}", f"QOS={','.join(USER_QOS)}",
                      "DefaultQOS=normal")
        self.sacctmgr("modify", "user", "where", f"name={USER}", "set", f"DefaultAccount={USER_ACCOUNT}")

    def pids(self) -> set[int]:
        files = [self.dir / "mariadbd.pid", self.slurm_dir / "slurmdbd.pid"]
        return {p for p in (read_pid(f) for f in files) if alive(p)}

    def running(self) -> dict[str, bool]:
        return {"mariadbd": alive(read_pid(self.dir / "mariadbd.pid")),
                "slurmdbd": alive(read_pid(self.slurm_dir / "slurmdbd.pid"))}
