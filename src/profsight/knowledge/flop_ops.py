"""The ops whose FLOPs profsight counts from their recorded shapes, and where each keeps
what its formula needs (the formulas are `analyses.step.flops`'). The loader keeps the
``Concrete Inputs`` (scalar arguments) of these ops only (`needs_concrete`).
"""

from __future__ import annotations

import msgspec

from profsight.lazy import regex

MATMULS = {"aten::mm": (0, 1), "aten::addmm": (1, 2), "aten::bmm": (0, 1), "aten::baddbmm": (1, 2)}
CONVOLUTIONS = ("aten::convolution", "aten::convolution_backward")


class Attention(msgspec.Struct, frozen=True):
    """Where a fused attention op holds what its FLOPs need: the query's position in
    ``Input Dims`` (key and value follow it), the layout of the three, the causal flag's
    position in ``Concrete Inputs``."""

    q_at: int
    heads_first: bool | None
    """(B, H, L, E) if True, (B, L, H, E) if False; None: the op's ``tensor_layout``
    argument, just before its causal flag, says (SageAttention: 0 is NHD, 1 is HND)."""
    causal_at: int
    """Index of ``is_causal`` in ``Concrete Inputs`` (negative: from the end)."""
    bottom_right: bool = False
    """A causal mask aligned to the bottom right corner when L != S (FlashAttention's API:
    its README, "causal=True ... aligned to the bottom right corner of the attention
    matrix"); else to the top left (``scaled_dot_product_attention``'s ``is_causal``:
    ``torch.ones(L, S).tril(diagonal=0)`` in its documentation; SageAttention's kernels,
    ``csrc/qattn/qk_int_sv_f16_cuda_sm80.cu``: ``min(kv_len, (bx + 1) * CTA_Q)``)."""
    mask_type: bool = False
    """The flag is xFormers' ``custom_mask_type``: 0 none, 1 causal from the top left, 2
    from the bottom right (``sdp::CustomMaskType``)."""
    backward: bool = False
    value_dim_of_query: bool = False
    """The value is stored in another layout (SageAttention's FP8 value is transposed and
    padded): its head dimension is the query's."""


def _torch(q_at: int, causal_at: int, backward: bool = False) -> Attention:
    return Attention(q_at, True, causal_at, backward=backward)


#: Fused attention ops and their arguments. torch's, from
#: ``aten/src/ATen/native/native_functions.yaml`` (pytorch/pytorch; torch ships it as
#: ``torchgen/packaged/ATen/native/native_functions.yaml``): ``scaled_dot_product_attention``
#: and the ``_scaled_dot_product_*_attention`` ops take (B, H, L, E); the kernels' own ops,
#: ``_flash_attention_forward`` and ``_efficient_attention_forward``, take (B, L, H, E):
#: ``_scaled_dot_product_flash_attention_cuda`` (``aten/src/ATen/native/transformers/cuda/
#: attention.cu``) calls them with ``query.transpose(1, 2)`` ("Query -> Query(Batch x
#: Q_seq_len x Num_heads x Dim_per_head)"), as the TraceLens H100 traces record:
#: ``[1, 8, 141, 64]`` outside, ``[1, 141, 8, 64]`` inside. AITER's (``aiter/ops/mha.py``,
#: ROCm/aiter; the layout as TraceLens' ``aiter__mha_fwd`` reads it, AMD-AGI/TraceLens
#: ``TraceLens/PerfModel/perf_model.py``): ``mha_fwd(q, k, v, dropout_p, softmax_scale,
#: is_causal, ...)`` with (B, L, H, E), ``mha_bwd(dout, q, k, v, out, softmax_lse,
#: dropout_p, softmax_scale, is_causal, ...)``.
ATTENTION: dict[str, Attention] = {
    "aten::scaled_dot_product_attention": _torch(0, 5),
    "aten::_scaled_dot_product_flash_attention": _torch(0, 4),
    "aten::_scaled_dot_product_flash_attention_for_cpu": _torch(0, 4),
    "aten::_scaled_dot_product_efficient_attention": _torch(0, 6),
    "aten::_scaled_dot_product_cudnn_attention": _torch(0, 6),
    "aten::_scaled_dot_product_fused_attention_overrideable": _torch(0, 5),
    "aten::_flash_attention_forward": Attention(0, False, 8, bottom_right=True),
    "aten::_efficient_attention_forward": Attention(0, False, 9, mask_type=True),
    "aten::_scaled_dot_product_flash_attention_backward": _torch(1, 11, True),
    "aten::_scaled_dot_product_flash_attention_for_cpu_backward": _torch(1, 7, True),
    "aten::_scaled_dot_product_efficient_attention_backward": _torch(1, 11, True),
    "aten::_scaled_dot_product_cudnn_attention_backward": _torch(1, 14, True),
    "aten::_scaled_dot_product_fused_attention_overrideable_backward": _torch(1, 13, True),
    "aten::_flash_attention_backward": Attention(1, False, 11, bottom_right=True, backward=True),
    "aten::_efficient_attention_backward": Attention(1, False, 14, mask_type=True, backward=True),
    "aiter::mha_fwd": Attention(0, False, 5, bottom_right=True),
    "aiter::fmha_v3_fwd": Attention(0, False, 5, bottom_right=True),
    "aiter::_flash_attn_forward": Attention(0, False, 5, bottom_right=True),
    "aiter::mha_bwd": Attention(1, False, 8, bottom_right=True, backward=True),
    "aiter::fmha_v3_bwd": Attention(1, False, 8, bottom_right=True, backward=True),
    "aiter::_flash_attn_backward": Attention(1, False, 12, bottom_right=True, backward=True),
}
#: SageAttention's kernels as torch ops (``sageattention/sm80_compile.py``, ``sm89_``,
#: ``sm90_``; thu-ml/SageAttention): ``sageattention_sm89::qk_int8_sv_f8_accum_f32_attn``
#: and kin, ``(query, key, value, output, <scales>, tensor_layout, is_causal,
#: qk_quant_gran, sm_scale, return_lse)``. Before those (sageattention < 2.2) the kernels
#: were called through pybind, no op is recorded and their FLOPs cannot be counted.
SAGE_ATTENTION = regex(r"^sageattention\w*::qk_int\d*_sv_f\d+\w*attn\w*$")
SAGE = Attention(0, None, -4, value_dim_of_query=True)
#: Backward of attention recomputes the scores and multiplies four times: 2.5x the forward
#: (FlashAttention's ``benchmarks/benchmark_flash_attention.py``, Dao-AILab).
ATTENTION_BACKWARD_FACTOR = 2.5


def formula_of(name: str) -> Attention | str | None:
    """The formula an op's FLOPs are counted with: an `Attention`, the op's name for the
    matrix multiplies and convolutions, None for every other op (copies and DMA too)."""
    if name in MATMULS or name in CONVOLUTIONS:
        return name
    if name in ATTENTION:
        return ATTENTION[name]
    return SAGE if SAGE_ATTENTION.match(name) else None


def needs_concrete(name: str) -> bool:
    """Whether the FLOPs of op `name` read its scalar arguments (a convolution's stride,
    padding and dilation; attention's causal flag and layout)."""
    formula = formula_of(name)
    return isinstance(formula, Attention) or formula in CONVOLUTIONS
