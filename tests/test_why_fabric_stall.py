"""`clusterdoc why --log` round 8 (issue 41): the network, desync and hang classes as the tools print them in every
version (NCCL's socket and IB transports, libfabric's plugin), each from a real excerpt (its thread named beside
it: tests/fixtures/why/*/SOURCES.md) or the form the tool's source prints, and the neighbours that must stay out.
"""

from __future__ import annotations

import pytest

from tests.why_helpers import judge_log

# nccl-1016 (https://github.com/NVIDIA/nccl/issues/1016): two Kubernetes pods, NCCL's bootstrap connect aborted
K8S_ABORT = (
    "pytorchjob-worker-0:116:236 [3] NCCL INFO Bootstrap : Using net1:192.168.102.2<0>\n"
    "pytorchjob-worker-0:116:236 [3] misc/socket.cc:480 NCCL WARN socketStartConnect: Connect to "
    "192.168.102.1<38007> failed : Software caused connection abort\n"
    "pytorchjob-worker-0:116:236 [3] NCCL INFO misc/socket.cc:561 -> 2\n"
)


@pytest.mark.parametrize(
    "text",
    [
        K8S_ABORT,
        # NCCL 2.19+ (src/misc/socket.cc, socketConnectCheck): "connect to A returned E"
        K8S_ABORT.replace("Connect to 192.168.102.1<38007> failed : ", "connect to 192.168.102.1<38007> returned "),
        # a timed-out connect past NCCL's retries, 2.19+'s words
        "node1:11:22 [0] NCCL WARN socketPollConnect: connect to 10.0.0.2<43211> returned Connection timed out, "
        "exceeded error retry count after 35 attempts\n",
        # NCCL 2.9-2.11 (src/include/socket.h, connectAddress)
        "node1:11:22 [0] include/socket.h:409 NCCL WARN Connect to 10.0.0.2<43211> failed : Connection timed out\n",
    ],
)
def test_a_connect_nccl_does_not_retry_is_the_network(text):
    c = judge_log(text)
    assert c.category == "network", c.headline


def test_a_refused_connect_stays_a_lost_peer_not_the_network():
    # refused: nothing listened there (the peer dead or not started yet, or the wrong interface): the log cannot say
    c = judge_log(K8S_ABORT.replace("Software caused connection abort", "Connection refused"))
    assert c.category == "unknown" and len(c.candidates) >= 2, c.headline


@pytest.mark.parametrize(
    "line",
    [
        # NCCL 2.19+ prints the status as a number (nccl-1405, nccl-1664: status=12), any status but success
        "gpu-7:3468:3905 [4] transport/net_ib.cc:1615 NCCL WARN NET/IB : Got completion from peer 10.1.1.2<54862> "
        "with status=4 opcode=0 len=0 vendor err 81 (Recv) localGid ::ffff:10.1.1.1 remoteGids::ffff:10.1.1.2",
        # the newest NCCL, the status by name
        "gpu-7:3468:3905 [4] transport/net_ib.cc:1680 NCCL WARN NET/IB: Got completion from peer 10.1.1.2<54862> "
        "with status=remote access error(10) opcode=RDMA_WRITE(1) vendor_err=136 hca mlx5_0",
        # libfabric's plugin could not read its completion queue (aws-ofi-nccl's ofi_process_cq)
        "gpu-7:3468:3905 [4] NCCL WARN NET/OFI Unable to retrieve completion queue entries. RC: -5, ERROR: "
        "Input/output error",
    ],
)
def test_the_fabric_failing_a_transfer_is_the_network_and_names_the_host(line):
    c = judge_log(line + "\n")
    assert c.category == "network", c.headline
    assert "gpu-7" in c.nodes or "gpu-7" in c.headline, (c.nodes, c.headline)


