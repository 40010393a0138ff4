"""What a GPU kernel's name says: library, operation, precision, tile, layout, architecture.

Profiler tables and traces name device work by the kernel's symbol. Vendor libraries encode
their configuration in it; `decode_kernel` reads it back. The schemes decoded (the patterns
themselves are tables in `profsight.knowledge.kernel_patterns`):

NVIDIA
    * cuBLAS's precompiled kernels, ``<arch>_<type>gemm_<tile>_..._<layout>``:
      ``maxwell_sgemm_32x128_nn`` (fp32, SIMT), ``volta_h884gemm_64x64_ldg8_nn``,
      ``turing_fp16_s1688gemm_fp16_...``: the
      digits after the type letter are the tensor-core MMA shape (884 = m8n8k4 on Volta, 1688 =
      m16n8k8 on Turing, 16816 = m16n8k16 on Ampere); type letters ``s d h c z`` as in BLAS.
    * xmma (cuBLAS and cuDNN, CUDA >= 11): ``sm80_xmma_gemm_f16f16_f16f32_f32_tn_n_tilesize...``,
      ``sm86_xmma_dgrad_implicit_gemm_...``; the suffix (``_cublas``, ``_cudnn_infer``) names
      the library. nvjet (cuBLAS, CUDA >= 12.8): ``nvjet_tst_144x128_64x6_2x1_v_bz_TNN``.
    * CUTLASS names, standalone or inside cuBLAS/cuDNN: ``cutlass_80_tensorop_s1688gemm_
      128x128_16x4_nn_align4`` (tile = threadblock MxN _ K x stages), ``cutlass::Kernel<...>``,
      ``cutlass_cudnn_infer::Kernel<cutlass_tensorop_s1688dgrad_optimized_tf32_...>``.
    * cuDNN: ``volta_scudnn_128x64_relu_interior_nn_v1``, ``5x_cudnn_maxwell_scudnn_winograd_
      128x128_ldg1_ldg4_tile148n_nt``, ``implicit_convolve_sgemm``, ``cudnn::cnn::wgrad_alg0_
      engine``, ``fft2d_r2c_32x32``, ``cask_cudnn::computeOffsetsKernel``, ``cudnn::bn_fw_tr_...``.
    * NCCL: ``ncclKernel_AllReduce_RING_LL_Sum_float``, ``ncclDevKernel_AllGather_RING_LL``.
AMD
    * Tensile (rocBLAS) and hipBLASLt (``..._UserArgs_...``): ``Cijk_Ailk_Bljk_SB_MT64x64x16_
      MI16x16x1_..._ISA942_...``: index orders give the layout, ``S/D/H/B/X`` the type, ``MT``
      the macro tile, ``MI`` the MFMA instruction, ``ISA`` the gfx target.
    * Composable Kernel (``ck::``, ``ck_tile::``, mangled ``_ZN2ck...``), MIOpen
      (``MIOpenBatchNorm...``, ``igemm_fwd_gtcx3_nhwc_bf16_..._bt128x128x32_...``), rocPRIM, AITER.
Frameworks
    * PyTorch (``at::native::vectorized_elementwise_kernel<4, ...>``, ``at::native::reduce_kernel``,
      ``cunn_SoftMaxForward``, ``(anonymous namespace)::softmax_warp_forward``), Inductor
      (``triton_poi_fused_...``, ``triton_red_...``, ``triton_per_...``), FlashAttention
      (``pytorch_flash::flash_fwd_kernel``), xFormers, FBGEMM, vLLM, SGLang, TensorRT-LLM, Apex.
    * Meta MTIA rows (``aten::mul.out-dtype_Float``) and the device rows of profiler tables
      that are not kernels: ``Memcpy HtoD (Pageable -> Device)``, ``Memset (Device)``.

A field is None when the name does not tell it; nothing is guessed from outside the name.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from typing import Final

import msgspec

from profsight.knowledge import kernel_codes as codes
from profsight.knowledge import kernel_patterns as kp

VENDORS: Final = ("nvidia", "amd", "intel")
LIBRARIES: Final = (
    "cuBLAS", "cuBLASLt", "cuDNN", "CUTLASS", "cuFFT", "NCCL", "Thrust/CUB", "TensorRT-LLM",
    "TransformerEngine", "FlashAttention", "FlashInfer", "xFormers", "Apex",
    "CK", "Tensile", "hipBLASLt", "rocBLAS", "MIOpen", "RCCL", "rocPRIM", "AITER",
    "oneDNN", "PyTorch", "Inductor", "Triton", "FBGEMM", "vLLM", "SGLang", "MTIA",
    "DeepEP", "DeepGEMM", "NVSHMEM", "MSCCL", "MSCCL++", "pplx-kernels", "SageAttention",
    "ROCclr",
)  # fmt: skip
OPERATIONS: Final = (
    "gemm", "gemv", "batched_gemm", "conv_fprop", "conv_dgrad", "conv_wgrad", "conv", "fft",
    "elementwise", "reduction", "softmax", "norm", "copy", "memset", "attention",
    "communication", "optimizer", "embedding", "index", "sort", "scan", "pooling",
    "activation", "loss", "random", "other",
)  # fmt: skip
PRECISIONS: Final = ("fp64", "fp32", "tf32", "fp16", "bf16", "fp8", "fp4", "int8")
ARCHES: Final = (
    "maxwell", "pascal", "volta", "turing", "ampere", "ada", "hopper", "blackwell",
    "cdna1", "cdna2", "cdna3", "cdna4", "rdna",
)  # fmt: skip

#: Operations that run as matrix math (on tensor or matrix cores where the precision allows):
#: their precision is the run's. A GEMV is left out: memory-bound, tensor cores do not speed it.
MATRIX_OPERATIONS: Final = frozenset(
    {"gemm", "batched_gemm", "conv_fprop", "conv_dgrad", "conv_wgrad", "conv", "attention"}
)

OPERATION_LABELS: Final[dict[str, str]] = {
    "gemm": "GEMM",
    "gemv": "GEMV",
    "batched_gemm": "batched GEMM",
    "conv_fprop": "convolution forward",
    "conv_dgrad": "convolution data gradient",
    "conv_wgrad": "convolution weight gradient",
    "conv": "convolution",
    "fft": "FFT",
    "norm": "normalization",
    "index": "indexing",
    "optimizer": "optimizer step",
}
ALGORITHM_LABELS: Final[dict[str, str]] = {
    "winograd": "Winograd",
    "implicit_gemm": "implicit GEMM",
    "explicit_gemm": "explicit GEMM",
    "fft": "FFT",
    "split_k": "split-K",
    "flash": "flash (online softmax)",
    "mem_efficient": "memory-efficient",
    "paged": "paged KV cache",
    "gemv": "GEMV path",
}


class KernelInfo(msgspec.Struct, frozen=True):
    """The fields a kernel name encodes; None where the name does not say."""

    name: str
    """The kernel name as given."""
    vendor: str | None
    """One of `VENDORS`."""
    library: str | None
    """One of `LIBRARIES`: who wrote (or generated) the kernel."""
    operation: str | None
    """One of `OPERATIONS`."""
    precision: str | None
    """One of `PRECISIONS`: the (first) input type; integer and bool kernels have none."""
    tile: str | None
    """The tile as written: ``32x128``, ``128x128x64``, ``256x128_32x3`` (tile _ K x stages)."""
    layout: str | None
    """Transposes of A and B: ``nn``, ``nt``, ``tn``, ``tt``."""
    arch: str | None
    """One of `ARCHES`: the architecture the kernel was built for."""
    tensor_cores: bool | None
    """Whether it runs on tensor cores (NVIDIA) or matrix cores (AMD MFMA)."""
    algorithm: str | None
    """``winograd``, ``implicit_gemm``, ``split_k``, ``flash``, ``allreduce_ring_ll``, ``HtoD
    pageable``, ..."""
    fused_ops: tuple[str, ...] = ()
    """The aten ops an Inductor kernel fuses, as its name lists them (``add``, ``mul``,
    ``native_layer_norm``); empty for other kernels."""

    @property
    def matrix(self) -> bool:
        """Whether it runs matrix math (`MATRIX_OPERATIONS`)."""
        return self.operation in MATRIX_OPERATIONS

    @property
    def fp32_off_tensor_cores(self) -> bool:
        """FP32 matrix math that does not run on tensor cores (what mixed precision or TF32
        would move onto them)."""
        return self.matrix and self.precision == "fp32" and self.tensor_cores is not True

    @property
    def label(self) -> str:
        """A short description: ``cuBLAS FP32 GEMM, tile 32x128, NN, Maxwell, no tensor cores``."""
        op = self.operation
        head = [self.library, self.precision and self.precision.upper()]
        head.append(OPERATION_LABELS.get(op, op) if op else "kernel")
        details = [
            self.algorithm
            and ALGORITHM_LABELS.get(self.algorithm, self.algorithm.replace("_", " ")),
            self.tile and f"tile {self.tile}",
            self.layout and self.layout.upper(),
            self.arch and (self.arch.upper() if "dna" in self.arch else self.arch.capitalize()),
            None if self.tensor_cores is None else _TENSOR_CORE_LABELS[self.tensor_cores],
            self.fused_ops and "fusing " + ", ".join(self.fused_ops),
        ]
        if op is None and self.library is None:
            return self.name
        return ", ".join([" ".join(p for p in head if p), *(d for d in details if d)])


_TENSOR_CORE_LABELS: Final = {True: "tensor cores", False: "no tensor cores"}


class _Found(msgspec.Struct):
    library: str | None = None
    operation: str | None = None
    precision: str | None = None
    tile: str | None = None
    layout: str | None = None
    arch: str | None = None
    tensor_cores: bool | None = None
    algorithm: str | None = None
    fused_ops: tuple[str, ...] = ()


def _first(rules: tuple[kp.Rule, ...], name: str) -> str | None:
    return next((value for pattern, value in rules if pattern.search(name)), None)


#: Named group -> (field it sets, how to read it); see `kernel_patterns` for the groups.
_GROUP_READERS: Final[dict[str, tuple[str, Callable[[str], str | bool | None]]]] = {
    "arch": ("arch", str),
    "sm": ("arch", codes.SM_ARCH.get),
    "isa": ("arch", codes.AMD_ISA_ARCH.get),
    "gtc": ("arch", codes.GTC_ARCH.get),
    "dtype": ("precision", lambda v: codes.DTYPE_WORDS.get(v.lower())),
    "mma": ("tensor_cores", lambda v: True),
    "tc": ("tensor_cores", codes.TC_WORDS.get),
    "tile": ("tile", str),
    "layout": ("layout", str.lower),
    "op": ("operation", codes.OP_WORDS.get),
    "algo": ("algorithm", lambda v: codes.ALGO_WORDS.get(v, v)),
    "scaled": ("precision", codes.BLOCK_SCALED_OPS.get),
}


def _read_groups(groups: dict[str, str], found: _Found) -> None:
    """Set the fields a family's named groups give (see `kernel_patterns`)."""
    code = groups.get("code")
    if code is not None:  # "s" alone, or "s1688" when the MMA shape changes the meaning
        with_mma = code + groups.get("mma", "")
        found.precision = codes.CODE_PRECISION.get(with_mma, codes.CODE_PRECISION.get(code))
    a, b = (codes.TENSILE_LAYOUT.get(groups.get(k, "")) for k in ("la", "lb"))
    if a and b:
        found.layout = a + b
    if "coll" in groups:  # NCCL: collective, algorithm, protocol
        parts = (groups.get(k) for k in ("coll", "alg", "proto"))
        found.algorithm = "_".join(p for p in parts if p).lower()
    for group, value in groups.items():
        reader = _GROUP_READERS.get(group)
        if reader is not None:
            field, read = reader
            decoded = read(value)
            if decoded is not None:
                setattr(found, field, decoded)


