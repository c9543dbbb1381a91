"""`clusterdoc build-wheel`: a DeepSpeed wheel prebuilt for exactly the cluster's GPUs, installed on every node.

archlist (TORCH_CUDA_ARCH_LIST from the nodes' GPUs) -> preflight (the build host's toolchain) -> build
(DeepSpeed's setup.py) -> manifest (verify the ops, record what it was built for) -> nodes (install).
"""

from clusterdoc.wheel.command import build_wheel
from clusterdoc.wheel.options import WheelOptions, WheelResult

__all__ = ["WheelOptions", "WheelResult", "build_wheel"]
