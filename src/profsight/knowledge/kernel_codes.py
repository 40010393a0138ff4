"""What the codes inside kernel names mean: SM numbers, gfx ISAs, type letters, op words.

Lookup tables for the named groups of `profsight.knowledge.kernel_patterns`, and the
patterns that find an architecture or an element type anywhere in a name. The naming
schemes themselves are described in `profsight.knowledge.kernels`.
"""

from __future__ import annotations

import re
from typing import Final

from profsight.knowledge.ops_table import GLOSSARY
from profsight.lazy import regex

#: CUDA compute capability (``sm80``, ``cutlass_80_``, ``_sm100f``) to architecture.
SM_ARCH: Final[dict[str, str]] = {
    **dict.fromkeys(["50", "52", "53"], "maxwell"),
    **dict.fromkeys(["60", "61", "62"], "pascal"),
    **dict.fromkeys(["70", "72"], "volta"),
    "75": "turing",
    **dict.fromkeys(["80", "86", "87"], "ampere"),
    "89": "ada",
    "90": "hopper",
    **dict.fromkeys(["100", "101", "103", "110", "120", "121"], "blackwell"),
}
#: AMD gfx ISA (Tensile's ``ISA942``, rocPRIM's ``target_arch)942``) to architecture.
AMD_ISA_ARCH: Final[dict[str, str]] = {
    "908": "cdna1",
    "90a": "cdna2",
    **dict.fromkeys(["940", "941", "942"], "cdna3"),
    "950": "cdna4",
    **dict.fromkeys(["1030", "1100", "1101", "1102", "1200", "1201"], "rdna"),
}
#: MIOpen's ``gtcx2``/``gtcx3``: its xdlops kernels for gfx90a and gfx94x.
GTC_ARCH: Final[dict[str, str]] = {"2": "cdna2", "3": "cdna3"}
ARCH_WORDS: Final[dict[str, str]] = {
    a: a for a in ["maxwell", "pascal", "volta", "turing", "ampere", "ada", "hopper", "blackwell"]
}
ARCH_VENDOR: Final[dict[str, str]] = {
    **dict.fromkeys(SM_ARCH.values(), "nvidia"),
    **dict.fromkeys(AMD_ISA_ARCH.values(), "amd"),
}
#: No tensor cores before Volta, whatever the kernel.
PRE_TENSOR_CORE_ARCHES: Final = frozenset({"maxwell", "pascal"})

