"""The catalogue of the CUDA driver's and runtime's own error strings (cuGetErrorString / cudaGetErrorString, and the
enum names cuGetErrorName / cudaGetErrorName print) and of cuBLAS's and cuDNN's status names, for the errors no
learned signature knows, each classed by what the code that returns it is doing. A fallback after every learned
signature (signatures.py).

The strings are the driver's table (CUresult in cuda.h: CUDA_ERROR_NO_DEVICE = 100 "no CUDA-capable device is
detected", ...; the runtime's cudaError_t returns the same text): a public copy of the whole table is
https://github.com/NVIDIA/cuda-python (cuda/bindings/driver.pyx: CUresult's documentation). They reach a log as
torch's `CUDA error: <string>`, NCCL's `Cuda failure '<string>'`, Triton's `Triton Error [CUDA]: <string>`, JAX's
`CUDA_ERROR_<NAME>: <string>` or CuPy's `cudaError<Name>: <string>`: a row matches its string only on a line that
also says "cuda" (several strings are plain English), and its enum names anywhere.
"""

from __future__ import annotations

from clusterdoc.why.signature import S, Signature

SOURCE = "https://github.com/NVIDIA/cuda-python (cuda/bindings/driver.pyx: CUresult; runtime.pyx: cudaError_t)"
LIBS = (
    "https://github.com/pytorch/pytorch (aten/src/ATen/cuda/Exceptions.h: TORCH_CUDABLAS_CHECK and AT_CUDNN_CHECK "
    "print cuBLAS's cublasStatus_t and cuDNN's cudnnStatus_t names)"
)

# class -> (category, weak, meaning, next step). A weak class is a candidate, never a verdict: its lines' causes
# are split in the field (THIN says between what, and what decides).
CLASSES: dict[str, tuple[str, bool, str, str]] = {
    "install": (
        "environment",
        False,
        "the CUDA driver or its libraries on the node cannot do what the program asks (a library of the driver "
        "missing in the container, a licence, a feature the driver, the OS or a virtualised GPU lacks)",
        "on that node: nvidia-smi, the driver's libraries the container sees (ldconfig -p | grep nvidia), and the "
        "GPU's mode (nvidia-smi -q: compute mode, virtualisation); clusterdoc check compares the nodes",
    ),
    "gpu-mode": (
        "environment",
        False,
        "the GPU is held by another process or refuses more (exclusive compute mode, MPS, a display's watchdog): "
        "how the node's GPUs are set up or shared, not the program",
        "nvidia-smi on the node (its processes, Compute Mode), the MPS daemon's log; ask for whole GPUs",
    ),
    "gpu-visibility": (
        "environment",
        True,
        "the process found no GPU it may use, or not the one it asked for (none visible, all busy, no peer path "
        "between two): the node's set-up, the job's GPU request and mapping, or the code's choice of device",
        "inside the job on that node: nvidia-smi (the GPUs, their processes, Compute Mode), echo "
        "$CUDA_VISIBLE_DEVICES in each rank, and which device each rank picks (LOCAL_RANK)",
    ),
    "kernel-code": (
        "code",
        False,
        "a CUDA kernel or the program's use of the CUDA API broke a rule of the device (a misaligned access, a "
        "stream capture broken, a peer never enabled): the program's code or an extension's",
        "CUDA_LAUNCH_BLOCKING=1 (or compute-sanitizer) names the kernel; the library's issue tracker for its version",
    ),
    "nvlink-contained": (
        "node",
        False,
        "the GPU stopped a kernel that touched a peer's memory over NVLink or hit a hardware error (contained): the "
        "GPU or its NVLink",
        "the node's kernel log (XIDs), nvidia-smi nvlink -e; drain it and run clusterdoc check on it",
    ),
    "kernel-unsure": (
        "code",
        True,
        "a CUDA kernel could not launch or run (too many registers or threads for a launch, a stack or program "
        "counter error, a handle of another device or context): a kernel's bug, or one built for another GPU or "
        "CUDA",
        "CUDA_LAUNCH_BLOCKING=1 names the kernel; the same run on another node and GPU type",
    ),
    "feature-unsure": (
        "environment",
        True,
        "a CUDA call was refused as not supported: the driver, the GPU, a virtualised GPU or the container lacks the "
        "feature (IPC, peer memory, an allocator), or a library called it where it should not",
        "the same call on a bare node of the same GPU type (nvidia-smi -q: virtualisation mode); the library's "
        "issue tracker for its version",
    ),
    "unnamed": (
        "code",
        True,
        "a CUDA call failed and the line does not say which error (a program's own check: 'CUDA error !!!', 'CUDA "
        "error at FILE:LINE'): the GPU's memory, the code, the GPU or the install",
        "the lines around it for the error's name or number (cudaError 2 is out of memory, 700 an illegal access); "
        "the same run with CUDA_LAUNCH_BLOCKING=1, and on another node",
    ),
    "blas-unsure": (
        "code",
        True,
        "cuBLAS or cuDNN refused or failed a call: split in the field between the GPU's memory being full, the "
        "library's install (a cuBLAS/cuDNN that is not the one torch was built with) and the call's inputs",
        "torch.cuda.memory_summary() before the call; pip list | grep nvidia- against torch's build "
        "(torch.version.cuda, torch.backends.cudnn.version()); CUDA_LAUNCH_BLOCKING=1 for the call",
    ),
}

