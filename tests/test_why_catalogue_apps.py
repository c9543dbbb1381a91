"""`clusterdoc why`'s catalogue of scientific applications' and frameworks' own fatal forms, read from their source
(issue 41; why/sigtable/catalogue_apps.py, made by scripts/catalogue_apps.py from
tests/fixtures/why/catalogue/apps.tsv): the table is what the script makes from the committed raw list, it costs the
pre-check no key, and a short log built from each form names its category, and where the form names a rank, the
culprit rank.

The excerpts below are written from each source's format string (the raw list's form at its commit: its fixed text
as printed, its holes filled with plausible values), not pasted from a thread; the thread-sourced logs are the dev
folders' (heldout-fresh8's tdep-68, access-om2-216, ocgis-502: why_score.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from clusterdoc.why import candidates, logread, logs, score, signatures
from clusterdoc.why.sigtable import catalogue_apps, catalogue_cuda
from tests.why_helpers import assert_generated, judge_log, keys_without, learned, load_script

ROOT = Path(__file__).resolve().parents[1]


def _script():
    return load_script("catalogue_apps")


def _ranks(text: str) -> list[int]:
    """The ranks the log's MPI and application lines name (logs.py's `mpi` facts), in the log's order."""
    return [m["rank"] for m in logs.scan_text(text).mpi]


# --- (a) the table is the script's, from the committed raw list ---


def test_the_table_is_what_the_script_makes_from_the_raw_list():
    text, rows, skipped = _script().generate()
    assert_generated(text, ROOT / "clusterdoc" / "why" / "sigtable" / "catalogue_apps.py",
                     ".venv/bin/python scripts/catalogue_apps.py")  # fmt: skip
    assert [r["name"] for r in rows] == [s.name for s in catalogue_apps.SIGNATURES]
    assert skipped["known"] >= 90  # netCDF's strings: environment.py's netcdf-error names them already


def test_the_raw_list_records_each_forms_source():
    raw = _script().read_raw()
    assert 100 < len(raw) < 400
    repos = {repo for repo, *_ in raw}
    assert len(repos) >= 12 and repos <= set(_script().TOOL)
    for _repo, commit, path, key, form in raw:
        assert len(commit) == 40 and path and key and form and "\t" not in form


def test_every_row_is_sourced_keyed_prefiltered_and_last():
    cat = catalogue_apps.SIGNATURES
    assert 40 <= len(cat) <= 200
    # a fallback: every other signature goes first, but the CUDA catalogue's error of no kind (session 29)
    assert signatures.SIGNATURES[-len(cat) - 1 : -1] == cat and signatures.SIGNATURES[-1] is catalogue_cuda.UNNAMED[0]
    assert len({s.name for s in cat}) == len(cat)
    for s in cat:
        assert s.source.startswith("https://github.com/") and "/blob/" in s.source, s.name
        first = s.needles[0]
        assert any(k in first.lower() for k in signatures._KEYS_PICKED), s.name  # no key of its own
        assert any(w.decode() in n for n in s.needles for w in logread.WORDS), s.name  # the prefilter keeps its line
        assert max(len(n) for n in s.needles) >= 11, s.name
        assert s.category in ("code", "oom", "environment"), s.name
        if s.weak:
            assert candidates.for_signature(s), s.name
    assert set(catalogue_apps.HEADS) <= set(signatures.APP_FATAL_SIGNS)


def test_the_catalogue_adds_no_pre_check_key():
    assert signatures._KEYS == keys_without(catalogue_apps.SIGNATURES)


# --- (b) each form, as its source prints it: the category, and the rank where the form names one ---