#: Type words, lowercased, as kernels write them: C++ (``c10::BFloat16``), mangled C++
#: (``DF16b``), CUTLASS/xmma (``bf16``, ``tf32``), trtllm-gen (``E4m3``), MTIA (``Float``).
#: Integer and bool types are left out: such kernels have no floating-point precision.
DTYPE_WORDS: Final[dict[str, str]] = {
    **dict.fromkeys(["double", "fp64", "f64"], "fp64"),
    **dict.fromkeys(["float", "float2", "fp32", "f32"], "fp32"),
    **dict.fromkeys(["tf32", "tfloat32_t"], "tf32"),
    **dict.fromkeys(["half", "__half", "half_t", "fp16", "f16", "df16_"], "fp16"),
    **dict.fromkeys(
        [
            *("bfloat16", "bf16", "__nv_bfloat16", "__hip_bfloat16", "hip_bfloat16"),
            *("bfloat16_t", "df16b"),
        ],
        "bf16",
    ),
    # CUTLASS's float_e4m3_t/float_e2m1_t (include/cutlass/float8.h, float_subbyte.h)
    **dict.fromkeys(
        [
            *("fp8", "e4m3", "e5m2", "float8_e4m3fn", "float8_e5m2", "__nv_fp8_e4m3"),
            *("__nv_fp8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz", "float_e4m3_t"),
            *("float_e5m2_t", "mxfp8"),
            # cuda_fp8.h's vector types: two and four packed FP8 values
            *("__nv_fp8x2_e4m3", "__nv_fp8x2_e5m2", "__nv_fp8x4_e4m3", "__nv_fp8x4_e5m2"),
            # Blackwell's block-scaled MMA kinds (PTX ISA, tcgen05.mma kind::mxf8f6f4; CuTe's
            # SM100_MMA_MXF8F6F4_SS): 8-, 6- or 4-bit elements, at the FP8 rate
            "mxf8f6f4",
        ],
        "fp8",
    ),
    **dict.fromkeys(["int8", "int8_t", "i8", "s8"], "int8"),
    # kind::mxf4 and kind::mxf4nvf4 (SM100_MMA_MXF4_SS, SM100_MMA_MXF4NVF4_SS): 4-bit only
    **dict.fromkeys(
        ["fp4", "e2m1", "mxfp4", "nvfp4", "f4", "float_e2m1_t", "mxf4", "mxf4nvf4"], "fp4"
    ),
}
#: CUTLASS's block-scaled tensor op class (python/cutlass_library/library.py,
#: ``OpcodeClass.BlockScaledTensorOp``: ``bstensorop``) runs only the block-scaled MMA kinds,
#: whose elements are 8, 6 or 4 bits wide: FP8 at the widest, where its types are not read.
BLOCK_SCALED_OPS: Final[dict[str, str]] = {"bstensorop": "fp8"}
#: Type letters: BLAS (lowercase; ``gc`` = Gauss complex), nvjet (``t`` = bf16), Tensile
#: (uppercase; ``X`` = xf32). ``s`` with a 1688/1684 MMA is TF32: the only 32-bit MMA input.
CODE_PRECISION: Final[dict[str, str]] = {
    **dict.fromkeys(["s", "c", "gc", "S", "C"], "fp32"),
    **dict.fromkeys(["d", "z", "D", "Z"], "fp64"),
    **dict.fromkeys(["h", "hc", "H"], "fp16"),
    **dict.fromkeys(["t", "B"], "bf16"),
    **dict.fromkeys(["s1688", "s1684", "X"], "tf32"),
    **dict.fromkeys(["F8", "B8", "F8B8", "B8F8"], "fp8"),
    # nvjet: q = e4m3 (``nvjet_sm90_qqtst_..._ovscale_TNT`` runs aten::_scaled_mm), o = e2m1
    # (``nvjet_sm100_ootst_..._Avec16UE4M3_Bvec16UE4M3_TNT``: NVFP4, 16-element UE4M3 scales)
    "q": "fp8",
    "o": "fp4",
    **dict.fromkeys(["i8", "I8"], "int8"),
}

#: Operation words of families: cuDNN/CUTLASS (``fprop``), MIOpen (``wrw``), CK
#: (``conv_bwd_data``), Inductor's kernel kinds (pointwise, reduction, persistent reduction).
OP_WORDS: Final[dict[str, str]] = {
    "gemm": "gemm",
    "batched_gemm": "batched_gemm",
    **dict.fromkeys(["fprop", "fwd", "conv_fwd", "Forward"], "conv_fprop"),
    **dict.fromkeys(["dgrad", "bwd", "conv_bwd_data"], "conv_dgrad"),
    **dict.fromkeys(["wgrad", "wrw", "conv_bwd_weight", "Wgrad"], "conv_wgrad"),
    "poi": "elementwise",
    "red": "reduction",
    "per": "reduction",
    "for": "optimizer",  # foreach: the compiled optimizer's multi-tensor step
    "spl": "scan",  # split_scan: cumsum and friends
}
ALGO_WORDS: Final[dict[str, str]] = {
    "implicit_convolve": "implicit_gemm",
    "explicit_convolve": "explicit_gemm",
}
#: Words that say whether tensor (NVIDIA) or matrix (AMD MFMA) cores run.
TC_WORDS: Final[dict[str, bool]] = {
    "tensorop": True,
    "wmma_tensorop": True,
    "simt": False,
    "MI": True,  # Tensile's MFMA instruction shape, MI16x16x1
    "x": True,  # MIOpen's gtcx: xdlops
}
#: Tensile writes each operand's index order; i or j fastest is column-major: not transposed.
TENSILE_LAYOUT: Final[dict[str, str]] = {"ilk": "n", "lik": "t", "ljk": "n", "jlk": "t"}
#: The host side of a copy worth naming: pageable memory is staged, pinned memory is DMA'd.
HOST_MEMORY_KINDS: Final[dict[str, str]] = {"Pageable": "pageable", "Pinned": "pinned"}

