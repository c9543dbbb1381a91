"""A catalogue of scientific applications' and frameworks' own fatal-message forms, read from their source (issue 41):
the function each one stops through and the fixed text it prints. TDEP's lo_stop_gracefully (its exit-code lines
and "active rank: N out of M"), AMReX's Error_host/Assert_host ("amrex::Abort::RANK::"), ESMF's return-code
strings (src/Infrastructure/LogErr/include/ESMCI_ErrMsgs.C, printed after "ERROR ... PET<rank>" in its logs),
deal.II's ExceptionBase ("An error occurred in line <N> of file <F> in function"), MFEM's MFEM_ABORT / VERIFY /
ASSERT, SU2's SU2_MPI::Error ("Error Exit"), Kokkos' throw_bad_alloc, HDF5's error-stack head ("HDF5-DIAG: Error
detected in ... MPI-process N"), MPAS's "CRITICAL ERROR: " log prefix, CP2K's CPASSERT and [ABORT] box, Nek5000's
exitt, NWChem's errquit categories and netCDF's nc_strerror table.

    .venv/bin/python scripts/catalogue_apps.py     # the raw list -> the signature table

The raw list (tests/fixtures/why/catalogue/apps.tsv: repo, commit, path, key, form) was transcribed from the files at
the commits it names (the `fetch` tool's mirrors, or the library's read_file for repositories too large to fetch),
with %s / %d where the source prints a value; it is committed, so the table is regenerated without the network. A form
becomes a row only where a rule of RULES (the tool and the key: the function or error code that prints it) decides
its class, and only where no learned signature (why/signatures.py) knows its line already: WRF's wrf_error_fatal,
FMS's mpp_error, LAMMPS' Error::all/one, GROMACS' gmx_fatal, OpenFOAM's FatalError, Quantum ESPRESSO's errore and
NAMD's are learned rows of sigtable/code.py (with their sources), and netCDF's strings all follow "NetCDF: ", which
environment.py's weak netcdf-error names: recorded here, left out of the table.
"""

from __future__ import annotations

import re
from pathlib import Path

from catalogue_common import (
    CATALOGUE,
    ROOT,
    SIGTABLE,
    classes_block,
    learned_matcher,
    lit,
    module_head,
    picked_keys,
    read_tsv,
    rows_block,
    signatures_tail,
)

RAW = CATALOGUE / "apps.tsv"
TABLE = SIGTABLE / "catalogue_apps.py"

TOOL = {
    "tdep-developers/tdep": "tdep", "AMReX-Codes/amrex": "amrex", "esmf-org/esmf": "esmf", "dealii/dealii": "dealii",
    "mfem/mfem": "mfem", "su2code/SU2": "su2", "kokkos/kokkos": "kokkos", "HDFGroup/hdf5": "hdf5",
    "MPAS-Dev/MPAS-Model": "mpas", "cp2k/cp2k": "cp2k", "Nek5000/Nek5000": "nek5000", "nwchemgit/nwchem": "nwchem",
    "Unidata/netcdf-c": "netcdf",
}  # fmt: skip