# (form's tool, the excerpt, the category, the culprit rank or None); "unknown": a weak row's candidates
_FORMS = [
    # TDEP, lo_stop_gracefully (src/libolle/mpi_wrappers.f90): ERROR / exit code N: ... / message / file, line, rank
    ("tdep", " \n ERROR\n exit code 4: symmetry error\n \n Could not find the symmetry operations\n \n"
             "     occurs in file: type_crystalstructure_symmetry.f90\n     occurs on line: 412\n"
             "        active rank: 5 out of 8\n", "code", 5),
    ("tdep", " ERROR\n exit code 5: bad parameters sent to routine\n Expected a positive cutoff\n"
             "        active rank: 0 out of 4\n", "code", 0),
    ("tdep", " ERROR\n exit code 6: I/O error\n Could not open infile.forceconstant\n", "unknown", None),
    # AMReX, Error_host: "amrex::" TYPE "::" then write_to_stderr_without_buffering's "RANK::MSG !!!"
    ("amrex", "Initializing AMReX (24.10)...\nMPI initialized with 64 MPI processes\n"
              "amrex::Abort::12::ParmParse::getarr(): Not found in table: amr.n_cell !!!\n", "code", 12),
    ("amrex", "amrex::Error::7::FabArray::setVal: bad ghost cells !!!\n", "code", 7),
    ("amrex", "3::Assertion `dt > 0' failed, file \"Src/Base/AMReX_MultiFab.cpp\", line 512 !!!\n", "code", 3),
    # ESMF, the log line of ESMF_LogWrite with a return code's string (ESMCI_ErrMsgs.C)
    ("esmf", "20250807 101112.345 ERROR            PET17 ESMF_Grid.F90:5303 ESMF_GridCreate Wrong argument "
             "specified  - Bad corner array in SCRIP file\n20250807 101112.345 INFO             PET17 Finalizing "
             "ESMF\n", "code", 17),
    ("esmf", "20250807 101112.345 ERROR            PET2 ESMF_IOScrip.F90:136 ESMF_ScripInq Unable to open file  - "
             "grid.nc\n", "code", 2),
    ("esmf", "20250807 101112.345 ERROR            PET0 ESMF_Mesh.F90:2145 ESMF_MeshCreate Library needed by ESMF "
             "not present  - ESMF_NETCDF not defined when lib was compiled\n", "environment", 0),
    ("esmf", "20250807 101112.345 ERROR            PET9 ESMF_IO.F90:812 ESMF_IOWrite Unable to write to file  - "
             "out.nc\n", "unknown", 9),
    # deal.II, ExceptionBase::print_exc_data
    ("dealii", "--------------------------------------------------------\nAn error occurred in line <1339> of file "
               "</build/dealii/source/lac/sparsity_pattern.cc> in function\n    void dealii::SparsityPattern::add"
               "(unsigned int, unsigned int)\nThe violated condition was: \n    false\n", "code", None),
    # MFEM, MFEM_ABORT / MFEM_VERIFY (_MFEM_MESSAGE's " ... in function:" lines after it)
    ("mfem", "\n\nMFEM abort: Unknown geometry type: 9\n ... in function: void mfem::Mesh::Load(std::istream&)\n"
             " ... in file: mesh/mesh.cpp:4123\n", "code", None),
    ("mfem", "Verification failed: (nprocs <= ne) is false:\n --> more processors than elements\n", "code", None),
    # SU2, CBaseMPIWrapper::Error
    ("su2", "\n\nError in \"CConfig::SetMarkers\": \n-----------------------------------------------------------"
            "--------------\nMarker farfield is not in the mesh file.\n------------------------------ Error Exit "
            "-------------------------------\n", "code", None),
    # Kokkos, throw_bad_alloc (a std::runtime_error: terminate's what() line)
    ("kokkos", "terminate called after throwing an instance of 'std::runtime_error'\n  what():  Kokkos ERROR: Cuda "
               "memory space failed to allocate 12.5 GiB (label=\"positions\").\n", "oom", None),
    # HDF5, H5E__walk2_cb's head (a parallel build: the MPI process)
    ("hdf5", "HDF5-DIAG: Error detected in HDF5 (1.14.3) MPI-process 6:\n  #000: H5F.c line 836 in H5Fopen(): "
             "unable to synchronously open file\n    major: File accessibility\n    minor: Unable to open file\n",
     "unknown", 6),
    # MPAS, mpas_log_write with MPAS_LOG_CRIT
    ("mpas", "ERROR: Could not open input file 'x1.40962.init.nc' to read mesh fields\n"
             "CRITICAL ERROR: Failed to bootstrap framework\n", "code", None),
    # CP2K, CPASSERT in its [ABORT] box: a candidate (its build's libraries, or its code)
    ("cp2k", " *  \\___/                             CPASSERT failed                          *\n", "unknown", None),
    # Nek5000, exitti's "EXIT: " then exitt's line
    ("nek5000", "EXIT: lelt too small           1234\n \nan error occured: dying ...\n \n", "code", None),
    # NWChem, errquit's category lines
    ("nwchem", " ------------------------------------------------------------------------\n"
               " geom_input: no such atom                        0\n"
               " ------------------------------------------------------------------------\n"
               " There is an error related to the specified geometry\n", "code", None),
    ("nwchem", " An error occurred while trying to read or write to disk space\n", "unknown", None),
]  # fmt: skip