@functools.lru_cache(maxsize=4096)  # traces repeat a few hundred names thousands of times
def decode_kernel(name: str) -> KernelInfo:
    """Decode a kernel name, or a table's ``Memcpy``/``Memset`` row, field by field."""
    row = _device_row(name)
    if row is not None:
        return row
    found = _Found()
    for family in kp.FAMILIES:
        match = family.match.search(name)
        if match is None:
            continue
        found = _Found(
            library=family.library,
            operation=family.operation,
            algorithm=family.algorithm,
            tensor_cores=family.tensor_cores,
        )
        matches = (match, *(part.search(name) for part in family.parts))
        groups = {k: v for m in matches if m for k, v in m.groupdict().items() if v is not None}
        _read_groups(groups, found)
        if family.library == "Inductor":
            _read_inductor(name, found)
        break
    return _fill(name, found)


def is_transfer(name: str) -> bool:
    """Whether a device item recorded as a kernel is a runtime's own copy or fill
    (`kernel_patterns.TRANSFER_FAMILIES`): it moves data, it does not compute."""
    return any(f.match.search(name) for f in kp.TRANSFER_FAMILIES)


def matrix_precision(kernels: Iterable[tuple[str, float]]) -> str | None:
    """The precision a run's matrix math runs in: that of its matrix kernels (`kernels`:
    name and device time) with the most device time; None where no matrix kernel's name
    says its precision. An FP8 run's GEMMs say FP8 (DeepGEMM's, CUTLASS's block-scaled
    ones), whatever its other kernels run in."""
    time: dict[str, float] = {}
    for name, us in kernels:
        k = decode_kernel(name)
        if k.matrix and k.precision is not None:
            time[k.precision] = time.get(k.precision, 0.0) + us
    return max(time, key=lambda p: time[p]) if time else None


