"""The pattern tables behind `profsight.knowledge.kernels` (which describes the naming schemes).

Two kinds of table, read by one small loop in ``kernels.py``:

* `FAMILIES`: naming schemes with structure (``maxwell_sgemm_32x128_nn``, ``Cijk_...``,
  ``sm80_xmma_...``). The first family whose regex matches reads fields off *named groups*
  of that regex and of its ``parts`` (decoded with `profsight.knowledge.kernel_codes`):

  ============  ==========================================================================
  group         meaning
  ============  ==========================================================================
  ``arch``      an architecture word (``volta``); ``sm``: a CUDA SM number (``80``);
                ``isa``: an AMD gfx ISA (``942``, ``90a``); ``gtc``: MIOpen's ``gtcx2``
  ``dtype``     a type word (``bf16``, ``tf32``, ``E4m3``, ``Float``): ``DTYPE_WORDS``
  ``code``      a BLAS/Tensile type letter (``s``, ``h``, ``B``), with ``mma`` the
                tensor-core MMA shape after it (``884``): ``CODE_PRECISION``
  ``tc``        a word that says whether tensor cores run (``tensorop``, ``simt``, ``x``)
  ``tile``      the tile as written; ``layout``: ``nn``/``nt``/``tn``/``tt``; ``la``/``lb``:
                Tensile's index order of A and B (``ilk``/``lik``, ``ljk``/``jlk``)
  ``op``        an operation word (``fprop``, ``wrw``, ``poi``): ``OP_WORDS``
  ``algo``      an algorithm word: ``ALGO_WORDS``; ``coll``/``alg``/``proto``: NCCL's
                collective, algorithm and protocol, joined into the algorithm
  ============  ==========================================================================

* Ordered ``(regex, value)`` rules, one table per field (`LIBRARY_RULES`,
  `OPERATION_RULES`, ...): the first rule that matches wins, so specific rules come before
  general ones. They fill what the family left open and decode names of no family.
"""

from __future__ import annotations

import re
from typing import Final

import msgspec

from profsight.knowledge.collectives import DEVICE_COMM_LIBRARIES
from profsight.lazy import regex

Rule = tuple["re.Pattern[str]", str]


def _rules(*pairs: tuple[str, str]) -> tuple[Rule, ...]:
    return tuple((regex(pattern), value) for pattern, value in pairs)


class Family(msgspec.Struct, frozen=True):
    """A naming scheme: which names belong to it, what it implies, where its fields are."""

    match: re.Pattern[str]
    """Decides membership; its named groups are read too."""
    library: str | None = None
    """None: left to `LIBRARY_RULES` (xmma and CUTLASS names occur in cuBLAS and cuDNN)."""
    operation: str | None = None
    algorithm: str | None = None
    tensor_cores: bool | None = None
    parts: tuple[re.Pattern[str], ...] = ()
    """Further searches whose named groups are read, for fields found anywhere in the name."""


def _family(
    match: str,
    *parts: str,
    library: str | None = None,
    operation: str | None = None,
    algorithm: str | None = None,
    tensor_cores: bool | None = None,
) -> Family:
    parsed = tuple(regex(p) for p in parts)
    return Family(regex(match), library, operation, algorithm, tensor_cores, parsed)


_ARCH = r"(?P<arch>maxwell|pascal|volta|turing|ampere|ada|hopper|blackwell)"
#: ``fp16_s884``: an input type, a BLAS type letter, a tensor-core MMA shape.
_BLAS_TYPE = (
    r"(?:(?P<dtype>bf16|fp16|f16|tf32|f32|fp32|f64|int8|s8|fp8|e4m3|e5m2)_)?"
    r"(?P<code>gc|hc|i8|[sdhcz])?(?P<mma>\d{3,6})?"
)
_LEGACY_LAYOUT = r".*_(?P<layout>[nt]{2})(?:_v\d+)?$"