# class -> (category, weak, meaning, next step): one per tool and error path, never per message
_MPI_STEP = "the MPI library's own message before it (its error class), and the ranks' other lines"
CLASSES: dict[str, tuple[str, bool, str, str]] = {
    "tdep-check": ("code", False,
                   "TDEP stopped on its own check (lo_stop_gracefully: dimensions, an unphysical value, the "
                   "symmetry, a routine's parameters, a LAPACK call that failed): the input structure, force "
                   "constants or the options (a q-grid, a cutoff)",
                   "the message under it and the file and line it names (occurs in file/on line); the input files "
                   "and options of that step (another q-grid, fewer ranks to compare)"),
    "tdep-io": ("code", True,
                "TDEP stopped on an I/O error (lo_stop_gracefully's exit code 6): an input file it could not read, "
                "or a file it could not write",
                "the message under it (the file it names): its path and format, and the disk it writes to"),
    "tdep-mpi": ("code", True,
                 "TDEP stopped on an MPI error (lo_stop_gracefully's exit code 7): its own check of an MPI call",
                 _MPI_STEP),
    "amrex-abort": ("code", False,
                    "an AMReX application stopped on its own check (amrex::Abort / amrex::Error: the inputs file, "
                    "the grids, a time step or a solver that failed)",
                    "the message after 'amrex::Abort::RANK::' (the inputs parameter, the level or box it names); "
                    "the number before it is the rank that stopped"),
    "amrex-assert": ("code", False,
                     "an AMReX assertion failed (AMREX_ASSERT / AMREX_ALWAYS_ASSERT: the expression, file and line "
                     "it names): the code's invariant or its inputs",
                     "the expression and its file:line; the inputs that reach it (a debug build says more)"),
    "esmf-usage": ("code", False,
                   "ESMF refused a call by its own argument, object or value check (ESMF's return code, as its "
                   "log's ERROR line prints it): the program's use of ESMF, its grids or its configuration",
                   "the first ERROR line's file:line and method in the PET*.ESMF_LogFile of the rank named (PET N), "
                   "and the message after the class"),
    "esmf-input-file": ("code", False,
                        "ESMF could not open or read an input file, or found unexpected data in it (a grid, a "
                        "SCRIP or weight file): the job's input",
                        "the file the ERROR line's method reads: its path, its format (SCRIP, ESMF mesh, UGRID)"),
    "esmf-file-write": ("code", True,
                        "ESMF could not create, write or close a file", "the ERROR line's method and the file"),
    "esmf-nomem": ("oom", False,
                   "ESMF could not allocate memory (ESMF_RC_MEM_ALLOCATE): the process ran out of the host's memory "
                   "or of the job's limit",
                   "more memory per rank (fewer ranks per node, more nodes), or more --mem; sacct -o MaxRSS"),
    "esmf-corrupt": ("code", False,
                     "ESMF found a corrupted object or memory (an invalid pointer, a deallocation that failed): a "
                     "memory bug in the program or a library it calls",
                     "the ERROR line's method; the program under a memory checker (valgrind) on a small case"),
    "esmf-unsure": ("code", True,
                    "ESMF stopped on a class that does not decide the cause (a system call, a library it calls: "
                    "NetCDF, MOAB; a timeout; an unspecified memory error)",
                    "the library's own message in the PET log around it"),
    "esmf-build": ("environment", False,
                   "a library ESMF needs is not in this build (ESMF_RC_LIB_NOT_PRESENT: NetCDF, PIO, MOAB, LAPACK): "
                   "the installation",
                   "the ESMF build's esmf.mk (ESMF_NETCDF, ESMF_PIO ...), or load an ESMF built with it"),
    "dealii-exception": ("code", False,
                         "a deal.II program stopped on an exception (Assert / AssertThrow: the condition, file and "
                         "function it names): the program's code or its input",
                         "the 'The violated condition was:' and 'Additional information:' lines after it; a debug "
                         "build for Assert"),
    "dealii-mpi": ("code", True,
                   "deal.II stopped because an MPI function returned an error (ExcMPI)", _MPI_STEP),
    "mfem-abort": ("code", False,
                   "an MFEM program stopped on its own check (MFEM_ABORT, MFEM_VERIFY, MFEM_ASSERT: the mesh, the "
                   "options, the discretization)",
                   "the message after it and its ' ... in function:' / ' ... in file:' lines"),
    "su2-error": ("code", False,
                  "SU2 stopped on its own check (SU2_MPI::Error: the configuration file, the mesh, a marker or "
                  "option it names)",
                  "the message above 'Error Exit' and the 'Error in \"FUNCTION\"' line before it; the .cfg option"),
    "kokkos-nomem": ("oom", False,
                     "Kokkos could not allocate memory in a memory space (the host's or a GPU's, the space named)",
                     "less memory per rank or per GPU (a smaller problem, more nodes); the label names the view"),
    "hdf5-diag": ("code", True,
                  "HDF5 printed its error stack (an HDF5 call failed): the class is in the 'major:'/'minor:' "
                  "lines after it",
                  "the '#000' line and the minor class after it (Unable to open file, file locking, already open)"),
    "mpas-critical": ("code", False,
                      "an MPAS core stopped on a critical error of its own (mpas_log_write with MPAS_LOG_CRIT: the "
                      "namelist, the streams, an input file, the mesh)",
                      "the log.CORE.NNNN.err file of the rank that wrote it: the message and the lines before it"),
    # weak: an internal assertion is CP2K's invariant, broken by its code, its input or a library of its build
    # (cp2k/cp2k#2549: libxc 6 with a CP2K written for 5; real/cp2k-2549, ambiguous)
    "cp2k-assert": ("code", True,
                    "CP2K stopped on an internal assertion (CPASSERT failed) at the file:line its [ABORT] box names: "
                    "its code, reached by this input or by a library of its build",
                    "the file:line in the [ABORT] box; the input (a smaller case, another CP2K version)"),
    "nek-exit": ("code", False,
                 "Nek5000 stopped on an error of its own (exitt after its message: the .par/.rea, the mesh, SIZE "
                 "limits, a solver that diverged)",
                 "the EXIT: or ERROR: line before it and the .par / SIZE values it names"),
    "nwchem-input": ("code", False,
                     "NWChem stopped in errquit on an error of a category that is the input's (the basis set, the "
                     "geometry, the input file, a feature not implemented, integrals, no convergence)",
                     "the message above it and the 'current input line'; the input's block that category names"),
    "nwchem-unsure": ("code", True,
                      "NWChem stopped in errquit on an error whose category does not decide the cause (not "
                      "assigned to a category, the runtime database, disk I/O)",
                      "the message above it (its code) and the scratch and permanent directories"),
}  # fmt: skip