#: Ordered ``(regex, lookup)``: group 1 of the first regex that matches, looked up.
ARCH_RULES: Final[tuple[tuple[re.Pattern[str], dict[str, str]], ...]] = (
    (
        regex(r"(?<![a-z])(maxwell|pascal|volta|turing|ampere|hopper|blackwell)(?![a-z])"),
        ARCH_WORDS,
    ),
    (regex(r"(?:(?<![A-Za-z0-9])sm_?|Sm)(\d{2,3})"), SM_ARCH),
    (regex(r"cutlass_(\d{2,3})_"), SM_ARCH),
    (regex(r"ISA([0-9a-f]{3,4})_"), AMD_ISA_ARCH),
    (regex(r"gfx([0-9a-f]{3,4})"), AMD_ISA_ARCH),
    (regex(r"target_arch\)(\d{3,4})"), AMD_ISA_ARCH),  # rocPRIM's dispatch
)

_CPP_TYPES = (
    r"(double|float2|float|Half|__half|half|BFloat16|__nv_bfloat16|__hip_bfloat16|bfloat16_t"
    r"|half_t|tfloat32_t|Float8_e4m3fnuz|Float8_e5m2fnuz|Float8_e4m3fn|Float8_e5m2|__nv_fp8_e4m3"
    r"|__nv_fp8_e5m2|__nv_fp8x[24]_e4m3|__nv_fp8x[24]_e5m2|float_e4m3_t|float_e5m2_t|float_e2m1_t"
    r"|int8_t)(?!\w)"
)
#: Where C++ names keep the element type, most telling first: the argument of PyTorch's
#: innermost lambda (``{lambda(float)#1}``: the enclosing function's parameters come earlier
#: and include ``double eps``), a template argument, any type token. MIOpen's ``_half``
#: suffix names a 16-bit container (its bf16 convolutions use it too), so it must not match.
CPP_TYPE_TOKENS: Final = (
    # PyTorch's reductions: the input type (their lambdas take the accumulation type)
    regex(r"ReduceOp<(?:c10::)?" + _CPP_TYPES),
    # cuBLAS's GEMV-path kernels (gemmSN_NN_kernel<float, .., cublasGemvTensorStridedBatched<
    # __half const>, ..>): the first argument is the compute type, the operands' comes after
    regex(r"cublasGemvTensor\w*<(?:const )?" + _CPP_TYPES),
    regex(r"\{lambda\((?:c10::)?" + _CPP_TYPES),
    regex(r"<(?:c10::|cutlass::)?" + _CPP_TYPES),
    regex(r"(?<!\w)" + _CPP_TYPES),
)
#: Itanium-mangled names (``_Z...``) run the tokens together: ``IDF16bDF16b``.
MANGLED_TYPE_TOKEN: Final = regex(
    r"(DF16b|DF16_|tfloat32_t|__hip_bfloat16|__nv_bfloat16|bfloat16_t|half_t)"
)
#: Triton kernels end in their type: ``_finalize_matmul_scatter_bf16``.
SUFFIX_TYPE_TOKEN: Final = regex(r"_(bf16|fp16|fp32|fp8|f16|f32)$")
#: A block-scaled MMA kind named anywhere (``cute::SM100_MMA_MXF8F6F4_SS<..>``,
#: ``kind::mxf4nvf4``): read after the element types, which are more exact.
BLOCK_SCALED_KIND_TOKEN: Final = regex(r"(?i)(?<![a-z0-9])(mxf8f6f4|mxf4nvf4|mxf4)(?![a-z0-9])")
#: A template's argument list, up to the call's parameters: a communication kernel's
#: parameters are packed buffers and scales (DeepEP's ``dispatch<..>(int4*, float*, ..)``),
#: so only its template arguments name the payload's type (``combine<.., __nv_bfloat16, ..>``).
TEMPLATE_ARGS: Final = regex(r"^(?:[^(]|\(anonymous namespace\))*")