def test_nccl_ib_size_check_is_a_desync_first():
    # NCCL's receive-side sanity check ("user collective call count/size mismatches", src/transport/net_ib.cc): the
    # calls differ, or the nodes run NCCL differently (NVIDIA/nccl#969, #1176): desync its first candidate
    line = (
        "gpu-7:3468:3905 [4] transport/net_ib.cc:1101 NCCL WARN NET/IB : req 0/1 tag 7 peer 10.1.1.2<39012> "
        "collective mismatch error, local size 4096 remote size 8192\n"
    )
    c = judge_log(line)
    assert c.category == "unknown" and c.candidates[0].startswith("desync"), c


def test_a_completion_with_success_wording_elsewhere_is_no_network_failure():
    # an IB line that reports no failure (the port came up) names nothing
    c = judge_log("gpu-7:1:2 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB ; OOB ib0:10.1.1.1<0>\n")
    assert c.category != "network"


@pytest.mark.parametrize(
    "text, node",
    [
        # Open MPI's openib BTL (btl_openib_component.c handle_wc), the line wrapped as the users' list shows it
        (
            "[[718,1],20][btl_openib_component.c:2902:handle_wc] from node-0-22 to: node-0-2 error polling LP CQ "
            "with status RETRY\nEXCEEDED ERROR status number 12 for wr_id 38996224 opcode 0 qp_idx 0\n"
            "--------------------------------------------------------------------------\n"
            "The InfiniBand retry count between two MPI processes has been\nexceeded.\n",
            "node-0-22",
        ),
        # NCCL's verbs wrapper: the completion queue itself could not be read
        ("gpu-9:3468:3905 [4] misc/ibvwrap.cc:199 NCCL WARN Call to ibv_poll_cq() returned -5\n", "gpu-9"),
    ],
)
def test_mpi_and_verbs_fabric_failures_are_the_network_with_the_node(text, node):
    c = judge_log(text)
    assert c.category == "network", c.headline
    assert node in c.nodes or node in c.headline, (c.nodes, c.headline)


def test_nccl_socket_transport_without_an_interface_is_the_environment_as_its_bootstrap_twin():
    c = judge_log("gpu-9:3468:3905 [0] NCCL WARN NET/Socket : no interface found\n")
    assert c.category == "environment", c.headline


# Horovod 0.20+'s stall inspector (horovod/common/stall_inspector.cc) lists the ranks that did not submit after its
# warning, one a line ("3: [...]", "5!: [...]" past the shutdown time); older versions put "[missing ranks: 3]" on
# each op (horovod-1012, horovod-457). Either names the rank behind; which of hang, desync or its node stays open
HVD_WARN = (
    "[1,0]<stderr>:[2020-05-01 10:00:00.000: W horovod/common/stall_inspector.cc:105] One or more tensors were "
    "submitted to be reduced, gathered or broadcasted by subset of ranks and are waiting for remainder of ranks for "
    "more than 60 seconds. This may indicate that different ranks are trying to submit different tensors or that "
    "only subset of ranks is submitting tensors, which will cause deadlock. \n"
)


@pytest.mark.parametrize(
    "rows, ranks",
    [
        ("[1,0]<stderr>:Missing ranks:\n[1,0]<stderr>:3: [DistributedAdam_Allreduce/a, DistributedAdam_Allreduce/b]\n",
         [3]),
        ("Missing ranks:\n3: [DistributedAdam_Allreduce/a]\n5!: [DistributedAdam_Allreduce/a]\n", [3, 5]),
    ],
)  # fmt: skip
def test_horovods_list_of_missing_ranks_names_them(rows, ranks):
    c = judge_log(HVD_WARN + rows)
    assert c.category == "unknown" and c.candidates[0].startswith("hang"), c.headline
    assert c.ranks == ranks, c.ranks


def test_horovods_list_cut_after_its_head_names_no_rank():
    # horovod-1442: the list was cut in the paste; the reporter (rank 0) is not the rank behind
    c = judge_log(HVD_WARN + "[1,0]<stderr>:Missing ranks:\n[1,0]<stderr>:\n")
    assert c.category == "unknown" and c.ranks == [], c.ranks


