"""What each GPU generation's matrix units take, and the precision advice that follows.

One table, by architecture (as `hardware.architecture` names it), with its source: the
vendors' architecture whitepapers. Advice that names a precision reads it from here, so no
finding suggests BF16 on a Volta or FP8 on an Ampere.
"""

from __future__ import annotations

from typing import Final

import msgspec


class Generation(msgspec.Struct, frozen=True):
    arch: str
    label: str
    matrix: tuple[str, ...]
    """Input types its tensor (matrix) cores take, fastest first, besides FP64/FP32."""
    source: str


GENERATIONS: Final[dict[str, Generation]] = {
    g.arch: g
    for g in (
        Generation("pascal", "Pascal", (), "NVIDIA Tesla P100 whitepaper: no tensor cores"),
        Generation("volta", "Volta", ("fp16",), "NVIDIA Volta whitepaper: FP16 tensor cores"),
        Generation(
            "turing", "Turing", ("fp16", "int8"), "NVIDIA Turing whitepaper: FP16/INT8/INT4"
        ),
        Generation(
            "ampere",
            "Ampere",
            ("bf16", "fp16", "tf32", "int8"),
            "NVIDIA A100 whitepaper: TF32 and BF16 tensor cores",
        ),
        Generation(
            "ada",
            "Ada",
            ("fp8", "bf16", "fp16", "tf32", "int8"),
            "NVIDIA Ada whitepaper: fourth-generation tensor cores with FP8",
        ),
        Generation(
            "hopper",
            "Hopper",
            ("fp8", "bf16", "fp16", "tf32", "int8"),
            "NVIDIA H100 whitepaper: FP8 with the Transformer Engine",
        ),
        Generation(
            "blackwell",
            "Blackwell",
            ("fp4", "fp8", "bf16", "fp16", "tf32", "int8"),
            "NVIDIA Blackwell whitepaper: FP4/FP6 tensor cores",
        ),
        Generation(
            "cdna2",
            "CDNA 2",
            ("bf16", "fp16", "int8"),
            "AMD CDNA 2 whitepaper: matrix cores for FP64/FP32/FP16/BF16/INT8",
        ),
        Generation(
            "cdna3",
            "CDNA 3",
            ("fp8", "bf16", "fp16", "tf32", "int8"),
            "AMD CDNA 3 whitepaper: adds TF32 and FP8 matrix cores",
        ),
    )
}


def takes(arch: str | None, precision: str) -> bool | None:
    """Whether `arch`'s matrix units take `precision` (None: the architecture is unknown)."""
    generation = GENERATIONS.get(arch or "")
    return None if generation is None else precision in generation.matrix


def precision_phrase(arch: str | None) -> str:
    """The mixed-precision setting to name for a GPU of `arch`, in a few words."""
    if takes(arch, "bf16"):
        return "bf16 autocast (Trainer(precision='bf16-mixed'))"
    if takes(arch, "fp16"):
        label = GENERATIONS[arch or ""].label
        return (
            f"fp16 autocast with a GradScaler (Trainer(precision='16-mixed'); {label} has no BF16)"
        )
    if arch is None:
        return (
            "bf16 autocast (Trainer(precision='bf16-mixed')) on Ampere or later, fp16 with a "
            "GradScaler before"
        )
    return "mixed precision where the device supports it"


def fp8_note(arch: str | None) -> str:
    """A sentence on FP8, for generations whose matrix units take it."""
    if not takes(arch, "fp8"):
        return ""
    return (
        f" {GENERATIONS[arch or ''].label} also runs FP8 matrix math (NVIDIA Transformer Engine "
        "or torchao's float8 training) for large matrix multiplies, with dimensions that are "
        "multiples of 16."
    )


#: Precisions below 16 bits: matrix math in them is already as cheap as the run chose to make
#: it, so no advice names a lower one (FP8 training on FP8 kernels, DeepSeek's EP64 trace).
LOW_PRECISIONS: Final = frozenset({"fp8", "fp4", "int8"})
#: 16-bit precisions of tensor (matrix) cores: mixed precision already runs. TF32 is left out:
#: FP32 inputs multiplied in TF32 run at half the BF16 rate, so mixed precision still gains.
TENSOR_CORE_PRECISIONS: Final = frozenset({"bf16", "fp16"})

#: What makes matrix math cheaper once it runs in a low precision: its kernels' names said so.
LOW_PRECISION_MATMUL_ADVICE: Final = (
    "The matrix math already runs in {precision} on the matrix units (tensor or matrix "
    "cores): what is left is keeping them busy: larger matrices per call (a larger batch, "
    "grouped GEMMs for experts), fused attention, and the casts to {precision} and their "
    "scales fused into the kernels around them (each cast is elementwise work of its own)."
)
#: The same for matrix math in BF16 or FP16.
TENSOR_CORE_MATMUL_ADVICE: Final = (
    "The matrix math already runs in {precision} on the matrix units (tensor or matrix "
    "cores): fused attention (F.scaled_dot_product_attention); dimensions that are "
    "multiples of 8."
)


def matmul_advice(arch: str | None, precision: str | None) -> str | None:
    """What makes matrix math that runs in `precision` (its kernels' names say it) cheaper on
    a GPU of `arch`; None where the precision is not known, FP32 or TF32 (then mixed
    precision is the advice)."""
    if precision is None:
        return None
    if precision in LOW_PRECISIONS:
        return LOW_PRECISION_MATMUL_ADVICE.format(precision=precision.upper())
    if precision in TENSOR_CORE_PRECISIONS:
        text = TENSOR_CORE_MATMUL_ADVICE.format(precision=precision.upper())
        return text + fp8_note(arch)
    return None


__all__ = [
    "GENERATIONS",
    "LOW_PRECISIONS",
    "Generation",
    "fp8_note",
    "matmul_advice",
    "precision_phrase",
    "takes",
]