FAMILIES: Final[tuple[Family, ...]] = (
    # cuBLAS's precompiled kernels: <arch>_<type>gemm_<tile>_..._<layout>; no MMA shape: SIMT
    _family(
        rf"^{_ARCH}_{_BLAS_TYPE}gemm_(?:[a-z0-9]+_)??(?P<tile>\d+x\d+)(?:{_LEGACY_LAYOUT})?",
        library="cuBLAS",
        operation="gemm",
        tensor_cores=False,
    ),
    # cuDNN's precompiled kernels: the same scheme with "cudnn", behind cudnn_infer_/5x_cudnn_
    _family(
        rf"^(?:cudnn_(?:infer_|train_)?|\d+x_cudnn_)?{_ARCH}_{_BLAS_TYPE}cudnn_(?:[a-z0-9]+_)??"
        rf"(?:(?P<algo>winograd)_)?(?P<tile>\d+x\d+)(?:{_LEGACY_LAYOUT})?",
        r"_(?P<op>fprop|dgrad|wgrad)_",
        library="cuDNN",
        operation="conv",
        tensor_cores=False,
    ),
    # xmma (cuBLAS and cuDNN, CUDA >= 11): sm80_xmma_<op>_[implicit_gemm_]<types>_..tilesize..
    _family(
        r"^sm(?P<sm>\d{2,3})_xmma_(?P<op>gemm|fprop|dgrad|wgrad)_(?:(?P<algo>implicit_gemm)_)?"
        r"(?:indexed_)?(?P<dtype>tf32|bf16|f16|f32|f64|e4m3|e5m2|s8|i8)",
        r"_(?P<layout>[nt]{2})_[nt]_tilesize",
        r"tilesize(?P<tile>\d+x\d+x\d+)",
        # <A><B>_<math><accumulate>_<C>: f32f32_tf32f32_f32 takes FP32 and multiplies in TF32
        r"_(?P<dtype>tf32)f32_",
        tensor_cores=True,
    ),
    # CUTLASS names, standalone or inside cuBLAS/cuDNN: cutlass_80_tensorop_s1688gemm_<tile>_..
    _family(
        r"cutlass_(?:(?P<sm>\d{2,3})_)?(?P<tc>wmma_tensorop|tensorop|simt)_"
        # the tile is optional: a printed table may cut the name right after the operation
        rf"{_BLAS_TYPE}(?P<op>gemm|fprop|dgrad|wgrad)_(?:(?:\w+?_)??(?P<tile>\d+x\d+_\d+x\d+))?",
        r"_(?P<layout>[nt]{2})_align",
    ),
    # cuBLAS's nvjet kernels (CUDA >= 12.8): nvjet_[sm100_]<types>_<tile>_<cluster>_.._<layout><out>
    _family(
        r"^nvjet_(?:sm(?P<sm>\d{2,3})_)?(?P<code>[a-z])[a-z]*_(?P<tile>\d+x\d+_\d+x\d+)",
        r"_(?P<layout>[NT]{2})[NT]$",
        library="cuBLAS",
        operation="gemm",
        tensor_cores=True,
    ),
    # Tensile (rocBLAS) and hipBLASLt: Cijk_Ailk_Bljk_<types>_..._MT<tile>_MI<mfma>_..ISA<gfx>
    _family(
        r"^Cijk_A(?P<la>[a-z]{3})_B(?P<lb>[a-z]{3})_(?P<code>F8B8|B8F8|F8|B8|I8|[SDHBXCZ])",
        r"_MT(?P<tile>\d+x\d+x\d+)",
        r"_(?P<tc>MI)\d+x\d+",
        r"_ISA(?P<isa>[0-9a-f]{3,4})_",
        operation="gemm",
    ),
    # NCCL: ncclKernel_<Coll>_<ALGO>_<PROTO>_<RedOp>_<type>; int8_t is untyped bytes: no precision
    _family(
        r"^nccl(?:Dev)?Kernel_(?P<coll>[A-Za-z]+)(?:_(?P<alg>RING|TREE|COLLNET\w*?|NVLS\w*?|PAT)"
        r"_(?P<proto>LL128|LL|SIMPLE))?"
        r"(?:_[A-Za-z]+_(?P<dtype>float|half|double|(?:__nv_)?bfloat16))?",
        library="NCCL",
        operation="communication",
    ),
    # MSCCL (NCCL forks, RCCL): src/include/msccl/msccl_kernel.h, mscclKernel_<op>_<type>_<proto>
    _family(
        r"^(?:void )?mscclKernel_[A-Za-z]+_(?P<dtype>half|float|double|hip_bfloat16|bfloat16)_",
        library="MSCCL",
        operation="communication",
    ),
    # the other communication libraries (DeepEP, NVSHMEM, MSCCL++, ...): `collectives` owns them
    *(Family(p, library, "communication") for p, library in DEVICE_COMM_LIBRARIES),
    # CUTLASS 3.x library names (python/cutlass_library/library.py OpcodeClassNames:
    # bstensorop = block-scaled tensor op; gemm_operation.py procedural_name): cutlass3x_<sm>_
    # <opclass>_[<inst>]gemm_[block_scaled_]<A>_<B>_<acc>_<C>_<D>_<tile>_[<cluster>_]<n>_<layout>;
    # a block-scaled operand is <scale type>x<element type>: ue8m0xe4m3 (MXFP8), ue4m3xe2m1 (NVFP4)
    # The instruction shape before "gemm" is <accumulator letter><shape>: s64x128x16 (SM90),
    # s16832 (SM120, m16n8k32). A block-scaled tensor op (PTX kind::mxf8f6f4, kind::mxf4nvf4)
    # takes only 8-, 6- and 4-bit elements: a name cut before its types (a printed table's
    # ``cutlass3x_sm120_bstensorop_s16832gemm_block_scaled_u...``) is read as FP8, the widest
    # of them (`kernel_codes.BLOCK_SCALED_OPS`); its element type, where written, decides.
    _family(
        r"cutlass3x_sm(?P<sm>\d{2,3})_(?P<tc>bstensorop|sptensorop|tensorop|simt)_"
        r"(?:[a-z]?\d+(?:x\d+x\d+)?)?(?:moe_)?(?P<op>gemm)_",
        r"cutlass3x_sm\d+_(?P<scaled>bstensorop)_",
        r"gemm_(?:block_scaled_)?(?:u?e\dm\dx)?(?P<dtype>e4m3|e5m2|e2m1|f4|bf16|f16|tf32|f32|s8)_",
        r"_(?P<tile>\d+x\d+x\d+)_(?:\d+x\d+x\d+_)?\d+_(?P<layout>[nt]{2})[nt]_align",
        library="CUTLASS",
    ),
    # DeepGEMM (github.com/deepseek-ai/DeepGEMM): deep_gemm::fp8_gemm_kernel (first release,
    # deep_gemm/include/deep_gemm/fp8_gemm.cuh), deep_gemm::sm90_fp8_gemm_1d2d_impl,
    # sm100_fp8_fp4_gemm_1d1d_impl, sm100_bf16_gemm_impl (deep_gemm/include/deep_gemm/impls/);
    # DeepSeek's traces (deepseek-ai/profile-data) spell it dpsk::gemm::. Its *_mqa_logits are the
    # attention scores of DeepSeek's sparse-attention indexer.
    _family(
        r"(?:deep_gemm|dpsk::gemm)::(?:sm(?P<sm>\d{2,3})_)?(?:(?P<dtype>fp8|bf16|tf32)_)?"
        r"(?:paged_)?mqa_logits",
        library="DeepGEMM",
        operation="attention",
        tensor_cores=True,
    ),
    _family(
        r"(?:deep_gemm|dpsk::gemm)::(?:sm(?P<sm>\d{2,3})_)?(?:(?P<dtype>fp8|bf16|tf32)_)?",
        library="DeepGEMM",
        operation="gemm",
        tensor_cores=True,
    ),
    # DeepSeek's grouped (MoE) GEMMs as its traces name them (deepseek-ai/profile-data:
    # cutlass::device_kernel<dpsk::grouped_gemm::cuda::fp8_ptp128c::GemmKernel>, m_grouped_fp8_..,
    # fp8_dptp128c_acc::..): DeepGEMM's m_grouped_gemm_fp8_* before it was published, one GEMM
    # per expert; its cuda::utils:: kernels (tensor-map set-up, transposes) are no GEMM
    _family(
        r"dpsk::grouped_gemm::cuda::(?:m_grouped_)?(?P<dtype>fp8|bf16|tf32)_",
        library="DeepGEMM",
        operation="batched_gemm",
        tensor_cores=True,
    ),
    # MIOpen's assembly implicit GEMM: igemm_<fwd|bwd|wrw>_gtc[x<n>]_<layout>_<type>_..bt<tile>
    _family(
        r"^igemm_(?P<op>fwd|bwd|wrw)_gtc(?P<tc>x)?(?P<gtc>\d?)_(?:nhwc|nchw)_"
        r"(?P<dtype>fp32|fp16|bf16|int8)",
        r"_bt(?P<tile>\d+x\d+x\d+)_",
        library="MIOpen",
        algorithm="implicit_gemm",
        tensor_cores=False,
    ),
    # Composable Kernel device ops: ck::..kernel_grouped_conv_fwd_xdl_.. (often still mangled)
    _family(
        r"(?:_ZN2ck|\bck::).*?kernel_(?:grouped_)?"
        r"(?P<op>conv_fwd|conv_bwd_data|conv_bwd_weight|batched_gemm|gemm)",
        library="CK",
    ),
    # cuDNN's first convolutions, named by algorithm and without a namespace
    _family(
        r"^void (?P<algo>implicit_convolve|explicit_convolve)_(?P<code>[sdh])gemm<",
        library="cuDNN",
        operation="conv_fprop",
    ),
    _family(
        r"(?:^void |::)(?:reduce_)?(?P<op>wgrad|dgrad)(?:2d)?_(?:alg\d|engine|nchw)",
        library="cuDNN",
    ),
    _family(
        r"cudnn::winograd\w*::(?:winograd(?P<op>Forward|Wgrad))?",
        library="cuDNN",
        operation="conv",
        algorithm="winograd",
    ),
    _family(
        r"^void (?:fft[12]d_[rc]2[cr]_\d+|flip_filter|pointwise_mult_and_sum_complex)",
        library="cuDNN",
        operation="conv",
        algorithm="fft",
    ),
    # PyTorch's SDPA memory-efficient attention is xFormers' CUTLASS kernel
    _family(
        r"fmha_cutlass[FB]_(?P<dtype>f32|f16|bf16)_\w*?_sm(?P<sm>\d{2,3})",
        library="xFormers",
        operation="attention",
        algorithm="mem_efficient",
    ),
    # TensorRT-LLM's generated kernels (used through FlashInfer): bmm_<C>_<A><B>_<acc>_t<tile>
    _family(
        r"^bmm_[A-Za-z0-9]+?_(?:Mx)?(?P<dtype>E2m1|E4m3|E5m2|Bfloat16|Fp16|Fp32)",
        r"_t(?P<tile>\d+x\d+x\d+)u\d",
        r"_sm(?P<sm>\d{2,3})",
        library="TensorRT-LLM",
        operation="batched_gemm",
        tensor_cores=True,
    ),
    _family(
        r"^fmha(?:Sm(?P<sm>\d{2,3})\w?)?Kernel_Qkv(?P<dtype>E4m3|E2m1|Bfloat16|Fp16)",
        library="TensorRT-LLM",
        operation="attention",
    ),
    # OpenAI's triton_kernels (MoE): _matmul_ogs_<flags>_<x>x<w>x<y>_<block sizes>
    _family(
        r"^_matmul_ogs_[A-Z]+_(?P<dtype>bf16|fp16|fp8|f32|mxfp4)x",
        r"_(?P<tile>\d+x\d+x\d+)x\d+",
        library="Triton",
        operation="gemm",
    ),
    _family(
        r"(?:^|::|\s)flash_(?:fwd|bwd)\w*?_kernel",
        library="FlashAttention",
        operation="attention",
        algorithm="flash",
    ),
    # FlashAttention-3 (hopper/flash_bwd_kernel_sm90.h: flash::FlashAttnBwdSm90, its
    # FlashAttnFwdSm90 and the backward's pre/post-processing kernels) inside CUTLASS's
    # device_kernel<...>; flash_attn/flash_attn_triton.py: _bwd_kernel, _bwd_preprocess_do_o_dot
    # (hopper/utils.h wraps each in flash::enable_sm90_or_later, enable_sm80_to_sm89, and in
    # forks for Blackwell enable_sm120_or_later; its first release named the forward
    # flash::compute_attn_ws, as DeepSeek's traces still do)
    _family(
        r"\bflash::(?:FlashAttn|flash_|Flash|compute_attn|enable_sm\d+_)"
        r"|^_bwd_(?:kernel|preprocess_do_o_dot)$",
        library="FlashAttention",
        operation="attention",
        algorithm="flash",
    ),
    # SageAttention (github.com/thu-ml/SageAttention): csrc/qattn/*.cuh, qk_int_sv_f8_attn_kernel
    # (SM89/SM120) and qk_int8_sv_f8_accum_f32_attn* (SM90); Q, K quantised to int8, P, V to fp8
    _family(
        r"(?:^|::|\s)qk_int8?_sv_f(?:8|16)\w*attn",
        library="SageAttention",
        operation="attention",
        tensor_cores=True,
    ),
    # cuDNN's runtime-compiled SDPA (its frontend's flash attention):
    # cudnn_generated_fort_native_sdpa_sm90_flash_bprop_wgmma_f16_knob_..: fprop/bprop
    _family(
        r"^cudnn_generated_\w*?_sdpa_sm(?P<sm>\d{2,3})_flash_(?:fprop|bprop)_(?:\w+?_)?"
        r"(?P<dtype>f16|bf16|fp8|e4m3)_",
        library="cuDNN",
        operation="attention",
        algorithm="flash",
        tensor_cores=True,
    ),
    # ROCm's runtime (ROCclr) blit kernels, rocclr/device/blitcl.cpp (ROCm/clr): the copies and
    # fills of hipMemcpy/hipMemset done by shaders instead of the DMA engines; ``.kd`` is the
    # kernel descriptor's suffix
    _family(r"^__amd_rocclr_fill\w*", library="ROCclr", operation="memset"),
    _family(r"^__amd_rocclr_copy\w*", library="ROCclr", operation="copy"),
    # torch.compile: triton_<poi|red|per|tem>_fused_<ops>_<n>; torch 2.0 named them triton__0d1d
    # (`kernel_codes.INDUCTOR_KERNEL` says how Inductor names them; `kernels` reads the ops)
    _family(r"^triton_(?P<op>poi|red|per|tem|for|spl)_", library="Inductor"),
    _family(r"^triton__\d", library="Inductor", operation="other"),
    # Meta MTIA rows: <op>-dtype_<Type>[-extraKey_<n>], and its runtime's own rows
    _family(r"^[\w:.]+?-dtype_(?P<dtype>[A-Za-z0-9]+)", library="MTIA"),
    _family(r"^dma_request$", library="MTIA", operation="copy"),
    _family(r"^event_(?:record|wait)$", library="MTIA", operation="other"),
)