# a weak class's candidates (why/candidates.py): what it may be, and what decides
THIN: dict[str, tuple[str, ...]] = {
    "tdep-io": (
        "code: an input file TDEP reads is missing or of another format (infile.ucposcar, infile.ssposcar, "
        "infile.forceconstant ...: the message names it)",
        "environment: the file system it writes to (full, a quota, permissions: df, quota, ls -ld on the job's "
        "directory)",
    ),
    "tdep-mpi": (
        "code or the launch: the ranks disagree or the job's size does not fit the problem (mpirun -np against "
        "the grid; fewer ranks)",
        "network or environment: the MPI library failed (its own error line, the interconnect, another MPI's "
        "mpirun)",
    ),
    "esmf-file-write": (
        "environment: the output's file system (full, a quota, permissions, read-only: df, quota, ls -ld)",
        "code: the path or name the program gave (a directory that does not exist; the file open by another rank)",
    ),
    "esmf-unsure": (
        "code: the program's call or data (the ERROR lines' methods in the PET*.ESMF_LogFile of that rank)",
        "environment: an external library (NetCDF, PIO, MOAB) or a system call that failed on that node: its own "
        "message in the PET log",
        "oom: an unspecified memory error (sacct -o MaxRSS; the node's dmesg)",
    ),
    "dealii-mpi": (
        "code: the program's MPI call (the error class deal.II names: a communicator, a count, a rank)",
        "network or environment: the MPI library or the interconnect failed (the MPI's own lines before it)",
    ),
    "hdf5-diag": (
        "code: the file the program opened or created (its path, a file already open, a wrong mode): the 'minor:' "
        "line names the class",
        "environment: the file system (file locking on Lustre/NFS: HDF5_USE_FILE_LOCKING=FALSE; a full disk, a "
        "quota, permissions)",
        "environment: two HDF5 versions in one program (the headers' against the library's: ldd on the program)",
    ),
    "cp2k-assert": (
        "code: a CP2K bug at that file:line, reached by this input (a smaller input; another CP2K version)",
        "environment: a library of its build of another version than this CP2K was written for (libxc, ELPA, "
        "DBCSR, FFTW: cp2k --version lists them, against its release notes)",
    ),
    "nwchem-unsure": (
        "code: the input (the 'current input line' above it and the message's routine)",
        "environment: the scratch or permanent directory (its space, its permissions: scratch_dir, permanent_dir)",
        "oom: NWChem's memory directive too small or the node's memory (the message's routine; memory total)",
    ),
}