@pytest.mark.parametrize("tool, text, category, rank", _FORMS, ids=[f"{f[0]}-{i}" for i, f in enumerate(_FORMS)])
def test_each_form_names_its_category_and_rank(tool, text, category, rank):
    c = judge_log(text)
    assert c.category == category, (c.category, c.headline)
    if category == "unknown":
        assert c.candidates, c.headline
    if rank is not None:
        assert rank in _ranks(text), _ranks(text)
        assert score.named(c, f"rank {rank}"), (c.headline, c.ranks)  # as why_score.py judges a culprit


def test_the_forms_rows_are_the_catalogues():
    # each excerpt's category comes from this catalogue's row (no learned signature knew the line)
    for line, name in [
        (" exit code 4: symmetry error", "cat-tdep-exit-code-4-symmetry-error"),
        ("amrex::Abort::12::Not found in table: amr.n_cell !!!", "cat-amrex-amrex-abort"),
        ("An error occurred in line <1339> of file <a.cc> in function", "cat-dealii-an-error-occurred-in-line"),
        ("------------------------------ Error Exit -------------------------------", "cat-su2-error-exit"),
    ]:
        assert learned(line) is None, line
        s = signatures.match(line)
        assert s is not None and s.name.startswith(name), (line, s and s.name)


# --- (c) what the catalogue leaves to others, and look-alikes ---


def test_a_memory_message_stays_oom():
    # AMReX's arena's own abort: the learned amrex-gpu-oom row, first
    c = judge_log("amrex::Abort::0::Out of gpu memory. Free: 0 Asking: 1073741824 Bytes !!!\n")
    assert c.category == "oom", c.headline
    # an application's head with a memory message on the next line: oom (APP_FATAL_SIGNS)
    c = judge_log(" ERROR\n exit code 3: unphysical value detected\n Failed to allocate memory for the "
                  "dynamical matrix: out of memory\n")  # fmt: skip
    assert c.category == "oom", c.headline


@pytest.mark.parametrize("line", [
    "20250807 101112.345 INFO             PET0 Running with ESMF Version   : v8.8.0",
    "20250807 101112.345 WARNING          PET3 ESMF_Grid.F90:100 Invalid argument ignored",  # a warning
    "Invalid argument",  # ESMF's class without its log line: anyone's words
    "Unable to open file",
    " Total log messages printed:",
    "   Critical error messages =            0",  # MPAS's end-of-run statistics
    "For more information see the NWChem manual at https://nwchemgit.github.io",
])  # fmt: skip
def test_look_alikes_are_not_catalogue_failures(line):
    s = signatures.match(line)
    assert s is None or not s.name.startswith("cat-") or s.name.startswith(("cat-petsc", "cat-ompi", "cat-slurm")), (
        s.name
    )
    assert s is None or not s.name.startswith(("cat-esmf", "cat-mpas", "cat-nwchem")), s.name
