"""The failure signatures `clusterdoc why` knows, one table per category (why/signatures.py puts them in
order and looks a line up in them):

    node.py         the node itself: its GPU (Xid, ECC, fallen off the bus), its memory or disk hardware, a node the
                    scheduler or runtime says died
    oom.py          memory that ran out: the GPU's, the host's, a job's or step's limit, as every runtime, allocator
                    and scheduler prints it
    network.py      the link between ranks: InfiniBand/RoCE/EFA completion errors, sockets that could not connect,
                    the transports NCCL, gloo and MPI use
    environment.py  the software stack or the container: versions, libraries, missing programs, paths, permissions,
                    shared memory, launch set-ups
    code.py         the job's own code or input: an application's fatal error, a script's arguments, a segfault with
                    the routine named
    desync.py       the ranks disagree: a collective of another shape, op or order, as each library's own check
                    states it
    hang.py         a wait that ended: a rank behind or stuck, in the runtimes' own words (mostly thin alone)
    scheduler.py    the scheduler or the site ended or refused the job: time limits, preemption, accounts,
                    cancellations, refusals
    peer.py         a rank lost its connection to another: never a cause by itself (the network, or the other rank
                    died first)
    effect.py       a rank stopped because something else failed: NCCL's abort after a timeout, a launcher's kill
"""
