"""`clusterdoc why`'s catalogue of the HPC runtimes' own fatal messages, read from their source (issue 41;
why/sigtable/catalogue_hpcrt.py, made by scripts/catalogue_hpcrt.py from tests/fixtures/why/catalogue/hpcrt.tsv):
the table is what the script makes from the committed raw list, it leaves the pre-check's keys alone, the log
reader's prefilter keeps its lines, and real PETSc errors from public threads that the learned signatures miss are
named by it, while PETSc's hints, warnings and traceback frames are not."""

from __future__ import annotations

from pathlib import Path

import pytest

from clusterdoc.why import candidates, logread, signatures
from clusterdoc.why.sigtable import catalogue_cuda, catalogue_hpcrt
from tests.why_helpers import assert_generated, judge_log, keys_without, learned, load_script

ROOT = Path(__file__).resolve().parents[1]


def _script():
    return load_script("catalogue_hpcrt")


# --- (a) the table is the script's, from the committed raw list ---


def test_the_table_is_what_the_script_makes_from_the_raw_list():
    text, rows, skipped = _script().generate()
    assert_generated(text, ROOT / "clusterdoc" / "why" / "sigtable" / "catalogue_hpcrt.py",
                     ".venv/bin/python scripts/catalogue_hpcrt.py")  # fmt: skip
    assert [r["name"] for r in rows] == [s.name for s in catalogue_hpcrt.SIGNATURES]
    assert skipped["known"] >= 10  # libgfortran's lines: code.py's gfortran-runtime names them already


def test_the_raw_list_records_each_messages_source():
    raw = _script().read_raw()
    assert 40 < len(raw) < 200
    for repo, commit, path, key, msg in raw:
        assert (repo, path) in (("gcc-mirror/gcc", "libgfortran/runtime/error.c"), ("petsc/petsc",
                                                                                   "src/sys/error/err.c"))  # fmt: skip
        assert len(commit) == 40 and key and msg


def test_every_row_is_sourced_keyed_prefiltered_and_last():
    cat = catalogue_hpcrt.SIGNATURES
    assert 10 < len(cat) <= 80
    start = signatures.SIGNATURES.index(cat[0])  # a fallback: every other signature goes first (only the
    assert signatures.SIGNATURES[start : start + len(cat)] == cat  # applications' catalogue may follow it: appcat)
    assert all(s.name.startswith("cat-") for s in signatures.SIGNATURES[start:-1])  # then the CUDA catalogue's
    assert signatures.SIGNATURES[-1] is catalogue_cuda.UNNAMED[0]  # CUDA error of no kind a row names: last
    names = [s.name for s in cat]
    assert len(set(names)) == len(names)
    for s in cat:
        assert s.source.startswith("https://github.com/") and "/blob/" in s.source, s.name
        first = s.needles[0]
        assert any(k in first.lower() for k in signatures._KEYS_PICKED), s.name  # no key of its own
        assert any(w.decode() in first for w in logread.WORDS), s.name  # the prefilter keeps its line
        assert any(len(n) >= 12 for n in s.needles), s.name
        assert s.category in ("code", "oom", "environment"), s.name
        if s.weak:
            assert candidates.for_signature(s), s.name


def test_the_precheck_keys_are_those_without_the_catalogues():
    assert signatures._KEYS == keys_without(s for s in signatures.SIGNATURES if s.name.startswith("cat-"))


# --- (b) real PETSc errors from public threads: the learned signatures miss them, the catalogue names them ---


def test_a_petsc_argument_check_is_the_programs():
    # https://github.com/dealii/dealii/issues/4150 (step-55: a new nonzero inserted into a preallocated matrix)
    text = ("$ mpirun -n 2 ./step-55\nRunning using PETSc.\nCycle 0:\n"
            "   Number of degrees of freedom: 659 (578+81)\n"
            "[0]PETSC ERROR: --------------------- Error Message --------------------------------------------------------------\n"
            "[0]PETSC ERROR: Argument out of range\n"
            "[0]PETSC ERROR: Inserting a new nonzero at global row/column (18, 45) into matrix\n")  # fmt: skip
    assert learned("[0]PETSC ERROR: Argument out of range") is None
    c = judge_log(text)
    assert c.category == "code", c.headline