# torch's ProcessGroupNCCL in its own words for a stuck rank (ProcessGroupNCCL.cpp): thin alone, never a verdict
HEARTBEAT = (  # the form ProcessGroupNCCL.cpp's heartbeat monitor prints (rank 25 of 32)
    "[rank25]:[E ProcessGroupNCCL.cpp:1316] [PG 0 Rank 25] Heartbeat monitor timed out! Process will be terminated "
    "after dumping debug info. workMetaList_.size()=2\n"
    "[rank25]:[F ProcessGroupNCCL.cpp:1169] [PG 0 Rank 25] [PG 0 Rank 25] ProcessGroupNCCL's watchdog got stuck for "
    "600 seconds without making progress in monitoring enqueued collectives. This typically indicates a NCCL/CUDA API "
    "hang blocking the watchdog\n"
)
DUMP_SIGNAL = (
    "[rank1]:[E1105 10:00:00.000 ProcessGroupNCCL.cpp:1500] [PG ID 0 PG GUID 0(default_pg) Rank 1] Received a dump "
    "signal due to a collective timeout from rank 3 and we will try our best to dump the debug info. Last enqueued "
    "NCCL work: 12, last completed NCCL work: 11.\n"
)


def test_a_stuck_watchdog_is_unknown_hang_first_naming_the_stuck_rank():
    c = judge_log(HEARTBEAT)
    assert c.category == "unknown" and c.candidates[0].startswith("hang"), c.headline
    assert c.ranks == [25]


def test_a_dump_signal_names_neither_the_rank_told_nor_the_one_that_noticed():
    c = judge_log(DUMP_SIGNAL)
    assert c.category == "unknown" and c.candidates[0].startswith("hang"), c.headline
    assert c.ranks == [] and "rank 3" not in c.headline, (c.ranks, c.headline)


def test_a_rank_s_own_failure_before_the_stuck_watchdog_is_the_cause():
    c = judge_log("[rank25]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n" + HEARTBEAT)
    assert c.category == "oom" and c.ranks == [25], c.headline


@pytest.mark.parametrize(
    "line",
    [
        # NCCL 2.19+'s INFO line while it retries a connect (socketConnectCheck): no failure yet
        "gpu1:1:2 [0] NCCL INFO socketStartConnect: connect to 10.0.0.2<1234> returned Connection timed out, retrying "
        "(1/34) after sleep for 100 msec",
        "gpu1:1:2 [0] NCCL INFO NET/Plugin : dlerror=libnccl-net.so: cannot open shared object file: No such file or "
        "directory No plugin found (libnccl-net.so), using internal implementation",
        "gpu1:1:2 [0] NCCL INFO NET/IB : Got async event : port active",
    ],
)
def test_nccl_info_lines_of_a_healthy_start_are_no_failure(line):
    c = judge_log(line + "\n")
    assert c.category == "unknown", c.headline


# torch's ProcessGroupNCCL: a rank creating its communicator waits in the store for the ncclUniqueId of the group's
# rank 0, published at that rank's first collective. A timeout names the owner (alive: its store answered) as the
# rank behind; a reset store (rwkvlora-12, ambiguous: rank 0 may have died) is a lost peer, no owner named
ID_WAIT = (
    "[rank{r}]: torch.distributed.DistBackendError: [{r}] is setting up NCCL communicator and retrieving ncclUniqueId "
    "from [0] via c10d key-value store by key '0', but store->get('0') got error: {err}\n"
)


def test_a_timed_out_wait_for_the_nccluniqueid_names_its_owner_hang_first():
    c = judge_log(ID_WAIT.format(r=1, err="Socket Timeout") + ID_WAIT.format(r=2, err="Socket Timeout"))
    assert c.category == "unknown" and c.candidates[0].startswith("hang: rank 0"), c.candidates
    assert 0 in c.ranks and "rank 0" in c.headline, c.headline


def test_a_reset_store_names_no_owner_and_a_rank_s_own_failure_wins():
    c = judge_log(ID_WAIT.format(r=1, err="Connection reset by peer. This may indicate a possible application crash"))
    assert c.category == "unknown" and 0 not in c.ranks, (c.ranks, c.headline)
    c = judge_log("[rank3]: torch.OutOfMemoryError: CUDA out of memory.\n" + ID_WAIT.format(r=1, err="Socket Timeout"))
    assert c.category == "oom" and c.ranks == [3], c.headline


