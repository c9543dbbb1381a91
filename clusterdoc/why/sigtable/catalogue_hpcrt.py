"""The catalogue of the HPC codes' runtimes' own fatal messages, read from their source (PETSc's error
strings; libgfortran's, all known already): made by scripts/catalogue_hpcrt.py from
tests/fixtures/why/catalogue/hpcrt.tsv; do not edit by hand.

The category is the code path's (the error class that prints the message: CLASSES in the script), not a
log's; only messages no learned signature knows. A fallback: why/signatures.py puts it last.
"""

from __future__ import annotations

from clusterdoc.why.signature import S, Signature

# class -> (category, weak, meaning, next step)
# fmt: off
CLASSES: dict[str, tuple[str, bool, str, str]] = {
    'petsc-corrupt': ('code', False,
        'PETSc found corrupted memory or an invalid pointer (a freed or overwritten object): a memory bug in '
        'the program or a library it calls',
        "run a small case under valgrind or with -malloc_debug (PETSc's FAQ 'valgrind')"),
    'petsc-input-file': ('code', False,
        "PETSc could not open or read an input file, or found unexpected data in it: the job's input (a path,"
        ' a name, a file of another format)',
        "the file named in the message after it: its path from the job's directory, its format"),
    'petsc-numeric': ('code', False,
        "PETSc stopped on the problem's numbers (a zero pivot in a factorization, a floating point exception)"
        ': the matrix, the discretization or the solver options',
        'the matrix and the preconditioner (-pc_type, -pc_factor_shift_type nonzero for a zero pivot); -fp_tr'
        "ap to find the floating point exception's line"),
    'petsc-unsure': ('code', True,
        "PETSc stopped on an error whose class does not decide the cause (a signal, an external library's err"
        'or, a failed system call, an integer overflow, a missing type)',
        "the specific message after the class and the frames below it; for a signal, the job's state (sacct) "
        "and the node's kernel log"),
    'petsc-usage': ('code', False,
        'a PETSc call was refused by its own argument or state check (sizes, an argument, a type, the order o'
        "f calls): the program's use of PETSc or its options",
        "the first '[0]PETSC ERROR: #1 ...' frame below it (the call) and the specific message after the clas"
        "s; the program's options (-help)"),
}
# name, class, needles, the line it prints, its source
ROWS: list[tuple[str, str, tuple[str, ...], str, str]] = [
    ('cat-petsc-no-support-for-this-operation-for', 'petsc-usage',
     ('PETSC ERROR: ', 'No support for this operation for this object type'),
     '[0]PETSC ERROR: No support for this operation for this object type',
     'https://github.com/petsc/petsc/blob/009bbdc485cd9ad46be9940d3549e2dde9cdc322/src/sys/error/err.c (PE'
     'TSC_ERR_56)'),
    ('cat-petsc-operation-done-in-wrong-order', 'petsc-usage',
     ('PETSC ERROR: ', 'Operation done in wrong order'),
     '[0]PETSC ERROR: Operation done in wrong order',
     'https://github.com/petsc/petsc/blob/009bbdc485cd9ad46be9940d3549e2dde9cdc322/src/sys/error/err.c (PE'
     'TSC_ERR_58)'),
    ('cat-petsc-signal-received', 'petsc-unsure',
     ('PETSC ERROR: ', 'Signal received'),
     '[0]PETSC ERROR: Signal received',
     'https://github.com/petsc/petsc/blob/009bbdc485cd9ad46be9940d3549e2dde9cdc322/src/sys/error/err.c (PE'
     'TSC_ERR_59)'),
    ('cat-petsc-nonconforming-object-sizes', 'petsc-usage',
     ('PETSC ERROR: ', 'Nonconforming object sizes'),
     '[0]PETSC ERROR: Nonconforming object sizes',
     'https://github.com/petsc/petsc/blob/009bbdc485cd9ad46be9940d3549e2dde9cdc322/src/sys/error/err.c (PE'
     'TSC_ERR_60)'),
    ('cat-petsc-argument-aliasing-not-permitted', 'petsc-usage',
     ('PETSC ERROR: ', 'Argument aliasing not permitted'),
     '[0]PETSC ERROR: Argument aliasing not permitted',
     'https://github.com/petsc/petsc/blob/009bbdc485cd9ad46be9940d3549e2dde9cdc322/src/sys/error/err.c (PE'
     'TSC_ERR_61)'),
    ('cat-petsc-invalid-argument', 'petsc-usage',
     ('PETSC ERROR: ', 'Invalid argument'),
     '[0]PETSC ERROR: Invalid argument',
     'https://github.com/petsc/petsc/blob/009bbdc485cd9ad46be9940d3549e2dde9cdc322/src/sys/error/err.c (PE'
     'TSC_ERR_62)'),
    ('cat-petsc-argument-out-of-range', 'petsc-usage',
     ('PETSC ERROR: ', 'Argument out of range'),
     '[0]PETSC ERROR: Argument out of range',
     'https://github.com/petsc/petsc/blob/009bbdc485cd9ad46be9940d3549e2dde9cdc322/src/sys/error/err.c (PE'
     'TSC_ERR_63)'),
    ('cat-petsc-corrupt-argument', 'petsc-corrupt',
     ('PETSC ERROR: ', 'Corrupt argument'),
     '[0]PETSC ERROR: Corrupt argument:',
     'https://github.com/petsc/petsc/blob/009bbdc485cd9ad46be9940d3549e2dde9cdc322/src/sys/error/err.c (PE'
     'TSC_ERR_64)'),
    ('cat-petsc-unable-to-open-file', 'petsc-input-file',
     ('PETSC ERROR: ', 'Unable to open file'),
     '[0]PETSC ERROR: Unable to open file',
     'https://github.com/petsc/petsc/blob/009bbdc485cd9ad46be9940d3549e2dde9cdc322/src/sys/error/err.c (PE'
     'TSC_ERR_65)'),
    ('cat-petsc-read-from-file-failed', 'petsc-input-file',
     ('PETSC ERROR: ', 'Read from file failed'),
     '[0]PETSC ERROR: Read from file failed',
     'https://github.com/petsc/petsc/blob/009bbdc485cd9ad46be9940d3549e2dde9cdc322/src/sys/error/err.c (PE'
     'TSC_ERR_66)'),
    ('cat-petsc-invalid-pointer', 'petsc-corrupt',
     ('PETSC ERROR: ', 'Invalid pointer'),
     '[0]PETSC ERROR: Invalid pointer',
     'https://github.com/petsc/petsc/blob/009bbdc485cd9ad46be9940d3549e2dde9cdc322/src/sys/error/err.c (PE'
     'TSC_ERR_68)'),
    ('cat-petsc-arguments-must-have-same-type', 'petsc-usage',
     ('PETSC ERROR: ', 'Arguments must have same type'),
     '[0]PETSC ERROR: Arguments must have same type',
     'https://github.com/petsc/petsc/blob/009bbdc485cd9ad46be9940d3549e2dde9cdc322/src/sys/error/err.c (PE'
     'TSC_ERR_69)'),
    ('cat-petsc-attempt-to-use-a-pointer-that', 'petsc-corrupt',
     ('PETSC ERROR: ', 'Attempt to use a pointer that does not point to a valid accessible location'),
     '[0]PETSC ERROR: Attempt to use a pointer that does not point to a valid accessible location',
     'https://github.com/petsc/petsc/blob/009bbdc485cd9ad46be9940d3549e2dde9cdc322/src/sys/error/err.c (PE'
     'TSC_ERR_70)'),
    ('cat-petsc-detected-zero-pivot-in-lu-factorization', 'petsc-numeric',
     ('PETSC ERROR: ', 'Detected zero pivot in LU factorization'),
     '[0]PETSC ERROR: Detected zero pivot in LU factorization:',
     'https://github.com/petsc/petsc/blob/009bbdc485cd9ad46be9940d3549e2dde9cdc322/src/sys/error/err.c (PE'
     'TSC_ERR_71)'),
    ('cat-petsc-object-is-in-wrong-state', 'petsc-usage',
     ('PETSC ERROR: ', 'Object is in wrong state'),
     '[0]PETSC ERROR: Object is in wrong state',
     'https://github.com/petsc/petsc/blob/009bbdc485cd9ad46be9940d3549e2dde9cdc322/src/sys/error/err.c (PE'
     'TSC_ERR_73)'),
    ('cat-petsc-corrupted-petsc-object', 'petsc-corrupt',
     ('PETSC ERROR: ', 'Corrupted Petsc object'),
     '[0]PETSC ERROR: Corrupted Petsc object',
     'https://github.com/petsc/petsc/blob/009bbdc485cd9ad46be9940d3549e2dde9cdc322/src/sys/error/err.c (PE'
     'TSC_ERR_74)'),
    ('cat-petsc-arguments-are-incompatible', 'petsc-usage',
     ('PETSC ERROR: ', 'Arguments are incompatible'),
     '[0]PETSC ERROR: Arguments are incompatible',
     'https://github.com/petsc/petsc/blob/009bbdc485cd9ad46be9940d3549e2dde9cdc322/src/sys/error/err.c (PE'
     'TSC_ERR_75)'),
    ('cat-petsc-error-in-external-library', 'petsc-unsure',
     ('PETSC ERROR: ', 'Error in external library'),
     '[0]PETSC ERROR: Error in external library',
     'https://github.com/petsc/petsc/blob/009bbdc485cd9ad46be9940d3549e2dde9cdc322/src/sys/error/err.c (PE'
     'TSC_ERR_76)'),
    ('cat-petsc-memory-corruption', 'petsc-corrupt',
     ('PETSC ERROR: ', 'Memory corruption'),
     '[0]PETSC ERROR: Memory corruption',
     'https://github.com/petsc/petsc/blob/009bbdc485cd9ad46be9940d3549e2dde9cdc322/src/sys/error/err.c (PE'
     'TSC_ERR_78)'),
    ('cat-petsc-unexpected-data-in-file', 'petsc-input-file',
     ('PETSC ERROR: ', 'Unexpected data in file'),
     '[0]PETSC ERROR: Unexpected data in file',
     'https://github.com/petsc/petsc/blob/009bbdc485cd9ad46be9940d3549e2dde9cdc322/src/sys/error/err.c (PE'
     'TSC_ERR_79)'),
    ('cat-petsc-arguments-must-have-same-communicators', 'petsc-usage',
     ('PETSC ERROR: ', 'Arguments must have same communicators'),
     '[0]PETSC ERROR: Arguments must have same communicators',
     'https://github.com/petsc/petsc/blob/009bbdc485cd9ad46be9940d3549e2dde9cdc322/src/sys/error/err.c (PE'
     'TSC_ERR_80)'),
    ('cat-petsc-detected-zero-pivot-in-cholesky-factorization', 'petsc-numeric',
     ('PETSC ERROR: ', 'Detected zero pivot in Cholesky factorization'),
     '[0]PETSC ERROR: Detected zero pivot in Cholesky factorization:',
     'https://github.com/petsc/petsc/blob/009bbdc485cd9ad46be9940d3549e2dde9cdc322/src/sys/error/err.c (PE'
     'TSC_ERR_81)'),
    ('cat-petsc-overflow-in-integer-operation', 'petsc-unsure',
     ('PETSC ERROR: ', 'Overflow in integer operation'),
     '[0]PETSC ERROR: Overflow in integer operation:',
     'https://github.com/petsc/petsc/blob/009bbdc485cd9ad46be9940d3549e2dde9cdc322/src/sys/error/err.c (PE'
     'TSC_ERR_84)'),
    ('cat-petsc-null-argument-when-expecting-valid-pointer', 'petsc-usage',
     ('PETSC ERROR: ', 'Null argument, when expecting valid pointer'),
     '[0]PETSC ERROR: Null argument, when expecting valid pointer',
     'https://github.com/petsc/petsc/blob/009bbdc485cd9ad46be9940d3549e2dde9cdc322/src/sys/error/err.c (PE'
     'TSC_ERR_85)'),
    ('cat-petsc-unknown-type-check-for-miss-spelling', 'petsc-unsure',
     ('PETSC ERROR: ', 'Unknown type'),
     '[0]PETSC ERROR: Unknown type. Check for miss-spelling or missing external package needed for type:',
     'https://github.com/petsc/petsc/blob/009bbdc485cd9ad46be9940d3549e2dde9cdc322/src/sys/error/err.c (PE'
     'TSC_ERR_86)'),
    ('cat-petsc-error-in-system-call', 'petsc-unsure',
     ('PETSC ERROR: ', 'Error in system call'),
     '[0]PETSC ERROR: Error in system call',
     'https://github.com/petsc/petsc/blob/009bbdc485cd9ad46be9940d3549e2dde9cdc322/src/sys/error/err.c (PE'
     'TSC_ERR_88)'),
    ('cat-petsc-object-type-not-set', 'petsc-usage',
     ('PETSC ERROR: ', 'Object Type not set'),
     '[0]PETSC ERROR: Object Type not set:',
     'https://github.com/petsc/petsc/blob/009bbdc485cd9ad46be9940d3549e2dde9cdc322/src/sys/error/err.c (PE'
     'TSC_ERR_89)'),
]
# fmt: on

SIGNATURES: list[Signature] = [
    S(name, cat, needles, meaning, learned, source, step, weak=weak)
    for name, cls, needles, learned, source in ROWS
    for cat, weak, meaning, step in (CLASSES[cls],)
]