def test_a_petsc_argument_check_with_its_traceback_is_the_programs():
    # https://github.com/geodynamics/pylith/issues/138 (a field number out of range: the code's call)
    text = ("[0]PETSC ERROR: --------------------- Error Message --------------------------------------------------------------\n"
            "[0]PETSC ERROR: Argument out of range\n"
            "[0]PETSC ERROR: Field number 1 must be in [0, 1)\n"
            "[0]PETSC ERROR: #1 PetscDSGetDiscretization() line 840 in /tools/common/petsc-dev/src/dm/dt/interface/dtds.c\n"
            "[0]PETSC ERROR: #2 PetscFEIntegrateJacobian_Basic() line 779 in /tools/common/petsc-dev/src/dm/dt/fe/impls/basic/febasic.c\n")  # fmt: skip
    c = judge_log(text)
    assert c.category == "code", c.headline


def test_a_petsc_zero_pivot_is_the_problems_numbers():
    # https://github.com/feelpp/feelpp/issues/341 (an eigen problem's LU factorization)
    text = ("[0]PETSC ERROR: --------------------- Error Message ------------------------------------\n"
            "[0]PETSC ERROR: Detected zero pivot in LU factorization:\n"
            "see http://www.mcs.anl.gov/petsc/documentation/faq.html#ZeroPivot!\n"
            "[0]PETSC ERROR: Zero pivot row 2 value 0 tolerance 2.22045e-14!\n"
            "[0]PETSC ERROR: ------------------------------------------------------------------------\n"
            "[0]PETSC ERROR: Petsc Release Version 3.4.2, Jul, 02, 2013 \n")  # fmt: skip
    assert learned("[0]PETSC ERROR: Detected zero pivot in LU factorization:") is None
    s = signatures.match("[0]PETSC ERROR: Detected zero pivot in LU factorization:")
    assert s is not None and (s.category, s.weak) == ("code", False)
    c = judge_log(text)
    assert c.category == "code", c.headline


def test_a_class_that_does_not_decide_is_a_candidate():
    # PETSc's signal class (err.c's "Signal received"): a SEGV of the code, or a SIGTERM/SIGKILL from outside
    s = signatures.match("[3]PETSC ERROR: Signal received")
    assert s is not None and s.name == "cat-petsc-signal-received" and s.weak
    c = judge_log("[3]PETSC ERROR: Signal received\n")
    assert c.category == "unknown" and c.candidates, (c.category, c.headline)


def test_petscs_out_of_memory_stays_the_learned_oom():
    s = signatures.match("[0]PETSC ERROR: Out of memory. This could be due to allocating")
    assert s is not None and s.category == "oom" and not s.name.startswith("cat-"), s


def test_learned_fortran_rows_still_come_first():
    s = signatures.match("Fortran runtime error: End of file")
    assert s is not None and s.name == "gfortran-runtime"


# --- (c) look-alikes: PETSc's hints, warnings, banners and frames are not failures ---


@pytest.mark.parametrize("line", [
    "[0]PETSC ERROR: --------------------- Error Message --------------------------------------------------------------",
    "[0]PETSC ERROR: See https://petsc.org/release/faq/ for trouble shooting.",
    "[0]PETSC ERROR: Petsc Release Version 3.12.4, Feb, 04, 2020 ",
    "[0]PETSC ERROR: WARNING! There are unused option(s) set! Could be the program crashed before usage or a "
    "spelling mistake, etc!",
    "[0]PETSC ERROR:   Option left: name:-ksp_converged_reason (no value) source: code",
    "[0]PETSC ERROR: #1 MatSetValues() line 1339 in /petsc/src/mat/interface/matrix.c",
    "Argument out of range",  # PETSc's class without its prefix: anyone's words
    "Invalid argument",
    "WARNING: -pc_factor_shift_type nonzero avoids a zero pivot in LU factorization",
])  # fmt: skip
def test_petscs_hints_and_bare_words_are_not_catalogue_failures(line):
    s = signatures.match(line)
    assert s is None or not s.name.startswith("cat-petsc"), s.name