# torch's flight recorder analyser (torchfrtrace; its documented output in torch's docs, and the newer and older forms
# of torch/distributed/flight_recorder): the ranks a collective never got, named; hang, desync or node stays open
@pytest.mark.parametrize(
    "text, ranks",
    [
        ("Not all ranks joining collective 5 at entry 4\ngroup info: 0:default_pg\ncollective: nccl:all_reduce\n"
         "missing ranks: {1}\ninput sizes: [[3, 4]]\noutput sizes: [[3, 4]]\nexpected ranks: 2\n", [1]),
        ("Not all ranks joining collective, sequence number: 4\ncollective: nccl:all_reduce\nmissing ranks: {1}\n", [1]),
        ("Not all ranks joining collective for group 0:default_pg collective nccl:all_reduce Missing ranks are {3, 7}\n",
         [3, 7]),
    ],
)  # fmt: skip
def test_the_flight_recorders_missing_ranks_are_named_hang_first(text, ranks):
    c = judge_log(text)
    assert c.category == "unknown" and c.candidates[0].startswith("hang"), c.headline
    assert c.ranks == ranks, c.ranks


def test_missing_ranks_far_from_the_flight_recorders_head_are_not_its():
    c = judge_log("Not all ranks joining collective 5 at entry 4\n" + "x\n" * 20 + "missing ranks: {1}\n")
    assert c.ranks == [], c.ranks


@pytest.mark.parametrize(
    "line",
    [
        # gloo/transport/tcp/device.cc: the interface GLOO_SOCKET_IFNAME names has no address here
        "RuntimeError: [enforce fail at ../third_party/gloo/gloo/transport/tcp/device.cc:83] ifa != nullptr. Unable "
        "to find address for: eth0",
        # the host's own name resolves to no address it can bind
        "RuntimeError: [enforce fail at ../third_party/gloo/gloo/transport/tcp/device.cc:229] rp != nullptr. Unable "
        "to find address for: node-17",
    ],
)
def test_gloo_without_an_address_is_the_environment_first(line):
    # thin since session 28: a project's own launch code that sets the interface (yolox-119) prints the same
    c = judge_log(line + "\n")
    assert c.category == "unknown" and [k.split(":")[0] for k in c.candidates] == ["environment", "code"], c


def test_mpichs_ofi_poll_failure_is_unknown_between_the_fabric_and_its_settings():
    # Cray MPICH's error stack (ch4:ofi, ofi_events.c): a Slingshot resource or the NIC libfabric picked, or the fabric
    text = (
        "Fatal error in PMPI_Test: Other MPI error, error stack:\n"
        "PMPI_Test(190).................: MPI_Test(request=0x50638300) failed\n"
        "MPIDI_OFI_handle_cq_error(1062): OFI poll failed (ofi_events.c:1064:MPIDI_OFI_handle_cq_error:Input/output "
        "error - VNI_NOT_FOUND)\n"
    )
    c = judge_log(text)
    assert c.category == "unknown", c.headline
    assert [k.split(":")[0] for k in c.candidates[:2]] == ["network", "environment"], c.candidates


# Open MPI 4/5's TCP BTL help text (help-mpi-btl-tcp.txt, "client connect fail"), as users post it: the node named
OMPI_TCP = (
    "--------------------------------------------------------------------------\n"
    "WARNING: Open MPI failed to TCP connect to a peer MPI process.  This\nshould not happen.\n\n"
    "Your Open MPI job may now hang or fail.\n\n"
    "  Local host: hpc-52-08\n  PID:        120099\n  Message:    connect() to 192.168.29.113:1064 failed\n"
    "  Error:      Operation now in progress (115)\n"
    "--------------------------------------------------------------------------\n"
)


def test_open_mpis_tcp_connect_help_text_is_the_network_on_its_local_host():
    c = judge_log(OMPI_TCP)
    assert c.category == "network" and c.nodes == ["hpc-52-08"], (c.category, c.nodes)
