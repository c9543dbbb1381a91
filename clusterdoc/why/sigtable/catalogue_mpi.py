"""The catalogue of the MPI launchers', Slurm's and the fabric libraries' own failure messages, read from
their source (Open MPI's help files, Slurm's error table, MPICH's error classes, UCX's status strings):
made by scripts/catalogue_mpi.py from tests/fixtures/why/catalogue/mpi.tsv; do not edit by hand.

The category is the code path's (the component and the error path that print the message: CLASSES in the
script), not a log's; only messages no learned signature knows. A fallback: why/signatures.py puts it last.
"""

from __future__ import annotations

from clusterdoc.why.signature import S, Signature

# class -> (category, weak, meaning, next step)
# fmt: off
CLASSES: dict[str, tuple[str, bool, str, str]] = {
    'mpich-arg': ('code', True,
        "an MPI call got an argument MPICH's check refused (a count, rank, tag, root, datatype or operation):"
        " the code's call, or a launch that started fewer processes than the program expects",
        'the MPI call in its error stack and the arguments it was given (the rank and size it assumed)'),
    'mpich-comm-fail': ('peer', False,
        'MPICH lost its connection to another rank: that rank died first, or the link broke',
        "the other rank's own log: the first one to fail is the cause"),
    'mpich-nomem': ('oom', False,
        'MPICH could not allocate memory: the host ran out of memory',
        'less host memory per rank (fewer ranks per node, smaller buffers), or more --mem'),
    'mpich-shm': ('environment', False,
        'MPICH could not set up shared memory on the node (/dev/shm full or too small)',
        'df -h /dev/shm on the node; docker --shm-size / --ipc=host'),
    'mpich-sock': ('network', False,
        "MPICH could not connect to another process's address: the network between the nodes or the interface"
        ' it picked',
        'the interface (FI_TCP_IFACE, MPIR_CVAR_CH3_INTERFACE_HOSTNAME); nc -zv between the nodes'),
    'ompi-cuda-lib': ('environment', False,
        'Open MPI could not load the CUDA library its CUDA support needs: the driver or toolkit library is no'
        "t on that node's library path",
        'ls the libcuda.so it names on the node; LD_LIBRARY_PATH, or the nvidia driver on that node'),
    'ompi-daemon-lost': ('node', True,
        'mpirun lost a daemon (orted) on another node, or could not start one: the node died, the network bet'
        'ween the nodes, or the daemon could not run there',
        "the node's kernel log and state (sinfo -R, dmesg), ssh/srun to it, the same Open MPI there"),
    'ompi-ib': ('network', False,
        "Open MPI's InfiniBand transport (the openib BTL, the RDMA CM) reported a failed transfer or a networ"
        "k error event: the link, a port, a switch or the peer's adapter",
        "clusterdoc check --perf on the nodes (ibstat, ibv_devinfo, the ports' error counters); resubmit with"
        'out the node it names (--exclude, submit --retries)'),
    'ompi-init-failed': ('environment', True,
        'an MPI process failed in MPI_Init (its transports, the runtime): the lines before it say which part',
        'the first error above it (a transport, a PMI, a library); ompi_info on that node'),
    'ompi-init-twice': ('code', False,
        'the program initialized MPI twice (MPI_Init after MPI_Finalize, or twice): the code',
        "the code's MPI_Init/MPI_Finalize calls (one of each per process; mpi4py initializes on import)"),
    'ompi-install': ('environment', False,
        "Open MPI's launcher could not find its own parts or the launcher it needs (orted, srun, ssh), or was"
        ' built without the PMI support a direct srun launch needs',
        'the same Open MPI on every node (PATH, LD_LIBRARY_PATH, mpirun --prefix); ompi_info | grep -i pmi ag'
        'ainst srun --mpi=list'),
    'ompi-launch-limit': ('environment', False,
        'mpirun could not launch the program on a node: a system limit there (open files, sockets, processes)'
        ', a working directory that is not there or a program it cannot access',
        'ulimit -n / -u on the node; the working directory and the program on every node (a shared file syste'
        'm, its permissions)'),
    'ompi-locked-memory': ('environment', False,
        "Open MPI's InfiniBand transport could not allocate locked (registered) memory: the node's locked-mem"
        'ory limit (ulimit -l) is too low',
        "ulimit -l unlimited for the job (Slurm's PropagateResourceLimits, /etc/security/limits.conf, docker "
        '--ulimit memlock=-1)'),
    'ompi-ofi': ('network', True,
        "Open MPI's libfabric (OFI) transport failed a fabric call: the provider or the fabric (EFA, Omni-Pat"
        'h, verbs through OFI)',
        "fi_info on the nodes (the provider it picked), FI_LOG_LEVEL=warn for libfabric's own reason"),
    'ompi-peer-gone': ('peer', False,
        'an MPI peer process closed its connection: it died first, or the link to it broke',
        "the other ranks' and nodes' logs: the first one to fail is the cause"),
    'ompi-psm2': ('network', False,
        "Open MPI's Omni-Path (PSM2) transport could not open its endpoint or progress the network: the link "
        'or the hfi1 driver of that node',
        'opainfo / hfi1 status on that node (is its link up?); resubmit without it (--exclude)'),
    'ompi-shm': ('environment', False,
        'Open MPI could not set up its shared memory between the processes of a node (/dev/shm or the session'
        " directory full or too small, a container's --shm-size, user namespaces)",
        'df -h /dev/shm and the session directory (TMPDIR) on the node; docker --shm-size / --ipc=host'),
    'ompi-shm-syscall': ('environment', True,
        'a system call failed while Open MPI set up shared memory on a node: the job may abort or only run sl'
        "ower (/dev/shm, the session directory, a container's limits)",
        'the system call and errno it names; df -h /dev/shm and TMPDIR on the node; whether the job failed la'
        'ter for another reason'),
    'ompi-too-many-procs': ('code', True,
        'mpirun was asked for more processes (or cpus per process) than the allocation has slots: the launch '
        'command does not fit the allocation',
        "match -np (and --map-by ... :PE=) to the allocation (sbatch --ntasks, a hostfile's slots), or --over"
        'subscribe if meant'),
    'ompi-unreachable': ('network', False,
        'Open MPI found no transport by which two MPI processes can reach each other (no common network: the '
        'transports built in, the interfaces, the fabric)',
        "ompi_info | grep -E 'btl|pml|mtl' on both nodes; the interfaces they share; --mca btl self,vader,tcp"
        ' to test'),
    'ompi-verbs-device': ('network', True,
        'Open MPI could not open or query an InfiniBand (verbs) device: the adapter or its driver on that nod'
        'e (Open MPI then goes on without it where another transport works)',
        'ibv_devinfo and dmesg (mlx5) on that node; resubmit without it (--exclude)'),
    'ompi-version': ('environment', False,
        "two processes of the job run different Open MPI versions: the nodes' installations differ",
        'which mpirun and ompi_info --version on each node; one installation for the whole job'),
    'slurm-node-killed': ('node', False,
        'Slurm killed the job because a node of it failed',
        'sacct -j JOB -o NodeList, sinfo -R: resubmit without that node (--exclude, submit --retries)'),
    'slurm-node-setup': ('node', False,
        'slurmd could not set the job up on a node (its prolog, its directory, its user or its environment th'
        "ere): that node's setup, not the job",
        "the node's slurmd log and sinfo -R; resubmit without it (--exclude) and tell the admins"),
    'slurm-refused': ('scheduler', False,
        "Slurm refused the request: a partition, account, QOS, time, node or resource limit the job's request"
        ' does not meet (the same request is refused again)',
        'fit the request to what the partition and account allow: sinfo -p PART, sacctmgr show assoc user=$US'
        'ER, scontrol show partition'),
    'slurm-version': ('environment', False,
        "Slurm's client and daemons (or the MPI plugin asked for) do not match this installation",
        "srun --version against the cluster's; srun --mpi=list for the plugins it has"),
    'ucx-network': ('network', False,
        'UCX could not connect some endpoints: no transport reaches the other process',
        'UCX_TLS and UCX_NET_DEVICES on both nodes (ucx_info -d); the interfaces they share'),
    'ucx-peer': ('peer', False,
        'UCX lost its endpoint to another process (reset, rejected or timed out): that process died first or '
        'the link broke',
        "the other process's log; if it lives, clusterdoc check --perf on both nodes (the fabric)"),
}
# name, class, needles, lowercase, the format string, its source
ROWS: list[tuple[str, str, tuple[str, ...], bool, str, str]] = [
    ('cat-ompi-openib-init-fail-no-mem', 'ompi-locked-memory',
     ('The OpenFabrics (openib) BTL failed to initialize while trying to',), False,
     'The OpenFabrics (openib) BTL failed to initialize while trying to',
     'https://github.com/open-mpi/ompi/blob/ea8f4d03089018f08451f42f2cfa2467570f395e/opal/mca/btl/openib/h'
     'elp-mpi-btl-openib.txt#L113'),
    ('cat-ompi-openib-pp-rnr-retry-exceeded', 'ompi-ib',
     ('The OpenFabrics "receiver not ready" retry count on a per-peer',), False,
     'The OpenFabrics "receiver not ready" retry count on a per-peer',
     'https://github.com/open-mpi/ompi/blob/ea8f4d03089018f08451f42f2cfa2467570f395e/opal/mca/btl/openib/h'
     'elp-mpi-btl-openib.txt#L150'),
    ('cat-ompi-openib-srq-rnr-retry-exceeded', 'ompi-ib',
     ('The OpenFabrics "receiver not ready" retry count on a shared receive',), False,
     'The OpenFabrics "receiver not ready" retry count on a shared receive',
     'https://github.com/open-mpi/ompi/blob/ea8f4d03089018f08451f42f2cfa2467570f395e/opal/mca/btl/openib/h'
     'elp-mpi-btl-openib.txt#L176'),
    ('cat-ompi-openib-of-error-event', 'ompi-ib',
     ('The OpenFabrics stack has reported a network error event', 'Open MPI'), False,
     'The OpenFabrics stack has reported a network error event.  Open MPI',
     'https://github.com/open-mpi/ompi/blob/ea8f4d03089018f08451f42f2cfa2467570f395e/opal/mca/btl/openib/h'
     'elp-mpi-btl-openib.txt#L292'),
    ('cat-ompi-openib-of-unknown-event', 'ompi-ib',
     ('The OpenFabrics stack has reported an unknown network error event',), False,
     'The OpenFabrics stack has reported an unknown network error event.',
     'https://github.com/open-mpi/ompi/blob/ea8f4d03089018f08451f42f2cfa2467570f395e/opal/mca/btl/openib/h'
     'elp-mpi-btl-openib.txt#L303'),
    ('cat-ompi-connect-rdma-cm-device-removal', 'ompi-ib',
     ('The RDMA CM returned that the device Open MPI was trying to use has',), False,
     'The RDMA CM returned that the device Open MPI was trying to use has',
     'https://github.com/open-mpi/ompi/blob/ea8f4d03089018f08451f42f2cfa2467570f395e/opal/mca/btl/openib/c'
     'onnect/help-mpi-btl-openib-cpc-rdmacm.txt#L49'),
    ('cat-ompi-connect-rdma-cm-event-error', 'ompi-ib',
     ('The RDMA CM returned an event error while attempting to make a',), False,
     'The RDMA CM returned an event error while attempting to make a',
     'https://github.com/open-mpi/ompi/blob/ea8f4d03089018f08451f42f2cfa2467570f395e/opal/mca/btl/openib/c'
     'onnect/help-mpi-btl-openib-cpc-rdmacm.txt#L58'),
    ('cat-ompi-tcp-peer-hung-up', 'ompi-peer-gone',
     ('An MPI communication peer process has unexpectedly disconnected',), False,
     'An MPI communication peer process has unexpectedly disconnected.  This',
     'https://github.com/open-mpi/ompi/blob/ea8f4d03089018f08451f42f2cfa2467570f395e/opal/mca/btl/tcp/help'
     '-mpi-btl-tcp.txt#L73'),
    ('cat-ompi-vader-sys-call-fail', 'ompi-shm-syscall',
     ('A system call failed during vader shared memory BTL initialization',), False,
     'A system call failed during vader shared memory BTL initialization',
     'https://github.com/open-mpi/ompi/blob/ea8f4d03089018f08451f42f2cfa2467570f395e/opal/mca/btl/vader/he'
     'lp-btl-vader.txt#L20'),
    ('cat-ompi-vader-cma-different-user-namespace-error', 'ompi-shm',
     ('ERROR: Linux kernel CMA support was requested via the',), False,
     'ERROR: Linux kernel CMA support was requested via the',
     'https://github.com/open-mpi/ompi/blob/ea8f4d03089018f08451f42f2cfa2467570f395e/opal/mca/btl/vader/he'
     'lp-btl-vader.txt#L130'),
    ('cat-ompi-smcuda-sys-call-fail', 'ompi-shm-syscall',
     ('A system call failed during sm BTL initialization that should',), False,
     'A system call failed during sm BTL initialization that should',
     'https://github.com/open-mpi/ompi/blob/ea8f4d03089018f08451f42f2cfa2467570f395e/opal/mca/btl/smcuda/h'
     'elp-mpi-btl-smcuda.txt#L17'),
    ('cat-ompi-verbs-ibv-open-device-fail', 'ompi-verbs-device',
     ('Open MPI failed to open an OpenFabrics device', 'This is an unusual'), False,
     'Open MPI failed to open an OpenFabrics device.  This is an unusual',
     'https://github.com/open-mpi/ompi/blob/ea8f4d03089018f08451f42f2cfa2467570f395e/opal/mca/common/verbs'
     '/help-opal-common-verbs.txt#L11'),
    ('cat-ompi-verbs-ibv-query-device-fail', 'ompi-verbs-device',
     ('Open MPI failed to query an OpenFabrics device', 'This is an unusual'), False,
     'Open MPI failed to query an OpenFabrics device.  This is an unusual',
     'https://github.com/open-mpi/ompi/blob/ea8f4d03089018f08451f42f2cfa2467570f395e/opal/mca/common/verbs'
     '/help-opal-common-verbs.txt#L25'),
    ('cat-ompi-cuda-dlopen-failed', 'ompi-cuda-lib',
     ('The library attempted to open the following supporting CUDA libraries',), False,
     'The library attempted to open the following supporting CUDA libraries,',
     'https://github.com/open-mpi/ompi/blob/ea8f4d03089018f08451f42f2cfa2467570f395e/opal/mca/common/cuda/'
     'help-mpi-common-cuda.txt#L165'),
    ('cat-ompi-cuda-dlsym-failed', 'ompi-cuda-lib',
     ('An error occurred while trying to map in the address of a function',), False,
     'An error occurred while trying to map in the address of a function.',
     'https://github.com/open-mpi/ompi/blob/ea8f4d03089018f08451f42f2cfa2467570f395e/opal/mca/common/cuda/'
     'help-mpi-common-cuda.txt#L174'),
    ('cat-ompi-sm-mmap-too-small', 'ompi-shm',
     ('Open MPI requested a shared memory segment that was too small to do',), False,
     'Open MPI requested a shared memory segment that was too small to do',
     'https://github.com/open-mpi/ompi/blob/ea8f4d03089018f08451f42f2cfa2467570f395e/opal/mca/common/sm/he'
     'lp-mpi-common-sm.txt#L16'),
    ('cat-ompi-mmap-sys-call-fail', 'ompi-shm-syscall',
     ('A system call failed during shared memory initialization that should',), False,
     'A system call failed during shared memory initialization that should',
     'https://github.com/open-mpi/ompi/blob/ea8f4d03089018f08451f42f2cfa2467570f395e/opal/mca/shmem/mmap/h'
     'elp-opal-shmem-mmap.txt#L16'),
    ('cat-ompi-mmap-target-full', 'ompi-shm',
     ('It appears as if there is not enough space for', 'the shared-memory backing'), False,
     'It appears as if there is not enough space for %s (the shared-memory backing',
     'https://github.com/open-mpi/ompi/blob/ea8f4d03089018f08451f42f2cfa2467570f395e/opal/mca/shmem/mmap/h'
     'elp-opal-shmem-mmap.txt#L47'),
    ('cat-ompi-ofi-ofi-call-fail', 'ompi-ofi',
     ('Open MPI failed an OFI Libfabric library call', 'This is highly'), False,
     'Open MPI failed an OFI Libfabric library call (%s).  This is highly',
     'https://github.com/open-mpi/ompi/blob/ea8f4d03089018f08451f42f2cfa2467570f395e/ompi/mca/mtl/ofi/help'
     '-mtl-ofi.txt#L13'),
    ('cat-ompi-psm2-unable-to-open-endpoint', 'ompi-psm2',
     ('PSM2 was unable to open an endpoint. Please make sure that the network link is',), False,
     'PSM2 was unable to open an endpoint. Please make sure that the network link is',
     'https://github.com/open-mpi/ompi/blob/ea8f4d03089018f08451f42f2cfa2467570f395e/ompi/mca/mtl/psm2/hel'
     'p-mtl-psm2.txt#L22'),
    ('cat-ompi-psm2-error-polling-network', 'ompi-psm2',
     ('occurred in attempting to make network progress (psm2_mq_ipeek', 'Error'), False,
     'Error %s occurred in attempting to make network progress (psm2_mq_ipeek).',
     'https://github.com/open-mpi/ompi/blob/ea8f4d03089018f08451f42f2cfa2467570f395e/ompi/mca/mtl/psm2/hel'
     'p-mtl-psm2.txt#L34'),
    ('cat-ompi-r2-unreachable-proc', 'ompi-unreachable',
     ('At least one pair of MPI processes are unable to reach each other for',), False,
     'At least one pair of MPI processes are unable to reach each other for',
     'https://github.com/open-mpi/ompi/blob/ea8f4d03089018f08451f42f2cfa2467570f395e/ompi/mca/bml/r2/help-'
     'mca-bml-r2.txt#L23'),
    ('cat-ompi-runtime-mpi-init-startup-internal-failure', 'ompi-init-failed',
     ('failed for some reason; your parallel process is', 'It looks like'), False,
     'It looks like %s failed for some reason; your parallel process is',
     'https://github.com/open-mpi/ompi/blob/ea8f4d03089018f08451f42f2cfa2467570f395e/ompi/runtime/help-mpi'
     '-runtime.txt#L25'),
    ('cat-ompi-runtime-mpi-init-startup-pml-add-procs-fail', 'ompi-unreachable',
     ('MPI_INIT has failed because at least one MPI process is unreachable',), False,
     'MPI_INIT has failed because at least one MPI process is unreachable',
     'https://github.com/open-mpi/ompi/blob/ea8f4d03089018f08451f42f2cfa2467570f395e/ompi/runtime/help-mpi'
     '-runtime.txt#L36'),
    ('cat-ompi-runtime-mpi-init-invoked-multiple-times', 'ompi-init-twice',
     ('Open MPI has detected that this process has attempted to initialize',), False,
     'Open MPI has detected that this process has attempted to initialize',
     'https://github.com/open-mpi/ompi/blob/ea8f4d03089018f08451f42f2cfa2467570f395e/ompi/runtime/help-mpi'
     '-runtime.txt#L56'),
    ('cat-ompi-base-daemon-died-no-signal', 'ompi-daemon-lost',
     ('A daemon died unexpectedly with status', 'while attempting'), False,
     'A daemon died unexpectedly with status %d while attempting',
     'https://github.com/open-mpi/ompi/blob/ea8f4d03089018f08451f42f2cfa2467570f395e/orte/mca/plm/base/hel'
     'p-plm-base.txt#L37'),
    ('cat-ompi-base-daemon-died-signal-core', 'ompi-daemon-lost',
     ('A daemon died unexpectedly on signal', 'with core) while'), False,
     'A daemon died unexpectedly on signal %d (with core) while',
     'https://github.com/open-mpi/ompi/blob/ea8f4d03089018f08451f42f2cfa2467570f395e/orte/mca/plm/base/hel'
     'p-plm-base.txt#L48'),
    ('cat-ompi-base-daemon-died-signal', 'ompi-daemon-lost',
     ('A daemon died unexpectedly on signal', 'while attempting to'), False,
     'A daemon died unexpectedly on signal %d  while attempting to',
     'https://github.com/open-mpi/ompi/blob/ea8f4d03089018f08451f42f2cfa2467570f395e/orte/mca/plm/base/hel'
     'p-plm-base.txt#L59'),
    ('cat-ompi-rsh-agent-not-found', 'ompi-install',
     ('The value of the MCA parameter "plm_rsh_agent" was set to a path',), False,
     'The value of the MCA parameter "plm_rsh_agent" was set to a path',
     'https://github.com/open-mpi/ompi/blob/ea8f4d03089018f08451f42f2cfa2467570f395e/orte/mca/plm/rsh/help'
     '-plm-rsh.txt#L23'),
    ('cat-ompi-rsh-no-local-orted', 'ompi-install',
     ('The rsh PLS component was not able to find the executable "orted" in',), False,
     'The rsh PLS component was not able to find the executable "orted" in',
     'https://github.com/open-mpi/ompi/blob/ea8f4d03089018f08451f42f2cfa2467570f395e/orte/mca/plm/rsh/help'
     '-plm-rsh.txt#L31'),
    ('cat-ompi-slurm-no-srun', 'ompi-install',
     ('The SLURM process starter for OpenMPI was unable to locate a',), False,
     'The SLURM process starter for OpenMPI was unable to locate a',
     'https://github.com/open-mpi/ompi/blob/ea8f4d03089018f08451f42f2cfa2467570f395e/orte/mca/plm/slurm/he'
     'lp-plm-slurm.txt#L53'),
    ('cat-ompi-base-orte-rmaps-base-alloc-error', 'ompi-too-many-procs',
     ('There are not enough slots available in the system to satisfy the',), False,
     'There are not enough slots available in the system to satisfy the %d',
     'https://github.com/open-mpi/ompi/blob/ea8f4d03089018f08451f42f2cfa2467570f395e/orte/mca/rmaps/base/h'
     'elp-orte-rmaps-base.txt#L26'),
    ('cat-ompi-base-orte-rmaps-base-not-all-mapped-alloc', 'ompi-too-many-procs',
     ('Some of the requested hosts are not included in the current allocation for the',), False,
     'Some of the requested hosts are not included in the current allocation for the',
     'https://github.com/open-mpi/ompi/blob/ea8f4d03089018f08451f42f2cfa2467570f395e/orte/mca/rmaps/base/h'
     'elp-orte-rmaps-base.txt#L55'),
    ('cat-ompi-base-orte-rmaps-base-all-available-resources-used', 'ompi-too-many-procs',
     ('All nodes which are allocated for this job are already filled',), False,
     'All nodes which are allocated for this job are already filled.',
     'https://github.com/open-mpi/ompi/blob/ea8f4d03089018f08451f42f2cfa2467570f395e/orte/mca/rmaps/base/h'
     'elp-orte-rmaps-base.txt#L83'),
    ('cat-ompi-base-too-many-cpus-per-rank', 'ompi-too-many-procs',
     ('Your job has requested more cpus per process(rank) than there',), False,
     'Your job has requested more cpus per process(rank) than there',
     'https://github.com/open-mpi/ompi/blob/ea8f4d03089018f08451f42f2cfa2467570f395e/orte/mca/rmaps/base/h'
     'elp-orte-rmaps-base.txt#L109'),
    ('cat-ompi-base-slurm-error', 'ompi-install',
     ('The application appears to have been direct launched using "srun',), False,
     'The application appears to have been direct launched using "srun",',
     'https://github.com/open-mpi/ompi/blob/ea8f4d03089018f08451f42f2cfa2467570f395e/orte/mca/ess/base/hel'
     'p-ess-base.txt#L54'),
    ('cat-ompi-base-failed-daemon', 'ompi-daemon-lost',
     ('An ORTE daemon has unexpectedly failed after launch and before',), False,
     'An ORTE daemon has unexpectedly failed after launch and before',
     'https://github.com/open-mpi/ompi/blob/ea8f4d03089018f08451f42f2cfa2467570f395e/orte/mca/errmgr/base/'
     'help-errmgr-base.txt#L59'),
    ('cat-ompi-base-no-connect', 'ompi-daemon-lost',
     ('ORTE is unable to establish a communication connection to the',), False,
     'ORTE is unable to establish a communication connection to the',
     'https://github.com/open-mpi/ompi/blob/ea8f4d03089018f08451f42f2cfa2467570f395e/orte/mca/errmgr/base/'
     'help-errmgr-base.txt#L90'),
    ('cat-ompi-tcp-version-mismatch', 'ompi-version',
     ('Open MPI detected a mismatch in versions between two processes',), False,
     'Open MPI detected a mismatch in versions between two processes.  This',
     'https://github.com/open-mpi/ompi/blob/ea8f4d03089018f08451f42f2cfa2467570f395e/orte/mca/oob/tcp/help'
     '-oob-tcp.txt#L117'),
    ('cat-ompi-orterun-orterun-sys-limit-sockets', 'ompi-launch-limit',
     ('Error: system limit exceeded on number of network connections that can be open',), False,
     'Error: system limit exceeded on number of network connections that can be open',
     'https://github.com/open-mpi/ompi/blob/ea8f4d03089018f08451f42f2cfa2467570f395e/orte/tools/orterun/he'
     'lp-orterun.txt#L219'),
    ('cat-ompi-orterun-orterun-wdir-not-found', 'ompi-launch-limit',
     ('was unable to launch the specified application as it could not',), False,
     '%s was unable to launch the specified application as it could not',
     'https://github.com/open-mpi/ompi/blob/ea8f4d03089018f08451f42f2cfa2467570f395e/orte/tools/orterun/he'
     'lp-orterun.txt#L255'),
    ('cat-slurm-protocol-version-error', 'slurm-version',
     ('Incompatible versions of client and server code', 'error: '), False,
     'error: Incompatible versions of client and server code',
     'https://github.com/SchedMD/slurm/blob/284c3b95f08a2dc2478499837b03355e1b9c5c75/src/common/slurm_errn'
     'o.c#L100'),
    ('cat-slurm-mpi-plugin-name-invalid', 'slurm-version',
     ('error: ', 'Invalid MPI plugin name'), False,
     'error: Invalid MPI plugin name',
     'https://github.com/SchedMD/slurm/blob/284c3b95f08a2dc2478499837b03355e1b9c5c75/src/common/slurm_errn'
     'o.c#L116'),
    ('cat-slurm-invalid-partition-name', 'slurm-refused',
     ('error: ', 'Invalid partition name specified'), False,
     'error: Invalid partition name specified',
     'https://github.com/SchedMD/slurm/blob/284c3b95f08a2dc2478499837b03355e1b9c5c75/src/common/slurm_errn'
     'o.c#L221'),
    ('cat-slurm-default-partition-not-set', 'slurm-refused',
     ('error: ', 'No partition specified or system default partition'), False,
     'error: No partition specified or system default partition',
     'https://github.com/SchedMD/slurm/blob/284c3b95f08a2dc2478499837b03355e1b9c5c75/src/common/slurm_errn'
     'o.c#L225'),
    ('cat-slurm-job-missing-required-partition-group', 'slurm-refused',
     ("User's group not permitted to use this partition", 'error: '), False,
     "error: User's group not permitted to use this partition",
     'https://github.com/SchedMD/slurm/blob/284c3b95f08a2dc2478499837b03355e1b9c5c75/src/common/slurm_errn'
     'o.c#L233'),
    ('cat-slurm-requested-nodes-not-in-partition', 'slurm-refused',
     ('Requested nodes not in this partition', 'error: '), False,
     'error: Requested nodes not in this partition',
     'https://github.com/SchedMD/slurm/blob/284c3b95f08a2dc2478499837b03355e1b9c5c75/src/common/slurm_errn'
     'o.c#L237'),
    ('cat-slurm-too-many-requested-cpus', 'slurm-refused',
     ('More processors requested than permitted', 'error: '), False,
     'error: More processors requested than permitted',
     'https://github.com/SchedMD/slurm/blob/284c3b95f08a2dc2478499837b03355e1b9c5c75/src/common/slurm_errn'
     'o.c#L241'),
    ('cat-slurm-invalid-node-count', 'slurm-refused',
     ('Node count specification invalid', 'error: '), False,
     'error: Node count specification invalid',
     'https://github.com/SchedMD/slurm/blob/284c3b95f08a2dc2478499837b03355e1b9c5c75/src/common/slurm_errn'
     'o.c#L245'),
    ('cat-slurm-max-job-count', 'slurm-refused',
     ('error: ', 'MaxJobCount limit reached'), False,
     'error: MaxJobCount limit reached',
     'https://github.com/SchedMD/slurm/blob/284c3b95f08a2dc2478499837b03355e1b9c5c75/src/common/slurm_errn'
     'o.c#L249'),
    ('cat-slurm-requested-part-config-unavailable', 'slurm-refused',
     ('Requested partition configuration not available now', 'error: '), False,
     'error: Requested partition configuration not available now',
     'https://github.com/SchedMD/slurm/blob/284c3b95f08a2dc2478499837b03355e1b9c5c75/src/common/slurm_errn'
     'o.c#L281'),
    ('cat-slurm-invalid-feature', 'slurm-refused',
     ('Invalid feature specification', 'error: '), False,
     'error: Invalid feature specification',
     'https://github.com/SchedMD/slurm/blob/284c3b95f08a2dc2478499837b03355e1b9c5c75/src/common/slurm_errn'
     'o.c#L341'),
    ('cat-slurm-invalid-task-memory', 'slurm-refused',
     ('Memory required by task is not available', 'error: '), False,
     'error: Memory required by task is not available',
     'https://github.com/SchedMD/slurm/blob/284c3b95f08a2dc2478499837b03355e1b9c5c75/src/common/slurm_errn'
     'o.c#L411'),
    ('cat-slurm-invalid-account', 'slurm-refused',
     ('error: ', 'Invalid account or account/partition combination specified'), False,
     'error: Invalid account or account/partition combination specified',
     'https://github.com/SchedMD/slurm/blob/284c3b95f08a2dc2478499837b03355e1b9c5c75/src/common/slurm_errn'
     'o.c#L415'),
    ('cat-slurm-invalid-qos', 'slurm-refused',
     ('Invalid qos specification', 'error: '), False,
     'error: Invalid qos specification',
     'https://github.com/SchedMD/slurm/blob/284c3b95f08a2dc2478499837b03355e1b9c5c75/src/common/slurm_errn'
     'o.c#L427'),
    ('cat-slurm-invalid-wckey', 'slurm-refused',
     ('Invalid wckey specification', 'error: '), False,
     'error: Invalid wckey specification',
     'https://github.com/SchedMD/slurm/blob/284c3b95f08a2dc2478499837b03355e1b9c5c75/src/common/slurm_errn'
     'o.c#L431'),
    ('cat-slurm-invalid-licenses', 'slurm-refused',
     ('Invalid license specification', 'error: '), False,
     'error: Invalid license specification',
     'https://github.com/SchedMD/slurm/blob/284c3b95f08a2dc2478499837b03355e1b9c5c75/src/common/slurm_errn'
     'o.c#L435'),
    ('cat-slurm-accounting-policy', 'slurm-refused',
     ("Job violates accounting/QOS policy (job submit limit, user's", 'error: '), False,
     "error: Job violates accounting/QOS policy (job submit limit, user's",
     'https://github.com/SchedMD/slurm/blob/284c3b95f08a2dc2478499837b03355e1b9c5c75/src/common/slurm_errn'
     'o.c#L444'),
    ('cat-slurm-invalid-time-limit', 'slurm-refused',
     ('Requested time limit is invalid (missing or exceeds some limit', 'error: '), False,
     'error: Requested time limit is invalid (missing or exceeds some limit)',
     'https://github.com/SchedMD/slurm/blob/284c3b95f08a2dc2478499837b03355e1b9c5c75/src/common/slurm_errn'
     'o.c#L449'),
    ('cat-slurm-reservation-access', 'slurm-refused',
     ('Access denied to requested reservation', 'error: '), False,
     'error: Access denied to requested reservation',
     'https://github.com/SchedMD/slurm/blob/284c3b95f08a2dc2478499837b03355e1b9c5c75/src/common/slurm_errn'
     'o.c#L453'),
    ('cat-slurm-reservation-invalid', 'slurm-refused',
     ('Requested reservation is invalid', 'error: '), False,
     'error: Requested reservation is invalid',
     'https://github.com/SchedMD/slurm/blob/284c3b95f08a2dc2478499837b03355e1b9c5c75/src/common/slurm_errn'
     'o.c#L457'),
    ('cat-slurm-reservation-not-usable', 'slurm-refused',
     ('Requested reservation not usable now', 'error: '), False,
     'error: Requested reservation not usable now',
     'https://github.com/SchedMD/slurm/blob/284c3b95f08a2dc2478499837b03355e1b9c5c75/src/common/slurm_errn'
     'o.c#L469'),
    ('cat-slurm-node-not-avail', 'slurm-refused',
     ('Required node not available (down, drained or reserved', 'error: '), False,
     'error: Required node not available (down, drained or reserved)',
     'https://github.com/SchedMD/slurm/blob/284c3b95f08a2dc2478499837b03355e1b9c5c75/src/common/slurm_errn'
     'o.c#L505'),
    ('cat-slurm-invalid-cpu-count', 'slurm-refused',
     ('CPU count specification invalid', 'error: '), False,
     'error: CPU count specification invalid',
     'https://github.com/SchedMD/slurm/blob/284c3b95f08a2dc2478499837b03355e1b9c5c75/src/common/slurm_errn'
     'o.c#L509'),
    ('cat-slurm-partition-not-avail', 'slurm-refused',
     ('Required partition not available (inactive or drain', 'error: '), False,
     'error: Required partition not available (inactive or drain)',
     'https://github.com/SchedMD/slurm/blob/284c3b95f08a2dc2478499837b03355e1b9c5c75/src/common/slurm_errn'
     'o.c#L513'),
    ('cat-slurm-qos-thres', 'slurm-refused',
     ('Requested account has breached requested QOS usage threshold', 'error: '), False,
     'error: Requested account has breached requested QOS usage threshold',
     'https://github.com/SchedMD/slurm/blob/284c3b95f08a2dc2478499837b03355e1b9c5c75/src/common/slurm_errn'
     'o.c#L529'),
    ('cat-slurm-step-limit', 'slurm-refused',
     ('error: ', 'Step limit reached for this job'), False,
     'error: Step limit reached for this job',
     'https://github.com/SchedMD/slurm/blob/284c3b95f08a2dc2478499837b03355e1b9c5c75/src/common/slurm_errn'
     'o.c#L537'),
    ('cat-slurm-burst-buffer-limit', 'slurm-refused',
     ('Burst Buffer resource limit exceeded', 'error: '), False,
     'error: Burst Buffer resource limit exceeded',
     'https://github.com/SchedMD/slurm/blob/284c3b95f08a2dc2478499837b03355e1b9c5c75/src/common/slurm_errn'
     'o.c#L602'),
    ('cat-slurm-invalid-burst-buffer-request', 'slurm-refused',
     ('error: ', 'Burst Buffer request invalid'), False,
     'error: Burst Buffer request invalid',
     'https://github.com/SchedMD/slurm/blob/284c3b95f08a2dc2478499837b03355e1b9c5c75/src/common/slurm_errn'
     'o.c#L606'),
    ('cat-slurm-partition-down', 'slurm-refused',
     ('Partition in DOWN state', 'error: '), False,
     'error: Partition in DOWN state',
     'https://github.com/SchedMD/slurm/blob/284c3b95f08a2dc2478499837b03355e1b9c5c75/src/common/slurm_errn'
     'o.c#L634'),
    ('cat-slurm-submissions-disabled', 'slurm-refused',
     ('System submissions disabled', 'error: '), False,
     'error: System submissions disabled',
     'https://github.com/SchedMD/slurm/blob/284c3b95f08a2dc2478499837b03355e1b9c5c75/src/common/slurm_errn'
     'o.c#L646'),
    ('cat-slurm-batch-constraint', 'slurm-refused',
     ('Job --batch option is invalid or not a subset of --constraint', 'error: '), False,
     'error: Job --batch option is invalid or not a subset of --constraint',
     'https://github.com/SchedMD/slurm/blob/284c3b95f08a2dc2478499837b03355e1b9c5c75/src/common/slurm_errn'
     'o.c#L678'),
    ('cat-slurm-invalid-tres', 'slurm-refused',
     ('Invalid Trackable RESource (TRES) specification', 'error: '), False,
     'error: Invalid Trackable RESource (TRES) specification',
     'https://github.com/SchedMD/slurm/blob/284c3b95f08a2dc2478499837b03355e1b9c5c75/src/common/slurm_errn'
     'o.c#L682'),
    ('cat-slurm-reservation-maint', 'slurm-refused',
     ('Job can not start due to maintenance reservation', 'error: '), False,
     'error: Job can not start due to maintenance reservation.',
     'https://github.com/SchedMD/slurm/blob/284c3b95f08a2dc2478499837b03355e1b9c5c75/src/common/slurm_errn'
     'o.c#L694'),
    ('cat-slurm-invalid-gres-type', 'slurm-refused',
     ('Invalid GRES specification (with and without type identification', 'error: '), False,
     'error: Invalid GRES specification (with and without type identification)',
     'https://github.com/SchedMD/slurm/blob/284c3b95f08a2dc2478499837b03355e1b9c5c75/src/common/slurm_errn'
     'o.c#L698'),
    ('cat-slurm-invalid-time-min-limit', 'slurm-refused',
     ("Invalid time-min specification (exceeds job's time or other limits", 'error: '), False,
     "error: Invalid time-min specification (exceeds job's time or other limits)",
     'https://github.com/SchedMD/slurm/blob/284c3b95f08a2dc2478499837b03355e1b9c5c75/src/common/slurm_errn'
     'o.c#L718'),
    ('cat-slurm-bad-thread-per-core', 'slurm-refused',
     ('Cannot request more threads per core than the job allocation', 'error: '), False,
     'error: Cannot request more threads per core than the job allocation',
     'https://github.com/SchedMD/slurm/blob/284c3b95f08a2dc2478499837b03355e1b9c5c75/src/common/slurm_errn'
     'o.c#L751'),
    ('cat-slurm-insufficient-gres', 'slurm-refused',
     ('Insufficient GRES available in allocation', 'error: '), False,
     'error: Insufficient GRES available in allocation',
     'https://github.com/SchedMD/slurm/blob/284c3b95f08a2dc2478499837b03355e1b9c5c75/src/common/slurm_errn'
     'o.c#L759'),
    ('cat-slurm-job-node-fail-killed', 'slurm-node-killed',
     ('Job killed due node failure', 'error: '), False,
     'error: Job killed due node failure',
     'https://github.com/SchedMD/slurm/blob/284c3b95f08a2dc2478499837b03355e1b9c5c75/src/common/slurm_errn'
     'o.c#L859'),
    ('cat-slurm-invalid-assoc', 'slurm-refused',
     ('error: ', 'Invalid or unknown association'), False,
     'error: Invalid or unknown association',
     'https://github.com/SchedMD/slurm/blob/284c3b95f08a2dc2478499837b03355e1b9c5c75/src/common/slurm_errn'
     'o.c#L883'),
    ('cat-slurm-invalid-relative-qos', 'slurm-refused',
     ('Invalid QOS specification, relative QOS can only be used in a single partition per cluster', 'error: '), False,
     'error: Invalid QOS specification, relative QOS can only be used in a single partition per cluster.',
     'https://github.com/SchedMD/slurm/blob/284c3b95f08a2dc2478499837b03355e1b9c5c75/src/common/slurm_errn'
     'o.c#L895'),
    ('cat-slurm-node-failure', 'slurm-node-killed',
     ('Spank plugin failure, node failed', 'error: '), False,
     'error: Spank plugin failure, node failed',
     'https://github.com/SchedMD/slurm/blob/284c3b95f08a2dc2478499837b03355e1b9c5c75/src/common/slurm_errn'
     'o.c#L1043'),
    ('cat-slurm-slurmd-create-batch-dir-error', 'slurm-node-setup',
     ('Slurmd could not create a batch directory or file', 'error: '), False,
     'error: Slurmd could not create a batch directory or file',
     'https://github.com/SchedMD/slurm/blob/284c3b95f08a2dc2478499837b03355e1b9c5c75/src/common/slurm_errn'
     'o.c#L1077'),
    ('cat-slurm-slurmd-setup-environment-error', 'slurm-node-setup',
     ('Slurmd could not set up environment for batch job', 'error: '), False,
     'error: Slurmd could not set up environment for batch job',
     'https://github.com/SchedMD/slurm/blob/284c3b95f08a2dc2478499837b03355e1b9c5c75/src/common/slurm_errn'
     'o.c#L1081'),
    ('cat-slurm-slurmd-set-uid-or-gid-error', 'slurm-node-setup',
     ('Slurmd could not set UID or GID', 'error: '), False,
     'error: Slurmd could not set UID or GID',
     'https://github.com/SchedMD/slurm/blob/284c3b95f08a2dc2478499837b03355e1b9c5c75/src/common/slurm_errn'
     'o.c#L1085'),
    ('cat-slurm-slurmd-prolog-failed', 'slurm-node-setup',
     ('Job prolog failed', 'error: '), False,
     'error: Job prolog failed',
     'https://github.com/SchedMD/slurm/blob/284c3b95f08a2dc2478499837b03355e1b9c5c75/src/common/slurm_errn'
     'o.c#L1097'),
    ('cat-mpich-argnonpos', 'mpich-arg',
     ('Invalid argument; must be positive',), False,
     'Invalid argument; must be positive',
     'https://github.com/pmodels/mpich/blob/6a79bf6575c3b5b41cabbd3d59340634d6f9412d/src/mpi/errhan/errnam'
     'es.txt#L1'),
    ('cat-mpich-argneg', 'mpich-arg',
     ('Invalid argument; must be non-negative',), False,
     'Invalid argument; must be non-negative',
     'https://github.com/pmodels/mpich/blob/6a79bf6575c3b5b41cabbd3d59340634d6f9412d/src/mpi/errhan/errnam'
     'es.txt#L3'),
    ('cat-mpich-nomem', 'mpich-nomem',
     ('Out of memory (unable to allocate a',), False,
     "Out of memory (unable to allocate a '%s')",
     'https://github.com/pmodels/mpich/blob/6a79bf6575c3b5b41cabbd3d59340634d6f9412d/src/mpi/errhan/errnam'
     'es.txt#L22'),
    ('cat-mpich-nomem-2', 'mpich-nomem',
     ('Out of memory (unable to allocate', 'bytes'), False,
     'Out of memory (unable to allocate %d bytes)',
     'https://github.com/pmodels/mpich/blob/6a79bf6575c3b5b41cabbd3d59340634d6f9412d/src/mpi/errhan/errnam'
     'es.txt#L23'),
    ('cat-mpich-nomem2', 'mpich-nomem',
     ('probably out of memory', 'bytes of memory for', 'Unable to allocate'), False,
     'Unable to allocate %d bytes of memory for %s (probably out of memory)',
     'https://github.com/pmodels/mpich/blob/6a79bf6575c3b5b41cabbd3d59340634d6f9412d/src/mpi/errhan/errnam'
     'es.txt#L25'),
    ('cat-mpich-rankdup', 'mpich-arg',
     ('Duplicate ranks in rank array',), False,
     'Duplicate ranks in rank array',
     'https://github.com/pmodels/mpich/blob/6a79bf6575c3b5b41cabbd3d59340634d6f9412d/src/mpi/errhan/errnam'
     'es.txt#L65'),
    ('cat-mpich-rank', 'mpich-arg',
     ('but must be nonnegative and less than', 'Invalid rank has value'), False,
     'Invalid rank has value %d but must be nonnegative and less than %d',
     'https://github.com/pmodels/mpich/blob/6a79bf6575c3b5b41cabbd3d59340634d6f9412d/src/mpi/errhan/errnam'
     'es.txt#L103'),
    ('cat-mpich-argrange', 'mpich-arg',
     ('Argument is not within valid range',), False,
     'Argument is not within valid range',
     'https://github.com/pmodels/mpich/blob/6a79bf6575c3b5b41cabbd3d59340634d6f9412d/src/mpi/errhan/errnam'
     'es.txt#L113'),
    ('cat-mpich-buf-inplace', 'mpich-arg',
     ('cannot be MPI_IN_PLACE', 'buffer'), False,
     "buffer '%s' cannot be MPI_IN_PLACE",
     'https://github.com/pmodels/mpich/blob/6a79bf6575c3b5b41cabbd3d59340634d6f9412d/src/mpi/errhan/errnam'
     'es.txt#L176'),
    ('cat-mpich-bufalias', 'mpich-arg',
     ('Buffers must not be aliased',), False,
     'Buffers must not be aliased',
     'https://github.com/pmodels/mpich/blob/6a79bf6575c3b5b41cabbd3d59340634d6f9412d/src/mpi/errhan/errnam'
     'es.txt#L252'),
    ('cat-mpich-dtypenull', 'mpich-arg',
     ('Datatype for argument', 'is a null datatype'), False,
     'Datatype for argument %s is a null datatype',
     'https://github.com/pmodels/mpich/blob/6a79bf6575c3b5b41cabbd3d59340634d6f9412d/src/mpi/errhan/errnam'
     'es.txt#L255'),
    ('cat-mpich-rankarray', 'mpich-arg',
     ('Invalid rank in rank array',), False,
     'Invalid rank in rank array',
     'https://github.com/pmodels/mpich/blob/6a79bf6575c3b5b41cabbd3d59340634d6f9412d/src/mpi/errhan/errnam'
     'es.txt#L262'),
    ('cat-mpich-opundefined', 'mpich-arg',
     ('operation not defined for this datatype', 'MPI_Op'), False,
     'MPI_Op %s operation not defined for this datatype',
     'https://github.com/pmodels/mpich/blob/6a79bf6575c3b5b41cabbd3d59340634d6f9412d/src/mpi/errhan/errnam'
     'es.txt#L271'),
    ('cat-mpich-sock-connect', 'mpich-sock',
     ('unable to connect to', 'on port', 'errno'), False,
     'unable to connect to %s on port %d, %s (errno %d)',
     'https://github.com/pmodels/mpich/blob/6a79bf6575c3b5b41cabbd3d59340634d6f9412d/src/mpi/errhan/errnam'
     'es.txt#L596'),
    ('cat-mpich-shm-open', 'mpich-shm',
     ('unable to open a shared memory object',), False,
     'unable to open a shared memory object',
     'https://github.com/pmodels/mpich/blob/6a79bf6575c3b5b41cabbd3d59340634d6f9412d/src/mpi/errhan/errnam'
     'es.txt#L788'),
    ('cat-mpich-shm-open-2', 'mpich-shm',
     ('unable to open shared memory object', 'errno'), False,
     'unable to open shared memory object %s (errno %d)',
     'https://github.com/pmodels/mpich/blob/6a79bf6575c3b5b41cabbd3d59340634d6f9412d/src/mpi/errhan/errnam'
     'es.txt#L789'),
    ('cat-mpich-shmsize', 'mpich-shm',
     ('Shared memory subsystem unable to allocate a block of the requested size',), False,
     'Shared memory subsystem unable to allocate a block of the requested size',
     'https://github.com/pmodels/mpich/blob/6a79bf6575c3b5b41cabbd3d59340634d6f9412d/src/mpi/errhan/errnam'
     'es.txt#L794'),
    ('cat-mpich-comm-fail', 'mpich-comm-fail',
     ('Communication error with rank',), False,
     'Communication error with rank %d',
     'https://github.com/pmodels/mpich/blob/6a79bf6575c3b5b41cabbd3d59340634d6f9412d/src/mpi/errhan/errnam'
     'es.txt#L878'),
    ('cat-mpich-comm-fail-conn', 'mpich-comm-fail',
     ('Communication error during connect sequence',), False,
     'Communication error during connect sequence',
     'https://github.com/pmodels/mpich/blob/6a79bf6575c3b5b41cabbd3d59340634d6f9412d/src/mpi/errhan/errnam'
     'es.txt#L880'),
    ('cat-ucx-ucs-err-some-connects-failed', 'ucx-network',
     ('failed to connect some of the requested endpoints', 'ucx'), True,
     'UCX  ERROR Failed to connect some of the requested endpoints',
     'https://github.com/openucx/ucx/blob/9466d104a317c8ffddd9734e72055d8bbda021b3/src/ucs/type/status.c#L'
     '50'),
    ('cat-ucx-ucs-err-rejected', 'ucx-peer',
     ('operation rejected by remote peer', 'ucx'), True,
     'UCX  ERROR Operation rejected by remote peer',
     'https://github.com/openucx/ucx/blob/9466d104a317c8ffddd9734e72055d8bbda021b3/src/ucs/type/status.c#L'
     '70'),
    ('cat-ucx-ucs-err-connection-reset', 'ucx-peer',
     ('connection reset by remote peer', 'ucx'), True,
     'UCX  ERROR Connection reset by remote peer',
     'https://github.com/openucx/ucx/blob/9466d104a317c8ffddd9734e72055d8bbda021b3/src/ucs/type/status.c#L'
     '74'),
    ('cat-ucx-ucs-err-endpoint-timeout', 'ucx-peer',
     ('ucx  error', 'endpoint timeout'), True,
     'UCX  ERROR Endpoint timeout',
     'https://github.com/openucx/ucx/blob/9466d104a317c8ffddd9734e72055d8bbda021b3/src/ucs/type/status.c#L'
     '76'),
]
# fmt: on

SIGNATURES: list[Signature] = [
    S(name, cat, needles, meaning, learned, source, step, weak=weak, lower=lower)
    for name, cls, needles, lower, learned, source in ROWS
    for cat, weak, meaning, step in (CLASSES[cls],)
]