_ESMF_USAGE = frozenset(
    "OBJ_BAD OBJ_INIT OBJ_CREATE OBJ_WRONG ARG_BAD ARG_RANK ARG_SIZE ARG_VALUE ARG_DUP ARG_SAMETYPE ARG_SAMECOMM "
    "ARG_INCOMP ARG_CORRUPT ARG_WRONG ARG_OUTOFRANGE ARG_OPT NOT_IMPL PTR_NULL PTR_NOTALLOC PTR_ISALLOC DUP_NAME "
    "LONG_NAME LONG_STR COPY_FAIL DIV_ZERO CANNOT_GET CANNOT_SET NOT_FOUND NOT_VALID OBJ_NOT_CREATED OBJ_DELETED "
    "VAL_WRONG VAL_ERRBOUND VAL_OUTOFRANGE ATTR_NOTSET ATTR_WRONGTYPE ATTR_ITEMSOFF ATTR_LINK BUFFER_SHORT "
    "FILE_EXISTS FILE_NOTDIR OPTARG_BAD".split()
)
# (tool, keys (None: every key of the tool), class); a class of None: no failure alone or a path that does not decide
RULES: list[tuple[str, frozenset[str] | None, str | None]] = [
    ("tdep", frozenset(f"lo_stop_gracefully:{n}" for n in (1, 2, 3, 4, 5)), "tdep-check"),
    ("tdep", frozenset({"lo_stop_gracefully:6"}), "tdep-io"),
    ("tdep", frozenset({"lo_stop_gracefully:7"}), "tdep-mpi"),
    ("tdep", frozenset({"lo_stop_gracefully:rank"}), None),  # the rank line: logs.py names the rank from it
    ("amrex", frozenset({"Error_host:Abort", "Error_host:Error"}), "amrex-abort"),
    ("amrex", frozenset({"Assert_host"}), "amrex-assert"),
    ("esmf", _ESMF_USAGE, "esmf-usage"),
    ("esmf", frozenset({"FILE_OPEN", "FILE_READ", "FILE_UNEXPECTED"}), "esmf-input-file"),
    ("esmf", frozenset({"FILE_CREATE", "FILE_WRITE", "FILE_CLOSE"}), "esmf-file-write"),
    ("esmf", frozenset({"MEM_ALLOCATE"}), "esmf-nomem"),
    ("esmf", frozenset({"OBJ_COR", "PTR_BAD", "MEMC", "MEM_DEALLOCATE"}), "esmf-corrupt"),
    ("esmf", frozenset({"MEM", "SYS", "BUSY", "LIB", "MOAB_ERROR", "NETCDF_ERROR", "TIMEOUT"}), "esmf-unsure"),
    ("esmf", frozenset({"LIB_NOT_PRESENT"}), "esmf-build"),
    # ESMF's internal-error, unused-attribute, region-still-active and return-code-not-set classes: left out
    ("dealii", frozenset({"ExceptionBase::print_exc_data"}), "dealii-exception"),
    ("dealii", frozenset({"ExcMPI::print_info"}), "dealii-mpi"),
    ("mfem", None, "mfem-abort"),
    ("su2", frozenset({"CBaseMPIWrapper::Error:exit"}), "su2-error"),
    ("su2", frozenset({"CBaseMPIWrapper::Error:head"}), None),  # 'Error in "F": ' alone is anyone's words
    ("kokkos", None, "kokkos-nomem"),
    ("hdf5", None, "hdf5-diag"),
    ("mpas", None, "mpas-critical"),
    ("cp2k", frozenset({"cp__a"}), "cp2k-assert"),
    ("cp2k", frozenset({"print_abort_message"}), "cp2k-assert"),  # its box's "[ABORT]" is too short alone
    ("nek5000", None, "nek-exit"),
    ("nwchem", frozenset({"BASIS_ERR", "GEOM_ERR", "INPUT_ERR", "CAPMIS_ERR", "INT_ERR", "CALC_ERR"}), "nwchem-input"),
    ("nwchem", frozenset({"UNKNOWN_ERR", "RTDB_ERR", "DISK_ERR"}), "nwchem-unsure"),
]  # fmt: skip