# -- Inductor's kernel names ----------------------------------------------------------------

#: ``triton_<kind>_fused_<ops>_<n>``: torch/_inductor/codegen/triton.py (``define_kernel``) joins
#: ``triton``, the first three letters of the kernel's category (poi, red, per, tem, for, spl),
#: the fused name and a counter. The fused name (torch/_inductor/utils.py,
#: ``get_fused_kernel_name``, with ``config.triton.descriptive_names = "original_aten"``, the
#: default) is ``fused`` and the overload-packet names of the kernel's top-level aten ops,
#: sorted and deduplicated, all joined with ``_``. A printed table may cut the name (``...``).
INDUCTOR_KERNEL: Final = regex(
    r"^triton_(?P<kind>[a-z]{3})_fused(?:_(?P<ops>\w*?))??(?:_(?P<n>\d+)|(?P<cut>\w*)\.\.\.)$"
)
_OP_NAME = regex(r"^_*[a-z][a-z0-9]*(?:_[a-z0-9]+)+$")
#: Op names that hold ``_`` (``native_layer_norm``, ``_log_softmax``): Inductor's ``_`` between
#: ops cannot be told from the ``_`` inside one, so the ops profsight knows (its glossary) and
#: a few the glossary lacks are matched longest first.
INDUCTOR_MULTIWORD_OPS: Final = frozenset(
    {
        name
        for entries in GLOSSARY.values()
        for key in entries
        if _OP_NAME.match(name := key.rsplit("::", 1)[-1])
    }
    | {
        "flex_attention",
        "flex_attention_backward",
        "_native_batch_norm_legit_functional",
        "all_gather_into_tensor",
        "reduce_scatter_tensor",
        "wait_tensor",
        "masked_scatter",
        "_fused_adam",
        "_grouped_mm",
        "_scaled_grouped_mm",
    }
)
#: The longest run of ``_``-separated words one op name has in `INDUCTOR_MULTIWORD_OPS`.
INDUCTOR_MAX_OP_WORDS: Final = max(
    name.strip("_").count("_") + 1 for name in INDUCTOR_MULTIWORD_OPS
)
#: What a template kernel (``tem``) computes, from its ops, most telling first. Only templates
#: run a matmul or a convolution themselves: a pointwise kernel named ``convolution`` is the
#: bias add Inductor peels off the extern cuDNN call (torch/_inductor/kernel/conv.py: "peel off
#: the bias, cudnn is slower with it"), one named ``addmm`` the epilogue of an extern GEMM.
INDUCTOR_TEMPLATE_OPS: Final[tuple[tuple[str, str], ...]] = (
    ("flex_attention", "attention"),
    ("flex_attention_backward", "attention"),
    ("bmm", "batched_gemm"),
    ("baddbmm", "batched_gemm"),
    ("_grouped_mm", "batched_gemm"),
    ("_scaled_grouped_mm", "batched_gemm"),
    ("mm", "gemm"),
    ("addmm", "gemm"),
    ("_addmm_activation", "gemm"),
    ("_scaled_mm", "gemm"),
    ("_int_mm", "gemm"),
    ("convolution", "conv"),
)
#: Ops that give any Inductor kernel its operation, ordered.
INDUCTOR_OP_RULES: Final[tuple[tuple[re.Pattern[str], str], ...]] = (
    (regex(r"softmax"), "softmax"),
    (regex(r"(?:layer|rms|batch|group|instance)_norm"), "norm"),
)
