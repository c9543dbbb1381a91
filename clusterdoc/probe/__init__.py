"""The probe: gather one node's facts and print them as one JSON object.

One module per topic (base, system, gpus, toolkits, pyenv, mpi, network, nccl, ports, ssh, gpuhealth, gather; shell
is the head's fallback for nodes without python3). payload.py (the head's side, never sent itself) joins them, in
that order, into the one script sent over SSH (or srun) to `python3 -` on every node: one round trip. So every
module must stay stdlib-only and parse on old pythons (3.6+: no walrus, no `from __future__ import annotations`, no
`capture_output`). Every command it runs has a short timeout; a command that fails or hangs
becomes an entry in `errors` and every other fact still comes out. Commands run in parallel
threads, so the whole probe costs about as long as its slowest command.

Facts schema (version 1) -- the contract the checks and the wheel builder read:
  schema 1, probe "python" | "shell", elapsed (s)
  hostname
  kernel {release, source, container (bool), gvisor (bool)}
  python {version, executable} | null
  torch {version, cuda, arch_list, nccl, nccl_lib (the libnccl it mapped), cuda_available, path} | null
        (null: not installed)
  nvcc {path, realpath, home, version, arch_list, host_config (the crt/host_config.h it includes, found
        along its nvcc.profile's INCLUDES), gcc_max (int: its `#if __GNUC__ > N` guard)} | null (first on PATH)
  cuda_home: $CUDA_HOME or null, cuda_home_realpath: its symlinks resolved
  toolkits [{path, realpath, version, version_source, nvcc (bool), libcudart (bool), gcc_max (int|null)}]
  libcudart_first {path, dir, toolkit} | null       (first libcudart.so* along LD_LIBRARY_PATH)
  gcc {path, version} | null
  gpus [{index, name, capability "8.0", memory_mib, driver}]
  driver: version string | null
  gpu_health {smi {driver, cuda, attached, gpus [{bus, uuid, name, persistence, mig, compute_mode,
              pcie {gen, gen_max, width, width_max}, throttle [reason], ecc {volatile_uncorrectable,
              aggregate_uncorrectable, mig_volatile_uncorrectable}, retired {single_bit, double_bit, pending},
              remap {correctable, uncorrectable, pending, failure}, recovery {action, reset_required,
              drain_and_reset_recommended, channel_repair_pending, tpc_repair_pending, unrepairable_memory}}]}
              | null (values nvidia-smi does not know, N/A, Not Found, [Not Supported]..., are null),
              lost [{bus | null, index | null, message}],
              xid {source, events [{bus, xid, text}] (the newest 64), counts [{xid, bus, n}] (every event),
              new_counts [{xid, bus, n}], faults [{kind (init|gsp), bus | null, gpu (driver's index) | null,
              n, new, text}], gpu_bus {driver's GPU index: bus}, total, new, since} | null, fabricmanager (systemd state
              | null: not an NVSwitch system), acs [{bridge, gpus}] | null (config space not readable),
              iommu {bus: type}, peermem (bool), ib [{device, port, link_layer, hca, rate_gbps, link_downed,
              symbol_error, link_error_recovery}], ib_changed ["dev/port counter"], nccl_env {K: V},
              hypervisor (bool), nvlink {gpu index: {active, inactive [link], all_down (bool), name}} | null,
              nvlink_errors {gpu index: {"link counter": n}} (non-zero ones), nvlink_rising ["GPUi link counter"],
              p2p {gpus, bad [{a, b, code}]} | null, dmabuf {kernel (release), open_module (bool | null)},
              dcgm {diag {tests, results [{test, gpu, status, detail}]} | {error}, health {overall, incidents}
              | {error}} | null (no dcgmi)}
             | null (no nvidia-smi and no InfiniBand)
  env {PATH, LD_LIBRARY_PATH, CUDA_HOME, TORCH_CUDA_ARCH_LIST, CUDA_VISIBLE_DEVICES}
  deepspeed {version, torch_version, cuda_version, ops_installed {op: bool}, ops_compatible {op: bool},
             path, wheel_manifest (dict|null), binaries [{file (under path), op, sass ["sm_80"], ptx ["compute_90"]}
             | {file, op, error}] (read from each ops/**/*.so's .nv_fatbin) | null, binaries_left (not read)} | null
  mpi {mpirun {path, flavour "mpich"|"openmpi"|"other", version} | null, mpi4py {version, library} | null,
       head_mpirun {path, flavour, version, missing?} | null (the head's mpirun path, on this node)}
  libaio (bool: libaio.so found), libaio_header (bool)
  mesh {peer: {ok (bool, null: not tested in time), message}} | null      (only when asked with --mesh)
  ssh_trust {user, identities [fp], authorized [fp], host_keys [fp], known {peer: [fp] | null}} | null
            (only with --trust and --peers; fp: "SHA256:..." as ssh-keygen -l; known null: a Match block)
  errors [{probe, message}]

  net {hostname, own [addr] | null, own_error, resolve {peer: [addr]}, resolve_errors {peer: message},
       ifaces [{name, up, running, loopback, mtu, addrs ["addr/len"]}], route {to, addr, source, iface} | null,
       ifname_env {NCCL_SOCKET_IFNAME, GLOO_SOCKET_IFNAME}, ib [{device, port, state, link_layer}]}
  wrapped: the command prefix the probe ran under (--wrap: the ranks' container) | null
  nccl {env {NCCL_*: value}, wheels [{name "nvidia-nccl-cu12", version, path (sys.path entry), lib}],
        torch_pin {"nvidia-nccl-cu12": version} | null (torch's METADATA), ld_path [{path, realpath}] (libnccl.so*
        along LD_LIBRARY_PATH), preload [path], gids [{device, port, index, gid | null, type}] (RoCE ports, only
        with NCCL_IB_GID_INDEX: its entry and the non-empty ones), runtime {driver_module (the host's NVIDIA
        kernel module, /proc/driver/nvidia/version), sys_infiniband [dev], dev_infiniband [name] | null (missing)}}
  port {listen [{port, mode, status listening|in_use|error, message, expected, accepted, closed}],
        connect [{target, ok, error, message, attempts, elapsed, at}]} | null   (only with --listen/--connect;
        closed: when the listener stopped, at: the last attempt's start, both time.time() of the node)
  resources {shm {total_mib, free_mib} | null, memlock_kib (-1: unlimited), nofile, nofile_hard,
             space {path: {total_mib, free_mib}}}
  clock {start, end (time.time() at the probe's start and end), date (what `date` shows), date_at}
  files {path: {sha256, size, realpath} | {error}} | null               (only with --file)

Usage: python3 - < PAYLOAD  (`python -m clusterdoc.probe --payload > probe.py` writes it; run here:
       python -m clusterdoc.probe ARGS)
        [--timeout SEC] [--budget SEC] [--head-mpirun PATH] [--peers A,B] [--trust] [--env K=V]
                        [--listen PORT/store|peer/N] [--connect HOST:PORT,...] [--space DIR] [--file PATH]
                        [--mesh PEER ...]
"""

# The package's namespace is the payload's: one script, one namespace (`probe.gather`, `probe.parse_smi_xml`...).
from clusterdoc.probe.base import *
from clusterdoc.probe.gather import *
from clusterdoc.probe.gpuhealth import *
from clusterdoc.probe.gpus import *
from clusterdoc.probe.mpi import *
from clusterdoc.probe.nccl import *
from clusterdoc.probe.network import *
from clusterdoc.probe.ports import *
from clusterdoc.probe.pyenv import *
from clusterdoc.probe.shell import *
from clusterdoc.probe.ssh import *
from clusterdoc.probe.system import *
from clusterdoc.probe.toolkits import *

# Joined into the payload in this order (shell is head-only); a module imports only modules before it.
MODULES = (
    "base",
    "system",
    "gpus",
    "toolkits",
    "pyenv",
    "mpi",
    "network",
    "nccl",
    "ports",
    "ssh",
    "gpuhealth",
    "gather",
)
