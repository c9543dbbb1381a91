"""`clusterdoc why --log` round 10 (issue 41): node, scheduler and network ends in the words the field prints, each
from a real paste (its thread beside it; whole logs and their rows in tests/fixtures/why/real/ and the dev sets'
SOURCES.md). Every excerpt that names a cause here was unknown under main's rules at dbcac94. Pure, in memory.
"""

from __future__ import annotations

import pytest

from tests.why_helpers import judge_log

# --- srun could not lay the step's tasks out on its CPUs: the scheduler's, no node blamed ---


@pytest.mark.parametrize(
    "text",
    [
        # https://github.com/snakemake/snakemake-executor-plugin-slurm/issues/225
        "srun: error: JobId=125452 failed to distribute tasks (bind_type:threads,mask_cpu,one_thread) - this should "
        "never happen\n"
        "srun: error: Task launch for StepId=125452.0 failed on node [NODENAME]: Unable to layout tasks on given "
        "cpus\nsrun: error: Application launch failed: Unable to layout tasks on given cpus\nsrun: Job step aborted\n",
        # https://github.com/NOAA-EMC/global-workflow/pull/4210: a task killed with the aborted step comes after
        "srun: error: Task launch for StepId=21249880.0 failed on node orion-24-42: Unable to layout tasks on given "
        "cpus\nsrun: error: Application launch failed: Unable to layout tasks on given cpus\n"
        "srun: Job step aborted: Waiting up to 32 seconds for job step to finish.\n"
        "srun: error: orion-24-43: task 7: Killed\nsrun: Terminating StepId=21249880.0\n",
    ],
)
def test_srun_unable_to_layout_tasks_is_the_scheduler_without_a_node(text):
    c = judge_log(text)
    assert c.category == "scheduler" and not c.weak and not c.nodes, c  # the launch's node is not at fault


# --- Moab's own wallclock line in a Torque/PBS job mail ---


def test_moab_wallclock_limit_is_the_scheduler_over_the_deletion_by_root():
    # https://github.com/CoBrALab/MAGeTbrain/issues/20: "deleted at request of root" alone stays a candidate
    c = judge_log(
        "PBS Job Id: 26066307.gpc-sched-ib0\nJob Name:   mb_voting_2014-11-27T12-13-48_353\njob deleted\n"
        "Job deleted at request of root@gpc-sched-ib0\nMOAB_INFO:  job exceeded wallclock limit\n"
    )
    assert c.category == "scheduler" and not c.weak and "wallclock" in c.headline, c
    c = judge_log("PBS Job Id: 26066307.gpc-sched-ib0\njob deleted\nJob deleted at request of root@gpc-sched-ib0\n")
    assert c.category == "unknown" and len(c.candidates) >= 2, c


# --- the verbs library's own status text for a transfer the fabric gave up on ---


@pytest.mark.parametrize(
    "line",
    [
        # https://github.com/uccl-project/uccl/issues/799
        "CQE ERROR wr_id=3 status=12(transport retry counter exceeded) opcode=1 byte_len=0 vendor_err=0xa "
        "qp_num=0x2c10\n",
        # https://github.com/openucx/ucx/issues/1880 (UCX's dc_verbs)
        "[1506866470.744682] [clx-hercules-065:1411 :0]       dc_verbs.c:633  UCX  ERROR Send completion with error "
        "on qp 0x10e55: transport retry counter exceeded syndrome 0x81\n",
    ],
)
def test_transport_retry_counter_exceeded_is_the_network(line):
    c = judge_log(line)
    assert c.category == "network" and not c.weak, c


def test_rnr_retry_is_not_the_transport_retry():
    # verbs' other retry status (a receiver without posted buffers: a peer behind or gone) is no fabric verdict
    c = judge_log("work completion error: RNR retry counter exceeded\n")
    assert c.category != "network" or c.weak, c


# --- MPICH Hydra's proxy could not resolve the launching host's name ---


@pytest.mark.parametrize(
    "text",
    [
        # https://github.com/open-mpi/ompi/issues/7187 (MPICH 3.3 on a Raspberry Pi cluster)
        "HYDU_sock_connect (/opt/mpi-dl/mpich-3.3/src/pm/hydra/utils/sock/sock.c:145): unable to get host address "
        "for Master (4)\n[proxy:0:0@Slave1] main (/opt/mpi-dl/mpich-3.3/src/pm/hydra/pm/pmiserv/pmip.c:183): unable "
        "to connect to server Master at port 40677 (check for firewalls!)\n",
        # https://github.com/pmodels/mpich/issues/4712: the name first, ssh's host key after it
        "[proxy:0:1@gunavaran-HP-Pavilion-Notebook] HYDU_sock_connect (utils/sock/sock.c:113): unable to get host "
        "address for gunavaran-HP-ENVY-15-Notebook-PC\n[proxy:0:1@gunavaran-HP-Pavilion-Notebook] main "
        "(pm/pmiserv/pmip.c:181): unable to connect to server gunavaran-HP-ENVY-15-Notebook-PC at port 41849 (check "
        "for firewalls!)\nHost key verification failed.\n",
    ],
)
def test_hydra_unresolved_launcher_host_is_the_network(text):
    c = judge_log(text)
    assert c.category == "network" and not c.weak and "resolve" in c.headline, c


def test_hydra_refused_connect_with_a_resolved_name_stays_thin():
    # https://github.com/pmodels/mpich/issues/6852 (unsettled: a firewall, or the hosts' names)
    c = judge_log(
        'HYDU_sock_connect (utils/sock/sock.c:143): unable to connect from "node5" to "node5" (Connection refused)\n'
        "[proxy:0:1@node5] main (pm/pmiserv/pmip.c:181): unable to connect to server node5 at port 46135 (check for "
        "firewalls!)\n"
    )
    assert c.category == "unknown" and len(c.candidates) >= 2, c


# --- slurmctld's own reason for a node that rebooted under its jobs ---


def test_node_unexpectedly_rebooted_is_the_node():
    # https://github.com/ArjunaCluster/ArjunaUsers/issues/164 (sinfo -R's reason, as the cluster's tracker shows it)
    c = judge_log(
        "Node:  d[001-002,004-024],f[002-010,012-017,019-024]\n"
        "Date and Time you first noticed it was down: Reason=Node unexpectedly rebooted [slurm@2022-07-23T15:31:00]\n"
    )
    assert c.category == "node" and not c.weak, c
    # a reboot the admins asked for (scontrol reboot's own reason) is no failure of the node
    c = judge_log("   State=IDLE+DRAIN+REBOOT_REQUESTED Reason=Reboot ASAP [root@2024-01-08T10:00:00]\n")
    assert c.category != "node" or c.weak, c