#: The families that are a runtime's own transfers recorded as kernels (their operation a
#: copy or a fill, named by the family, not guessed by `OPERATION_RULES`): MTIA's DMA
#: requests, which its trace files beside the kernels, and ROCclr's blits for hipMemcpy and
#: hipMemset. They move data like a ``Memcpy``/``Memset`` record does; an SM kernel that
#: copies (``copy_kernel``, ``CatArray``, a transpose) is computation.
TRANSFER_FAMILIES: Final = tuple(f for f in FAMILIES if f.operation in ("copy", "memset"))

#: Ordered: the first match names the library. cuDNN and cuBLAS embed CUTLASS kernels and
#: say so in the namespace (``cutlass_cudnn_infer::``) or the suffix (``_cublas``).
LIBRARY_RULES: Final = _rules(
    (r"rccl", "RCCL"),
    (r"nccl", "NCCL"),
    (r"cudnn|cask_", "cuDNN"),
    (r"cublasLt|^void epilogue::impl::", "cuBLASLt"),
    (r"cublas|^nvjet_|^void (?:sgemm_largek|magma_\w*gemm)", "cuBLAS"),
    # xmma without a library suffix: cuBLAS ships its GEMMs, cuDNN its convolutions
    (r"^sm\d+_xmma_gemm_", "cuBLAS"),
    (r"^sm\d+_xmma_(?:fprop|dgrad|wgrad)_", "cuDNN"),
    (r"cufft|^void (?:regular|vector|composite_\w+)_fft", "cuFFT"),
    (r"tensorrt_llm|moe::dev::", "TensorRT-LLM"),
    (r"transformer_engine", "TransformerEngine"),
    (r"flashinfer::", "FlashInfer"),
    (r"vllm::|paged_attention_ll4mi|kernel_unified_attention|^reduce_segments$", "vLLM"),
    (r"^_copy_page_indices_kernel$", "vLLM"),
    (r"sgl_hip|sgl_kernel|resolve_future_token_ids|store_kvcache|clamp_position_kernel", "SGLang"),
    (r"create_flashinfer_kv_indices_triton", "SGLang"),
    (r"\baiter::|_ZN5aiter", "AITER"),
    (r"^(?:void )?(?:deep_ep|dpsk::ep)::", "DeepEP"),  # its local kernels (layout, buffer resets)
    (r"(?:deep_gemm|dpsk::(?:grouped_)?gemm)::", "DeepGEMM"),  # its utilities (tensor maps, ..)
    (r"\bck(?:_tile)?::|_ZN2ck|_ZN7ck_tile", "CK"),
    (r"^Cijk_.*UserArgs", "hipBLASLt"),
    (r"^Cijk_", "Tensile"),
    (r"rocblas", "rocBLAS"),
    (r"^MIOpen|^igemm_|^SubTensorOp|^batched_transpose_|^naive_conv|^Op[1-5]dTensor", "MIOpen"),
    (r"rocprim::|hipcub::", "rocPRIM"),
    (r"cutlass::Kernel|cutlass_\d+_|cutlass3x_|^void cutlass::device_kernel<cutlass::", "CUTLASS"),
    # PyTorch vendors CUB as at_cuda_detail::cub; thrust:: in a template argument is no CUB kernel
    (r"^void (?:at_cuda_detail::)?cub::|^void thrust::", "Thrust/CUB"),
    (r"dnnl|onednn|^(?:gen9|gen12lp|xe_lp|xe_hpg?|xe_hpc)_", "oneDNN"),
    (r"fbgemm|split_embedding_|bounds_check_indices|linearize_index_kernel", "FBGEMM"),
    (r"permute_pooled_embs|recat_copy_async", "FBGEMM"),
    (r"^void multi_tensor_apply_kernel<TensorListMetadata<\d+>, \w*Functor", "Apex"),
    # triton_kernels' MoE routing and top-k, and AOTriton's attention: hand-written Triton
    (
        r"^_(?:topk_forward|sum_bitmatrix_rows|combined_routing_\w+|finalize_matmul_scatter\w*)$",
        "Triton",
    ),
    (r"^attn_fwd$", "Triton"),
    # the Triton tutorial's fused attention (python/tutorials/06-fused-attention.py), copied
    # widely: _attn_fwd, _attn_bwd, _attn_bwd_dkdv, _attn_bwd_dq, _attn_bwd_preprocess
    (r"^_attn_(?:fwd|bwd)\w*$", "Triton"),
    (r"at::native::|at::cuda::|\bat::\w|cunn_|(?:^void |::)softmax_warp_", "PyTorch"),
    (r"multimem_all_reduce|elementwise_kernel_with_index|^void compute_cuda_kernel<", "PyTorch"),
)

