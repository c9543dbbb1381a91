"""`clusterdoc why --log`, session 22 (issue 41): forms that heldout-fresh11's first half (parts a-c, a new pool of
threads) showed after it was scored and opened, each written as the class the tool prints: gloo's mesh failure after
gloo bound to loopback, GROMACS' domain decomposition refusal without gmx_fatal's head, Open MPI's PMI2 help text's
first line, verbs' address handle that could not be made. Each test failed on the rules before (97d6d19)."""

from __future__ import annotations

from tests.why_helpers import judge_log

GLOO_WARN = ("(RayWorkerWrapper pid=1978, ip=10.41.0.8) [rank9]:[W ProcessGroupGloo.cpp:721] Warning: Unable to "
             "resolve hostname to a (local) address. Using the loopback address as fallback. Manually set the network "
             "interface to bind to with GLOO_SOCKET_IFNAME.\n")
GLOO_MESH = ("(RayWorkerWrapper pid=1890, ip=10.41.0.8) [rank8]:[E ProcessGroupGloo.cpp:144] Gloo connectFullMesh "
             "failed with [../third_party/gloo/gloo/transport/tcp/pair.cc:144] no error\n")


def test_a_gloo_mesh_that_failed_after_gloo_bound_to_loopback_is_the_environment():
    c = judge_log(GLOO_WARN + GLOO_MESH)
    assert c.category == "environment" and "loopback" in c.headline, (c.category, c.headline)
    assert c.ranks == [8], c.ranks  # the rank whose mesh failed


def test_a_gloo_mesh_failure_alone_or_before_the_warning_stays_the_network():
    assert judge_log(GLOO_MESH).category == "network"
    assert judge_log(GLOO_MESH + GLOO_WARN).category == "network"  # a warning after the failure explains nothing


def test_gromacs_domain_decomposition_refusal_without_its_source_line_is_the_code():
    text = ("Fatal error:\nThere is no domain decomposition for 54 ranks that is compatible with the\n"
            "given box and a minimum cell size of 1.1694 nm\nChange the number of ranks or mdrun option -rdd or -dds\n")
    c = judge_log(text)
    assert c.category == "code" and "ranks" in c.headline, (c.category, c.headline)


def test_open_mpis_pmi2_bad_values_is_the_environment_with_or_without_the_quotes_of_a_paste():
    for head in ("", '"'):
        text = (f"{head}PMI2 initialized but returned bad values for size and rank.\nThis is symptomatic of either a "
                'failure to use the\n"--mpi=pmi2" flag in SLURM, or a borked PMI2 installation.\n')
        c = judge_log(text)
        assert c.category == "environment" and "PMI2" in c.headline, (c.category, c.headline)


def test_an_address_handle_verbs_could_not_make_is_the_network_and_names_the_node():
    text = ("[1641998540.196336] [erchpctmpcpu01:31658:0]       ib_device.c:1319 UCX  ERROR   ibv_create_ah(dlid=49152 "
            "sl=0 port=1 src_path_bits=0 dgid=::ffff:172.17.22.101 sgid_index=1 traffic_class=106) on rocep33s0f1 "
            "failed: Invalid argument\n[erchpctmpcpu01:31658:0:31658]    ud_iface.c:48   Fatal: iface 0xb32050: failed "
            "to get peer address\n")
    c = judge_log(text)
    assert c.category == "network" and c.nodes == ["erchpctmpcpu01"], (c.category, c.nodes, c.headline)
