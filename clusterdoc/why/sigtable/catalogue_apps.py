"""The catalogue of scientific applications' and frameworks' own fatal messages (TDEP, AMReX, ESMF,
deal.II, MFEM, SU2, Kokkos, HDF5, MPAS, CP2K, Nek5000, NWChem), read from their source: made by
scripts/catalogue_apps.py from tests/fixtures/why/catalogue/apps.tsv; do not edit by hand.

The category is the code path's (the function or error code that prints the message: CLASSES in the script),
not a log's; only forms no learned signature knows. A fallback: why/signatures.py puts it last. HEADS: the
code rows whose message may follow them (signatures.APP_FATAL_SIGNS); THIN: a weak class's candidates.
"""

from __future__ import annotations

from clusterdoc.why.signature import S, Signature

# class -> (category, weak, meaning, next step)
# fmt: off
CLASSES: dict[str, tuple[str, bool, str, str]] = {
    'amrex-abort': ('code', False,
        'an AMReX application stopped on its own check (amrex::Abort / amrex::Error: the inputs file, the gri'
        'ds, a time step or a solver that failed)',
        "the message after 'amrex::Abort::RANK::' (the inputs parameter, the level or box it names); the numb"
        'er before it is the rank that stopped'),
    'amrex-assert': ('code', False,
        'an AMReX assertion failed (AMREX_ASSERT / AMREX_ALWAYS_ASSERT: the expression, file and line it name'
        "s): the code's invariant or its inputs",
        'the expression and its file:line; the inputs that reach it (a debug build says more)'),
    'cp2k-assert': ('code', True,
        'CP2K stopped on an internal assertion (CPASSERT failed) at the file:line its [ABORT] box names: its '
        'code, reached by this input or by a library of its build',
        'the file:line in the [ABORT] box; the input (a smaller case, another CP2K version)'),
    'dealii-exception': ('code', False,
        'a deal.II program stopped on an exception (Assert / AssertThrow: the condition, file and function it'
        " names): the program's code or its input",
        "the 'The violated condition was:' and 'Additional information:' lines after it; a debug build for As"
        'sert'),
    'dealii-mpi': ('code', True,
        'deal.II stopped because an MPI function returned an error (ExcMPI)',
        "the MPI library's own message before it (its error class), and the ranks' other lines"),
    'esmf-build': ('environment', False,
        'a library ESMF needs is not in this build (ESMF_RC_LIB_NOT_PRESENT: NetCDF, PIO, MOAB, LAPACK): the '
        'installation',
        "the ESMF build's esmf.mk (ESMF_NETCDF, ESMF_PIO ...), or load an ESMF built with it"),
    'esmf-corrupt': ('code', False,
        'ESMF found a corrupted object or memory (an invalid pointer, a deallocation that failed): a memory b'
        'ug in the program or a library it calls',
        "the ERROR line's method; the program under a memory checker (valgrind) on a small case"),
    'esmf-file-write': ('code', True,
        'ESMF could not create, write or close a file',
        "the ERROR line's method and the file"),
    'esmf-input-file': ('code', False,
        'ESMF could not open or read an input file, or found unexpected data in it (a grid, a SCRIP or weight'
        " file): the job's input",
        "the file the ERROR line's method reads: its path, its format (SCRIP, ESMF mesh, UGRID)"),
    'esmf-unsure': ('code', True,
        'ESMF stopped on a class that does not decide the cause (a system call, a library it calls: NetCDF, M'
        'OAB; a timeout; an unspecified memory error)',
        "the library's own message in the PET log around it"),
    'esmf-usage': ('code', False,
        "ESMF refused a call by its own argument, object or value check (ESMF's return code, as its log's ERR"
        "OR line prints it): the program's use of ESMF, its grids or its configuration",
        "the first ERROR line's file:line and method in the PET*.ESMF_LogFile of the rank named (PET N), and "
        'the message after the class'),
    'hdf5-diag': ('code', True,
        "HDF5 printed its error stack (an HDF5 call failed): the class is in the 'major:'/'minor:' lines afte"
        'r it',
        "the '#000' line and the minor class after it (Unable to open file, file locking, already open)"),
    'kokkos-nomem': ('oom', False,
        "Kokkos could not allocate memory in a memory space (the host's or a GPU's, the space named)",
        'less memory per rank or per GPU (a smaller problem, more nodes); the label names the view'),
    'mfem-abort': ('code', False,
        'an MFEM program stopped on its own check (MFEM_ABORT, MFEM_VERIFY, MFEM_ASSERT: the mesh, the option'
        's, the discretization)',
        "the message after it and its ' ... in function:' / ' ... in file:' lines"),
    'mpas-critical': ('code', False,
        'an MPAS core stopped on a critical error of its own (mpas_log_write with MPAS_LOG_CRIT: the namelist'
        ', the streams, an input file, the mesh)',
        'the log.CORE.NNNN.err file of the rank that wrote it: the message and the lines before it'),
    'nek-exit': ('code', False,
        'Nek5000 stopped on an error of its own (exitt after its message: the .par/.rea, the mesh, SIZE limit'
        's, a solver that diverged)',
        'the EXIT: or ERROR: line before it and the .par / SIZE values it names'),
    'nwchem-input': ('code', False,
        "NWChem stopped in errquit on an error of a category that is the input's (the basis set, the geometry"
        ', the input file, a feature not implemented, integrals, no convergence)',
        "the message above it and the 'current input line'; the input's block that category names"),
    'nwchem-unsure': ('code', True,
        'NWChem stopped in errquit on an error whose category does not decide the cause (not assigned to a ca'
        'tegory, the runtime database, disk I/O)',
        'the message above it (its code) and the scratch and permanent directories'),
    'su2-error': ('code', False,
        'SU2 stopped on its own check (SU2_MPI::Error: the configuration file, the mesh, a marker or option i'
        't names)',
        'the message above \'Error Exit\' and the \'Error in "FUNCTION"\' line before it; the .cfg option'),
    'tdep-check': ('code', False,
        'TDEP stopped on its own check (lo_stop_gracefully: dimensions, an unphysical value, the symmetry, a '
        "routine's parameters, a LAPACK call that failed): the input structure, force constants or the option"
        's (a q-grid, a cutoff)',
        'the message under it and the file and line it names (occurs in file/on line); the input files and op'
        'tions of that step (another q-grid, fewer ranks to compare)'),
    'tdep-io': ('code', True,
        "TDEP stopped on an I/O error (lo_stop_gracefully's exit code 6): an input file it could not read, or"
        ' a file it could not write',
        'the message under it (the file it names): its path and format, and the disk it writes to'),
    'tdep-mpi': ('code', True,
        "TDEP stopped on an MPI error (lo_stop_gracefully's exit code 7): its own check of an MPI call",
        "the MPI library's own message before it (its error class), and the ranks' other lines"),
}
THIN: dict[str, tuple[str, ...]] = {
    'cp2k-assert': (
        'code: a CP2K bug at that file:line, reached by this input (a smaller input; another CP2K version)',
        'environment: a library of its build of another version than this CP2K was written for (libxc, ELPA, '
        'DBCSR, FFTW: cp2k --version lists them, against its release notes)',
    ),
    'dealii-mpi': (
        "code: the program's MPI call (the error class deal.II names: a communicator, a count, a rank)",
        "network or environment: the MPI library or the interconnect failed (the MPI's own lines before it)",
    ),
    'esmf-file-write': (
        "environment: the output's file system (full, a quota, permissions, read-only: df, quota, ls -ld)",
        'code: the path or name the program gave (a directory that does not exist; the file open by another r'
        'ank)',
    ),
    'esmf-unsure': (
        "code: the program's call or data (the ERROR lines' methods in the PET*.ESMF_LogFile of that rank)",
        'environment: an external library (NetCDF, PIO, MOAB) or a system call that failed on that node: its '
        'own message in the PET log',
        "oom: an unspecified memory error (sacct -o MaxRSS; the node's dmesg)",
    ),
    'hdf5-diag': (
        "code: the file the program opened or created (its path, a file already open, a wrong mode): the 'min"
        "or:' line names the class",
        'environment: the file system (file locking on Lustre/NFS: HDF5_USE_FILE_LOCKING=FALSE; a full disk, '
        'a quota, permissions)',
        "environment: two HDF5 versions in one program (the headers' against the library's: ldd on the progra"
        'm)',
    ),
    'nwchem-unsure': (
        "code: the input (the 'current input line' above it and the message's routine)",
        'environment: the scratch or permanent directory (its space, its permissions: scratch_dir, permanent_'
        'dir)',
        "oom: NWChem's memory directive too small or the node's memory (the message's routine; memory total)",
    ),
    'tdep-io': (
        'code: an input file TDEP reads is missing or of another format (infile.ucposcar, infile.ssposcar, in'
        'file.forceconstant ...: the message names it)',
        "environment: the file system it writes to (full, a quota, permissions: df, quota, ls -ld on the job'"
        's directory)',
    ),
    'tdep-mpi': (
        "code or the launch: the ranks disagree or the job's size does not fit the problem (mpirun -np agains"
        't the grid; fewer ranks)',
        "network or environment: the MPI library failed (its own error line, the interconnect, another MPI's "
        'mpirun)',
    ),
}
UNLESS = ('alloc', 'memory', 'Memory')  # a free-text row's line that says memory is left to the memory rows
FREE_TEXT = ('amrex-abort', 'mfem-abort', 'mpas-critical')
# name, class, needles, the line it prints, its source
ROWS: list[tuple[str, str, tuple[str, ...], str, str]] = [
    ('cat-tdep-exit-code-1-unexpected-dimensions', 'tdep-check',
     ('exit code 1: unexpected dimensions',),
     'exit code 1: unexpected dimensions',
     'https://github.com/tdep-developers/tdep/blob/93dd6e4542ca941125a5b31eeb2e49b712320535/src/libolle/mp'
     'i_wrappers.f90 (lo_stop_gracefully:1)'),
    ('cat-tdep-exit-code-1-blas-lapack-returned-nonzero', 'tdep-check',
     ('exit code 1: blas/lapack returned nonzero exitcode',),
     'exit code 1: blas/lapack returned nonzero exitcode',
     'https://github.com/tdep-developers/tdep/blob/93dd6e4542ca941125a5b31eeb2e49b712320535/src/libolle/mp'
     'i_wrappers.f90 (lo_stop_gracefully:2)'),
    ('cat-tdep-exit-code-3-unphysical-value-detected', 'tdep-check',
     ('exit code 3: unphysical value detected',),
     'exit code 3: unphysical value detected',
     'https://github.com/tdep-developers/tdep/blob/93dd6e4542ca941125a5b31eeb2e49b712320535/src/libolle/mp'
     'i_wrappers.f90 (lo_stop_gracefully:3)'),
    ('cat-tdep-exit-code-4-symmetry-error', 'tdep-check',
     ('exit code 4: symmetry error',),
     'exit code 4: symmetry error',
     'https://github.com/tdep-developers/tdep/blob/93dd6e4542ca941125a5b31eeb2e49b712320535/src/libolle/mp'
     'i_wrappers.f90 (lo_stop_gracefully:4)'),
    ('cat-tdep-exit-code-5-bad-parameters-sent-to', 'tdep-check',
     ('exit code 5: bad parameters sent to routine',),
     'exit code 5: bad parameters sent to routine',
     'https://github.com/tdep-developers/tdep/blob/93dd6e4542ca941125a5b31eeb2e49b712320535/src/libolle/mp'
     'i_wrappers.f90 (lo_stop_gracefully:5)'),
    ('cat-tdep-exit-code-6-i-o-error', 'tdep-io',
     ('exit code 6: I/O error',),
     'exit code 6: I/O error',
     'https://github.com/tdep-developers/tdep/blob/93dd6e4542ca941125a5b31eeb2e49b712320535/src/libolle/mp'
     'i_wrappers.f90 (lo_stop_gracefully:6)'),
    ('cat-tdep-exit-code-7-mpi-error', 'tdep-mpi',
     ('exit code 7: MPI error',),
     'exit code 7: MPI error',
     'https://github.com/tdep-developers/tdep/blob/93dd6e4542ca941125a5b31eeb2e49b712320535/src/libolle/mp'
     'i_wrappers.f90 (lo_stop_gracefully:7)'),
    ('cat-amrex-amrex-abort', 'amrex-abort',
     ('amrex::Abort::', '!!!'),
     'amrex::Abort::3::X !!!',
     'https://github.com/AMReX-Codes/amrex/blob/92679babfc2cc66ca06ee591a80001db57c89878/Src/Base/AMReX.cp'
     'p (Error_host:Abort)'),
    ('cat-amrex-amrex-error', 'amrex-abort',
     ('amrex::Error::', '!!!'),
     'amrex::Error::3::X !!!',
     'https://github.com/AMReX-Codes/amrex/blob/92679babfc2cc66ca06ee591a80001db57c89878/Src/Base/AMReX.cp'
     'p (Error_host:Error)'),
    ('cat-amrex-assertion-failed-file-line', 'amrex-assert',
     ('\' failed, file "', '::Assertion `', '", line'),
     '3::Assertion `X\' failed, file "X", line 3 !!!',
     'https://github.com/AMReX-Codes/amrex/blob/92679babfc2cc66ca06ee591a80001db57c89878/Src/Base/AMReX.cp'
     'p (Assert_host)'),
    ('cat-esmf-invalid-object', 'esmf-usage',
     ('ERROR ', 'Invalid object', ' PET'),
     '20200817 221425.005 ERROR            PET3 ESMF_Grid.F90:5303 ESMF_GridCreate Invalid object  - X',
     'https://github.com/esmf-org/esmf/blob/97cec545e819aa288fbe636fc9cd8568f37ff59e/src/Infrastructure/Lo'
     'gErr/include/ESMCI_ErrMsgs.C (ESMF_RC_OBJ_BAD)'),
    ('cat-esmf-object-set-or-setdefault-method-not-called', 'esmf-usage',
     ('Object Set or SetDefault method not called', 'ERROR ', ' PET'),
     '20200817 221425.005 ERROR            PET3 ESMF_Grid.F90:5303 ESMF_GridCreate Object Set or SetDefaul'
     't method not called  - X',
     'https://github.com/esmf-org/esmf/blob/97cec545e819aa288fbe636fc9cd8568f37ff59e/src/Infrastructure/Lo'
     'gErr/include/ESMCI_ErrMsgs.C (ESMF_RC_OBJ_INIT)'),
    ('cat-esmf-object-create-method-not-called', 'esmf-usage',
     ('Object Create method not called', 'ERROR ', ' PET'),
     '20200817 221425.005 ERROR            PET3 ESMF_Grid.F90:5303 ESMF_GridCreate Object Create method no'
     't called  - X',
     'https://github.com/esmf-org/esmf/blob/97cec545e819aa288fbe636fc9cd8568f37ff59e/src/Infrastructure/Lo'
     'gErr/include/ESMCI_ErrMsgs.C (ESMF_RC_OBJ_CREATE)'),
    ('cat-esmf-corrupted-esmf-object-detected', 'esmf-corrupt',
     ('Corrupted ESMF object detected', 'ERROR ', ' PET'),
     '20200817 221425.005 ERROR            PET3 ESMF_Grid.F90:5303 ESMF_GridCreate Corrupted ESMF object d'
     'etected  - X',
     'https://github.com/esmf-org/esmf/blob/97cec545e819aa288fbe636fc9cd8568f37ff59e/src/Infrastructure/Lo'
     'gErr/include/ESMCI_ErrMsgs.C (ESMF_RC_OBJ_COR)'),
    ('cat-esmf-wrong-object-specified', 'esmf-usage',
     ('ERROR ', 'Wrong object specified', ' PET'),
     '20200817 221425.005 ERROR            PET3 ESMF_Grid.F90:5303 ESMF_GridCreate Wrong object specified '
     ' - X',
     'https://github.com/esmf-org/esmf/blob/97cec545e819aa288fbe636fc9cd8568f37ff59e/src/Infrastructure/Lo'
     'gErr/include/ESMCI_ErrMsgs.C (ESMF_RC_OBJ_WRONG)'),
    ('cat-esmf-invalid-argument', 'esmf-usage',
     ('Invalid argument', 'ERROR ', ' PET'),
     '20200817 221425.005 ERROR            PET3 ESMF_Grid.F90:5303 ESMF_GridCreate Invalid argument  - X',
     'https://github.com/esmf-org/esmf/blob/97cec545e819aa288fbe636fc9cd8568f37ff59e/src/Infrastructure/Lo'
     'gErr/include/ESMCI_ErrMsgs.C (ESMF_RC_ARG_BAD)'),
    ('cat-esmf-argument-rank-is-not-required-size', 'esmf-usage',
     ('Argument rank is not required size', 'ERROR ', ' PET'),
     '20200817 221425.005 ERROR            PET3 ESMF_Grid.F90:5303 ESMF_GridCreate Argument rank is not re'
     'quired size  - X',
     'https://github.com/esmf-org/esmf/blob/97cec545e819aa288fbe636fc9cd8568f37ff59e/src/Infrastructure/Lo'
     'gErr/include/ESMCI_ErrMsgs.C (ESMF_RC_ARG_RANK)'),
    ('cat-esmf-argument-sizes-do-not-match', 'esmf-usage',
     ('Argument sizes do not match', 'ERROR ', ' PET'),
     '20200817 221425.005 ERROR            PET3 ESMF_Grid.F90:5303 ESMF_GridCreate Argument sizes do not m'
     'atch  - X',
     'https://github.com/esmf-org/esmf/blob/97cec545e819aa288fbe636fc9cd8568f37ff59e/src/Infrastructure/Lo'
     'gErr/include/ESMCI_ErrMsgs.C (ESMF_RC_ARG_SIZE)'),
    ('cat-esmf-value-unrecognized-or-out-of-range', 'esmf-usage',
     ('ERROR ', 'Value unrecognized or out of range', ' PET'),
     '20200817 221425.005 ERROR            PET3 ESMF_Grid.F90:5303 ESMF_GridCreate Value unrecognized or o'
     'ut of range  - X',
     'https://github.com/esmf-org/esmf/blob/97cec545e819aa288fbe636fc9cd8568f37ff59e/src/Infrastructure/Lo'
     'gErr/include/ESMCI_ErrMsgs.C (ESMF_RC_ARG_VALUE)'),
    ('cat-esmf-two-arguments-not-allowed-to-be-the', 'esmf-usage',
     ('Two arguments not allowed to be the same', 'ERROR ', ' PET'),
     '20200817 221425.005 ERROR            PET3 ESMF_Grid.F90:5303 ESMF_GridCreate Two arguments not allow'
     'ed to be the same  - X',
     'https://github.com/esmf-org/esmf/blob/97cec545e819aa288fbe636fc9cd8568f37ff59e/src/Infrastructure/Lo'
     'gErr/include/ESMCI_ErrMsgs.C (ESMF_RC_ARG_DUP)'),
    ('cat-esmf-two-arguments-must-be-same-object-type', 'esmf-usage',
     ('Two arguments must be same object type', 'ERROR ', ' PET'),
     '20200817 221425.005 ERROR            PET3 ESMF_Grid.F90:5303 ESMF_GridCreate Two arguments must be s'
     'ame object type  - X',
     'https://github.com/esmf-org/esmf/blob/97cec545e819aa288fbe636fc9cd8568f37ff59e/src/Infrastructure/Lo'
     'gErr/include/ESMCI_ErrMsgs.C (ESMF_RC_ARG_SAMETYPE)'),
    ('cat-esmf-two-arguments-must-have-the-same-communicators', 'esmf-usage',
     ('Two arguments must have the same communicators', 'ERROR ', ' PET'),
     '20200817 221425.005 ERROR            PET3 ESMF_Grid.F90:5303 ESMF_GridCreate Two arguments must have'
     ' the same communicators  - X',
     'https://github.com/esmf-org/esmf/blob/97cec545e819aa288fbe636fc9cd8568f37ff59e/src/Infrastructure/Lo'
     'gErr/include/ESMCI_ErrMsgs.C (ESMF_RC_ARG_SAMECOMM)'),
    ('cat-esmf-arguments-are-incompatible', 'esmf-usage',
     ('Arguments are incompatible', 'ERROR ', ' PET'),
     '20200817 221425.005 ERROR            PET3 ESMF_Grid.F90:5303 ESMF_GridCreate Arguments are incompati'
     'ble  - X',
     'https://github.com/esmf-org/esmf/blob/97cec545e819aa288fbe636fc9cd8568f37ff59e/src/Infrastructure/Lo'
     'gErr/include/ESMCI_ErrMsgs.C (ESMF_RC_ARG_INCOMP)'),
    ('cat-esmf-argument-contains-invalid-esmf-object', 'esmf-usage',
     ('Argument contains invalid ESMF object', 'ERROR ', ' PET'),
     '20200817 221425.005 ERROR            PET3 ESMF_Grid.F90:5303 ESMF_GridCreate Argument contains inval'
     'id ESMF object  - X',
     'https://github.com/esmf-org/esmf/blob/97cec545e819aa288fbe636fc9cd8568f37ff59e/src/Infrastructure/Lo'
     'gErr/include/ESMCI_ErrMsgs.C (ESMF_RC_ARG_CORRUPT)'),
    ('cat-esmf-wrong-argument-specified', 'esmf-usage',
     ('Wrong argument specified', 'ERROR ', ' PET'),
     '20200817 221425.005 ERROR            PET3 ESMF_Grid.F90:5303 ESMF_GridCreate Wrong argument specifie'
     'd  - X',
     'https://github.com/esmf-org/esmf/blob/97cec545e819aa288fbe636fc9cd8568f37ff59e/src/Infrastructure/Lo'
     'gErr/include/ESMCI_ErrMsgs.C (ESMF_RC_ARG_WRONG)'),
    ('cat-esmf-input-argument-out-of-range', 'esmf-usage',
     ('Input argument out of range', 'ERROR ', ' PET'),
     '20200817 221425.005 ERROR            PET3 ESMF_Grid.F90:5303 ESMF_GridCreate Input argument out of r'
     'ange  - X',
     'https://github.com/esmf-org/esmf/blob/97cec545e819aa288fbe636fc9cd8568f37ff59e/src/Infrastructure/Lo'
     'gErr/include/ESMCI_ErrMsgs.C (ESMF_RC_ARG_OUTOFRANGE)'),
    ('cat-esmf-unrecognized-option-string', 'esmf-usage',
     ('ERROR ', 'Unrecognized option string', ' PET'),
     '20200817 221425.005 ERROR            PET3 ESMF_Grid.F90:5303 ESMF_GridCreate Unrecognized option str'
     'ing  - X',
     'https://github.com/esmf-org/esmf/blob/97cec545e819aa288fbe636fc9cd8568f37ff59e/src/Infrastructure/Lo'
     'gErr/include/ESMCI_ErrMsgs.C (ESMF_RC_ARG_OPT)'),
    ('cat-esmf-operation-not-yet-supported', 'esmf-usage',
     ('Operation not yet supported', 'ERROR ', ' PET'),
     '20200817 221425.005 ERROR            PET3 ESMF_Grid.F90:5303 ESMF_GridCreate Operation not yet suppo'
     'rted  - X',
     'https://github.com/esmf-org/esmf/blob/97cec545e819aa288fbe636fc9cd8568f37ff59e/src/Infrastructure/Lo'
     'gErr/include/ESMCI_ErrMsgs.C (ESMC_RC_NOT_IMPL)'),
    ('cat-esmf-unable-to-open-file', 'esmf-input-file',
     ('Unable to open file', 'ERROR ', ' PET'),
     '20200817 221425.005 ERROR            PET3 ESMF_Grid.F90:5303 ESMF_GridCreate Unable to open file  - '
     'X',
     'https://github.com/esmf-org/esmf/blob/97cec545e819aa288fbe636fc9cd8568f37ff59e/src/Infrastructure/Lo'
     'gErr/include/ESMCI_ErrMsgs.C (ESMF_RC_FILE_OPEN)'),
    ('cat-esmf-unable-to-create-file', 'esmf-file-write',
     ('Unable to create file', 'ERROR ', ' PET'),
     '20200817 221425.005 ERROR            PET3 ESMF_Grid.F90:5303 ESMF_GridCreate Unable to create file  '
     '- X',
     'https://github.com/esmf-org/esmf/blob/97cec545e819aa288fbe636fc9cd8568f37ff59e/src/Infrastructure/Lo'
     'gErr/include/ESMCI_ErrMsgs.C (ESMF_RC_FILE_CREATE)'),
    ('cat-esmf-unable-to-read-from-file', 'esmf-input-file',
     ('Unable to read from file', 'ERROR ', ' PET'),
     '20200817 221425.005 ERROR            PET3 ESMF_Grid.F90:5303 ESMF_GridCreate Unable to read from fil'
     'e  - X',
     'https://github.com/esmf-org/esmf/blob/97cec545e819aa288fbe636fc9cd8568f37ff59e/src/Infrastructure/Lo'
     'gErr/include/ESMCI_ErrMsgs.C (ESMF_RC_FILE_READ)'),
    ('cat-esmf-unable-to-write-to-file', 'esmf-file-write',
     ('Unable to write to file', 'ERROR ', ' PET'),
     '20200817 221425.005 ERROR            PET3 ESMF_Grid.F90:5303 ESMF_GridCreate Unable to write to file'
     '  - X',
     'https://github.com/esmf-org/esmf/blob/97cec545e819aa288fbe636fc9cd8568f37ff59e/src/Infrastructure/Lo'
     'gErr/include/ESMCI_ErrMsgs.C (ESMF_RC_FILE_WRITE)'),
    ('cat-esmf-unexpected-data-in-file', 'esmf-input-file',
     ('Unexpected data in file', 'ERROR ', ' PET'),
     '20200817 221425.005 ERROR            PET3 ESMF_Grid.F90:5303 ESMF_GridCreate Unexpected data in file'
     '  - X',
     'https://github.com/esmf-org/esmf/blob/97cec545e819aa288fbe636fc9cd8568f37ff59e/src/Infrastructure/Lo'
     'gErr/include/ESMCI_ErrMsgs.C (ESMF_RC_FILE_UNEXPECTED)'),
    ('cat-esmf-unable-to-close-file', 'esmf-file-write',
     ('Unable to close file', 'ERROR ', ' PET'),
     '20200817 221425.005 ERROR            PET3 ESMF_Grid.F90:5303 ESMF_GridCreate Unable to close file  -'
     ' X',
     'https://github.com/esmf-org/esmf/blob/97cec545e819aa288fbe636fc9cd8568f37ff59e/src/Infrastructure/Lo'
     'gErr/include/ESMCI_ErrMsgs.C (ESMF_RC_FILE_CLOSE)'),
    ('cat-esmf-value-cannot-be-a-null-pointer', 'esmf-usage',
     ('Value cannot be a NULL pointer', 'ERROR ', ' PET'),
     '20200817 221425.005 ERROR            PET3 ESMF_Grid.F90:5303 ESMF_GridCreate Value cannot be a NULL '
     'pointer  - X',
     'https://github.com/esmf-org/esmf/blob/97cec545e819aa288fbe636fc9cd8568f37ff59e/src/Infrastructure/Lo'
     'gErr/include/ESMCI_ErrMsgs.C (ESMF_RC_PTR_NULL)'),
    ('cat-esmf-invalid-pointer', 'esmf-corrupt',
     ('ERROR ', 'Invalid pointer', ' PET'),
     '20200817 221425.005 ERROR            PET3 ESMF_Grid.F90:5303 ESMF_GridCreate Invalid pointer  - X',
     'https://github.com/esmf-org/esmf/blob/97cec545e819aa288fbe636fc9cd8568f37ff59e/src/Infrastructure/Lo'
     'gErr/include/ESMCI_ErrMsgs.C (ESMF_RC_PTR_BAD)'),
    ('cat-esmf-pointer-must-already-be-allocated', 'esmf-usage',
     ('Pointer must already be allocated', 'ERROR ', ' PET'),
     '20200817 221425.005 ERROR            PET3 ESMF_Grid.F90:5303 ESMF_GridCreate Pointer must already be'
     ' allocated  - X',
     'https://github.com/esmf-org/esmf/blob/97cec545e819aa288fbe636fc9cd8568f37ff59e/src/Infrastructure/Lo'
     'gErr/include/ESMCI_ErrMsgs.C (ESMF_RC_PTR_NOTALLOC)'),
    ('cat-esmf-pointer-must-not-already-be-allocated', 'esmf-usage',
     ('Pointer must not already be allocated', 'ERROR ', ' PET'),
     '20200817 221425.005 ERROR            PET3 ESMF_Grid.F90:5303 ESMF_GridCreate Pointer must not alread'
     'y be allocated  - X',
     'https://github.com/esmf-org/esmf/blob/97cec545e819aa288fbe636fc9cd8568f37ff59e/src/Infrastructure/Lo'
     'gErr/include/ESMCI_ErrMsgs.C (ESMF_RC_PTR_ISALLOC)'),
    ('cat-esmf-unspecified-memory-error', 'esmf-unsure',
     ('Unspecified memory error', 'ERROR ', ' PET'),
     '20200817 221425.005 ERROR            PET3 ESMF_Grid.F90:5303 ESMF_GridCreate Unspecified memory erro'
     'r  - X',
     'https://github.com/esmf-org/esmf/blob/97cec545e819aa288fbe636fc9cd8568f37ff59e/src/Infrastructure/Lo'
     'gErr/include/ESMCI_ErrMsgs.C (ESMF_RC_MEM)'),
    ('cat-esmf-unable-to-deallocate-memory', 'esmf-corrupt',
     ('Unable to deallocate memory', 'ERROR ', ' PET'),
     '20200817 221425.005 ERROR            PET3 ESMF_Grid.F90:5303 ESMF_GridCreate Unable to deallocate me'
     'mory  - X',
     'https://github.com/esmf-org/esmf/blob/97cec545e819aa288fbe636fc9cd8568f37ff59e/src/Infrastructure/Lo'
     'gErr/include/ESMCI_ErrMsgs.C (ESMF_RC_MEM_DEALLOCATE)'),
    ('cat-esmf-memory-corrupted', 'esmf-corrupt',
     ('Memory corrupted', 'ERROR ', ' PET'),
     '20200817 221425.005 ERROR            PET3 ESMF_Grid.F90:5303 ESMF_GridCreate Memory corrupted  - X',
     'https://github.com/esmf-org/esmf/blob/97cec545e819aa288fbe636fc9cd8568f37ff59e/src/Infrastructure/Lo'
     'gErr/include/ESMCI_ErrMsgs.C (ESMF_RC_MEMC)'),
    ('cat-esmf-name-already-exists', 'esmf-usage',
     ('ERROR ', 'Name already exists', ' PET'),
     '20200817 221425.005 ERROR            PET3 ESMF_Grid.F90:5303 ESMF_GridCreate Name already exists  - '
     'X',
     'https://github.com/esmf-org/esmf/blob/97cec545e819aa288fbe636fc9cd8568f37ff59e/src/Infrastructure/Lo'
     'gErr/include/ESMCI_ErrMsgs.C (ESMF_RC_DUP_NAME)'),
    ('cat-esmf-name-too-long-must-be-less-than', 'esmf-usage',
     ('ERROR ', 'Name too long, must be less than ESMF_MAXSTR', ' PET'),
     '20200817 221425.005 ERROR            PET3 ESMF_Grid.F90:5303 ESMF_GridCreate Name too long, must be '
     'less than ESMF_MAXSTR  - X',
     'https://github.com/esmf-org/esmf/blob/97cec545e819aa288fbe636fc9cd8568f37ff59e/src/Infrastructure/Lo'
     'gErr/include/ESMCI_ErrMsgs.C (ESMF_RC_LONG_NAME)'),
    ('cat-esmf-string-too-long-must-be-less-than', 'esmf-usage',
     ('ERROR ', 'String too long, must be less than ESMF_MAXSTR', ' PET'),
     '20200817 221425.005 ERROR            PET3 ESMF_Grid.F90:5303 ESMF_GridCreate String too long, must b'
     'e less than ESMF_MAXSTR  - X',
     'https://github.com/esmf-org/esmf/blob/97cec545e819aa288fbe636fc9cd8568f37ff59e/src/Infrastructure/Lo'
     'gErr/include/ESMCI_ErrMsgs.C (ESMF_RC_LONG_STR)'),
    ('cat-esmf-cannot-copy-non-existent-object', 'esmf-usage',
     ('Cannot copy non-existent object', 'ERROR ', ' PET'),
     '20200817 221425.005 ERROR            PET3 ESMF_Grid.F90:5303 ESMF_GridCreate Cannot copy non-existen'
     't object  - X',
     'https://github.com/esmf-org/esmf/blob/97cec545e819aa288fbe636fc9cd8568f37ff59e/src/Infrastructure/Lo'
     'gErr/include/ESMCI_ErrMsgs.C (ESMF_RC_COPY_FAIL)'),
    ('cat-esmf-cannot-divide-by-zero', 'esmf-usage',
     ('Cannot divide by zero', 'ERROR ', ' PET'),
     '20200817 221425.005 ERROR            PET3 ESMF_Grid.F90:5303 ESMF_GridCreate Cannot divide by zero  '
     '- X',
     'https://github.com/esmf-org/esmf/blob/97cec545e819aa288fbe636fc9cd8568f37ff59e/src/Infrastructure/Lo'
     'gErr/include/ESMCI_ErrMsgs.C (ESMF_RC_DIV_ZERO)'),
    ('cat-esmf-cannot-get-value', 'esmf-usage',
     ('Cannot get value', 'ERROR ', ' PET'),
     '20200817 221425.005 ERROR            PET3 ESMF_Grid.F90:5303 ESMF_GridCreate Cannot get value  - X',
     'https://github.com/esmf-org/esmf/blob/97cec545e819aa288fbe636fc9cd8568f37ff59e/src/Infrastructure/Lo'
     'gErr/include/ESMCI_ErrMsgs.C (ESMF_RC_CANNOT_GET)'),
    ('cat-esmf-cannot-set-value', 'esmf-usage',
     ('Cannot set value', 'ERROR ', ' PET'),
     '20200817 221425.005 ERROR            PET3 ESMF_Grid.F90:5303 ESMF_GridCreate Cannot set value  - X',
     'https://github.com/esmf-org/esmf/blob/97cec545e819aa288fbe636fc9cd8568f37ff59e/src/Infrastructure/Lo'
     'gErr/include/ESMCI_ErrMsgs.C (ESMF_RC_CANNOT_SET)'),
    ('cat-esmf-system-call-error', 'esmf-unsure',
     ('System call error', 'ERROR ', ' PET'),
     '20200817 221425.005 ERROR            PET3 ESMF_Grid.F90:5303 ESMF_GridCreate System call error  - X',
     'https://github.com/esmf-org/esmf/blob/97cec545e819aa288fbe636fc9cd8568f37ff59e/src/Infrastructure/Lo'
     'gErr/include/ESMCI_ErrMsgs.C (ESMF_RC_SYS)'),
    ('cat-esmf-resource-is-busy', 'esmf-unsure',
     ('Resource is busy', 'ERROR ', ' PET'),
     '20200817 221425.005 ERROR            PET3 ESMF_Grid.F90:5303 ESMF_GridCreate Resource is busy  - X',
     'https://github.com/esmf-org/esmf/blob/97cec545e819aa288fbe636fc9cd8568f37ff59e/src/Infrastructure/Lo'
     'gErr/include/ESMCI_ErrMsgs.C (ESMF_RC_BUSY)'),
    ('cat-esmf-error-in-library-called-by-esmf', 'esmf-unsure',
     ('Error in library called by ESMF', 'ERROR ', ' PET'),
     '20200817 221425.005 ERROR            PET3 ESMF_Grid.F90:5303 ESMF_GridCreate Error in library called'
     ' by ESMF  - X',
     'https://github.com/esmf-org/esmf/blob/97cec545e819aa288fbe636fc9cd8568f37ff59e/src/Infrastructure/Lo'
     'gErr/include/ESMCI_ErrMsgs.C (ESMF_RC_LIB)'),
    ('cat-esmf-library-needed-by-esmf-not-present', 'esmf-build',
     ('Library needed by ESMF not present', 'ERROR ', ' PET'),
     '20200817 221425.005 ERROR            PET3 ESMF_Grid.F90:5303 ESMF_GridCreate Library needed by ESMF '
     'not present  - X',
     'https://github.com/esmf-org/esmf/blob/97cec545e819aa288fbe636fc9cd8568f37ff59e/src/Infrastructure/Lo'
     'gErr/include/ESMCI_ErrMsgs.C (ESMF_RC_LIB_NOT_PRESENT)'),
    ('cat-esmf-object-being-used-before-creation', 'esmf-usage',
     ('ERROR ', 'Object being used before creation', ' PET'),
     '20200817 221425.005 ERROR            PET3 ESMF_Grid.F90:5303 ESMF_GridCreate Object being used befor'
     'e creation  - X',
     'https://github.com/esmf-org/esmf/blob/97cec545e819aa288fbe636fc9cd8568f37ff59e/src/Infrastructure/Lo'
     'gErr/include/ESMCI_ErrMsgs.C (ESMF_RC_OBJ_NOT_CREATED)'),
    ('cat-esmf-object-being-used-after-deletion', 'esmf-usage',
     ('ERROR ', 'Object being used after deletion', ' PET'),
     '20200817 221425.005 ERROR            PET3 ESMF_Grid.F90:5303 ESMF_GridCreate Object being used after'
     ' deletion  - X',
     'https://github.com/esmf-org/esmf/blob/97cec545e819aa288fbe636fc9cd8568f37ff59e/src/Infrastructure/Lo'
     'gErr/include/ESMCI_ErrMsgs.C (ESMF_RC_OBJ_DELETED)'),
    ('cat-esmf-wrong-data-value', 'esmf-usage',
     ('ERROR ', 'Wrong data value', ' PET'),
     '20200817 221425.005 ERROR            PET3 ESMF_Grid.F90:5303 ESMF_GridCreate Wrong data value  - X',
     'https://github.com/esmf-org/esmf/blob/97cec545e819aa288fbe636fc9cd8568f37ff59e/src/Infrastructure/Lo'
     'gErr/include/ESMCI_ErrMsgs.C (ESMF_RC_VAL_WRONG)'),
    ('cat-esmf-value-inconsistent-with-error-bound', 'esmf-usage',
     ('Value inconsistent with error bound', 'ERROR ', ' PET'),
     '20200817 221425.005 ERROR            PET3 ESMF_Grid.F90:5303 ESMF_GridCreate Value inconsistent with'
     ' error bound  - X',
     'https://github.com/esmf-org/esmf/blob/97cec545e819aa288fbe636fc9cd8568f37ff59e/src/Infrastructure/Lo'
     'gErr/include/ESMCI_ErrMsgs.C (ESMF_RC_VAL_ERRBOUND)'),
    ('cat-esmf-value-out-of-range', 'esmf-usage',
     ('ERROR ', 'Value out of range', ' PET'),
     '20200817 221425.005 ERROR            PET3 ESMF_Grid.F90:5303 ESMF_GridCreate Value out of range  - X',
     'https://github.com/esmf-org/esmf/blob/97cec545e819aa288fbe636fc9cd8568f37ff59e/src/Infrastructure/Lo'
     'gErr/include/ESMCI_ErrMsgs.C (ESMF_RC_VAL_OUTOFRANGE)'),
    ('cat-esmf-attribute-not-set', 'esmf-usage',
     ('Attribute not set', 'ERROR ', ' PET'),
     '20200817 221425.005 ERROR            PET3 ESMF_Grid.F90:5303 ESMF_GridCreate Attribute not set  - X',
     'https://github.com/esmf-org/esmf/blob/97cec545e819aa288fbe636fc9cd8568f37ff59e/src/Infrastructure/Lo'
     'gErr/include/ESMCI_ErrMsgs.C (ESMF_RC_ATTR_NOTSET)'),
    ('cat-esmf-attribute-incorrect-typekind', 'esmf-usage',
     ('ERROR ', 'Attribute incorrect typekind', ' PET'),
     '20200817 221425.005 ERROR            PET3 ESMF_Grid.F90:5303 ESMF_GridCreate Attribute incorrect typ'
     'ekind  - X',
     'https://github.com/esmf-org/esmf/blob/97cec545e819aa288fbe636fc9cd8568f37ff59e/src/Infrastructure/Lo'
     'gErr/include/ESMCI_ErrMsgs.C (ESMF_RC_ATTR_WRONGTYPE)'),
    ('cat-esmf-attribute-wrong-number-of-items', 'esmf-usage',
     ('ERROR ', 'Attribute wrong number of items', ' PET'),
     '20200817 221425.005 ERROR            PET3 ESMF_Grid.F90:5303 ESMF_GridCreate Attribute wrong number '
     'of items  - X',
     'https://github.com/esmf-org/esmf/blob/97cec545e819aa288fbe636fc9cd8568f37ff59e/src/Infrastructure/Lo'
     'gErr/include/ESMCI_ErrMsgs.C (ESMF_RC_ATTR_ITEMSOFF)'),
    ('cat-esmf-attribute-linking-error', 'esmf-usage',
     ('Attribute linking error', 'ERROR ', ' PET'),
     '20200817 221425.005 ERROR            PET3 ESMF_Grid.F90:5303 ESMF_GridCreate Attribute linking error'
     '  - X',
     'https://github.com/esmf-org/esmf/blob/97cec545e819aa288fbe636fc9cd8568f37ff59e/src/Infrastructure/Lo'
     'gErr/include/ESMCI_ErrMsgs.C (ESMF_RC_ATTR_LINK)'),
    ('cat-esmf-input-buffer-not-long-enough', 'esmf-usage',
     ('Input buffer not long enough', 'ERROR ', ' PET'),
     '20200817 221425.005 ERROR            PET3 ESMF_Grid.F90:5303 ESMF_GridCreate Input buffer not long e'
     'nough  - X',
     'https://github.com/esmf-org/esmf/blob/97cec545e819aa288fbe636fc9cd8568f37ff59e/src/Infrastructure/Lo'
     'gErr/include/ESMCI_ErrMsgs.C (ESMF_RC_BUFFER_SHORT)'),
    ('cat-esmf-timeout-reached', 'esmf-unsure',
     ('ERROR ', 'Timeout reached', ' PET'),
     '20200817 221425.005 ERROR            PET3 ESMF_Grid.F90:5303 ESMF_GridCreate Timeout reached  - X',
     'https://github.com/esmf-org/esmf/blob/97cec545e819aa288fbe636fc9cd8568f37ff59e/src/Infrastructure/Lo'
     'gErr/include/ESMCI_ErrMsgs.C (ESMF_RC_TIMEOUT)'),
    ('cat-esmf-file-already-exists', 'esmf-usage',
     ('ERROR ', 'File already exists', ' PET'),
     '20200817 221425.005 ERROR            PET3 ESMF_Grid.F90:5303 ESMF_GridCreate File already exists  - '
     'X',
     'https://github.com/esmf-org/esmf/blob/97cec545e819aa288fbe636fc9cd8568f37ff59e/src/Infrastructure/Lo'
     'gErr/include/ESMCI_ErrMsgs.C (ESMF_RC_FILE_EXISTS)'),
    ('cat-esmf-file-is-not-a-directory', 'esmf-usage',
     ('File is not a directory', 'ERROR ', ' PET'),
     '20200817 221425.005 ERROR            PET3 ESMF_Grid.F90:5303 ESMF_GridCreate File is not a directory'
     '  - X',
     'https://github.com/esmf-org/esmf/blob/97cec545e819aa288fbe636fc9cd8568f37ff59e/src/Infrastructure/Lo'
     'gErr/include/ESMCI_ErrMsgs.C (ESMF_RC_FILE_NOTDIR)'),
    ('cat-esmf-the-moab-library-returned-an-error', 'esmf-unsure',
     ('The MOAB library returned an error', 'ERROR ', ' PET'),
     '20200817 221425.005 ERROR            PET3 ESMF_Grid.F90:5303 ESMF_GridCreate The MOAB library return'
     'ed an error  - X',
     'https://github.com/esmf-org/esmf/blob/97cec545e819aa288fbe636fc9cd8568f37ff59e/src/Infrastructure/Lo'
     'gErr/include/ESMCI_ErrMsgs.C (ESMF_RC_MOAB_ERROR)'),
    ('cat-esmf-the-netcdf-library-returned-an-error', 'esmf-unsure',
     ('The NetCDF Library returned an error', 'ERROR ', ' PET'),
     '20200817 221425.005 ERROR            PET3 ESMF_Grid.F90:5303 ESMF_GridCreate The NetCDF Library retu'
     'rned an error  - X',
     'https://github.com/esmf-org/esmf/blob/97cec545e819aa288fbe636fc9cd8568f37ff59e/src/Infrastructure/Lo'
     'gErr/include/ESMCI_ErrMsgs.C (ESMF_RC_NETCDF_ERROR)'),
    ('cat-esmf-improperly-specified-optional-argument-list', 'esmf-usage',
     ('Improperly specified optional argument list', 'ERROR ', ' PET'),
     '20200817 221425.005 ERROR            PET3 ESMF_Grid.F90:5303 ESMF_GridCreate Improperly specified op'
     'tional argument list  - X',
     'https://github.com/esmf-org/esmf/blob/97cec545e819aa288fbe636fc9cd8568f37ff59e/src/Infrastructure/Lo'
     'gErr/include/ESMCI_ErrMsgs.C (ESMC_RC_OPTARG_BAD)'),
    ('cat-dealii-an-error-occurred-in-line-of-file', 'dealii-exception',
     ('An error occurred in line <', '> of file <', '> in function'),
     'An error occurred in line <3> of file <X> in function',
     'https://github.com/dealii/dealii/blob/5820fa317ef51cf1b1d02a8ea931b92ff4381317/source/base/exception'
     's.cc (ExceptionBase::print_exc_data)'),
    ('cat-dealii-deal-ii-encountered-an-error-while-calling', 'dealii-mpi',
     ('deal.II encountered an error while calling an MPI function.',),
     'deal.II encountered an error while calling an MPI function.',
     'https://github.com/dealii/dealii/blob/5820fa317ef51cf1b1d02a8ea931b92ff4381317/source/base/exception'
     's.cc (ExcMPI::print_info)'),
    ('cat-mfem-mfem-abort', 'mfem-abort',
     ('MFEM abort:',),
     'MFEM abort: X',
     'https://github.com/mfem/mfem/blob/5581b0c0797915e1eb554841e39111d8df807703/general/error.hpp (MFEM_A'
     'BORT)'),
    ('cat-mfem-verification-failed-is-false', 'mfem-abort',
     ('Verification failed: (', ') is false:'),
     'Verification failed: (X) is false:',
     'https://github.com/mfem/mfem/blob/5581b0c0797915e1eb554841e39111d8df807703/general/error.hpp (MFEM_V'
     'ERIFY)'),
    ('cat-mfem-assertion-failed-is-false', 'mfem-abort',
     ('Assertion failed: (', ') is false:'),
     'Assertion failed: (X) is false:',
     'https://github.com/mfem/mfem/blob/5581b0c0797915e1eb554841e39111d8df807703/general/error.hpp (MFEM_A'
     'SSERT)'),
    ('cat-su2-error-exit', 'su2-error',
     ('- Error Exit -',),
     '------------------------------ Error Exit -------------------------------',
     'https://github.com/su2code/SU2/blob/79c920841c2711bb1544edee73085dcedc2b4b06/Common/include/parallel'
     'ization/mpi_structure.cpp (CBaseMPIWrapper::Error:exit)'),
    ('cat-kokkos-kokkos-error-memory-space-failed-to-allocate', 'kokkos-nomem',
     ('memory space failed to allocate', 'Kokkos ERROR:', '(label="'),
     'Kokkos ERROR: X memory space failed to allocate X (label="X").',
     'https://github.com/kokkos/kokkos/blob/28848dfa8fc1411873b6a663c4d29ba05712510e/core/src/impl/Kokkos_'
     'Error.cpp (throw_bad_alloc)'),
    ('cat-hdf5-diag-error-detected-in-mpi-process', 'hdf5-diag',
     ('-DIAG: Error detected in',),
     'X-DIAG: Error detected in X (X) MPI-process 3:',
     'https://github.com/HDFGroup/hdf5/blob/26ed852b2fb69e085b7dfefa0df2641a5fd06768/src/H5Eint.c (H5E__wa'
     'lk2_cb)'),
    ('cat-mpas-critical-error', 'mpas-critical',
     ('CRITICAL ERROR:',),
     'CRITICAL ERROR: X',
     'https://github.com/MPAS-Dev/MPAS-Model/blob/fe766bf20bf376ded5a03ac347de418d9177724a/src/framework/m'
     'pas_log.F (messagePrefixCritical)'),
    ('cat-cp2k-cpassert-failed', 'cp2k-assert',
     ('CPASSERT failed',),
     'CPASSERT failed',
     'https://github.com/cp2k/cp2k/blob/ae513bac4f751e79b120bf8419509e980ad75ec8/src/base/base_hooks.F (cp'
     '__a)'),
    ('cat-nek5000-an-error-occured-dying', 'nek-exit',
     ('an error occured: dying ...',),
     'an error occured: dying ...',
     'https://github.com/Nek5000/Nek5000/blob/41d17942b3f4ef4e045665d30adc81a167611122/core/comm_mpi.f (ex'
     'itt)'),
    ('cat-nwchem-this-error-has-not-yet-been-assigned', 'nwchem-unsure',
     ('This error has not yet been assigned to a category',),
     'This error has not yet been assigned to a category',
     'https://github.com/nwchemgit/nwchem/blob/a79c4e257e72c232359c4d2343c68f5d321ca6c0/src/util/errquit.F'
     ' (UNKNOWN_ERR)'),
    ('cat-nwchem-an-error-occurred-in-the-runtime-database', 'nwchem-unsure',
     ('An error occurred in the Runtime Database',),
     'An error occurred in the Runtime Database',
     'https://github.com/nwchemgit/nwchem/blob/a79c4e257e72c232359c4d2343c68f5d321ca6c0/src/util/errquit.F'
     ' (RTDB_ERR)'),
    ('cat-nwchem-there-is-an-error-in-the-specified', 'nwchem-input',
     ('There is an error in the specified basis set',),
     'There is an error in the specified basis set',
     'https://github.com/nwchemgit/nwchem/blob/a79c4e257e72c232359c4d2343c68f5d321ca6c0/src/util/errquit.F'
     ' (BASIS_ERR)'),
    ('cat-nwchem-there-is-an-error-related-to-the', 'nwchem-input',
     ('There is an error related to the specified geometry',),
     'There is an error related to the specified geometry',
     'https://github.com/nwchemgit/nwchem/blob/a79c4e257e72c232359c4d2343c68f5d321ca6c0/src/util/errquit.F'
     ' (GEOM_ERR)'),
    ('cat-nwchem-there-is-an-error-in-the-input', 'nwchem-input',
     ('There is an error in the input file',),
     'There is an error in the input file',
     'https://github.com/nwchemgit/nwchem/blob/a79c4e257e72c232359c4d2343c68f5d321ca6c0/src/util/errquit.F'
     ' (INPUT_ERR)'),
    ('cat-nwchem-a-feature-requested-has-not-yet-been', 'nwchem-input',
     ('A feature requested has not yet been implemented',),
     'A feature requested has not yet been implemented',
     'https://github.com/nwchemgit/nwchem/blob/a79c4e257e72c232359c4d2343c68f5d321ca6c0/src/util/errquit.F'
     ' (CAPMIS_ERR)'),
    ('cat-nwchem-an-error-occurred-while-computing-integrals', 'nwchem-input',
     ('An error occurred while computing integrals',),
     'An error occurred while computing integrals',
     'https://github.com/nwchemgit/nwchem/blob/a79c4e257e72c232359c4d2343c68f5d321ca6c0/src/util/errquit.F'
     ' (INT_ERR)'),
    ('cat-nwchem-an-error-occurred-while-trying-to-read', 'nwchem-unsure',
     ('An error occurred while trying to read or write to disk space',),
     'An error occurred while trying to read or write to disk space',
     'https://github.com/nwchemgit/nwchem/blob/a79c4e257e72c232359c4d2343c68f5d321ca6c0/src/util/errquit.F'
     ' (DISK_ERR)'),
    ('cat-nwchem-this-type-of-error-is-most-commonly', 'nwchem-input',
     ('This type of error is most commonly associated with calculations not reaching convergence criteria',),
     'This type of error is most commonly associated with calculations not reaching convergence criteria',
     'https://github.com/nwchemgit/nwchem/blob/a79c4e257e72c232359c4d2343c68f5d321ca6c0/src/util/errquit.F'
     ' (CALC_ERR)'),
]
# fmt: on

SIGNATURES: list[Signature] = [
    S(name, cat, needles, meaning, learned, source, step, weak=weak, unless=UNLESS if cls in FREE_TEXT else ())
    for name, cls, needles, learned, source in ROWS
    for cat, weak, meaning, step in (CLASSES[cls],)
]
HEADS: tuple[str, ...] = tuple(name for name, cls, *_ in ROWS if CLASSES[cls][:2] == ("code", False))