def inductor_ops(name: str) -> tuple[str, ...]:
    """The ops an Inductor kernel's name lists (``triton_poi_fused_add_mul_native_layer_norm_0``:
    ``add``, ``mul``, ``native_layer_norm``), in its (sorted) order; empty for other names."""
    match = codes.INDUCTOR_KERNEL.match(name)
    if match is None:
        return ()
    if match["cut"] is None:
        return _split_ops(match["ops"].split("_") if match["ops"] else [])
    # a printed table cut the name inside its last op: drop that op, and from the first op seen
    # twice on (Inductor lists each op once: a repeat is the start of a longer, cut op)
    ops = _split_ops(match["cut"].split("_")[1:])[:-1]
    repeat = next((i for i, op in enumerate(ops) if op in ops[:i]), len(ops))
    return ops[:repeat]


def _split_ops(words: list[str]) -> tuple[str, ...]:
    """Join the words into op names: the longest run that is a known multi-word op, else one
    word (with the empty words of its leading ``_`` in front: ``_log_softmax``)."""
    ops: list[str] = []
    i = 0
    while i < len(words):
        lead = i
        while lead < len(words) - 1 and not words[lead]:
            lead += 1  # "" words are the leading "_" of the next op
        longest = min(len(words), lead + codes.INDUCTOR_MAX_OP_WORDS)
        end = next(
            (
                j
                for j in range(longest, lead + 1, -1)
                if "_".join(words[i:j]) in codes.INDUCTOR_MULTIWORD_OPS
            ),
            lead + 1,
        )
        ops.append("_".join(words[i:end]))
        i = end
    return tuple(op for op in ops if op.strip("_"))