# the classes whose line carries the program's own free text after the form (a memory message there is left to the
# memory rows); every code row is also an application's fatal head (signatures.APP_FATAL_SIGNS: a memory line after
# it is oom)
UNLESS = ("alloc", "memory", "Memory")
FREE_TEXT = ("amrex-abort", "mfem-abort", "mpas-critical")
# how a tool prints a table's string: ESMF's log line (date, time, its 'ERROR   ' type, the PET, file:line, method)
PRINTED = {"esmf": "20200817 221425.005 ERROR            PET3 ESMF_Grid.F90:5303 ESMF_GridCreate {}  - X"}
MARKERS = {"esmf": ("ERROR ", " PET")}  # an ESMF string is named only on its log's ERROR line
# the needles of a form whose fixed pieces say too much or too little: SU2's rule of dashes (a paste may trim it),
# HDF5's head without its parallel tail (a serial HDF5 prints "thread N" there)
NEEDLES = {("su2", "CBaseMPIWrapper::Error:exit"): ("- Error Exit -",),
           ("hdf5", "H5E__walk2_cb"): ("-DIAG: Error detected in",)}  # fmt: skip
HOLE = re.compile(r"%[-+ #0-9.*]*(?:l|ll|z)?[sdiuxXpfgc]")
MIN_NEEDLE = 11  # a row's longest needle at least (MFEM's "MFEM abort:")


def read_raw(path: Path = RAW) -> list[tuple[str, str, str, str, str]]:
    return [(repo, commit, p, key, form) for repo, commit, p, key, form in read_tsv(path)]


def classify(tool: str, key: str) -> str | None:
    k = key.split("_RC_", 1)[1] if tool == "esmf" else key
    for t, keys, cls in RULES:
        if t == tool and (keys is None or k in keys):
            return cls
    return None


def needles_of(tool: str, key: str, form: str, keys: tuple[str, ...]) -> tuple[str, ...] | None:
    """The form's fixed pieces (split at its holes, stripped; three at most), the first the longest one a pre-check
    key holds, then the tool's markers; None where neither a piece nor a marker holds a key."""
    if (tool, key) in NEEDLES:
        return NEEDLES[(tool, key)]
    parts = [p.strip() for p in HOLE.split(form)]
    parts = [p for p in parts if len(p) >= 3]
    keyed = sorted((p for p in parts if any(k in p.lower() for k in keys)), key=len, reverse=True)
    markers = MARKERS.get(tool, ())
    if not keyed:  # a string no key holds: its tool's keyed marker first (ESMF's "ERROR "), the string after it
        first = next((m for m in markers if any(k in m.lower() for k in keys)), None)
        return None if first is None else (first, *parts[:2], *[m for m in markers if m != first])
    return (keyed[0], *[p for p in parts if p != keyed[0]][:2], *markers)


def printed(tool: str, form: str) -> str:
    """The line the form prints, its holes filled (a rank 3, a name X)."""
    line = HOLE.sub(lambda m: "3" if m.group(0)[-1] in "diu" else "X", form)
    return PRINTED[tool].format(line) if tool in PRINTED else line