_NVIDIA = (
    "cuBLAS cuBLASLt cuDNN CUTLASS cuFFT NCCL Thrust/CUB TensorRT-LLM TransformerEngine"
    " DeepEP DeepGEMM NVSHMEM pplx-kernels SageAttention"
)
_AMD = "CK Tensile hipBLASLt rocBLAS MIOpen RCCL rocPRIM AITER ROCclr"
LIBRARY_VENDOR: Final[dict[str, str]] = {
    **dict.fromkeys(_NVIDIA.split(), "nvidia"),
    **dict.fromkeys(["FlashAttention", "xFormers"], "nvidia"),  # CUDA-only code
    **dict.fromkeys(_AMD.split(), "amd"),
    "oneDNN": "intel",
}
#: The vendor of portable code (PyTorch, Triton, vLLM), from the types it names.
VENDOR_RULES: Final = _rules(
    (r"__hip_|_hip\b|sgl_hip|mfma|ihipStream", "amd"),
    (r"__nv_|nvjet_", "nvidia"),
    (r"::xpu::|sycl", "intel"),
)

#: Ordered: specific operations before the words (``add``, ``reduce``) many names share.
OPERATION_RULES: Final = _rules(
    (r"spin_kernel|^event_", "other"),
    # TMA descriptors written on the device for a grouped GEMM (fill_tensormaps_kernel): set-up
    (r"(?i)tensormaps?_?kernel", "other"),
    (r"^void scal_kernel|elementwise_kernel_with_index|arange|linspace", "elementwise"),
    (r"(?i)attention|attn|fmha|flash_(?:fwd|bwd)|mha_(?:fwd|bwd)|_sdpa_", "attention"),
    (
        r"(?i)nccl|all_?reduce|all_?gather|reduce_?scatter|all_?to_?all|sendrecv|multimem",
        "communication",
    ),
    (r"(?i)rotary|rope_", "elementwise"),  # before "embedding": rotary position embedding
    (
        r"(?i)split_embedding|split_eb_|embedding_bag|embedding_(?:forward|backward|dense)",
        "embedding",
    ),
    (r"(?i)softmax", "softmax"),
    (r"(?i)layer_?norm|rms_?norm|batch_?norm|group_?norm|instance_?norm|bn_(?:fw|bw)_", "norm"),
    (r"RowwiseMoments|GammaBeta|Compute(?:Backward)?FusedParams|ComputeInternalGradients", "norm"),
    (r"(?i)wgrad|_wrw_|bwd_weight", "conv_wgrad"),
    (r"(?i)dgrad|bwd_data", "conv_dgrad"),
    (r"(?i)fprop|conv_fwd", "conv_fprop"),
    (r"(?i)conv(?!ert)|im2col|col2im|cask_cudnn", "conv"),
    (r"(?i)NLLCriterion|nll_loss|cross_?entropy|mse_|bce_|_loss|smooth_l1|kl_div", "loss"),
    (r"(?i)dropout|distribution_|philox|curand|randperm|bernoulli|multinomial", "random"),
    (r"(?i)max_?pool|avg_?pool|adaptive_\w*pool|Pooling", "pooling"),
    (
        r"(?i)gelu|silu|swiglu|relu|threshold|sigmoid|tanh|act_and_mul|hardswish|softplus",
        "activation",
    ),
    (r"(?i)finalize", "reduction"),  # MoE: the weighted sum of the experts' outputs
    (r"(?i)memset|clean_\w*buffer", "memset"),  # DeepEP's clean_low_latency_buffer zeroes
    (r"(?i)sort|radix|searchsorted|bucketize(?!_sparse)|topk|unique", "sort"),
    (r"(?i)ReduceByKey|segment_?reduce", "reduction"),  # before "scan": ReduceByKeyScanTileState
    (r"(?i)scan|cumsum|cumprod|prefix_?sum|ExclusiveSum", "scan"),
    (r"(?i)index|indices|gather|scatter|bounds_check|permute_2D|offsets_range|bucketize", "index"),
    (r"(?i)to_dense|sparse_label|token_ids|routing|^void compute_cuda_kernel", "index"),
    (r"get_dispatch_layout", "index"),  # DeepEP's count of the tokens each rank gets
    # casts to FP8/FP4 and their scales are arithmetic, even when they transpose too
    # (TransformerEngine's cast_transpose_kernel, quantize_transpose_*): before "copy"
    # (DeepSeek's per_channel_cast_and_transpose alike)
    (r"(?i)quantiz|dequant|cast_(?:and_)?transpose|fp8_quant|quant_fp8|quant_8bit", "elementwise"),
    (r"(?i)copy|CatArray|\bcat\b|transpose|nchwToNhwc|nhwcToNchw|permute|dma_", "copy"),
    (r"(?i)kv_?cache|reshape_and_cache", "copy"),
    (r"(?i)adam|adagrad|sgd|multi_tensor_apply|_foreach_|optimizer", "optimizer"),
    (r"(?i)batch_?matmul|bmm", "batched_gemm"),
    (r"(?i)(?<!fb)gemm|matmul|addmm|_mm_|\bfc\b", "gemm"),  # before gemv: gemmSN takes Gemv params
    (r"(?i)gemv", "gemv"),
    (r"(?i)fft", "fft"),
    (r"(?i)reduce|reduction|Welford|NormTwo|vector_norm|argmax|argmin|_dim_|amax", "reduction"),
    (r"(?i)_sum|\bsum|mean", "reduction"),
    (
        r"(?i)elementwise|functor|epilogue|quant|fp8|SubTensorOp|OpTensor|scalePackedTensor",
        "elementwise",
    ),
    (
        r"(?i)nan_to_num|(?<![a-z])(?:add|addcmul|addcdiv|mul|sub|div|divide|neg|abs|exp|log|log2"
        r"|logit|sqrt|rsqrt|pow|sin|cos|clamp|clip|where|fill|sign|compare|eq|ne|gt|ge|lt|le"
        r"|reciprocal|lerp|cast)(?![a-z])",
        "elementwise",
    ),
)

