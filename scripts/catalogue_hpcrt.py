"""A catalogue of the HPC codes' runtimes' own fatal messages, read from their source (issue 41): libgfortran's
error table (GCC's libgfortran/runtime/error.c: translate_error, runtime_error, os_error) and PETSc's error
strings (src/sys/error/err.c: PetscErrorStrings, the text PetscTraceBackErrorHandler prints after "[N]PETSC ERROR: "
for an error code of include/petscerror.h).

    .venv/bin/python scripts/catalogue_hpcrt.py     # the raw list -> the signature table

The raw list (tests/fixtures/why/catalogue/hpcrt.tsv: repo, commit, path, key, message) is committed and was
transcribed from the files at the commits it names (the library's read_file: a GCC mirror is too large to fetch), so
the table is regenerated and reviewed without the network. A message becomes a row only where a rule of RULES (the
component's file and the message's key: the code path that prints it) decides its category, and only where the
learned signatures (why/signatures.py) do not know it already: libgfortran's messages all follow "Fortran runtime
error: ", which code.py's gfortran-runtime names (and oom.py its allocation failure), so they are recorded and left
out. Intel Fortran's numbered list is not here: its documented table could not be read whole, and code.py's
ifort-severe, oom.py's severe (41) and environment.py's severe (9) already name its severe lines.
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
    module_head,
    read_tsv,
    rows_block,
    signatures_tail,
)

RAW = CATALOGUE / "hpcrt.tsv"
TABLE = SIGTABLE / "catalogue_hpcrt.py"

# what was read: (repository, commit, file)
SOURCES = [
    ("gcc-mirror/gcc", "02183b453439daa65fc2bb205afef9428f106023", "libgfortran/runtime/error.c"),
    ("petsc/petsc", "009bbdc485cd9ad46be9940d3549e2dde9cdc322", "src/sys/error/err.c"),
]

# class -> (category, weak, meaning, next step): one per component and error path, never per message
CLASSES: dict[str, tuple[str, bool, str, str]] = {
    "petsc-nomem": ("oom", False,
                    "PETSc could not allocate memory (PETSC_ERR_MEM: its malloc failed): the process ran out of the "
                    "host's memory or of the job's limit",
                    "less memory per rank (more nodes, fewer ranks per node, a smaller problem), or more --mem; "
                    "-malloc_view or -log_view for what PETSc held"),
    "petsc-usage": ("code", False,
                    "a PETSc call was refused by its own argument or state check (sizes, an argument, a type, the "
                    "order of calls): the program's use of PETSc or its options",
                    "the first '[0]PETSC ERROR: #1 ...' frame below it (the call) and the specific message after "
                    "the class; the program's options (-help)"),
    "petsc-numeric": ("code", False,
                      "PETSc stopped on the problem's numbers (a zero pivot in a factorization, a floating point "
                      "exception): the matrix, the discretization or the solver options",
                      "the matrix and the preconditioner (-pc_type, -pc_factor_shift_type nonzero for a zero "
                      "pivot); -fp_trap to find the floating point exception's line"),
    "petsc-corrupt": ("code", False,
                      "PETSc found corrupted memory or an invalid pointer (a freed or overwritten object): a "
                      "memory bug in the program or a library it calls",
                      "run a small case under valgrind or with -malloc_debug (PETSc's FAQ 'valgrind')"),
    "petsc-input-file": ("code", False,
                         "PETSc could not open or read an input file, or found unexpected data in it: the job's "
                         "input (a path, a name, a file of another format)",
                         "the file named in the message after it: its path from the job's directory, its format"),
    # weak: a class, not a cause; what failed is in the lines around it
    "petsc-unsure": ("code", True,
                     "PETSc stopped on an error whose class does not decide the cause (a signal, an external "
                     "library's error, a failed system call, an integer overflow, a missing type)",
                     "the specific message after the class and the frames below it; for a signal, the job's state "
                     "(sacct) and the node's kernel log"),
}  # fmt: skip

# (file, message keys, class); a class of None: not a failure on its own or a path that does not decide
_PETSC = "src/sys/error/err.c"
RULES: list[tuple[str, frozenset[str], str | None]] = [
    (_PETSC, frozenset({"PETSC_ERR_55"}), "petsc-nomem"),
    (_PETSC, frozenset({f"PETSC_ERR_{n}" for n in (56, 58, 60, 61, 62, 63, 69, 73, 75, 80, 85, 89)}), "petsc-usage"),
    (_PETSC, frozenset({"PETSC_ERR_71", "PETSC_ERR_72", "PETSC_ERR_81"}), "petsc-numeric"),
    (_PETSC, frozenset({f"PETSC_ERR_{n}" for n in (64, 68, 70, 74, 78)}), "petsc-corrupt"),
    (_PETSC, frozenset({"PETSC_ERR_65", "PETSC_ERR_66", "PETSC_ERR_79"}), "petsc-input-file"),
    (_PETSC, frozenset({f"PETSC_ERR_{n}" for n in (59, 76, 84, 86, 88)}), "petsc-unsure"),
    # libgfortran: every one is a runtime_error/generate_error line, which code.py and oom.py already name
    ("libgfortran/runtime/error.c", frozenset({"ERROR_END", "ERROR_EOR", "ERROR_FORMAT", "ERROR_READ_VALUE",
                                               "ERROR_READ_OVERFLOW", "ERROR_BAD_US", "ERROR_ENDFILE",
                                               "ERROR_ALREADY_OPEN", "ERROR_DIRECT_EOR", "runtime_error"}),
     "gfortran-code"),
]  # fmt: skip
CLASSES["gfortran-code"] = (
    "code",
    False,
    "the Fortran program stopped on an I/O or runtime error of libgfortran (its input file, a format, a value)",
    "the 'At line N of file F' line above it and the input it read",
)

# how a runtime prints a table's string: PETSc's traceback handler after its "[rank]PETSC ERROR: " prefix,
# libgfortran after "Fortran runtime error: " (a format string of the table: as it is)
PRINTED = {"petsc": "[0]PETSC ERROR: {}", "gcc": "Fortran runtime error: {}"}
MARKER = {"petsc": "PETSC ERROR: ", "gcc": "Fortran runtime error: "}
TOOL = {"petsc/petsc": "petsc", "gcc-mirror/gcc": "gcc"}
HOLE = re.compile(r"%[-+ #0-9.*]*(?:l|ll|z)?[sdiuxXpfgc]")


def read_raw(path: Path = RAW) -> list[tuple[str, str, str, str, str]]:
    return [(repo, commit, p, key, msg) for repo, commit, p, key, msg in read_tsv(path)]


def classify(path: str, key: str) -> str | None:
    for file, keys, cls in RULES:
        if path == file and key in keys:
            return cls
    return None


def needles_of(tool: str, msg: str) -> tuple[str, ...]:
    """The runtime's marker (it holds the pre-check's key "error") and the message's first line (its fixed text up to a
    colon, a full stop before a hint, or a hole)."""
    text = HOLE.split(msg)[0].split(":")[0].split(". ")[0].strip()
    return (MARKER[tool], text) if text else (MARKER[tool],)


def _slug(key: str, msg: str) -> str:
    words = re.sub(r"[^a-z0-9]+", "-", msg.lower()).strip("-").split("-")[:6]
    return "-".join(words)


def build(raw, known) -> tuple[list[dict], dict[str, int]]:
    """The rows of the table from the raw list; `known(line)` is the learned signature a line already matches."""
    rows, skipped = [], {"unclassified": 0, "known": 0, "too short": 0}
    for repo, commit, path, key, msg in raw:
        cls = classify(path, key)
        if cls is None:
            skipped["unclassified"] += 1
            continue
        tool = TOOL[repo]
        needles = needles_of(tool, msg)
        if max(len(n) for n in needles) < 12:
            skipped["too short"] += 1
            continue
        line = PRINTED[tool].format(HOLE.sub("X", msg))
        if known(line) is not None:
            skipped["known"] += 1
            continue
        rows.append({"name": f"cat-{tool}-{_slug(key, msg)}", "cls": cls, "needles": needles, "learned": line,
                     "source": f"https://github.com/{repo}/blob/{commit}/{path} ({key})"})  # fmt: skip
    return rows, skipped


def render(rows: list[dict]) -> str:
    out = module_head([
        "\"\"\"The catalogue of the HPC codes' runtimes' own fatal messages, read from their source (PETSc's error",
        "strings; libgfortran's, all known already): made by scripts/catalogue_hpcrt.py from",
        "tests/fixtures/why/catalogue/hpcrt.tsv; do not edit by hand.",
        "",
        "The category is the code path's (the error class that prints the message: CLASSES in the script), not a",
        "log's; only messages no learned signature knows. A fallback: why/signatures.py puts it last.",
    ])  # fmt: skip
    out += classes_block(CLASSES, (r["cls"] for r in rows))
    out += rows_block(rows)
    out += signatures_tail("S(name, cat, needles, meaning, learned, source, step, weak=weak)",
                           "for name, cls, needles, learned, source in ROWS")  # fmt: skip
    return "\n".join(out) + "\n"


def generate() -> tuple[str, list[dict], dict[str, int]]:
    rows, skipped = build(read_raw(), learned_matcher())
    return render(rows), rows, skipped


def main() -> int:
    text, rows, skipped = generate()
    TABLE.write_text(text, encoding="utf-8")
    print(f"{len(rows)} rows -> {TABLE.relative_to(ROOT)}; skipped {skipped}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