def _slug(tool: str, key: str, form: str) -> str:
    words = [w for w in re.sub(r"[^a-z0-9]+", "-", HOLE.sub(" ", form).lower()).split("-") if w][:7]
    return f"cat-{tool}-" + "-".join(words)


def build(raw, keys: tuple[str, ...], known) -> tuple[list[dict], dict[str, int]]:
    """The rows of the table from the raw list; `known(line)` is the learned signature a line already matches."""
    rows: list[dict] = []
    skipped = {"known": 0, "unclassified": 0, "too short": 0, "no key": 0}
    for repo, commit, path, key, form in raw:
        tool = TOOL[repo]
        line = printed(tool, form)
        if known(line) is not None:
            skipped["known"] += 1
            continue
        cls = classify(tool, key)
        if cls is None:
            skipped["unclassified"] += 1
            continue
        needles = needles_of(tool, key, form, keys)
        if needles is None:
            skipped["no key"] += 1
            continue
        if max(len(n) for n in needles) < MIN_NEEDLE:
            skipped["too short"] += 1
            continue
        rows.append({"name": _slug(tool, key, form), "cls": cls, "needles": needles, "learned": line,
                     "source": f"https://github.com/{repo}/blob/{commit}/{path} ({key})"})  # fmt: skip
    return rows, skipped


def render(rows: list[dict]) -> str:
    out = module_head([
        "\"\"\"The catalogue of scientific applications' and frameworks' own fatal messages (TDEP, AMReX, ESMF,",
        "deal.II, MFEM, SU2, Kokkos, HDF5, MPAS, CP2K, Nek5000, NWChem), read from their source: made by",
        "scripts/catalogue_apps.py from tests/fixtures/why/catalogue/apps.tsv; do not edit by hand.",
        "",
        "The category is the code path's (the function or error code that prints the message: CLASSES in the script),",
        "not a log's; only forms no learned signature knows. A fallback: why/signatures.py puts it last. HEADS: the",
        "code rows whose message may follow them (signatures.APP_FATAL_SIGNS); THIN: a weak class's candidates.",
    ])  # fmt: skip
    out += classes_block(CLASSES, (r["cls"] for r in rows))
    out.append("THIN: dict[str, tuple[str, ...]] = {")
    for cls in sorted({r["cls"] for r in rows} & set(THIN)):
        out.append(f"    {cls!r}: (")
        out += [f"        {lit(c, '        ')}," for c in THIN[cls]]
        out.append("    ),")
    out.append("}")
    out.append(f"UNLESS = {UNLESS!r}  # a free-text row's line that says memory is left to the memory rows")
    out.append(f"FREE_TEXT = {FREE_TEXT!r}")
    out += rows_block(rows)
    out += signatures_tail("S(name, cat, needles, meaning, learned, source, step, weak=weak, "
                           "unless=UNLESS if cls in FREE_TEXT else ())",
                           "for name, cls, needles, learned, source in ROWS")  # fmt: skip
    heads = 'tuple(name for name, cls, *_ in ROWS if CLASSES[cls][:2] == ("code", False))'
    out.append(f"HEADS: tuple[str, ...] = {heads}")
    return "\n".join(out) + "\n"


def generate() -> tuple[str, list[dict], dict[str, int]]:
    rows, skipped = build(read_raw(), picked_keys(), learned_matcher())
    return render(rows), rows, skipped


def main() -> int:
    text, rows, skipped = generate()
    TABLE.write_text(text, encoding="utf-8")
    by: dict[str, int] = {}
    for r in rows:
        tool, (cat, weak) = r["name"].split("-")[1], CLASSES[r["cls"]][:2]
        k = f"{tool} {cat}{' (weak)' if weak else ''}"
        by[k] = by.get(k, 0) + 1
    print(f"{len(rows)} rows -> {TABLE.relative_to(ROOT)}: {dict(sorted(by.items()))}; left out: {skipped}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
