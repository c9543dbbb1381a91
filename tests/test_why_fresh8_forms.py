"""`clusterdoc why --log`, session 20 (issue 41): what the sealed set heldout-fresh8 held that the rules did not
know, read only after its score was recorded (20/45 unseen, 1 confidently wrong): AMReX's signal handler naming a
floating-point trap. Each test failed on the rules before."""

from __future__ import annotations

from pathlib import Path

from tests.why_helpers import judge_log

FRESH8 = Path(__file__).parent / "fixtures" / "why" / "heldout-fresh8"


def test_amrex_names_a_floating_point_trap_and_the_rank_that_aborted():
    # AMReX's BLBackTrace::handler prints "Erroneous arithmetic operation" on SIGFPE, then the rank's Backtrace file
    # (https://github.com/AMReX-Fluids/AMReX-Hydro/issues/43: a slope test's division by zero, rank 0)
    c = judge_log((FRESH8 / "amrex-hydro-43-erroneous-arithmetic-rank0.log").read_text())
    assert c.category == "code" and c.ranks == [0], (c.category, c.ranks, c.headline)
    assert "floating-point" in c.headline


def test_the_same_trap_on_every_rank_under_mpich_is_the_code_too():
    # https://github.com/kynema/kynema-sgf/issues/1162 (an AMReX code): every rank traps it, MPICH's Abort(8) lines
    c = judge_log((FRESH8 / "kynema-sgf-1162-multiphase-fpe-all-ranks.log").read_text())
    assert c.category == "code", (c.category, c.headline)