def _read_inductor(name: str, found: _Found) -> None:
    """Set an Inductor kernel's fused ops and the operation its ops give."""
    found.fused_ops = inductor_ops(name)
    kind = name[len("triton_") : len("triton_") + 3]
    if kind == "tem":  # None when no op says: left to the rule tables
        found.operation = next(
            (operation for op, operation in codes.INDUCTOR_TEMPLATE_OPS if op in found.fused_ops),
            None,
        )
    if found.operation not in (None, "elementwise", "reduction"):
        return
    for pattern, operation in codes.INDUCTOR_OP_RULES:
        if any(pattern.search(op) for op in found.fused_ops):
            found.operation = operation
            return


def _fill(name: str, found: _Found) -> KernelInfo:
    """Fill what no family gave from the field-by-field rule tables."""
    library = found.library or _first(kp.LIBRARY_RULES, name)
    arch = found.arch or _arch(name)
    tensor_cores = found.tensor_cores
    if tensor_cores is None and kp.TENSOR_CORE_RULE.search(name):
        tensor_cores = True
    if tensor_cores is None and arch in codes.PRE_TENSOR_CORE_ARCHES:
        tensor_cores = False
    vendor = kp.LIBRARY_VENDOR.get(library or "") or _first(kp.VENDOR_RULES, name)
    operation = found.operation or _first(kp.OPERATION_RULES, name)
    return KernelInfo(
        name=name,
        vendor=vendor or codes.ARCH_VENDOR.get(arch or ""),
        library=library,
        operation=operation,
        precision=found.precision or _precision(name, operation == "communication"),
        tile=found.tile,
        layout=found.layout,
        arch=arch,
        tensor_cores=tensor_cores,
        algorithm=found.algorithm or _first(kp.ALGORITHM_RULES, name),
        fused_ops=found.fused_ops,
    )


def _arch(name: str) -> str | None:
    for pattern, lookup in codes.ARCH_RULES:
        match = pattern.search(name)
        if match is not None:
            return lookup.get(match.group(1))
    return None


def _precision(name: str, moves_data: bool = False) -> str | None:
    """The element type a name spells; of a kernel that `moves_data` (communication), only
    its template arguments tell (`kernel_codes.TEMPLATE_ARGS`)."""
    tokens = (codes.MANGLED_TYPE_TOKEN,) if name.startswith("_Z") else codes.CPP_TYPE_TOKENS
    if moves_data:
        head = codes.TEMPLATE_ARGS.match(name)
        name = head.group(0) if head is not None else name
    for token in (*tokens, codes.SUFFIX_TYPE_TOKEN, codes.BLOCK_SCALED_KIND_TOKEN):
        match = token.search(name)
        if match is not None:
            return codes.DTYPE_WORDS.get(match.group(1).lower())
    return None


def _device_row(name: str) -> KernelInfo | None:
    """``Memcpy HtoD (Pageable -> Device)``: a copy, its direction and host memory kind."""
    copy = kp.MEMCPY_ROW.match(name)
    if copy is not None:
        sides = (copy["src"], copy["dst"])
        host = [codes.HOST_MEMORY_KINDS[s] for s in sides if s in codes.HOST_MEMORY_KINDS]
        return _row(name, "copy", " ".join([copy["dir"], *host]))
    if kp.MEMSET_ROW.match(name):
        return _row(name, "memset", None)
    return None


def _row(name: str, operation: str, algorithm: str | None) -> KernelInfo:
    # device rows are done by the driver (copy engines, memset), not by a library's kernel
    return KernelInfo(
        name=name,
        vendor=None,
        library=None,
        operation=operation,
        precision=None,
        tile=None,
        layout=None,
        arch=None,
        tensor_cores=None,
        algorithm=algorithm,
    )