THIN: dict[str, tuple[str, ...]] = {
    "gpu-visibility": (
        "environment: the node or container hides or holds the GPUs (no --gpus/--nv, the driver not loaded, "
        "exclusive-process mode with another process on it, peer access off: IOMMU/ACS, consumer GPUs)",
        "code: the job's mapping of ranks to GPUs (two ranks on one GPU, CUDA_VISIBLE_DEVICES set by the script, "
        "a device index from the global rank)",
        "node: that node's GPU is stuck or gone (the same error on that node alone, in other jobs: drain it)",
    ),
    "kernel-unsure": (
        "code: a kernel's bug or its launch configuration (the same failure on every GPU; CUDA_LAUNCH_BLOCKING=1 "
        "names the kernel)",
        "environment: an extension built for another GPU or CUDA, or in debug mode (rebuild it for this GPU's "
        "architecture)",
        "node: the GPU itself (XIDs in the node's kernel log; the same run on another GPU passes)",
    ),
    "feature-unsure": (
        "environment: the node cannot do it (a vGPU, WSL or a container without IPC; peer memory off; an old driver)",
        "code: a library asks for it where it should not (a device it does not use: llama.cpp#3951's tensor split, "
        "fixed in its code)",
    ),
    "unnamed": (
        "oom: the GPU's memory (the error's number or name, if the program prints it, decides: 2 is out of memory)",
        "code: a kernel or a call of the program (CUDA_LAUNCH_BLOCKING=1 and compute-sanitizer name it)",
        "node: that node's GPU (XIDs in its kernel log; the same run on another node passes)",
        "environment: the driver or the CUDA libraries the program loads (nvidia-smi, ldd on the program)",
    ),
    "blas-unsure": (
        "oom: the GPU had no memory left for the library's handle or workspace (a smaller batch decides)",
        "environment: a cuBLAS/cuDNN of another version than torch's (pip's nvidia-* wheels, LD_LIBRARY_PATH)",
        "code: the call's inputs (an index out of range earlier in the step shows up here: CUDA_LAUNCH_BLOCKING=1)",
    ),
}

