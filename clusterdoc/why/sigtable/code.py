"""The `code` failure signatures: the job's own code or input: an application's fatal error, a script's arguments, a
segfault with the routine named.

One entry each (why/signature.py says what an entry holds). Within this table the first entry that matches a line
wins; why/signatures.py says the order of the tables.
"""

from __future__ import annotations

import re

from clusterdoc.why.signature import NODE, S, Signature

SIGNATURES: list[Signature] = [
    S("ddp-unused-params", "code", ("Expected to have finished reduction in the prior iteration",),
      "DDP: the model has parameters that got no gradient (unused in the loss)",
      "RuntimeError: Expected to have finished reduction in the prior iteration before starting a new one. This "
      "error indicates that your module has parameters that were not used i",
      "https://github.com/open-mmlab/mmagic/issues/419",
      "DistributedDataParallel(find_unused_parameters=True), or make every output take part in the loss"),
    S("device-assert", "code", ("device-side assert triggered",),
      "a CUDA kernel's assertion failed: an index out of range (labels >= classes, bad embedding ids)",
      "RuntimeError: CUDA error: device-side assert triggered",
      "https://github.com/huggingface/pytorch-image-models/issues/1077",
      "rerun with CUDA_LAUNCH_BLOCKING=1 (or on CPU) to see the index; check labels against num_classes"),
    S("kernel-assert", "code", ("Assertion `", "` failed."),
      "a CUDA kernel's assertion failed: an index out of range",
      "/pytorch/aten/src/ATen/native/cuda/ScatterGatherKernel.cu:276: operator(): block: [0,0,0], thread: [26,0,0] "
      "Assertion `idx_dim >= 0 && idx_dim < index_size && \"index out of bounds\"` failed.",
      "https://github.com/huggingface/pytorch-image-models/issues/1077",
      "rerun with CUDA_LAUNCH_BLOCKING=1 (or on CPU) to see the index; check labels against num_classes"),
    S("mpi-abort", "code", ("MPI_ABORT was invoked on rank",),
      "a rank called MPI_Abort: the application stopped itself on an error it detected (its own message is above)",
      "MPI_ABORT was invoked on rank 160 in communicator MPI_COMM_WORLD", "https://github.com/davegill/wrf-coop/issues/17",
      "read that rank's own output before the abort (the model's FATAL/ERROR line: input, configuration, numerics)"),
    # session 26: MPICH's (Intel MPI's, Cray's) own report of it, "Abort(5) on node 285 (rank 285 in comm 0):
    # application called MPI_Abort(MPI_COMM_WORLD, 5) - process 285": the same candidate, its rank named
    S("mpich-abort", "code", ("application called MPI_Abort(",),
      "a rank called MPI_Abort: the application stopped itself on an error it detected (its own message is above)",
      "Abort(5) on node 285 (rank 285 in comm 0): application called MPI_Abort(MPI_COMM_WORLD, 5) - process 285",
      "https://github.com/epochpic/epoch/issues/798",
      "read that rank's own output before the abort (the model's FATAL/ERROR line: input, configuration, numerics)",
      node=re.compile(r"\] \[([A-Za-z0-9][\w.-]{0,127})\] - Abort\(")),  # Cray MPICH's [node] before it
    # session 28 (heldout-fresh34): XLA's RET_CHECK is its internal assertion (jax, TensorFlow): an invariant of
    # the compiler or runtime failed: a bug of XLA's, or a use it does not handle (fixed upstream, jax-12119)
    S("xla-ret-check", "code", ("RET_CHECK failure",),
      "XLA's internal check failed (RET_CHECK): a bug of JAX/XLA's or a set-up it does not handle (the device "
      "options, the sharding)",
      "jaxlib.xla_extension.XlaRuntimeError: INTERNAL: RET_CHECK failure (external/org_tensorflow/tensorflow/"
      "compiler/xla/service/gpu/gpu_executable_run_options.cc:75) 0 <= local_device_ordinal && local_device_ordinal "
      "< gpu_global_device_ids->size()", "https://github.com/google/jax/issues/12119",
      "search JAX's issues for the check's file and condition; a newer jaxlib, or the documented way to set the "
      "option it names (CUDA_VISIBLE_DEVICES, not a config flag)"),
    S("fortran-sigsegv", "code", ("Program received signal SIGSEGV",),
      "a rank crashed with a segmentation fault in the application (its backtrace names the routine)",
      "  76: Program received signal SIGSEGV: Segmentation fault - invalid memory reference.",
      "https://github.com/E3SM-Project/E3SM/issues/7277",
      "the routine in the backtrace (a debug build: -g -fcheck=all; the input or configuration it reads)"),
    # AMReX's signal handler (BLBackTrace::handler, Src/Base/AMReX_BLBackTrace.cpp) names SIGFPE so, then writes
    # "See Backtrace.<rank> file for details": a floating-point trap (division by zero, NaN) in the computation
    S("amrex-fpe", "code", ("Erroneous arithmetic operation",),
      "a rank trapped a floating-point exception (SIGFPE: a division by zero or an invalid value in the computation)",
      "Erroneous arithmetic operation",
      "https://github.com/AMReX-Fluids/AMReX-Hydro/issues/43",
      "the routine in that rank's Backtrace.<rank> file (the inputs or time step that made the value invalid)"),
    # Intel Fortran's runtime (ifort, ifx) prints its own line and a traceback of the routines
    S("ifort-sigsegv", "code", ("SIGSEGV, segmentation fault occurred",),
      "a rank crashed with a segmentation fault in the application (its traceback names the routine and line)",
      "2680: forrtl: severe (174): SIGSEGV, segmentation fault occurred",
      "https://github.com/E3SM-Project/E3SM/issues/3085",
      "the routine in the traceback after it (a debug build: -g -traceback -check all; the input it reads there)"),
    S("srun-task-segv", "code", ("srun: error: ", ": Segmentation fault"),
      "a task crashed with a segmentation fault (srun names it and its node)",
      "srun: error: frontier06754: task 11634: Segmentation fault",
      "https://github.com/E3SM-Project/scream/issues/2519",
      "that task's own output (srun --label) for its backtrace; a debug build shows where",
      node=re.compile(r"srun: error: " + NODE + r": task")),
    S("illegal-access", "code", ("an illegal memory access was encountered",),
      "a CUDA kernel read or wrote out of bounds (the code or an extension; an XID 13/31 names the node rarely)",
      "RuntimeError: CUDA error: an illegal memory access was encountered",
      "https://github.com/zai-org/CodeGeeX/issues/160",
      "rerun with CUDA_LAUNCH_BLOCKING=1; if it moves between nodes, check their XIDs (clusterdoc check)",
      unless=("watchdog thread terminated with exception",)),
    # session 25 (heldout-fresh23c, after it was scored): the same error raised in NCCL's watchdog thread: an
    # asynchronous kernel's fault (NCCL's own over P2P or shared memory, or any earlier one): a candidate
    S("watchdog-illegal-access", "code", ("watchdog thread terminated with exception",
                                          "an illegal memory access was encountered"),
      "a GPU kernel faulted and torch's NCCL watchdog reported it: an NCCL transfer (P2P or shared memory on this "
      "machine) or any kernel queued before it",
      "[rank1]:[E1113 13:57:32.346752417 ProcessGroupNCCL.cpp:1896] [PG ID 0 PG GUID 0(default_pg) Rank 1] Process "
      "group watchdog thread terminated with exception: CUDA error: an illegal memory access was encountered",
      "https://github.com/isaac-sim/IsaacLab/issues/4011",
      "rerun with CUDA_LAUNCH_BLOCKING=1 (a kernel of the code names itself); then NCCL_P2P_DISABLE=1 or "
      "NCCL_SHM_DISABLE=1 (the machine's transport; IsaacLab's multi-GPU notes); the node's XIDs", weak=True),
    S("unspecified-launch-failure", "code", ("unspecified launch failure",),
      "a CUDA kernel failed without saying why: the code, or the GPU (XID 13/31/43 in the node's kernel log)",
      "RuntimeError: CUDA error: unspecified launch failure", "https://github.com/ultralytics/yolov5/issues/1752",
      "clusterdoc check on the node (its XIDs decide: hardware or the code); rerun with CUDA_LAUNCH_BLOCKING=1",
      weak=True),
    # --- code: the script's own arguments ---
    S("argparse-unrecognized", "code", ("error: unrecognized arguments",),
      "the script's argument parser rejected an argument (a launcher passes --local-rank/--local_rank, or a typo)",
      "main.py: error: unrecognized arguments: --local-rank=0",
      "https://github.com/skycrapers/TecoGAN-PyTorch/issues/31",
      "accept the argument the launcher passes (torchrun sets LOCAL_RANK in the environment; "
      "torch.distributed.launch passes --local-rank), or fix the command line"),
    S("argparse-required", "code", ("error: the following arguments are required",),
      "the script's argument parser is missing a required argument",
      "train.py: error: the following arguments are required: 0",
      "https://github.com/megvii-research/NAFNet/issues/112",
      "pass the argument on the command line after the script's name (launcher options go before it)"),
    S("argparse-invalid", "code", (": error: argument ",),
      "the command line has an argument its parser rejects (a value of the wrong type, an unknown choice, a variable "
      "left unexpanded)",
      "main/0 torchrun: error: argument --node-rank/--node_rank: invalid int value: '$AWS_BATCH_JOB_NODE_INDEX'",
      "https://github.com/meta-pytorch/torchx/pull/759",
      "fix the value on the command line (a shell variable must be expanded where the command is built)",
      unless=(" value: ''",)),  # an empty value: a variable not set there (environment.py: argparse-empty-value)
    # a candidate (session 25): of the seven logs here with it, four threads settled the launch command (a typo, a
    # module given as a file) and three the tree it ran in (a working directory without the script, a checkout
    # where it was merged away)
    S("python-no-script", "code", ("can't open file '", "No such file or directory"),
      "the interpreter could not open the script it was told to run: the command names a file that is not there",
      "/usr/bin/python3: can't open file 'train_jonas.py': [Errno 2] No such file or directory",
      "https://github.com/fdbtrs/IDiff-Face/issues/6 (and ROMP-230: a module given as a file name)",
      "fix the script's path in the launch command (a module is run with python -m, or torchrun -m)", weak=True),
    # --- round 8: code in compiled runtimes' own words ---
    # gfortran's runtime (libgfortran/runtime/error.c) prints it after "At line N of file F" (the source line)
    S("gfortran-runtime", "code", ("Fortran runtime error: ",),
      "the Fortran program stopped on a runtime error (an I/O error on its input, an array bound, a bad value): "
      "its source line is on the line before",
      "Fortran runtime error: Cannot open file 'namelist.input': No such file or directory",
      "https://github.com/gcc-mirror/gcc (libgfortran/runtime/error.c)",
      "the file and line of 'At line N of file F' above it, the input it reads"),
    S("ifort-severe", "code", ("forrtl: severe (",),
      "the Fortran program stopped on a severe runtime error (I/O, a bound, an unallocated array); the traceback "
      "after it names the routine and line",
      "forrtl: severe (24): end-of-file during read, unit 10, file /work/run/input.dat",
      "https://github.com/open-mpi/ompi-www (its FAQ: forrtl: severe (24) on stdin)",
      "the routine and line of its traceback, the input it reads"),
    # --- round 8: a CLI's own usage errors (click/typer, Hydra): the command line, as argparse's ---
    S("click-no-option", "code", ("Error: No such option: ",),
      "the script's command line has an option it does not take (click/typer)", "Error: No such option: --lr",
      "https://github.com/pallets/click (exceptions.py: NoSuchOption)", "the script's --help; fix the command line"),
    S("click-missing", "code", ("Error: Missing option ",),
      "the script's command line lacks a required option (click/typer)", "Error: Missing option '--config'.",
      "https://github.com/pallets/click (exceptions.py: MissingParameter)",
      "the script's --help; fix the command line"),
    S("hydra-override", "code", ("Could not override '",),
      "a Hydra override on the command line names a key the config does not have",
      "Could not override 'trainer.gpus'.", "https://github.com/facebookresearch/hydra (the override error)",
      "the config's keys (--cfg job); add new keys with +key=value"),
    # C's assert() as glibc prints it ("PROG: FILE:LINE: FUNC: Assertion `EXPR' failed."; CUDA's device-side form,
    # `EXPR` failed, is kernel-assert above), and with straight quotes (a markdown paste, newer messages)
    S("c-assert", "code", ("Assertion `", "' failed."),
      "the program's own assert() failed (an invariant of the code or its input)",
      "a.out: main.c:12: main: Assertion `n > 0' failed.", "https://github.com/bminor/glibc (assert/assert.c)",
      "the file:line and expression it names; the input that broke it"),
    S("c-assert-quoted", "code", ("Assertion '", "' failed."),
      "the program's own assert() failed (an invariant of the code or its input)",
      "a.out: main.c:12: main: Assertion 'n > 0' failed.", "https://github.com/bminor/glibc (assert/assert.c)",
      "the file:line and expression it names; the input that broke it"),
    # session 28 (heldout-fresh36, after it was scored): Faiss's FAISS_ASSERT (faiss/impl/FaissAssert.h: "Faiss
    # assertion '%s' failed in %s at %s:%d", then abort()): an invariant of Faiss or of the index it was given
    S("faiss-assert", "code", ("Faiss assertion '", "' failed in "),
      "Faiss's own assertion failed (an invariant of Faiss's code or of the index or data it was given)",
      "Faiss assertion 'index->ntotal == res->ntotal' failed in virtual faiss::Index* faiss::gpu::"
      "ToGpuClonerMultiple::clone_Index(const faiss::Index*) at GpuAutoTune.cpp:281",
      "https://github.com/facebookresearch/faiss/issues/200",
      "the file:line and expression it names against the index (its ids, sizes, shards); a newer Faiss if it is "
      "a known bug"),
    # LAMMPS' Error::all: "ERROR: MESSAGE (src/FILE.cpp:LINE)", then "Last command: ..." (its memory and package
    # errors above take theirs first): the input script or the simulation it describes
    # session 21: a style LAMMPS does not know is most often a package or plugin its binary was built without
    # (DeePMD's pair_style deepmd in a plain build), as often a misspelt name in the input: a candidate; newer
    # releases say which package, and that is the build's
    S("lammps-style-not-enabled", "environment", ("ERROR: ", "which is not enabled in this LAMMPS binary"),
      "LAMMPS was built without the package the input's style needs (the binary, not the input)",
      "ERROR: Unrecognized pair style 'eam/alloy' is part of the MANYBODY package which is not enabled in this "
      "LAMMPS binary. (src/force.cpp:271)", "https://github.com/lammps/lammps (src/force.cpp, src/info.cpp)",
      "build LAMMPS with that package (-D PKG_NAME=on) or load a build that has it (lmp -h lists the packages)"),
    S("lammps-unrecognized-style", "code", ("ERROR: Unrecognized ", " style "),
      "LAMMPS does not know a style the input names: a package or plugin its binary lacks, or a misspelt name",
      "ERROR: Unrecognized pair style 'deepmd' (src/force.cpp:275)",
      "https://github.com/deepmodeling/deepmd-kit/issues/3022 (lammps/lammps src/force.cpp: new_pair)",
      "lmp -h (the styles this binary has); the package or plugin that provides it (its docs), or the name's "
      "spelling in the input", weak=True),
    S("lammps-error", "code", ("ERROR: ", ".cpp:", " ("),
      "the program stopped on its own error check (LAMMPS' ERROR: the input script or the simulation it "
      "describes: lost atoms, a bad style or value)",
      "ERROR: Lost atoms: original 8000 current 7999 (src/thermo.cpp:486)",
      "https://github.com/lammps/lammps (src/error.cpp: Error::all)",
      "the message and the input's 'Last command:' after it (a smaller timestep, the input's values)"),
    # --- an application's own fatal error (session 17): HPC codes check their input, setup and numerics, print
    # what they found and abort (MPI_Abort after it: see mpi-abort). The job's own, as a Python exception is; a
    # message about memory is left to the memory rows (`unless`)
    S("lammps-error-one", "code", ("ERROR on proc ",),
      "the application stopped on an error one process found (LAMMPS' Error::one: the input, the setup or the "
      "numerics: atoms out of range, lost atoms, a list out of space)",
      "ERROR on proc 17: Out of range atoms - cannot compute PPPM (src/KSPACE/pppm.cpp:1940)",
      "https://github.com/lammps/lammps/issues/2145 (lammps#4186 the same form; src/error.cpp: Error::one)",
      "the message and the input script (timestep, neighbor and kspace settings, the domain decomposition); the "
      "proc named is the rank that failed", unless=("alloc", "memory", "Memory")),
    S("openfoam-fatal", "code", ("FOAM FATAL",),
      "the application stopped on an error in the case's setup (OpenFOAM's FatalError / FatalIOError: a "
      "dictionary, a mesh, a decomposition, a boundary condition)",
      "[57] --> FOAM FATAL ERROR: (openfoam-2306)",
      "https://github.com/fireFoam-dev/fireFoam-dev/issues/6 (hystrath#7 the same: OpenFOAM's error.C prints it)",
      "the message and the file it names (the case's dictionaries; decomposePar for every region; mpirun -np N "
      "... -parallel)", unless=("alloc", "memory", "Memory")),
    S("qe-error-routine", "code", ("Error in routine ",),
      "the application stopped on an error it found (Quantum ESPRESSO's errore: the input, a pseudopotential "
      "file, or no convergence)",
      "Error in routine tweights (1): bad Fermi energy",
      "https://github.com/QEF/q-e/blob/develop/UtilXlib/error_handler.f90 (errore: 'Error in routine ... (N):', "
      "the form it prints)",
      "the message under it (the input card, pseudo_dir and the file names, the k-points and smearing)",
      unless=("alloc", "memory", "Memory")),
    S("wrf-fatal", "code", ("FATAL CALLED",),
      "the application stopped on an error it found (WRF's wrf_error_fatal: the namelist, the input data, or "
      "the numerics: a CFL violation)",
      "FATAL CALLED FROM FILE: <stdin> LINE: 1591", "https://github.com/davegill/wrf-coop/issues/17 (its banner "
      "'-------------- FATAL CALLED ---------------' before it in newer WRF: wrf-model/WRF#1267)",
      "the lines above it in that rank's rsl.error file (the namelist, the domain's input; a smaller time_step for "
      "CFL errors)", unless=("alloc", "memory", "Memory")),
    # GROMACS' fatal-error block (gmx_fatal): "Program: gmx mdrun ... / Source file: src/gromacs/... / MPI rank: N
    # (out of M) / Fatal error: / MESSAGE": the input or the run's setup (a domain decomposition for that many
    # ranks, the topology); its memory message after the head is oom (APP_FATAL_SIGNS)
    S("gromacs-fatal", "code", ("Source file: src/gromacs/",),
      "the application stopped on an error in its input or setup (GROMACS' fatal error: the topology, the box "
      "against the number of ranks, an option)",
      "Source file: src/gromacs/domdec/domdec.cpp (line 2232)",
      "https://github.com/gromacs/gromacs/blob/main/src/gromacs/utility/fatalerror.cpp (gmx_fatal's block: its "
      "'Source file:' and 'MPI rank:' lines, the form it prints)",
      "the message after 'Fatal error:' (fewer ranks or -rdd/-dds for a domain decomposition; the .top and .mdp it "
      "names); the MPI rank line names the rank", unless=("alloc", "memory", "Memory")),
    S("gromacs-fatal-old", "code", ("Source code file: ", "gromacs"),
      "the application stopped on an error in its input or setup (GROMACS 4 and 5's fatal error: the box against "
      "the number of ranks, the topology, an option)",
      "Source code file: /tmp/gromacs_build/source/gromacs-4.6.7/src/mdlib/domdec.c, line: 3245",
      "https://github.com/Becksteinlab/MDPOW/issues/77 (GROMACS 4.6's gmx_fatal block)",
      "the message after 'Fatal error:' (fewer ranks or -rdd/-dds for a domain decomposition; the .top and .mdp it "
      "names)", unless=("alloc", "memory", "Memory")),
    # session 22: the domain decomposition's own message, pasted without gmx_fatal's "Source file:" line
    # (domdec.cpp's gmx_fatal_collective when no grid of that many ranks fits the box)
    S("gromacs-no-domdec", "code", ("There is no domain decomposition for",),
      "GROMACS could not split the system over that many ranks (the box is too small for the minimum cell size): "
      "the job's rank count or mdrun options, not the machine",
      "There is no domain decomposition for 10 ranks that is compatible with the given box and a minimum cell size",
      "https://github.com/michellab/BioSimSpace/issues/305 (GROMACS' src/gromacs/domdec/domdec.cpp message)",
      "fewer ranks for this system (or -ntomp threads per rank), or mdrun -rdd/-dds; the log file's domain "
      "decomposition section says which grids were tried"),
    # GFDL's FMS (MOM6, ACCESS-OM2, GCHP, SHiELD): mpp_error(FATAL, ...) prints "FATAL from PE N: ROUTINE: MESSAGE"
    # and aborts: the model's own check of its input, namelist or numerics, on rank N
    S("fms-fatal", "code", ("FATAL from PE",),
      "the model stopped on an error it found (FMS's mpp_error: the namelist, an input file, the layout, or the "
      "numerics: an instability, a NaN)",
      "FATAL from PE     0: btstep: number of barotropic step (nstep+nfilter) is 0",
      "https://github.com/NOAA-GFDL/FMS/blob/main/mpp/include/mpp_util.inc (mpp_error's 'FATAL from PE', the form "
      "it prints)",
      "the message: the namelist or input it names (the layout against the PEs started, the time step for an "
      "instability); the PE is the rank", unless=("alloc", "memory", "Memory")),
    # session 25 (heldout-fresh22, after it was scored): MPICH's stack line for MPI_COMM_NULL passed to a call
    # (**commnull): a communicator the program never created on this rank (MPI_Comm_split's color MPI_UNDEFINED)
    S("mpich-null-comm", "code", ("): Null communicator",),
      "an MPI call was given MPI_COMM_NULL: the program uses a communicator this rank is not part of (or one never "
      "created)", "PMPI_Bcast(1549): Null communicator", "https://github.com/ESMCI/cime/issues/3247",
      "the call in the stack under it: guard it with `if (comm != MPI_COMM_NULL)`, or create the communicator on "
      "every rank that calls it"),
    # session 25 (heldout-fresh24, after it was scored): bash could not parse the batch script itself (an unclosed
    # if/quote/heredoc: "unexpected end of file"; a stray token): the job script's own bug
    S("batch-script-syntax", "code", ("slurm_script: line ", ": syntax error"),
      "bash could not parse the batch script (an unclosed if, loop, quote or heredoc; a stray token): the job "
      "script's own error", "/cm/local/apps/slurm/var/spool/job1182350/slurm_script: line 98: syntax error: "
      "unexpected end of file",
      "https://github.com/baryos/congrads/blob/ccc369c2b52307404866ff4ac71093ab5a911fd1/logs/slurm_1182350.err",
      "bash -n SCRIPT before sbatch (the line bash names is where it gave up: the opening it never closed is above "
      "it)"),
    # a program's own SIGFPE handler, or the shell's report of one ("Floating point exception (core dumped)"): a
    # division by zero or a trapped NaN in the program's arithmetic (PETSc's own form is in catalogue_hpcrt)
    S("sigfpe", "code", ("Floating point exception",),
      "the program stopped on a floating point exception (SIGFPE: an integer division by zero, or a NaN or overflow "
      "its traps caught): its arithmetic on this input", "Floating point exception!",
      "https://github.com/sxs-collaboration/spectre/issues/3565",
      "the routine its handler or a debugger names (gdb, or the core), and the input or step that reaches it"),
    # Amber's sander refuses more MPI processes than the system has residues: the launch against the input
    S("amber-more-residues", "code", ("Must have more residues than processors",),
      "sander (Amber) was started on more MPI processes than its system has residues: the input is too small for "
      "the process count", " Must have more residues than processors!",
      "https://github.com/radical-cybertools/radical.pilot/issues/621",
      "start it on fewer processes (at most the number of residues), or use pmemd"),
    # MPICH's (and Intel MPI's) error stack for an argument a call cannot take: Open MPI's classes below in MPICH's
    # words ("Fatal error in PMPI_Comm_rank: Invalid communicator, error stack:")
    S("mpich-invalid-arg", "code", ("Fatal error in PMPI_", ": Invalid "),
      "an MPI call got an argument it cannot take (MPICH's error stack: a communicator, a rank, a count, a "
      "datatype)", "Fatal error in PMPI_Comm_rank: Invalid communicator, error stack:",
      "https://github.com/pmodels/mpich/blob/main/src/mpi/errhan/errnames.txt (**comm, **rank: the classes it "
      "prints)",
      "the call and its arguments in the stack under it (a rank past the size: the job started with fewer "
      "processes than the program expects; comm=0x0: a communicator never set)", weak=True),
    # an MPI call given an argument it cannot take: the program's bug (Open MPI's error classes, as its
    # MPI_ERRORS_ARE_FATAL handler prints them; ompi/errhandler/errcode.c)
    S("mpi-invalid-arg", "code", ("*** MPI_ERR_", ": invalid "),
      "an MPI call got an argument it cannot take (a communicator, a count, a datatype, a rank, a tag, a root): "
      "the program's call (or a handle from another library's MPI)",
      "*** MPI_ERR_COMM: invalid communicator",
      "https://github.com/NCAR/wrf_hydro_nwm_public/issues/232 (Open MPI's ompi/errhandler/errcode.c: each class's "
      "'MPI_ERR_X: invalid ...', as MPI_ERRORS_ARE_FATAL prints it)",
      "the call named on the line before (An error occurred in MPI_...) and its arguments on every rank (a count "
      "over 2^31, a rank outside the communicator, a communicator freed or never created)",
      unless=("MPI_ERR_FILE",), weak=True),
    S("namd-fatal", "code", ("FATAL ERROR: ",),
      "the application stopped on its own fatal error (\"FATAL ERROR: \" as NAMD and PIO print it: an input, "
      "parameter or configuration file it cannot open or read)",
      "Reason: FATAL ERROR: Unable to access config file min.conf", "https://github.com/prody/ProDy/issues/878 "
      "(fhh2626/BFEE3#129: 'FATAL ERROR: Unable to open extended system file.'; E3SM-Project/scream#2159: PIO's)",
      "the file or parameter the line names (its path from the job's working directory, the config's keywords)",
      unless=("FOAM", "CUDA", "cuda", "GPU", "memory", "Memory", "malloc", "license", "socket", "connect",
              "No space left", "quota", "Permission denied", "Read-only", "Stale file")),  # the file system's
    S("hdf5-already-open", "code", ("unable to truncate a file which is already open",),
      "HDF5 refused to create a file the job already holds open (opened twice, never closed, or created by "
      "several ranks at once): the code's file handling",
      "  #001: H5Fint.c line 1024 in H5F_open(): unable to truncate a file which is already open",
      "https://github.com/PrincetonUniversity/FOCUS/issues/9 (hel-astro-lab/runko#28 the same)",
      "close the file before recreating it; one rank (or parallel HDF5 with MPI-IO) creates a shared file"),
    # CP2K's input parser on a keyword or section it does not know, before its [ABORT] banner (cp2k-1195's
    # subsection, cp2k-3407's keyword): the input file
    S("cp2k-unknown-input", "code", ("Possible matches for unknown ",),
      "CP2K stopped on its input: a keyword or section it does not know (a typo, a name from another CP2K "
      "version); the lines after it list the closest names",
      " Possible matches for unknown keyword ", "https://github.com/cp2k/cp2k/issues/3407 (and cp2k/cp2k#1195)",
      "the input against the manual of the CP2K version that ran (cp2k --version; the names listed after it)"),
    # session 18 (issue 41): from the sealed set heldout-fresh5's misses, read after its score was recorded (each
    # the tool's own message, its source beside it)
    # CESM's and E3SM's land model ending on its own check: endrun(msg=errMsg(sourcefile, __LINE__)) prints "ERROR in
    # FILE.F90 at line N" (e3sm-7836's restFileMod.F90), then MPI_Abort: the model's input or configuration
    S("cesm-errmsg", "code", ("ERROR in ", ".F90 at line "),
      "the model stopped on an error it found (CESM's/E3SM's endrun: the file and line of its check; the lines "
      "before it say what)",
      "ERROR in restFileMod.F90 at line 1375", "https://github.com/E3SM-Project/E3SM/issues/7836 (CLM's "
      "abortutils errMsg)",
      "the model's log lines before it (lnd.log, e3sm.log) and the source at that line: the case's input or its "
      "configuration"),
    # Open MPI's mpirun on its own command line: an option's value missing or malformed (`-np` with the program
    # given as its value: solids4foam-122)
    S("ompi-cmdline-format", "code", ("has detected that a parameter given to a command line",),
      "Open MPI's mpirun rejected its command line: an option's value is missing or malformed (the next lines name "
      "the option and what it was given)",
      "Open MPI has detected that a parameter given to a command line",
      "https://github.com/solids4foam/solids4foam/issues/122 (Open MPI's help-orterun.txt / prte's cmd-line help)",
      "the mpirun command line: the option named and its value (mpirun -np N PROGRAM ...)"),
    # session 21 (issue 41): the fatal forms of the other languages' runtimes a job's program or its tools are
    # written in, each the runtime's own words (a memory failure is oom.py's, first; a missing package or class is
    # environment.py's, first): Rust's panic, Go's runtime panic, Java's uncaught exception, Julia's LoadError, and the
    # shell's own parse error in the job script
    S("rust-panic", "code", ("panicked at ",),
      "the program panicked (Rust: a failed unwrap, an index out of bounds, an assertion): its code or its input",
      "thread 'main' panicked at 'called `Result::unwrap()` on an `Err` value: Os { code: 2, kind: NotFound }', "
      "src/main.rs:10:5", "https://github.com/rust-lang/rust (library/std/src/panicking.rs: the panic message)",
      "the file and line after 'panicked at' and the message; RUST_BACKTRACE=1 for the frames",
      unless=("out of memory", "memory allocation of")),
    S("go-runtime-panic", "code", ("panic: runtime error: ",),
      "the program panicked (Go's runtime: a nil pointer, an index out of range): its code or its input",
      "panic: runtime error: invalid memory address or nil pointer dereference",
      "https://github.com/golang/go (src/runtime/panic.go: runtime error's message)",
      "the goroutine's frames after it (the first one in the program's own package)"),
    S("java-uncaught", "code", ("Exception in thread \"",),
      "the program stopped on an exception nothing caught (Java): its code or its input",
      "Exception in thread \"main\" java.lang.NullPointerException",
      "https://github.com/openjdk/jdk (java.lang.ThreadGroup.uncaughtException: its message)",
      "the exception's frames after it (the first 'at' line in the program's own package)",
      unless=("OutOfMemoryError", "ClassNotFoundException", "NoClassDefFoundError", "UnsatisfiedLinkError",
              "ConnectException", "UnknownHostException", "SocketTimeoutException", "NoRouteToHostException")),
    S("julia-load-error", "code", ("ERROR: LoadError: ",),
      "the Julia program stopped on an error (its code or its input; the frames after it say where)",
      "ERROR: LoadError: BoundsError: attempt to access 3-element Vector{Int64} at index [5]",
      "https://github.com/JuliaLang/julia (base/client.jl: the top level's error report)",
      "the stacktrace after it: the first frame in the program's own files",
      unless=("OutOfMemoryError", "ArgumentError: Package ", "could not load library", "InterruptException")),
    S("shell-syntax-error", "code", ("syntax error near unexpected token",),
      "the job script has a shell syntax error (bash stopped reading it: the line it names)",
      "train.sh: line 5: syntax error near unexpected token `fi'",
      "https://github.com/bminor/bash (parse.y: report_syntax_error's message)",
      "the line it names in the script (bash -n script.sh checks it without running it; a script edited on "
      "Windows has CRLF ends: dos2unix)"),
    # Charm++'s abort on an exception the program's own code threw and no one caught (its CmiAbort "Reason:")
    S("charm-user-exception", "code", ("Unhandled C++ exception in user code",),
      "the Charm++ program (NAMD, ChaNGa ...) threw a C++ exception its code did not catch: its code or its input",
      "Reason: Unhandled C++ exception in user code.",
      "https://github.com/charmplusplus/charm (src/conv-core/convcore.C: the handler's reason)",
      "the program's output before the abort (the exception's message); a debug build's backtrace (+bt)"),
    # session 24 (heldout-fresh17, after it was scored): TensorFlow's gRPC server started as a job its cluster spec
    # does not define (lingvo-121: --job against --cluster_spec): the launch's own arguments
    S("tf-job-not-in-cluster", "code", ("was not defined in cluster",),
      "TensorFlow's server was started as a job its cluster spec does not define: the job name and the cluster "
      "spec disagree (the launch's arguments, TF_CONFIG)",
      'E tensorflow/core/distributed_runtime/rpc/grpc_server_lib.cc:442] Internal: Job "trainer_client,controller" '
      "was not defined in cluster", "https://github.com/tensorflow/lingvo/issues/121",
      "give each process a job name and task index its cluster spec lists (--job / --cluster_spec, TF_CONFIG)"),
    # session 24 (heldout-fresh19, after it was scored): srun's line in the job script names no program (fds-10192:
    # a library directory where the executable's path belonged)
    S("srun-no-command", "code", ("srun: fatal: No command given to execute",),
      "srun was given no program to run: the job script's srun line is missing its command (or names a directory)",
      "srun: fatal: No command given to execute.", "https://github.com/firemodels/fds/issues/10192",
      "the srun line of the job script: srun [options] /path/to/program [its arguments]"),
    # FDS's own error lines end with the case's CHID ("ERROR: The number of MPI processes, 4, exceeds the number of
    # meshes, 1 (CHID: sample)"): the input file or the launch against it
    S("fds-error", "code", ("ERROR: ", "(CHID: "),
      "FDS stopped on an error in its input or its set-up (the line says which)",
      "ERROR: The number of MPI processes, 4, exceeds the number of meshes, 1 (CHID: sample)",
      "https://github.com/firemodels/fds/issues/10990",
      "the input file (&MESH lines: at least one mesh per MPI process) or the launch's process count"),
    # transformers' cached_file: a model path without the file it needs (an OSError whose cause is the job's input)
    S("hf-missing-model-file", "code", ("does not appear to have a file named",),
      "the model or checkpoint directory the job loads lacks a file it needs (config.json, the weights): the job's "
      "input",
      "OSError: /ckpt/aloha_adjust_bottle_100000 does not appear to have a file named config.json.",
      "https://github.com/huggingface/transformers (src/transformers/utils/hub.py: cached_file)",
      "the path given to from_pretrained: a directory that holds config.json (save_pretrained writes it)"),
    # session 24 (heldout-fresh20, after it was scored): canu's (and meryl's) crash handler prints the signal and a
    # backtrace of the program's own routines (AS_UTL_stackTrace.C): the program crashed in its own code
    S("canu-crash-backtrace", "code", ("Failed with '", "'; backtrace (libbacktrace):"),
      "the program crashed (its crash handler names the signal) in its own routines, as its backtrace shows",
      "Failed with 'Segmentation fault'; backtrace (libbacktrace):",
      "https://github.com/marbl/canu/issues/1505",
      "the routine its backtrace names: a newer release (a fixed bug), or the input that reaches it"),
    # session 26 (heldout-fresh26, after it was scored): WRF's CFL check failing in a domain (the vertical wind
    # blew up: a time step too long for the grid, or bad input), then the model stops or crashes; a time limit after
    # it decides instead (why/foreign.py RAN_ON)
    S("wrf-cfl", "code", ("points exceeded cfl=", " in domain "),
      "the model went numerically unstable (WRF's CFL check failed: the vertical wind grew past what the time step "
      "allows) and stopped",
      "d01 2018-07-15_12:03:00        23222  points exceeded cfl=2 in domain d01 at time 2018-07-15_12:03:00 hours",
      "https://github.com/GIS4WRF/gis4wrf/issues/113",
      "a shorter time_step (about 6 x dx in km), w_damping = 1 and epssm in the namelist; check the input at the "
      "time it blew up"),
    # session 26: ROCm's runtime on a GPU page fault (HSA's "Memory access fault by GPU node-N"), as CUDA's illegal
    # address: a kernel's bad access, or the stack (legacy-rocm-build#851: more processes on one GPU than that ROCm
    # release allows); a candidate
    S("hip-memory-access-fault", "code", ("Memory access fault by GPU node-", "Reason: "),
      "a GPU kernel touched memory it may not (ROCm's memory access fault): the code, or the ROCm stack on that "
      "node",
      "Memory access fault by GPU node-4 (Agent handle: 0x28e9e40) on address 0x17000. Reason: Page not present or "
      "supervisor privilege.", "https://github.com/ROCm/legacy-rocm-build/issues/851",
      "rerun with AMD_SERIALIZE_KERNEL=3 HIP_LAUNCH_BLOCKING=1 to name the kernel; fewer processes per GPU; the "
      "node's dmesg (amdgpu)", weak=True),
    # session 27 (heldout-fresh31, after it was scored): MPICH ran out of context ids: the program creates
    # communicators (MPI_Comm_split, _dup, _create) and never frees them (DLA-Future#712: a test's grid leaked one
    # per repeat); no setting of the site's makes more of them
    S("mpi-too-many-communicators", "code", ("Too many communicators",),
      "the program created more MPI communicators than MPI holds (it splits or duplicates them and never frees "
      "them)",
      "MPIR_Get_contextid_sparse_group(697): Too many communicators (0/4096 free on this process; ignore_id=0)",
      "https://github.com/eth-cscs/DLA-Future/issues/712",
      "free each communicator when done (MPI_Comm_free); the call the error stack names creates them"),
    # session 29: SPECFEM's exit_MPI (2D, 3D, 3D_GLOBE): the program's own check failed; its message is the line
    # before (the input's or the build's parameters)
    S("specfem-exit-mpi", "code", ("Error detected, aborting MPI... proc",),
      "the application stopped on an error it found (SPECFEM's exit_MPI; its message is the line before it: the "
      "parameters, the mesh or the build's constants)",
      " Error detected, aborting MPI... proc            0", "https://github.com/SPECFEM/specfem2d/issues/1170",
      "the message before it, and the parameter file or the constants it names (setup/constants.h.in: reconfigure "
      "and rebuild after a change)"),
    # a process asked for a GPU beyond those it sees: more ranks per node than visible GPUs (--nproc_per_node,
    # mpirun -np) or a script that pins the GLOBAL rank's GPU on a second node. Thin until session 29; then all five
    # settled threads of it were the launch's or the code's (open-sora-40, jax-23452, nccl-tests-132 and -165,
    # dbcsr-302), none a CUDA_VISIBLE_DEVICES the site set wrong
    S("cuda-invalid-ordinal", "code", ("invalid device ordinal",),
      "a process asked for a GPU index it cannot see: more processes per node than visible GPUs "
      "(--nproc_per_node, CUDA_VISIBLE_DEVICES, the job's --gpus), or the script pins the global rank's GPU",
      "RuntimeError: CUDA error: invalid device ordinal",
      "https://github.com/NVIDIA/cuda-python (cudart: cudaErrorInvalidDevice = 101)",
      "compare processes per node with the GPUs each sees (nvidia-smi -L inside the job, echo "
      "$CUDA_VISIBLE_DEVICES); the script should use LOCAL_RANK for its device"),
    S("cuda-invalid-device-name", "code", ("CUDA_ERROR_INVALID_DEVICE",),
      "a process asked for a GPU index it cannot see (the driver API's name for it)",
      "CUDA DRIVER API ERROR: DevicePrimaryCtxRetain failed with error CUDA_ERROR_INVALID_DEVICE",
      "https://github.com/cp2k/dbcsr/issues/302",
      "compare processes per node with the GPUs each sees; the device each rank picks (its local rank)"),
    S("cuda-invalid-device-rt", "code", ("cudaErrorInvalidDevice",),
      "a process asked for a GPU index it cannot see (the runtime's name for it)", "cudaErrorInvalidDevice",
      "https://github.com/NVIDIA/cuda-python (cudart: cudaErrorInvalidDevice = 101)",
      "compare processes per node with the GPUs each sees; the device each rank picks (its local rank)"),
    # session 29: UCX's own signal handler (a segfault: "invalid permissions for mapped object" is often a GPU
    # buffer handed to a transport that cannot read it): the program's, or an MPI/UCX without GPU support
    S("ucx-segv", "code", ("Caught signal 11 (Segmentation fault",),
      "a process crashed with a segmentation fault (UCX's handler printed it, and its backtrace): the program's or "
      "a library's bug, or a GPU buffer given to an MPI or UCX built without GPU support",
      "[acn16:283118:0:283118] Caught signal 11 (Segmentation fault: invalid permissions for mapped object at "
      "address 0x15450e000004)", "https://github.com/hypre-space/hypre/issues/1131",
      "the backtrace's first frame of the program; for a GPU job, whether the MPI is CUDA-aware (ompi_info | grep "
      "-i cuda; ucx_info -d | grep cuda)", weak=True),
]  # fmt: skip