ALGORITHM_RULES: Final = _rules(
    (r"(?i)winograd", "winograd"),
    (
        r"(?i)implicit_?gemm|implicit_convolve|^igemm_|cutlass_\w*(?:fprop|dgrad|wgrad)",
        "implicit_gemm",
    ),
    (r"explicit_convolve", "explicit_gemm"),
    (r"splitK|SplitK|split_k(?!ernel)", "split_k"),
    (r"(?i)im2col", "im2col"),
    (r"flash_(?:fwd|bwd)|pytorch_flash|^attn_fwd$|^_attn_(?:fwd|bwd)", "flash"),
    (r"(?i)paged_?attention|PagedKv|paged_kv", "paged"),
    (r"MIOpenConv(?:Dir)?Uni|naive_conv|direct_conv", "direct"),
    (r"^void gemmSN_", "gemv"),  # cuBLAS's small-N GEMM runs on the GEMV path
)

#: Names that show tensor-core (NVIDIA) or matrix-core (AMD MFMA) instructions.
#: Case-sensitive: MIOpen's ``SubTensorOp`` is an op on tensors, not a tensor-core one.
TENSOR_CORE_RULE: Final = regex(
    r"tensorop|TensorOp(?:Multiplicand|Policy)|wmma|WMMA|xmma|mfma|MFMA|_xdl|xdlops|hmma|HMMA"
    r"|imma|gmma|warpgroup|tensor\d+x\d+x\d+|[hsi](?:884|1688|16816|8816|161616)|nvjet_|_MI\d+x\d+"
    # CUTLASS 3 / CuTe: Hopper's warpgroup MMA (GMMA), Blackwell's tcgen05 UMMA
    r"|GMMA|UMMA|Umma|tcgen05"
)

#: Device rows of profiler tables that are not kernels.
MEMCPY_ROW: Final = regex(
    r"^Memcpy (?P<dir>[A-Za-z]to[A-Za-z])(?: \((?P<src>\w+) -> (?P<dst>\w+)\))?"
)
MEMSET_ROW: Final = regex(r"^Memset\b")