# (row, class, the driver's enum, the runtime's enum, the string; "" where the row has none). Rows for strings a
# learned signature already reads (no kernel image, invalid device ordinal, illegal memory access, ECC, out of
# memory, the driver mismatches ...) are not here; "operation not supported" is matched after the longer strings
# that hold it.
# fmt: off
ROWS: list[tuple[str, str, str, str, str]] = [
    ("no-device", "gpu-visibility", "CUDA_ERROR_NO_DEVICE", "cudaErrorNoDevice", "no CUDA-capable device is detected"),
    ("unavailable", "gpu-visibility", "CUDA_ERROR_DEVICE_UNAVAILABLE", "cudaErrorDevicesUnavailable",
     "CUDA-capable device(s) is/are busy or unavailable"),
    ("unavailable-old", "gpu-visibility", "", "", "all CUDA-capable devices are busy or unavailable"),  # CUDA < 10
    ("not-licensed", "install", "CUDA_ERROR_DEVICE_NOT_LICENSED", "cudaErrorDeviceNotLicensed",
     "device doesn't have valid Grid license"),
    ("exclusive-in-use", "gpu-mode", "CUDA_ERROR_CONTEXT_ALREADY_IN_USE", "cudaErrorDeviceAlreadyInUse",
     "exclusive-thread device already in use by a different thread"),
    ("peer-unsupported", "gpu-visibility", "CUDA_ERROR_PEER_ACCESS_UNSUPPORTED", "cudaErrorPeerAccessUnsupported",
     "peer access is not supported between these two devices"),
    ("jit-missing", "install", "CUDA_ERROR_JIT_COMPILER_NOT_FOUND", "cudaErrorJitCompilerNotFound",
     "PTX JIT compiler library not found"),
    ("jit-disabled", "install", "CUDA_ERROR_JIT_COMPILATION_DISABLED", "cudaErrorJitCompilationDisabled",
     "PTX JIT compilation was disabled"),
    ("os-call", "install", "CUDA_ERROR_OPERATING_SYSTEM", "cudaErrorOperatingSystem",
     "OS call failed or operation not supported on this OS"),
    ("launch-timeout", "gpu-mode", "CUDA_ERROR_LAUNCH_TIMEOUT", "cudaErrorLaunchTimeout",
     "the launch timed out and was terminated"),
    ("mps-connect", "gpu-mode", "CUDA_ERROR_MPS_CONNECTION_FAILED", "cudaErrorMpsConnectionFailed",
     "MPS client failed to connect to the MPS control daemon or the MPS server"),
    ("mps-rpc", "gpu-mode", "CUDA_ERROR_MPS_RPC_FAILURE", "cudaErrorMpsRpcFailure",
     "the remote procedural call between the MPS server and the MPS client failed"),
    ("mps-not-ready", "gpu-mode", "CUDA_ERROR_MPS_SERVER_NOT_READY", "cudaErrorMpsServerNotReady",
     "MPS server is not ready to accept new MPS client requests"),
    ("mps-max-clients", "gpu-mode", "CUDA_ERROR_MPS_MAX_CLIENTS_REACHED", "cudaErrorMpsMaxClientsReached",
     "the hardware resources required to create MPS client have been exhausted"),
    ("mps-max-connections", "gpu-mode", "CUDA_ERROR_MPS_MAX_CONNECTIONS_REACHED",
     "cudaErrorMpsMaxConnectionsReached",
     "the hardware resources required to support device connections have been exhausted"),
    ("mps-terminated", "gpu-mode", "CUDA_ERROR_MPS_CLIENT_TERMINATED", "cudaErrorMpsClientTerminated",
     "the MPS client has been terminated by the server"),
    ("misaligned", "kernel-code", "CUDA_ERROR_MISALIGNED_ADDRESS", "cudaErrorMisalignedAddress",
     "misaligned address"),
    ("address-space", "kernel-code", "CUDA_ERROR_INVALID_ADDRESS_SPACE", "cudaErrorInvalidAddressSpace",
     "operation not supported on global/shared address space"),
    ("cooperative-too-large", "kernel-code", "CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE",
     "cudaErrorCooperativeLaunchTooLarge", "too many blocks in cooperative launch"),
    ("peer-not-enabled", "kernel-code", "CUDA_ERROR_PEER_ACCESS_NOT_ENABLED", "cudaErrorPeerAccessNotEnabled",
     "peer access has not been enabled"),
    ("peer-already-enabled", "kernel-code", "CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED",
     "cudaErrorPeerAccessAlreadyEnabled", "peer access is already enabled"),
    ("capture-unsupported", "kernel-code", "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED",
     "cudaErrorStreamCaptureUnsupported", "operation not permitted when stream is capturing"),
    ("capture-invalidated", "kernel-code", "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED",
     "cudaErrorStreamCaptureInvalidated", "operation failed due to a previous error during capture"),
    ("capture-merge", "kernel-code", "CUDA_ERROR_STREAM_CAPTURE_MERGE", "cudaErrorStreamCaptureMerge",
     "operation would result in a merge of separate capture sequences"),
    ("capture-unmatched", "kernel-code", "CUDA_ERROR_STREAM_CAPTURE_UNMATCHED", "cudaErrorStreamCaptureUnmatched",
     "capture was not ended in the same stream as it began"),
    ("capture-unjoined", "kernel-code", "CUDA_ERROR_STREAM_CAPTURE_UNJOINED", "cudaErrorStreamCaptureUnjoined",
     "capturing stream has unjoined work"),
    ("capture-isolation", "kernel-code", "CUDA_ERROR_STREAM_CAPTURE_ISOLATION", "cudaErrorStreamCaptureIsolation",
     "dependency created on uncaptured work in another stream"),
    ("capture-implicit", "kernel-code", "CUDA_ERROR_STREAM_CAPTURE_IMPLICIT", "cudaErrorStreamCaptureImplicit",
     "operation would make the legacy stream depend on a capturing blocking stream"),
    ("captured-event", "kernel-code", "CUDA_ERROR_CAPTURED_EVENT", "cudaErrorCapturedEvent",
     "operation not permitted on an event last recorded in a capturing stream"),
    ("capture-wrong-thread", "kernel-code", "CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD",
     "cudaErrorStreamCaptureWrongThread", "attempt to terminate a thread-local capture sequence from another thread"),
    ("contained", "nvlink-contained", "CUDA_ERROR_CONTAINED", "cudaErrorContained",
     "Invalid access of peer GPU memory over nvlink or a hardware error"),
    ("launch-resources", "kernel-unsure", "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES", "cudaErrorLaunchOutOfResources",
     "too many resources requested for launch"),
    ("stack-error", "kernel-unsure", "CUDA_ERROR_HARDWARE_STACK_ERROR", "cudaErrorHardwareStackError",
     "hardware stack error"),
    ("invalid-pc", "kernel-unsure", "CUDA_ERROR_INVALID_PC", "cudaErrorInvalidPc", "invalid program counter"),
    ("invalid-handle", "kernel-unsure", "CUDA_ERROR_INVALID_HANDLE", "cudaErrorInvalidResourceHandle",
     "invalid resource handle"),
    ("invalid-context", "kernel-unsure", "CUDA_ERROR_INVALID_CONTEXT", "cudaErrorDeviceUninitialized",
     "invalid device context"),
    ("not-supported", "feature-unsure", "CUDA_ERROR_NOT_SUPPORTED", "cudaErrorNotSupported", "operation not supported"),
    # cuBLAS's and cuDNN's status names (torch: "CUDA error: CUBLAS_STATUS_... when calling `cublas...`",
    # "cuDNN error: CUDNN_STATUS_..."); their ALLOC_FAILED and NOT_ENOUGH_WORKSPACE are oom.py's
    ("cublas-not-initialized", "blas-unsure", "CUBLAS_STATUS_NOT_INITIALIZED", "", ""),
    ("cublas-execution-failed", "blas-unsure", "CUBLAS_STATUS_EXECUTION_FAILED", "", ""),
    ("cublas-internal", "blas-unsure", "CUBLAS_STATUS_INTERNAL_ERROR", "", ""),
    ("cublas-invalid-value", "blas-unsure", "CUBLAS_STATUS_INVALID_VALUE", "", ""),
    ("cublas-not-supported", "blas-unsure", "CUBLAS_STATUS_NOT_SUPPORTED", "", ""),
    ("cublas-arch-mismatch", "install", "CUBLAS_STATUS_ARCH_MISMATCH", "", ""),
    ("cudnn-not-initialized", "blas-unsure", "CUDNN_STATUS_NOT_INITIALIZED", "", ""),
    ("cudnn-internal", "blas-unsure", "CUDNN_STATUS_INTERNAL_ERROR", "", ""),
    ("cudnn-execution-failed", "blas-unsure", "CUDNN_STATUS_EXECUTION_FAILED", "", ""),
    ("cudnn-not-supported", "blas-unsure", "CUDNN_STATUS_NOT_SUPPORTED", "", ""),
    ("cudnn-bad-param", "blas-unsure", "CUDNN_STATUS_BAD_PARAM", "", ""),
    ("cudnn-mapping", "blas-unsure", "CUDNN_STATUS_MAPPING_ERROR", "", ""),
    ("cudnn-arch-mismatch", "install", "CUDNN_STATUS_ARCH_MISMATCH", "", ""),
    ("cudnn-version-mismatch", "install", "CUDNN_STATUS_VERSION_MISMATCH", "", ""),
]
# fmt: on


