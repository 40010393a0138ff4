"""Families of operators and kernels: what kind of work a row's self time is.

A printed table has no call tree, but self times add up (to ``Self CPU time total``), so the
self time of the ops of one family is that family's share of the run. The families follow
the op glossary's categories (`profsight.knowledge.ops`) and the kernel decoder's operations
(`profsight.knowledge.kernels`).
"""

from __future__ import annotations

from typing import Final

CONVOLUTION: Final = "convolution"
MATMUL: Final = "matmul"
ELEMENTWISE: Final = "elementwise"
COPIES: Final = "copies"
MEMORY: Final = "memory"
COLLECTIVES: Final = "collectives"
SYNCS: Final = "syncs"
RUNTIME: Final = "runtime"
OPTIMIZER: Final = "optimizer"
DATA: Final = "data"
OTHER: Final = "other"

FAMILY_LABELS: Final[dict[str, str]] = {
    CONVOLUTION: "convolutions",
    MATMUL: "matrix multiplies and attention",
    ELEMENTWISE: "elementwise, normalisation, reductions and other memory-bound math",
    COPIES: "copies and dtype/device conversions",
    MEMORY: "allocation and views",
    COLLECTIVES: "collectives (communication)",
    SYNCS: "host-device synchronisation",
    RUNTIME: "device runtime calls (launches, copies, allocations)",
    OPTIMIZER: "optimizer update ops",
    DATA: "data loading",
    OTHER: "other ops",
}

#: Op glossary category -> family.
CATEGORY_FAMILIES: Final[dict[str, str]] = {
    "convolution": CONVOLUTION,
    "matmul": MATMUL,
    "attention": MATMUL,
    "pointwise": ELEMENTWISE,
    "activation": ELEMENTWISE,
    "normalization": ELEMENTWISE,
    "softmax": ELEMENTWISE,
    "reduction": ELEMENTWISE,
    "loss": ELEMENTWISE,
    "dropout": ELEMENTWISE,
    "pooling": ELEMENTWISE,
    "indexing": ELEMENTWISE,
    "embedding": ELEMENTWISE,
    "random": ELEMENTWISE,
    "copy": COPIES,
    "memcpy": COPIES,
    "allocation": MEMORY,
    "view": MEMORY,
    "communication": COLLECTIVES,
    "sync": SYNCS,
    "runtime": RUNTIME,
    "optimizer": OPTIMIZER,
}

#: Kernel decoder operation -> family (device rows of a table).
KERNEL_FAMILIES: Final[dict[str, str]] = {
    "gemm": MATMUL,
    "gemv": MATMUL,
    "batched_gemm": MATMUL,
    "attention": MATMUL,
    "conv_fprop": CONVOLUTION,
    "conv_dgrad": CONVOLUTION,
    "conv_wgrad": CONVOLUTION,
    "conv": CONVOLUTION,
    "copy": COPIES,
    "memset": MEMORY,
    "communication": COLLECTIVES,
    "optimizer": OPTIMIZER,
}

#: Families that are the model's arithmetic, and the compute finding each one gives.
COMPUTE_FINDINGS: Final[dict[str, str]] = {
    CONVOLUTION: "compute_conv",
    MATMUL: "compute_matmul",
    ELEMENTWISE: "compute_other",
    COPIES: "compute_other",
    OTHER: "compute_other",
}


def op_family(category: str | None) -> str:
    """The family of an op of glossary category `category` (None: an op profsight does not
    know, counted as other work)."""
    return CATEGORY_FAMILIES.get(category, OTHER) if category else OTHER


def kernel_family(operation: str | None) -> str:
    """The family of a kernel whose decoded operation is `operation`."""
    return KERNEL_FAMILIES.get(operation, ELEMENTWISE) if operation else OTHER
