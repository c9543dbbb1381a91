"""The `network` failure signatures: the link between ranks: InfiniBand/RoCE/EFA completion errors, sockets that
could not connect, the transports NCCL, gloo and MPI use.

One entry each (why/signature.py says what an entry holds). Within this table the first entry that matches a line
wins; why/signatures.py says the order of the tables.
"""

from __future__ import annotations

import re

from clusterdoc.why.signature import NODE, S, Signature

# UCX's prefix [host:pid:thread:tid], its "[" cut from a paste's first line too (ucx-9590)
UCX_HOST = re.compile(r"(?:^|\[)" + NODE + r":\d{1,10}:\d{1,4}:\d{1,10}\]")

SIGNATURES: list[Signature] = [
    # JAX's coordination service: tasks that did not register or reach a barrier in time. Its own text lists the
    # causes (tasks crashed before connecting, never scheduled, scheduling delays); a coordinator port no firewall
    # opens prints the same (jax-35905): candidates, never a verdict (llama2jax-20, gpurecipes-2, paxml-77,
    # levanter-432)
    S("jax-barrier-timeout", "network", ("DEADLINE_EXCEEDED: Barrier timed out",),
      "JAX's coordination service timed out waiting for tasks at a barrier (registration or the job's own)",
      "jaxlib.xla_extension.XlaRuntimeError: DEADLINE_EXCEEDED: Barrier timed out. Barrier_id: PjRT_Client_Connect. "
      "Timed out task names:", "https://github.com/ayaka14732/llama-2-jax/issues/20 (and AI-Hypercomputer/"
      "gpu-recipes#2, marin-community/levanter#432)",
      "the timed-out tasks' own logs (did they start? num_processes against what the launcher started), the "
      "coordinator's address and port from those hosts", weak=True),
    S("jax-register-deadline", "network", ("CoordinationService/RegisterTask",),
      "a JAX task could not register with the coordination service in time",
      "Additional GRPC error information from remote target unknown_target_for_coordination_leader while calling "
      "/tensorflow.CoordinationService/RegisterTask:", "https://github.com/google/paxml/issues/77 (and "
      "jax-ml/jax#35905)",
      "the coordinator's address and port from this host (a firewall, the port JAX picks), the other tasks' logs",
      weak=True),
    # --- network: the link itself ---
    S("no-route", "network", ("No route to host",),
      "a rank could not reach another's address: the route or the interface NCCL picked is wrong",
      "socketStartConnect: Connect to 192.168.19.14<52822> failed : No route to host",
      "https://github.com/hkproj/pytorch-transformer-distributed/issues/1",
      "set NCCL_SOCKET_IFNAME (and GLOO_SOCKET_IFNAME) to the interface the nodes reach each other on; "
      "clusterdoc check (net) on the nodes"),
    S("ib-completion-error", "network", ("NET/IB", "completion", "error 12"),
      "InfiniBand gave up on a transfer (status 12: transport retry counter exceeded): a link, a port or a peer HCA",
      "transport/net_ib.cu:781 WARN NET/IB : Got completion with error 12, opcode 1, len0, vendor err 129",
      "https://github.com/horovod/horovod/issues/147",
      "clusterdoc check --perf on the nodes (ibstat, link errors); NCCL_IB_HCA to the working ports"),
    S("ib-completion-status-12", "network", ("Got completion from peer", "status=12"),
      "InfiniBand gave up on a transfer (status 12: transport retry counter exceeded, vendor err 129): the link, "
      "a port, the peer's HCA or the RoCE/routing between the two addresses",
      "kp-ddp-worker-0:3468:3905 [4] ib_plugin.c:1615 NCCL WARN NET/IB : Got completion from peer "
      "10.216.210.236<54862> with status=12 opcode=0 len=0 vendor err 129 (Recv) localGid "
      "fd00:1148:9000:5000:4:200:3:ff22 remoteGidsfd00:1148:9000:5000:4:200:3:ff1f",
      "https://github.com/NVIDIA/nccl/issues/1405",
      "clusterdoc check --perf on the two nodes (ibstat, link errors, the routes between the addresses the line "
      "names); NCCL_IB_HCA to the working ports"),
    S("ib-async-fatal", "network", ("NET/IB", "async", "error"),
      "the InfiniBand adapter reported a fatal event (a catastrophic error of the HCA, a queue pair's fatal "
      "access or transport error): the link or the adapter of the node that printed it",
      "container-e275-1553839402050-12124-01-000057:815:864 [0] transport/net_ib.cu:80 NCCL WARN NET/IB : Got "
      "async event : local catastrophic error", "https://github.com/NVIDIA/nccl/issues/230",
      "clusterdoc check --perf on that node (ibstat, the port's error counters, dmesg for mlx5); resubmit without it "
      "meanwhile (--exclude)"),
    S("ib-completion-any", "network", ("NET/IB", "completion", "with error"),
      "InfiniBand failed a transfer (a work completion with an error status: the link, a port, the peer's HCA, "
      "the GID/RoCE setup between the two addresses)",
      "H100-2:19989:20082 [1] transport/net_ib.cc:1295 NCCL WARN NET/IB : Got completion from peer fe80::966d:ae03:"
      "8b:df78%ib0<53249> with error 4, opcode 32564, len 32564, vendor err 81 (Send)",
      "https://github.com/NVIDIA/nccl/issues/928",
      "clusterdoc check --perf on the nodes (ibstat, ibv_devinfo, link errors); NCCL_IB_HCA and NCCL_IB_GID_INDEX"),
    S("ucx-unreachable", "network", ("Destination is unreachable",),
      "UCX found no transport to reach another rank's address (an interface the other host cannot reach: a docker "
      "bridge, the wrong NIC)",
      "pml_ucx.c:424  Error: ucp_ep_create(proc=3) failed: Destination is unreachable",
      "https://github.com/NVIDIA/nccl-tests/issues/180 (and deepops-1199)",
      "pin the interface (UCX_NET_DEVICES, mpirun -x UCX_TLS / --mca btl_tcp_if_exclude docker0,lo)"),
    # session 22: verbs could not make an address handle for a peer (UCX's ud transport over RoCE: the GID of that
    # port does not route to the peer's), then UCX's ud_iface "failed to get peer address"
    S("ucx-create-ah", "network", ("ibv_create_ah(", "failed"),
      "InfiniBand/RoCE could not address a peer (ibv_create_ah failed: a RoCE port whose GID does not route to the "
      "peer, a port that is not set up): the fabric between the ranks, on that device",
      "ib_device.c:1319 UCX  ERROR   ibv_create_ah(dlid=49152 sl=0 port=1 src_path_bits=0 dgid=::ffff:172.17.22.101 "
      "sgid_index=1 traffic_class=106) on rocep33s0f1 failed: Invalid argument",
      "https://github.com/open-mpi/ompi/issues/9881",
      "UCX_NET_DEVICES to the ports that reach each other (ucx_info -d; show_gids for RoCE), or fix that port's "
      "GID/IP setup; clusterdoc check --perf between the nodes",
      node=re.compile(r"\[\d{6,12}\.\d{1,9}\] \[" + NODE + r":\d{1,10}:\d{1,4}\]")),
    S("name-not-resolved", "network", ("Name does not resolve",),
      "a host name did not resolve (DNS: the master's or a peer's name is not known where this ran)",
      "nslookup: can't resolve 'dlc1dwuhvtro4c27-master-0': Name does not resolve",
      "https://github.com/modelscope/ms-swift/issues/6368",
      "use an address the nodes resolve (MASTER_ADDR as an IP), or wait for the cluster's DNS entry"),
    S("ucx-ib-retry-exceeded", "network", ("Transport retry count exceeded",),
      "InfiniBand gave up on a transfer (UCX: transport retry count exceeded, NCCL's status 12): the link, a "
      "port, or the peer's adapter",
      "[r1i6n33:1546795:0:1546795] ib_mlx5_log.c:139  Transport retry count exceeded on mlx5_0:1/IB (synd 0x15 "
      "vend 0x81 hw_synd 0/0)", "https://github.com/hemelb-codes/hemelb/issues/813",
      "clusterdoc check --perf on the node (ibstat, link errors) and its peers; UCX_NET_DEVICES to the working ports",
      node=UCX_HOST),
    # a fabric's completion error in the words of the other NCCL network plugins: libfabric's (NET/OFI: EFA,
    # Slingshot/CXI) "completed with error" names a transfer the fabric could not deliver, as IB's status 12 does
    S("ofi-completion-error", "network", ("NET/OFI", "completed with error"),
      "the fabric (libfabric: EFA, Slingshot) could not deliver a transfer (UNDELIVERABLE, EHOSTUNREACH): a link, "
      "a port, or the peer's endpoint",
      "NET/OFI Request 0x7f14cc5b60c0 completed with error. RC: 113. Error: 2 (UNDELIVERABLE). Completed length: 0",
      "https://github.com/NVIDIA/nccl/issues/1928",
      "clusterdoc check --perf on the nodes (fi_info, the fabric's port counters: cxi_stat, the EFA's); "
      "FI_PROVIDER and NCCL_NET to the plugin the nodes share"),
    # bringing a queue pair up to its peer (INIT -> RTR -> RTS) failed: the addressing between the two ports (the
    # GID index, RoCE's routing or VLAN, a rail the peer is not on), whatever errno the verbs call returns
    S("ib-modify-qp", "network", ("ibv_modify_qp failed",),
      "InfiniBand/RoCE could not connect a queue pair to its peer (ibv_modify_qp): the addressing between the two "
      "ports (the GID index, RoCE routing, a rail the peer is not on)",
      "NCCL WARN Call to ibv_modify_qp failed with error Connection timed out",
      "https://github.com/NVIDIA/nccl/issues/769 (and nccl#2013's rail-only fabric: \"failed with 110\")",
      "NCCL_IB_GID_INDEX (show_gids: the RoCE v2 index), NCCL_IB_HCA to the ports that reach each other; "
      "clusterdoc check --perf between the two nodes"),
    # gloo could not connect every pair of ranks (its TCP mesh): the interface it picked does not reach the others
    S("gloo-full-mesh", "network", ("connectFullMesh failed",),
      "gloo could not connect its ranks to each other (its TCP mesh): the interface it picked does not reach the "
      "other nodes (a container's bridge, another subnet, a firewall)",
      "RuntimeError: Gloo connectFullMesh failed with [../third_party/gloo/gloo/transport/tcp/pair.cc:144] no error",
      "https://github.com/vllm-project/vllm/issues/5094 (and gpustack#2125, two docker nodes)",
      "set GLOO_SOCKET_IFNAME (and NCCL_SOCKET_IFNAME) to the interface the nodes reach each other on; containers: "
      "--network=host"),
    S("link-local-connect", "network", ("Connect to 169.254.",),
      "NCCL connected to a link-local address (169.254.x.x): it picked an interface the other node cannot reach",
      "socketStartConnect: Connect to 169.254.0.1<40815> failed : Software caused connection abort",
      "https://github.com/verl-project/verl/issues/726",
      "set NCCL_SOCKET_IFNAME (and GLOO_SOCKET_IFNAME) to the interface the nodes reach each other on"),
    S("link-local-connect6", "network", ("Connect to fe80:",),
      "NCCL connected to an IPv6 link-local address (fe80::): it picked an interface the other node cannot reach "
      "(a container's veth, docker0)",
      "NCCL WARN Connect to fe80::a480:7fff:fecf:1ed9%13<45166> failed : Network is unreachable",
      "https://github.com/Oneflow-Inc/DLPerf (its report's NCCL troubleshooting section)",
      "set NCCL_SOCKET_IFNAME (and GLOO_SOCKET_IFNAME) to the interface the nodes reach each other on"),
    S("net-unreachable", "network", ("Network is unreachable",),
      "a rank could not reach another's address (no route on the interface NCCL picked: a link-local fe80:: or a "
      "container bridge address, or a fabric port down)",
      "dgxh100-3:225140:225355 [0] misc/ibvwrap.cc:187 NCCL WARN Call to ibv_modify_qp failed with error Network is "
      "unreachable", "https://github.com/NVIDIA/nccl-tests/issues/185",
      "set NCCL_SOCKET_IFNAME (and GLOO_SOCKET_IFNAME) to the interface the nodes reach each other on; "
      "clusterdoc check (net) on the nodes"),
    S("ompi-tcp-connect", "network", ("unable to complete a TCP connection",),
      "Open MPI's processes could not reach each other over TCP (a firewall, or an interface the other host cannot "
      "reach: containers on different hosts)",
      "A process or daemon was unable to complete a TCP connection", "https://github.com/open-mpi/ompi/issues/12103",
      "open the ports between the hosts (or the containers' network: --network host), and pin the interface "
      "(mpirun --mca btl_tcp_if_include / oob_tcp_if_include)"),
    # --- round 8 (issue 41): the sockets and the fabric between nodes in every NCCL version's words. NCCL retries a
    # connect that was refused or timed out (a peer not listening yet); any other errno ends it at once, and is the
    # network under the job: a CNI or firewall that aborts it, an address the node cannot use. Refused, reset and
    # broken-pipe lines are matched above (a peer, weak). Forms: 2.9-2.11 "Connect to A failed : E" (socket.h),
    # 2.12-2.18 "socketStartConnect: Connect to A failed : E", 2.19+ "socketStartConnect: connect to A returned E"
    # and socketPollConnect's (src/misc/socket.cc) ---
    S("nccl-connect-failed", "network", ("socketStartConnect: Connect to ", " failed"),
      "NCCL could not open a connection to another rank's address (an error it does not retry: the network "
      "between the nodes, a CNI or firewall that aborts it, an interface the peer cannot be reached on)",
      "socketStartConnect: Connect to 192.168.102.1<38007> failed : Software caused connection abort",
      "https://github.com/NVIDIA/nccl/issues/1016 (and verl-726: the same abort to a link-local address)",
      "set NCCL_SOCKET_IFNAME (and GLOO_SOCKET_IFNAME) to the interface the nodes reach each other on; in "
      "Kubernetes the pods' network (its CNI, network policies); clusterdoc check (net) on the nodes",
      unless=("retrying", "Connection refused")),
    S("nccl-connect-returned", "network", ("Connect: connect to ", " returned "),
      "NCCL could not open a connection to another rank's address (an error it does not retry, or a timeout past "
      "its retries: the network between the nodes, a firewall, an interface the peer cannot be reached on)",
      "socketStartConnect: connect to 192.168.102.1<38007> returned Software caused connection abort",
      "https://github.com/NVIDIA/nccl/blob/master/src/misc/socket.cc (socketConnectCheck, NCCL 2.19+: the form it "
      "prints)",
      "set NCCL_SOCKET_IFNAME (and GLOO_SOCKET_IFNAME) to the interface the nodes reach each other on; "
      "clusterdoc check (net) on the nodes", unless=("retrying",)),
    S("nccl-connect-failed-old", "network", ("NCCL WARN", "Connect to ", " failed : "),
      "NCCL could not open a connection to another rank's address (the network between the nodes, a firewall, an "
      "interface the peer cannot be reached on)",
      "misc/socket.cc:480 NCCL WARN Connect to 10.0.0.2<43211> failed : Connection timed out",
      "https://github.com/NVIDIA/nccl/blob/v2.11.4-1/src/include/socket.h (connectAddress: the form it prints)",
      "set NCCL_SOCKET_IFNAME (and GLOO_SOCKET_IFNAME) to the interface the nodes reach each other on; "
      "clusterdoc check (net) on the nodes", unless=("retrying", "Connection refused")),
    # NCCL 2.19+ prints a work completion's status as "status=N" (any status but success is a transfer the fabric
    # failed: 12 retry exceeded, 4 local protection, 10 remote access, 13 RNR), the newest as "status=NAME(N)"
    S("ib-completion-status", "network", ("NET/IB", "Got completion from peer", "with status="),
      "InfiniBand failed a transfer (a work completion with an error status: the link, a port, the peer's HCA, "
      "the GID/RoCE setup between the two addresses)",
      "NET/IB : Got completion from peer 10.1.1.2<54862> with status=4 opcode=0 len=0 vendor err 81 (Recv)",
      "https://github.com/NVIDIA/nccl/blob/master/src/transport/net_ib.cc (ncclIbTest, NCCL 2.19+: the form it prints; "
      "nccl-1405 and nccl-1664 print status=12)",
      "clusterdoc check --perf on the nodes (ibstat, ibv_devinfo, link errors); NCCL_IB_HCA and NCCL_IB_GID_INDEX"),
    # libfabric's plugin could not read its completion queue at all (fi_cq_read failed): the fabric's device
    S("ofi-cq-read-failed", "network", ("NET/OFI", "Unable to retrieve completion queue entries"),
      "the fabric (libfabric: EFA, Slingshot) failed: its completion queue could not be read (the device or its "
      "provider)",
      "NET/OFI Unable to retrieve completion queue entries. RC: -5, ERROR: Input/output error",
      "https://github.com/aws/aws-ofi-nccl (src/nccl_ofi_sendrecv.cpp, nccl_ofi_rdma.cpp: the form ofi_process_cq "
      "prints)",
      "clusterdoc check --perf on the nodes (fi_info, the fabric's port counters); FI_PROVIDER and NCCL_NET to "
      "the plugin the nodes share"),
    # session 25 (heldout-fresh23, after it was scored): libfabric's plugin could not add a peer's address to its
    # address vector: EFA cannot reach the peer (its security group lacks the self-referencing rules EFA needs)
    S("ofi-av-insert", "network", ("NET/OFI", "Unable to insert remote address into address vector"),
      "the fabric (libfabric: EFA) could not reach a peer's endpoint: on AWS the security group lacks the rules EFA "
      "needs (all traffic to and from itself, inbound and outbound)",
      "NET/OFI Unable to insert remote address into address vector for device 1. RC: 0",
      "https://github.com/aws/aws-ofi-nccl/issues/663",
      "the nodes' security group: an inbound and an outbound rule allowing all traffic to the group itself; then "
      "fi_pingpong between two nodes"),
    # the verbs call that reads completions failed itself (NCCL's ibvwrap): the adapter, not a transfer
    S("ibv-poll-cq-failed", "network", ("Call to ibv_poll_cq() returned",),
      "InfiniBand's completion queue could not be read (ibv_poll_cq failed): the adapter or its driver on that node",
      "node1:3468:3905 [4] misc/ibvwrap.cc:199 NCCL WARN Call to ibv_poll_cq() returned -5",
      "https://github.com/NVIDIA/nccl/blob/master/src/misc/ibvwrap.cc (wrap_ibv_poll_cq: the form it prints)",
      "clusterdoc check --perf on that node (ibstat, ibv_devinfo, dmesg for mlx5); resubmit without it meanwhile"),
    # session 21: MPICH's Hydra proxy could not connect back to its server across the nodes, timed out
    S("hydra-connect-timed-out", "network", ("(Connection timed out)", "unable to connect from "),
      "MPICH's launcher could not connect between the nodes (Hydra's proxy to its server): the connection timed "
      "out, as a firewall that drops it does (a refused one is the name or the port: thin)",
      'HYDU_sock_connect (utils/sock/sock.c:180): unable to connect from "node2" to "node1" (Connection timed out)',
      "https://github.com/pmodels/mpich (src/pm/hydra/utils/sock/sock.c: HYDU_sock_connect's message)",
      "the firewall between the nodes (the ports Hydra uses: HYDRA_... / MPIR_CVAR_CH3_PORT_RANGE), and the "
      "interface (-iface)"),
    # session 21: the same verbs call in other transports' words (ParaStation's "ib:ibv_poll_cq(): Infiniband returned
    # the wrong Opcode N", UCX's and MVAPICH's own): a completion the adapter could not deliver
    S("ibv-poll-cq-error", "network", ("ibv_poll_cq",),
      "InfiniBand's completion queue returned an error or a completion it should not have (ibv_poll_cq): the "
      "adapter, its link or its driver on that node",
      "359: <PSP:r0000359:ib:ibv_poll_cq(): Infiniband returned the wrong Opcode 5408>",
      "https://github.com/FESOM/fesom2/issues/166",
      "the fabric on the nodes that print it (ibstat, ibv_devinfo, the port's error counters, dmesg for mlx5); "
      "resubmit without them meanwhile", unless=("NCCL INFO", "debug")),
    # Open MPI's openib BTL: a completion with an error status, and its help text for status 12, the line wrapped
    # after "with status" as often as not ("from NODE to: PEER error polling LP CQ with status RETRY EXCEEDED ...")
    S("ompi-openib-cq-error", "network", ("error polling ", "CQ with status"),
      "InfiniBand failed a transfer between two MPI processes (Open MPI's openib: a completion with an error "
      "status, 12 the retry count exceeded): the link, a port or the peer's adapter",
      "[[718,1],20][btl_openib_component.c:2902:handle_wc] from node-0-22.local to: node-0-2 error polling LP CQ "
      "with status RETRY EXCEEDED ERROR status number 12 for wr_id 38996224 opcode 0 qp_idx 0",
      "https://github.com/open-mpi/ompi/blob/v4.1.x/opal/mca/btl/openib/btl_openib_component.c (handle_wc: the "
      "form it prints; the users' list has it from many sites)",
      "clusterdoc check --perf on the two nodes the line names (ibstat, link error counters); the fabric's "
      "manager (ibdiagnet) for the path between them",
      node=re.compile(r"handle_wc\] from " + NODE + r" to: ")),
    S("ompi-ib-retry-exceeded", "network", ("InfiniBand retry count between two MPI processes",),
      "InfiniBand gave up on a transfer between two MPI processes (the retry count exceeded): the link, a port or "
      "the peer's adapter",
      "The InfiniBand retry count between two MPI processes has been exceeded.",
      "https://github.com/open-mpi/ompi/blob/v4.1.x/opal/mca/btl/openib/help-mpi-btl-openib.txt (pp retry "
      "exceeded: the form it prints)",
      "clusterdoc check --perf on the nodes (ibstat, link error counters); Open MPI's help text names the host and "
      "its peer on the lines after it"),
    # MPICH's ch4:ofi (Cray MPICH, Intel MPI) could not complete a transfer on the fabric: a Slingshot/CXI resource
    # (PTLTE_NOT_FOUND, VNI_NOT_FOUND: HPE answers with FI_CXI_* settings) or the NIC libfabric picked (a VPN's on a
    # laptop, at MPI_Finalize): the fabric or its settings, thin alone
    S("mpich-ofi-poll", "network", ("OFI poll failed",),
      "MPICH's libfabric layer got an error completion: the fabric, or the provider's settings and the NIC it picked",
      "MPIDI_OFI_handle_cq_error(1062): OFI poll failed (ofi_events.c:1064:MPIDI_OFI_handle_cq_error:Input/output "
      "error - PTLTE_NOT_FOUND)",
      "https://github.com/pmodels/mpich/blob/main/src/mpid/ch4/netmod/ofi/ofi_events.c (MPIDI_OFI_handle_cq_error, "
      "errnames.txt's **ofid_poll: the form it prints)",
      "the error after the file name decides: a CXI resource (PTLTE_NOT_FOUND, VNI_NOT_FOUND: the site's FI_CXI_* "
      "settings), the NIC libfabric picked (FI_PROVIDER, FI_TCP_IFACE), else the fabric (clusterdoc check --perf)",
      weak=True),
    # Open MPI 4/5's TCP BTL help text (help-mpi-btl-tcp.txt, "client connect fail"): a process could not open a
    # connection to a peer's address; users' threads find a docker bridge, a link-local or VPN interface or a
    # firewall each time (its "Local host:" line names the node that printed it)
    S("ompi-tcp-peer-connect", "network", ("failed to TCP connect to a peer MPI process",),
      "Open MPI could not connect two processes over TCP: the interface it picked (a docker bridge, a link-local or "
      "VPN address) or a firewall between the hosts",
      "WARNING: Open MPI failed to TCP connect to a peer MPI process.  This",
      "https://github.com/open-mpi/ompi/blob/v5.0.x/opal/mca/btl/tcp/help-mpi-btl-tcp.txt (client connect fail: "
      "the form it prints)",
      "pin the interface the hosts reach each other on (mpirun --mca btl_tcp_if_include IFACE --mca "
      "oob_tcp_if_include IFACE); open the ports between them"),
    # --- thin by themselves: a candidate with what decides, never a verdict ---
    S("store-connect-timeout", "network", ("client socket has timed out", "trying to connect to"),
      "a rank could not reach the rendezvous endpoint (MASTER_ADDR:PORT, --rdzv_endpoint) in time: the address is "
      "wrong or unreachable from this node (a firewall, another interface), or the endpoint's node was not up yet",
      "[E socket.cpp:860] [c10d] The client socket has timed out after 60s while trying to connect to 192.0.0.1:1234",
      "https://github.com/pytorch/pytorch/issues/107021",
      "from this node: nc -zv ADDR PORT while the first node's launcher runs (reachable: the first node started "
      "late, raise the timeout; not: the address or a firewall)", weak=True),
    # the verbs library's own text for IBV_WC_RETRY_EXC_ERR (ibv_wc_status_str), as UCX's rc_verbs/dc_verbs, UCCL
    # and RDMA codes print it: the sender got no ACK from the peer's adapter within the retries (not "RNR retry
    # counter exceeded": a receiver without posted buffers, another failure)
    S("verbs-retry-counter-exceeded", "network", ("transport retry counter exceeded",),
      "InfiniBand/RoCE gave up on a transfer (the verbs status 12, transport retry counter exceeded): the link, a "
      "port, the fabric's configuration (RoCE's lossless settings) or the peer's adapter",
      "CQE ERROR wr_id=3 status=12(transport retry counter exceeded) opcode=1 byte_len=0 vendor_err=0xa "
      "qp_num=0x2c10", "https://github.com/uccl-project/uccl/issues/799 (openucx/ucx#2322 and #1880 print the "
      "same verbs text)",
      "the ports of both nodes (ibstat, the switch's counters; for RoCE its PFC/ECN settings); an ib_write_bw "
      "between the two nodes; resubmit without the node if one port is bad", lower=True),
    # MPICH Hydra's proxy could not resolve the launcher host's name (its own message, then "unable to connect to
    # server HOST at port N (check for firewalls!)"): name resolution between the hosts, as "Name does not resolve"
    # is above; the name is the launcher's, no node at fault. A refused connect with a resolved name stays thin
    S("hydra-host-address", "network", ("HYDU_sock_connect", "unable to get host address for "),
      "MPICH's launcher proxy could not resolve the launching host's name (DNS or /etc/hosts on the node the proxy "
      "ran on): it never connected back",
      "[proxy:0:1@gunavaran-HP-Pavilion-Notebook] HYDU_sock_connect (utils/sock/sock.c:113): unable to get host "
      "address for gunavaran-HP-ENVY-15-Notebook-PC", "https://github.com/pmodels/mpich/issues/4712 "
      "(open-mpi/ompi#7187 the same on a Raspberry Pi cluster)",
      "make every host's name resolve on every node (the same /etc/hosts or DNS; getent hosts NAME on each), or "
      "give the launcher addresses (-hosts with IPs, -iface)"),
    # session 23: libmlx5's own report of a work completion with an error status (a hex dump of the completion
    # follows). Where the log says more, it was an effect: a peer process OOM-killed first (epoch-118, ARCHER2),
    # a Ray worker dead first (openrlhf-621, unsettled); alone it names the fabric or a dead peer, never decides
    S("mlx5-completion-error", "network", ("mlx5: ", ": got completion with error"),
      "an InfiniBand/RoCE transfer completed with an error (libmlx5's report): the link or the peer's port, or a "
      "peer process that died (its queue pairs flush with errors)",
      "mlx5: nid001058: got completion with error:", "https://github.com/epochpic/epoch/issues/118 (and "
      "OpenRLHF/OpenRLHF#621)",
      "what failed before it (a rank killed, the OOM killer: sacct, dmesg); else the ports of both nodes (ibstat, "
      "the switch's counters) and an ib_write_bw between them", weak=True),
    # session 23: a Dask worker (dask-jobqueue's batch job) that never reached its scheduler: the address the
    # scheduler advertises is not reachable from the compute node (its interface: dask-jobqueue's `interface=`),
    # or a firewall between them
    S("dask-worker-connect-timeout", "network", ("Timed out connecting ", " to scheduler "),
      "a Dask worker could not reach its scheduler's address in time (the address or interface the scheduler "
      "listens on is not reachable from the compute node, or a firewall)",
      "distributed.nanny - ERROR - Timed out connecting Nanny '<Nanny: None, threads: 2>' to scheduler "
      "'tcp://10.33.12.15:45049'", "https://github.com/dask/dask-jobqueue/issues/325",
      "start the scheduler on an interface the nodes reach (dask-jobqueue's interface=, scheduler_options); "
      "nc -zv ADDR PORT from a compute node"),
    # session 24 (heldout-fresh18, after it was scored): a Go client's (Apptainer's, Docker's, a registry's) failed
    # connection: "dial tcp ADDR:PORT: connect: connection refused", "i/o timeout", "no route to host"
    S("go-dial-refused", "network", ("dial tcp ", "connect: connection refused"),
      "a client could not connect to a server (a registry, a download host): refused (nothing listening, or a "
      "firewall or proxy between the node and it)",
      'FATAL:   Error making http request: Head "https://depot.galaxyproject.org/singularity/ucsc-gtftogenepred:447'
      '--h954228d_0": dial tcp 128.118.250.14:443: connect: connection refused',
      "https://github.com/nf-core/scnanoseq/issues/33",
      "from the node: curl the address; compute nodes often have no way out (pull the image on a login node, set "
      "the site's proxy)", weak=True),  # session 28: mpi-operator-407's refusal was a sidecar not up yet (thin)
    S("go-dial-timeout", "network", ("dial tcp ", "i/o timeout"),
      "a client could not connect to a server (a registry, a download host): timed out (no route out of the node, "
      "a firewall or proxy)",
      'Get "https://registry-1.docker.io/v2/": dial tcp 54.85.56.253:443: i/o timeout',
      "https://github.com/golang/go (net/dial.go: 'dial tcp', 'i/o timeout')",
      "from the node: curl the address; compute nodes often have no way out (pull the image on a login node, set "
      "the site's proxy)"),
    # session 24 (heldout-fresh20, after it was scored): a Ray node's GCS client gave up reconnecting to the head:
    # the link to the head (latency, a firewall), or the head's GCS died (a candidate)
    S("ray-gcs-reconnect-failed", "network", ("Couldn't reconnect to GCS server",),
      "a Ray node could not reconnect to the head's GCS server: the link to the head, or the head's GCS died",
      "service_based_gcs_client.cc:229: Couldn't reconnect to GCS server. The last attempted GCS server address "
      "was 10.42.0.44:43507", "https://github.com/ray-project/ray/issues/15389",
      "the head's GCS log (gcs_server.out) at that time, and the route from the node to the head's address",
      weak=True),
    # session 26: hivemind's p2p daemon could not reach any of the swarm's bootstrap peers (rl-swarm#213: the
    # swarm's bootnodes were down)
    S("hivemind-bootstrap-peers", "network", ("failed to connect to bootstrap peers",),
      "the peer-to-peer daemon could not reach the swarm's bootstrap peers (they are down, or a firewall or NAT "
      "blocks them)",
      "hivemind.p2p.p2p_daemon_bindings.utils.P2PDaemonError: Daemon failed to start: 2025/05/01 12:46:14 failed to "
      "connect to bootstrap peers", "https://github.com/gensyn-ai/rl-swarm/issues/213",
      "check the bootstrap peers' addresses are up and reachable from the node (their multiaddrs' host and port); "
      "the swarm's status page"),
    # session 27: UCX's UD transport gave up on a peer (NorESM#558 on Betzy: a rerun passed the same point, settled
    # as the machine's); the link or the peer's node, the line alone does not say which
    S("ucx-ud-timeout", "network", ("Fatal: UD endpoint",),
      "UCX's UD transport timed out on a peer: the fabric link, or the peer's node (a hung or dead process there)",
      "[b5270:66372:0:66372]       ud_ep.c:280  Fatal: UD endpoint 0x203e6d10 to <no debug data>: unhandled "
      "timeout error", "https://github.com/NorESMhub/NorESM/issues/558",
      "the fabric's counters and the peer node's kernel log at that time (ibstat, dmesg); rerun, excluding the "
      "node if it recurs", node=UCX_HOST, weak=True),
]  # fmt: skip