UNNAMED_SOURCE = "https://github.com/SPECFEM/specfem3d (src/gpu: exit_on_gpu_error's 'CUDA error !!!!!')"
# strings that hold none of the pre-check's keys (signatures._KEYS_PICKED): matched in torch's form only, so that no
# line pays one more check (tests/test_why_catalogue_cuda.py)
TORCH_FORM_ONLY = ("cooperative-too-large", "capture-merge", "invalid-pc")


def _signatures() -> list[Signature]:
    out = []
    for row, kind, driver, runtime, text in ROWS:
        category, weak, meaning, step = CLASSES[kind]
        source = LIBS if driver.startswith(("CUBLAS", "CUDNN")) else SOURCE
        learned = f"CUDA error: {text}" if text else driver or runtime
        # the string is plain English: only on a line that says it is CUDA's, and not NCCL's INFO lines (a probe it
        # falls back from)
        said = f"cuda error: {text.lower()}" if row in TORCH_FORM_ONLY else text.lower()
        forms: list[tuple[tuple[str, ...], bool]] = [((enum,), False) for enum in (driver, runtime) if enum]
        if text:
            forms.append(((said, "cuda"), True))
        for i, (needles, lower) in enumerate(forms):
            name = f"cudacat-{row}-{i}"
            KIND_OF[name] = kind
            unless = ("nccl info",) if lower else ()
            out.append(
                S(name, category, needles, meaning, learned, source, step, weak=weak, lower=lower, unless=unless)
            )
    return out


KIND_OF: dict[str, str] = {"cudacat-unnamed-0": "unnamed"}
SIGNATURES: list[Signature] = _signatures()
# a program's own report of a CUDA error whose kind no row names (SPECFEM's "CUDA error !!!!!", the samples'
# checkCudaErrors "CUDA error at FILE:LINE code=N"): a candidate and what decides; signatures.py puts it after every
# other catalogue (NCCL's and the applications' lines that say "CUDA error" say more)
_category, _weak, _meaning, _step = CLASSES["unnamed"]
UNNAMED: list[Signature] = [
    S("cudacat-unnamed-0", _category, ("cuda error",), _meaning, "CUDA error !!!!! !!!!!", UNNAMED_SOURCE, _step,
      weak=_weak, lower=True, unless=("cuda_launch_blocking", "asynchronously reported", "nccl info"))
]  # fmt: skip
# the weak rows' candidates (why/candidates.py reads it)
THIN_OF: dict[str, tuple[str, ...]] = {s.name: THIN[KIND_OF[s.name]] for s in SIGNATURES + UNNAMED if s.weak}
