"""Kernel names decode field by field into library, operation, precision, tile, layout, arch.

GIVEN kernel names from the shared real traces (torch 1.8 to 2.9; V100, A100, H100, B200,
MI210, MI300X, MTIA) and the naming schemes' documented examples, WHEN they are decoded,
THEN every field is what the name says, and every kernel seen in the real traces decodes to
at least a library and an operation, except the few `KNOWN_UNKNOWNS`.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

import profsight
from profsight.knowledge import collectives
from profsight.knowledge import kernel_codes as codes
from profsight.knowledge import kernel_patterns as kp
from profsight.knowledge.kernels import (
    ARCHES,
    LIBRARIES,
    OPERATIONS,
    PRECISIONS,
    VENDORS,
    KernelInfo,
    decode_kernel,
    inductor_ops,
)
from profsight.knowledge.trace_schema import EventKind

from conftest import real_traces

FIELDS = (
    "vendor",
    "library",
    "operation",
    "precision",
    "tile",
    "layout",
    "arch",
    "tensor_cores",
    "algorithm",
)
_CELLS = {"-": None, "yes": True, "no": False}


def expected(spec: str) -> dict[str, str | bool | None]:
    """``"nvidia | cuBLAS | gemm | ..."``, one cell per field of `FIELDS`; ``-`` is None."""
    cells = [cell.strip() for cell in spec.split("|")]
    return {field: _CELLS.get(cell, cell) for field, cell in zip(FIELDS, cells, strict=True)}


def fields(info: KernelInfo) -> dict[str, str | bool | None]:
    return {field: getattr(info, field) for field in FIELDS}


#: Real names, each copied from a trace under ../shared/data/real/traces.
#: name: vendor | library | operation | precision | tile | layout | arch | tensor cores | algorithm
REAL_NAMES = {
    # NVIDIA cuBLAS: <arch>_<type>gemm_<tile>_<layout>, its helper kernels, xmma, nvjet
    "volta_sgemm_128x64_nn": "nvidia | cuBLAS | gemm | fp32 | 128x64 | nn | volta | no | -",
    "volta_sgemm_64x64_tt": "nvidia | cuBLAS | gemm | fp32 | 64x64 | tt | volta | no | -",
    "ampere_sgemm_32x32_sliced1x4_tn": (
        "nvidia | cuBLAS | gemm | fp32 | 32x32 | tn | ampere | no | -"
    ),
    "ampere_gcgemm_64x64_nt": "nvidia | cuBLAS | gemm | fp32 | 64x64 | nt | ampere | no | -",
    "volta_cgemm_32x32_tn": "nvidia | cuBLAS | gemm | fp32 | 32x32 | tn | volta | no | -",
    (
        "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x64x64_warpgroupsize1x1x1_execut"
        "e_segment_k_off_kernel__5x_cublas"
    ): "nvidia | cuBLAS | gemm | bf16 | 128x64x64 | tn | hopper | yes | -",
    "nvjet_tst_144x128_64x6_2x1_v_bz_bias_TNN": (
        "nvidia | cuBLAS | gemm | bf16 | 144x128_64x6 | tn | - | yes | -"
    ),
    "nvjet_tst_192x8_64x8_4x1_v_bz_TNT": (
        "nvidia | cuBLAS | gemm | bf16 | 192x8_64x8 | tn | - | yes | -"
    ),
    (
        "void scal_kernel<float, float, 1, false, 6, 5, 5, 3>(cublasTransposeParams<float>, "
        "float const*, float*, float const*)"
    ): "nvidia | cuBLAS | elementwise | fp32 | - | - | - | - | -",
    (
        "void splitKreduce_kernel<float, float, float>(cublasSplitKParams<float>, float "
        "const*, float const*, float*, float const*, float const*)"
    ): "nvidia | cuBLAS | reduction | fp32 | - | - | - | - | split_k",
    (
        "void gemmSN_NN_kernel<float, 256, 4, 2, 8, 4, 4, false, "
        "cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float> "
        ">(cublasGemmSmallNParams<cublasGemvTensorStridedBatched<float const>, "
        "cublasGemvTensorStridedBatched<float>, float>)"
    ): "nvidia | cuBLAS | gemm | fp32 | - | - | - | - | gemv",
    (
        "void epilogue::impl::globalKernel<float, float, float, true, true>(int, int, long, "
        "float*, cublasLtEpilogue_t, int, float*, long, void*, long, long, long, float*, "
        "long, int*)"
    ): "nvidia | cuBLASLt | elementwise | fp32 | - | - | - | - | -",
    (
        "void cublasLt::splitKreduce_kernel<32, 16, int, float, float, float, float, true, "
        "false, false>(cublasLt::cublasSplitKParams<float>, float const*, float const*, "
        "float*, float const*, float const*, float const*, float const*, float*, void*, "
        "long, float*, int*)"
    ): "nvidia | cuBLASLt | reduction | fp32 | - | - | - | - | split_k",
    # NVIDIA cuDNN: precompiled, xmma, CUTLASS inside cuDNN, engines, Winograd, FFT, helpers
    "volta_scudnn_128x64_relu_interior_nn_v1": (
        "nvidia | cuDNN | conv | fp32 | 128x64 | nn | volta | no | -"
    ),
    "volta_scudnn_128x32_sliced1x4_ldg4_relu_exp_medium_nhwc_tn_v1": (
        "nvidia | cuDNN | conv | fp32 | 128x32 | tn | volta | no | -"
    ),
    "cudnn_infer_volta_scudnn_winograd_128x128_ldg1_ldg4_relu_tile148t_nt_v1": (
        "nvidia | cuDNN | conv | fp32 | 128x128 | nt | volta | no | winograd"
    ),
    "cudnn_train_volta_scudnn_128x128_stridedB_splitK_interior_nn_v1": (
        "nvidia | cuDNN | conv | fp32 | 128x128 | nn | volta | no | split_k"
    ),
    "cudnn_infer_volta_scudnn_128x64_3dconv_fprop_medium_nn_v1": (
        "nvidia | cuDNN | conv_fprop | fp32 | 128x64 | nn | volta | no | -"
    ),
    "cudnn_ampere_scudnn_128x64_relu_xregs_large_nn_v1": (
        "nvidia | cuDNN | conv | fp32 | 128x64 | nn | ampere | no | -"
    ),
    (
        "sm80_xmma_fprop_implicit_gemm_tf32f32_tf32f32_f32_nhwckrsc_nhwc_tilesize64x128x32_st"
        "age5_warpsize2x2x1_g1_tensor16x8x8_execute_kernel_cudnn_infer"
    ): "nvidia | cuDNN | conv_fprop | tf32 | 64x128x32 | - | ampere | yes | implicit_gemm",
    (
        "sm80_xmma_dgrad_implicit_gemm_tf32f32_tf32f32_f32_nhwckrsc_nhwc_tilesize128x128x16_s"
        "tage4_warpsize2x2x1_g1_tensor16x8x8_execute_kernel_cudnn_infer"
    ): "nvidia | cuDNN | conv_dgrad | tf32 | 128x128x16 | - | ampere | yes | implicit_gemm",
    (
        "sm80_xmma_wgrad_implicit_gemm_indexed_tf32f32_tf32f32_f32_nhwckrsc_nhwc_tilesize128x"
        "128x16_stage4_warpsize2x2x1_g1_tensor16x8x8_execute_split_k_kernel_cudnn_train"
    ): "nvidia | cuDNN | conv_wgrad | tf32 | 128x128x16 | - | ampere | yes | implicit_gemm",
    (
        "void cutlass_cudnn_infer::Kernel<cutlass_tensorop_s1688dgrad_optimized_tf32_64x128_3"
        "2x3_nhwc_align4>(cutlass_tensorop_s1688dgrad_optimized_tf32_64x128_32x3_nhwc_align4:"
        ":Params)"
    ): "nvidia | cuDNN | conv_dgrad | tf32 | 64x128_32x3 | - | - | yes | implicit_gemm",
    (
        "void cutlass__5x_cudnn::Kernel<cutlass_tensorop_bf16_s16816fprop_optimized_bf16_256x"
        "64_32x4_nhwc_align8>(cutlass_tensorop_bf16_s16816fprop_optimized_bf16_256x64_32x4_nh"
        "wc_align8::Params)"
    ): "nvidia | cuDNN | conv_fprop | bf16 | 256x64_32x4 | - | - | yes | implicit_gemm",
    (
        "void cutlass_cudnn_train::Kernel<cutlass_tensorop_s1688wgrad_optimized_tf32_256x64_1"
        "6x4_nhwc_align4>(cutlass_tensorop_s1688wgrad_optimized_tf32_256x64_16x4_nhwc_align4:"
        ":Params)"
    ): "nvidia | cuDNN | conv_wgrad | tf32 | 256x64_16x4 | - | - | yes | implicit_gemm",
    (
        "void cudnn::cnn::wgrad_alg0_engine<float, 128, 6, 8, 3, 3, 5, false, 512>(int, int, "
        "int, float const*, int, float*, float const*, kernel_grad_params, unsigned long "
        "long, int, float, int, int, int, int)"
    ): "nvidia | cuDNN | conv_wgrad | fp32 | - | - | - | - | -",
    (
        "void cudnn::bn_fw_tr_1C11_singleread<float, 512, true, 1, 2, "
        "0>(cudnn::bn_fw_tr_1C11_args<float>)"
    ): "nvidia | cuDNN | norm | fp32 | - | - | - | - | -",
    (
        "void cudnn::winograd_nonfused::winogradForwardData4x4<float, "
        "float>(cudnn::winograd_nonfused::WinogradDataParams<float, float>)"
    ): "nvidia | cuDNN | conv_fprop | fp32 | - | - | - | - | winograd",
    (
        "void cudnn::winograd_nonfused::winogradWgradDelta4x4<float, "
        "float>(cudnn::winograd_nonfused::WinogradDeltaParams<float, float>)"
    ): "nvidia | cuDNN | conv_wgrad | fp32 | - | - | - | - | winograd",
    (
        "void fft2d_r2c_64x64<float, true>(float2*, float const*, int, int, int, int, int, "
        "int, int, int)"
    ): "nvidia | cuDNN | conv | fp32 | - | - | - | - | fft",
    "cask_cudnn::computeOffsetsKernel(cask_cudnn::ComputeOffsetsParams)": (
        "nvidia | cuDNN | conv | - | - | - | - | - | -"
    ),
    (
        "cask_cudnn_train::computeWgradSplitKOffsetsKernel(cask_cudnn_train::ComputeSplitKOff"
        "setsParams)"
    ): "nvidia | cuDNN | conv_wgrad | - | - | - | - | - | split_k",
    "void cudnn::ops::scalePackedTensor_kernel<float, float>(long, float*, float)": (
        "nvidia | cuDNN | elementwise | fp32 | - | - | - | - | -"
    ),
    (
        "void cudnn::detail::dgrad2d_alg1_1<float, 0, 4, 6, 3, 2, 4, false, true>(int, int, "
        "int, float const*, int, float const*, int, float*, kernel_grad_params, unsigned "
        "long long, int, unsigned long long, int, float, int, int)"
    ): "nvidia | cuDNN | conv_dgrad | fp32 | - | - | - | - | -",
    # CUTLASS
    (
        "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_128x128_16x4_nn_align4>(cutlass_8"
        "0_tensorop_s1688gemm_128x128_16x4_nn_align4::Params)"
    ): "nvidia | CUTLASS | gemm | tf32 | 128x128_16x4 | nn | ampere | yes | -",
    (
        "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_256x64_16x4_tt_align4>(cutlass_80"
        "_tensorop_s1688gemm_256x64_16x4_tt_align4::Params)"
    ): "nvidia | CUTLASS | gemm | tf32 | 256x64_16x4 | tt | ampere | yes | -",
    (
        "void cutlass::Kernel2<cutlass_80_simt_sgemm_128x32_8x5_nn_align1>(cutlass_80_simt_sg"
        "emm_128x32_8x5_nn_align1::Params)"
    ): "nvidia | CUTLASS | gemm | fp32 | 128x32_8x5 | nn | ampere | no | -",
    (
        "void cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_64x6_tn_al"
        "ign8>(cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_64x6_tn_align8::Params)"
    ): "nvidia | CUTLASS | gemm | bf16 | 64x64_64x6 | tn | ampere | yes | -",
    (
        "void cutlass::Kernel<cutlass_70_wmma_tensorop_f16_s161616gemm_f16_32x32_64x2_tn_alig"
        "n8>(cutlass_70_wmma_tensorop_f16_s161616gemm_f16_32x32_64x2_tn_align8::Params)"
    ): "nvidia | CUTLASS | gemm | fp16 | 32x32_64x2 | tn | volta | yes | -",
    # PyTorch native kernels and the CUB it vendors
    (
        "void cub::DeviceScanInitKernel<cub::ScanTileState<int, true> "
        ">(cub::ScanTileState<int, true>, int)"
    ): "nvidia | Thrust/CUB | scan | - | - | - | - | - | -",
    (
        "void cub::DeviceRadixSortExclusiveSumKernel<cub::DeviceRadixSortPolicy<long, float, "
        "int>::Policy800, int>(int*)"
    ): "nvidia | Thrust/CUB | sort | fp32 | - | - | - | - | -",
    (
        "void (anonymous namespace)::softmax_warp_forward<float, float, float, 10, "
        "true>(float*, float const*, int, int, int)"
    ): "- | PyTorch | softmax | fp32 | - | - | - | - | -",
    (
        "void cunn_ClassNLLCriterion_updateOutput_kernel<float, float>(float*, float*, "
        "float*, long*, float*, int, int, int, int, long)"
    ): "- | PyTorch | loss | fp32 | - | - | - | - | -",
    (
        "void at::native::(anonymous namespace)::adaptive_average_pool<float>(float const*, "
        "float*, int, int, int, int, long, long, long)"
    ): "- | PyTorch | pooling | fp32 | - | - | - | - | -",
    (
        "void at::native::(anonymous namespace)::RowwiseMomentsCUDAKernel<float>(long, "
        "float, float const*, float*, float*)"
    ): "- | PyTorch | norm | fp32 | - | - | - | - | -",
    (
        "void at::native::vectorized_gather_kernel<16, long>(char*, char*, long*, int, long, "
        "long, long, long, bool)"
    ): "- | PyTorch | index | - | - | - | - | - | -",
    (
        "void at::to_dense_representation_kernel<float>(long, long, long const*, float "
        "const*, long const*, float*)"
    ): "- | PyTorch | index | fp32 | - | - | - | - | -",
    "at::cuda::(anonymous namespace)::spin_kernel(long)": (
        "- | PyTorch | other | - | - | - | - | - | -"
    ),
    "void compute_cuda_kernel<long>(long*, long*, long*, long, long)": (
        "- | PyTorch | index | - | - | - | - | - | -"
    ),
    (
        "void at::native::vectorized_elementwise_kernel<4, "
        "at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3> >(int, "
        "at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3>)"
    ): "- | PyTorch | elementwise | fp32 | - | - | - | - | -",
    (
        "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<long>, "
        "at::detail::Array<char*, 1> >(int, at::native::FillFunctor<long>, "
        "at::detail::Array<char*, 1>)"
    ): "- | PyTorch | elementwise | - | - | - | - | - | -",
    (
        "void (anonymous namespace)::multimem_all_reduce_kernel<c10::BFloat16, "
        "16>(c10::BFloat16*, unsigned long, unsigned int**, unsigned long, unsigned long)"
    ): "- | PyTorch | communication | bf16 | - | - | - | - | -",
    (
        "void at::native::(anonymous namespace)::max_pool_forward_nchw<c10::BFloat16>(int, "
        "c10::BFloat16 const*, long, long, long, int, int, int, int, int, int, int, int, "
        "int, int, c10::BFloat16*, long*)"
    ): "- | PyTorch | pooling | bf16 | - | - | - | - | -",
    (
        "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<c10::BFloat16, "
        "float>(int, float, c10::BFloat16 const*, c10::BFloat16 const*, c10::BFloat16 "
        "const*, float*, float*, c10::BFloat16*)"
    ): "- | PyTorch | norm | bf16 | - | - | - | - | -",
    (
        "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<c10::BFloat16, "
        "at::native::MeanOps<c10::BFloat16, float, float, c10::BFloat16>, unsigned int, "
        "c10::BFloat16, 4, 4> >(at::native::ReduceOp<c10::BFloat16, "
        "at::native::MeanOps<c10::BFloat16, float, float, c10::BFloat16>, unsigned int, "
        "c10::BFloat16, 4, 4>)"
    ): "- | PyTorch | reduction | bf16 | - | - | - | - | -",
    (
        "void at::native::(anonymous "
        "namespace)::multi_tensor_apply_kernel<at::native::(anonymous "
        "namespace)::TensorListMetadata<2>, at::native::(anonymous "
        "namespace)::BinaryOpListAlphaFunctor<float, 2, 2, 0>, std::plus<float>, "
        "float>(at::native::(anonymous namespace)::TensorListMetadata<2>, "
        "at::native::(anonymous namespace)::BinaryOpListAlphaFunctor<float, 2, 2, 0>, "
        "std::plus<float>, float)"
    ): "- | PyTorch | optimizer | fp32 | - | - | - | - | -",
    (
        "void at::native::(anonymous namespace)::fused_dropout_kernel_vec<float, float, "
        "unsigned int, 1, 4, bool>(at::cuda::detail::TensorInfo<float, unsigned int>, "
        "at::cuda::detail::TensorInfo<float, unsigned int>, "
        "at::cuda::detail::TensorInfo<bool, unsigned int>, unsigned int, float, "
        "at::PhiloxCudaState)"
    ): "- | PyTorch | random | fp32 | - | - | - | - | -",
    (
        "void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous "
        "namespace)::batch_norm_calc_invstd(at::Tensor const&, at::Tensor const&, "
        "double)::{lambda()#1}::operator()() const::{lambda()#2}::operator()() "
        "const::{lambda(float)#1}, std::array<char*, 2ul> >(int, at::native::(anonymous "
        "namespace)::batch_norm_calc_invstd(at::Tensor const&, at::Tensor const&, "
        "double)::{lambda()#1}::operator()() const::{lambda()#2}::operator()() "
        "const::{lambda(float)#1}, std::array<char*, 2ul>)"
    ): "- | PyTorch | norm | fp32 | - | - | - | - | -",
    # torch.compile (Inductor), hand-written Triton, FlashAttention, vLLM, SGLang
    "triton_poi_fused_add_cos_sin_0": "- | Inductor | elementwise | - | - | - | - | - | -",
    "triton_red_fused_add_mean_mul_pow_rsqrt_0": "- | Inductor | reduction | - | - | - | - | - | -",
    "triton__0d1d2d": "- | Inductor | other | - | - | - | - | - | -",
    "_matmul_ogs_NNT_bf16xbf16xmxfp4_16x128x256x1_swiglu": (
        "- | Triton | gemm | bf16 | 16x128x256 | - | - | - | -"
    ),
    "_topk_forward": "- | Triton | sort | - | - | - | - | - | -",
    "_finalize_matmul_scatter_bf16": "- | Triton | reduction | bf16 | - | - | - | - | -",
    "attn_fwd": "- | Triton | attention | - | - | - | - | - | flash",
    "kernel_unified_attention_2d": "- | vLLM | attention | - | - | - | - | - | -",
    "create_flashinfer_kv_indices_triton": "- | SGLang | index | - | - | - | - | - | -",
    (
        "void (anonymous namespace)::resolve_future_token_ids_kernel<long>(long*, long "
        "const*, unsigned long)"
    ): "- | SGLang | index | - | - | - | - | - | -",
    (
        "void vllm::reshape_and_cache_flash_kernel<__nv_bfloat16, unsigned char, "
        "(vllm::Fp8KVCacheDataType)1>(__nv_bfloat16 const*, __nv_bfloat16 const*, unsigned "
        "char*, unsigned char*, long const*, long, long, long, long, long, int, int, int, "
        "float const*, float const*)"
    ): "nvidia | vLLM | copy | bf16 | - | - | - | - | -",
    (
        "void vllm::rms_norm_kernel<c10::BFloat16, 8, 2>(c10::BFloat16*, c10::BFloat16 "
        "const*, long, long, long, long, long, c10::BFloat16 const*, float, int, int)"
    ): "- | vLLM | norm | bf16 | - | - | - | - | -",
    (
        "void pytorch_flash::flash_fwd_kernel<pytorch_flash::Flash_fwd_kernel_traits<64, "
        "128, 128, 4, false, false, cutlass::bfloat16_t, "
        "pytorch_flash::Flash_kernel_traits<64, 128, 128, 4, cutlass::bfloat16_t> >, false, "
        "false, false, false, false, true, false>(pytorch_flash::Flash_fwd_params)"
    ): "nvidia | FlashAttention | attention | bf16 | - | - | - | - | flash",
    # NCCL
    "ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)": (
        "nvidia | NCCL | communication | fp32 | - | - | - | - | allreduce_ring_ll"
    ),
    "ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)": (
        "nvidia | NCCL | communication | - | - | - | - | - | sendrecv_ring_simple"
    ),
    "ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)": (
        "nvidia | NCCL | communication | - | - | - | - | - | allgather_ring_ll"
    ),
    "ncclKernel_AllReduce": "nvidia | NCCL | communication | - | - | - | - | - | allreduce",
    # TensorRT-LLM (through FlashInfer)
    (
        "bmm_Bfloat16_MxE2m1MxE4m3_Fp32_t128x16x256u2_s3_et128x16_m128x16x32_cga1x1x1_16dp256"
        "b_rM_TN_transOut_schedP2x1x2x3_biasM_bN_tmaOpt_clmp_dynBatch_sm100f"
    ): "nvidia | TensorRT-LLM | batched_gemm | fp4 | 128x16x256 | - | blackwell | yes | -",
    "fmhaSm100aKernel_QkvE4m3OBfloat16H64PagedKvCausalP16VarSeqQ128Kv128PersistentContext": (
        "nvidia | TensorRT-LLM | attention | fp8 | - | - | blackwell | - | paged"
    ),
    (
        "void moe::dev::routing::routingIndicesHistogramKernel<moe::dev::routing::routingReno"
        "rmalize::KernelParams<__nv_bfloat16, __nv_bfloat16, 128, false, true, true> "
        ">(moe::dev::routing::routingRenormalize::KernelParams<__nv_bfloat16, __nv_bfloat16, "
        "128, false, true, true>)"
    ): "nvidia | TensorRT-LLM | index | bf16 | - | - | - | - | -",
    (
        "void tensorrt_llm::kernels::quantize_with_block_size<(tensorrt_llm::BlockScaleQuanti"
        "zationType)2, __nv_bfloat16, 32, true>(int, int, int, int, __nv_bfloat16 const*, "
        "float const*, unsigned int*, unsigned int*, flashinfer::QuantizationSFLayout)"
    ): "nvidia | TensorRT-LLM | elementwise | bf16 | - | - | - | - | -",
    # AMD: hipBLASLt, CK, MIOpen, rocPRIM, AITER, SGLang, vLLM's ROCm attention
    (
        "igemm_fwd_gtcx3_nhwc_bf16_bx0_ex1_bt128x128x32_wt32x32x8_ws1x1_wr2x2_ta1x8x2x1_1x4x1"
        "x64_tb1x8x2x1_1x4x1x64"
    ): "amd | MIOpen | conv_fprop | bf16 | 128x128x32 | - | cdna3 | yes | implicit_gemm",
    (
        "igemm_bwd_gtcx2_nhwc_bf16_bx0_ex1_bt64x64x64_wt16x16x16_ws1x1_wr2x2_ta1x8x2x1_1x8x1x"
        "32_tb1x8x1x2_1x8x1x32_mh"
    ): "amd | MIOpen | conv_dgrad | bf16 | 64x64x64 | - | cdna2 | yes | implicit_gemm",
    (
        "igemm_wrw_gtcx2_nhwc_bf16_bx0_ex1_bt64x64x64_wt32x32x8_ws1x1_wr1x1_ta1x4x1x4_1x16x1x"
        "16_tb1x4x1x4_1x16x1x16_gkgs"
    ): "amd | MIOpen | conv_wgrad | bf16 | 64x64x64 | - | cdna2 | yes | implicit_gemm",
    "MIOpenBatchNormFwdTrainSpatial": "amd | MIOpen | norm | - | - | - | - | - | -",
    "SubTensorOpWithScalar1d": "amd | MIOpen | elementwise | - | - | - | - | - | -",
    "batched_transpose_32x32_half": "amd | MIOpen | copy | - | - | - | - | - | -",
    (
        "_ZN5aiter24add_rmsnorm_quant_kernelIDF16bDF16bLi64ELi8ELb0ELb0ELb1ELi1EEEvPT0_PT_PfS"
        "4_S4_S4_diiiiiiib"
    ): "amd | AITER | norm | bf16 | - | - | - | - | -",
    (
        "_ZN7sgl_hip10activation18act_and_mul_kernelI14__hip_bfloat16TnPFT_RKS3_EXadL_Z4siluI"
        "S2_ES3_S5_EEEEvPS3_PS4_i"
    ): "amd | SGLang | activation | bf16 | - | - | - | - | -",
    (
        "Cijk_Ailk_Bjlk_SB_Bias_AS_SAV_UserArgs_MT64x16x16_MI16x16x1_SN_LDSB0_AFC1_AFEM1_AFEM"
        "1_ASEM1_CLR1_CADS0_EPS0_GRVWA1_GRVWB1_GSUAMB_ISA90a_IU1_K1_LBSPPA0_LBSPPB0_LBSPPM0_L"
        "PA0_LPB0_LPM0_LRVW1_LWPMn1_MIAV0_MIWT1_1_MO40_NTn1_NTA0_NTB0_NTC0_NTD0_NTM0_NEPBS2_N"
        "LCA1_NLCB1_ONLL1_PGR2_PLR1_PKA1_SIA3_SS1_SPO1_SRVW0_SSO0_SVW1_TLDS0_USFGROn1_VSn1_VW"
        "A1_VWB1_WSGRA0_WSGRB0_WS64_WG64_4_1"
    ): "amd | hipBLASLt | gemm | fp32 | 64x16x16 | nt | cdna2 | yes | -",
    (
        "Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT256x32x64_MI16x16x1_SN_LDSB1_AFC1_AFE"
        "M1_AFEM1_ASEM1_CLR1_CADS0_DTLA0_DTLB0_DTVA0_DTVB0_EPS0_FDSI0_GRPM1_GRVWA8_GRVWB8_GSU"
        "AMBSK_GLS0_ISA942_IU1_K1_LDSTI0_LBSPPA512_LBSPPB256_LBSPPM0_LPA16_LPB16_LPM0_LRVW8_L"
        "WPMn1_MIAV0_MIWT4_2_MO40_NTn1_NTA0_NTB0_NTC0_NTD4_NTM0_NEPBS16_NLCA1_NLCB1_ONLL1_PGR"
        "2_PLR1_PKA1_SIA3_SS1_SPO0_SRVW0_SSO0_SVW4_SK0_SKFTR0_SKXCCM0_TLDS1_ULSGRO0_USL1_UIOF"
        "GRO0_USFGROn1_VSn1_VWA4_VWB2_WSGRA0_WSGRB0_WS64_WG64_4_1"
    ): "amd | hipBLASLt | gemm | bf16 | 256x32x64 | tn | cdna3 | yes | -",
    (
        "_ZN7ck_tile6kentryILi1ENS_12Rmsnorm2dFwdINS_27Rmsnorm2dFwdPipelineOnePassINS_27Rmsno"
        "rm2dFwdPipelineProblemIDF16bDF16bfDF16bDF16bDF16bffNS_19Generic2dBlockShapeINS_8sequ"
        "enceIJLi1ELi3072EEEENS5_IJLi1ELi128EEEENS5_IJLi1ELi8EEEEEENS_18Rmsnorm2dFwdTraitsILb"
        "1ELb0ELb0ELb0ELNS_21Rmsnorm2dFusedAddEnumE0ELNS_23Rmsnorm2dFusedQuantEnumE0ELNS_22Rm"
        "snorm2dSensitiveEnumE0EEEEENS_33Rmsnorm2dFwdPipelineDefaultPolicyEEENS_17Default2DEp"
        "ilogueINS_24Default2DEpilogueProblemIfDF16bLb0ELb1ELb0EEEvEEEEJNSM_5KargsEEEEvDpT1_"
    ): "amd | CK | norm | bf16 | - | - | - | - | -",
    (
        "_ZN2ck16tensor_operation6device12_GLOBAL__N_139kernel_grouped_conv_fwd_xdl_cshuffle_"
        "v3INS_34GridwiseGemmMultiD_xdl_cshuffle_v3INS_13tensor_layout4gemm8RowMajorENS6_11Co"
        "lumnMajorENS_5TupleIJEEES7_ttftSA_tNS0_12element_wise11PassThroughESC_SC_LNS1_18Gemm"
        "SpecializationE7ELi256ELi128ELi128ELi64ELi8ELi8ELi32ELi32ELi2ELi2ENS_8SequenceIJLi8E"
        "Li32ELi1EEEENSE_IJLi1ELi0ELi2EEEESG_Li2ELi8ELi8ELb0ELi0ESF_SG_SG_Li2ELi8ELi8ELb0ELi0"
        "ELi1ELi1ENSE_IJLi1ELi32ELi1ELi8EEEENSE_IJLi8EEEELNS_26BlockGemmPipelineSchedulerE0EL"
        "NS_24BlockGemmPipelineVersionE2EttttLb0ELb0EEENS1_30ComputePtrOffsetOfStridedBatchIL"
        "i1ELi1ELi0EvEENS_16TensorDescriptorINS9_IJNS_5EmbedINS9_IJiiiiEEESQ_Lb0EEENS_11PassT"
        "hroughIiEENS_3PadIiiiLb0EEESV_ST_ST_NSP_INS9_IJiiEEESW_Lb0EEESX_ST_NS_23Merge_v2_mag"
        "ic_divisionINS9_IJiiiEEEEES10_NS_8RightPadIiiLb0EEES12_NS_7UnMergeISW_Lb0EEEST_EEENS"
        "9_IJNSE_IJLi0EEEENSE_IJLi1EEEENSE_IJLi2EEEENSE_IJLi3EEEENSE_IJLi4EEEENSE_IJLi5EEEENS"
        "E_IJLi6EEEENSE_IJLi7EEEESI_NSE_IJLi9ELi11ELi13EEEENSE_IJLi10ELi12ELi14EEEENSE_IJLi15"
        "EEEENSE_IJLi16EEEENSE_IJLi18EEEENSE_IJLi17EEEEEEENS9_IJNSE_IJLi1ELi2ELi3ELi4EEEES1B_"
        "S1C_S1D_SI_NSE_IJLi9EEEENSE_IJLi10ELi11EEEENSE_IJLi12ELi13EEEENSE_IJLi14EEEES1G_S1H_"
        "S1J_S1I_NSE_IJLi19ELi20EEEENSE_IJLi21EEEEEEENSE_IJLi19ELi21ELi20EEEElEENSO_INS9_IJS1"
        "4_S12_S12_S14_ST_EEENS9_IJS16_S17_S18_S1A_S19_EEENS9_IJNSE_IJLi1ELi2EEEES19_S1A_NSE_"
        "IJLi5ELi6EEEES1D_EEENSE_IJLi5ELi7ELi6EEEElEESA_NSO_INS9_IJSX_S12_S12_EEENS9_IJS16_S1"
        "7_S18_EEENS9_IJS1X_S19_S1A_EEENSE_IJLi3ELi4EEEElEELb1ELNS_25InMemoryDataOperationEnu"
        "mE0ELi1ELNS_10TailNumberE10EEEvNT_8ArgumentET1_T2_T3_T4_T0_S2F_"
    ): "amd | CK | conv_fprop | - | - | - | - | yes | -",
    (
        "void paged_attention_ll4mi_reduce_kernel<__hip_bfloat16, __hip_bfloat16, 128, 128, "
        "256, 3, false>(__hip_bfloat16*, float const*, float const*, __hip_bfloat16 const*, "
        "int const*, int const*, int, int, float const*)"
    ): "amd | vLLM | attention | bf16 | - | - | - | - | paged",
    (
        "void rocprim::ROCPRIM_400200_NS::detail::trampoline_kernel<rocprim::ROCPRIM_400200_N"
        "S::detail::wrapped_scan_config<rocprim::ROCPRIM_400200_NS::default_config, long>, "
        "(rocprim::ROCPRIM_400200_NS::detail::target_arch)942, "
        "rocprim::ROCPRIM_400200_NS::detail::scan_impl<(rocprim::ROCPRIM_400200_NS::detail::l"
        "ookback_scan_determinism)0, false, false, "
        "rocprim::ROCPRIM_400200_NS::default_config, long const*, long*, long, "
        "std::plus<long>, long>(void*, unsigned long&, long const*, long*, long, unsigned "
        "long, std::plus<long>, ihipStream_t*, bool)::{lambda(auto:1, "
        "auto:2)#1}::operator()<std::integral_constant<bool, false>, "
        "std::integral_constant<bool, true> >(std::integral_constant<bool, false>, "
        "std::integral_constant<bool, true>) const::{lambda(auto:1)#2}, "
        "rocprim::ROCPRIM_400200_NS::detail::default_config_selector>(rocprim::ROCPRIM_400200"
        "_NS::detail::scan_impl<(rocprim::ROCPRIM_400200_NS::detail::lookback_scan_determinis"
        "m)0, false, false, rocprim::ROCPRIM_400200_NS::default_config, long const*, long*, "
        "long, std::plus<long>, long>(void*, unsigned long&, long const*, long*, long, "
        "unsigned long, std::plus<long>, ihipStream_t*, bool)::{lambda(auto:1, "
        "auto:2)#1}::operator()<std::integral_constant<bool, false>, "
        "std::integral_constant<bool, true> >(std::integral_constant<bool, false>, "
        "std::integral_constant<bool, true>) const::{lambda(auto:1)#2})"
    ): "amd | rocPRIM | scan | - | - | - | cdna3 | - | -",
    # Meta MTIA rows
    "aten::mul.out-dtype_Float": "- | MTIA | elementwise | fp32 | - | - | - | - | -",
    "aten::cat.out-dtype_Long-extraKey_6": "- | MTIA | copy | - | - | - | - | - | -",
    "cumsum-dtype_Int": "- | MTIA | scan | - | - | - | - | - | -",
    "fbgemm::split_embedding_codegen_forward_cpu-dtype_Half": (
        "- | MTIA | embedding | fp16 | - | - | - | - | -"
    ),
    "bce_with_logits-dtype_Float": "- | MTIA | loss | fp32 | - | - | - | - | -",
    "dma_request": "- | MTIA | copy | - | - | - | - | - | -",
    "event_record": "- | MTIA | other | - | - | - | - | - | -",
    # FBGEMM
    (
        "void fbgemm_gpu::permute_2D_lengths_kernel<int>(int, int, int const*, int const*, int*)"
    ): "- | FBGEMM | index | - | - | - | - | - | -",
    (
        "void recat_copy_async_kernel<float>(long const*, long const*, float const*, float*, "
        "long, long, long)"
    ): "- | FBGEMM | copy | fp32 | - | - | - | - | -",
    # Device rows that are not kernels
    "Memcpy HtoD (Pageable -> Device)": "- | - | copy | - | - | - | - | - | HtoD pageable",
    "Memcpy DtoH (Device -> Pinned)": "- | - | copy | - | - | - | - | - | DtoH pinned",
    "Memcpy DtoD (Device -> Device)": "- | - | copy | - | - | - | - | - | DtoD",
    "Memcpy HtoD (Host -> Device)": "- | - | copy | - | - | - | - | - | HtoD",
    "Memset (Device)": "- | - | memset | - | - | - | - | - | -",
}

#: Names in the documented form of schemes the shared traces lack (Maxwell cuBLAS/cuDNN,
#: Volta/Turing MMA shapes, classic Tensile, gfx908, nvjet on sm100, xFormers): the brief's
#: examples and names written as public traces and docs show them, not copied from a file here.
DOCUMENTED_NAMES = {
    "maxwell_sgemm_32x128_nn": "nvidia | cuBLAS | gemm | fp32 | 32x128 | nn | maxwell | no | -",
    "5x_cudnn_maxwell_scudnn_winograd_128x128_ldg1_ldg4_tile148n_nt": (
        "nvidia | cuDNN | conv | fp32 | 128x128 | nt | maxwell | no | winograd"
    ),
    "volta_h884gemm_64x64_ldg8_nn": "nvidia | cuBLAS | gemm | fp16 | 64x64 | nn | volta | yes | -",
    "turing_fp16_s1688gemm_fp16_128x128_ldg8_f2f_tn": (
        "nvidia | cuBLAS | gemm | fp16 | 128x128 | tn | turing | yes | -"
    ),
    "ampere_bf16_s16816gemm_bf16_128x256_ldg8_f2f_stages_64x3_nn": (
        "nvidia | cuBLAS | gemm | bf16 | 128x256 | nn | ampere | yes | -"
    ),
    (
        "sm80_xmma_gemm_f16f16_f16f32_f32_tn_n_tilesize128x128x32_stage4_warpsize2x2x1_tensor"
        "16x8x16_kernel"
    ): "nvidia | cuBLAS | gemm | fp16 | 128x128x32 | tn | ampere | yes | -",
    (
        "sm86_xmma_dgrad_implicit_gemm_f16f16_f16f32_f16_nhwckrsc_nchw_tilesize64x64x64_stage"
        "4_warpsize2x2x1_g1_tensor16x8x16_kernel"
    ): "nvidia | cuDNN | conv_dgrad | fp16 | 64x64x64 | - | ampere | yes | implicit_gemm",
    "nvjet_sm100_tst_128x256_64x4_2x1_2cta_v_bz_coopA_NNT": (
        "nvidia | cuBLAS | gemm | bf16 | 128x256_64x4 | nn | blackwell | yes | -"
    ),
    "Cijk_Ailk_Bljk_SB_MT64x64x16_SE_K1": "amd | Tensile | gemm | fp32 | 64x64x16 | nn | - | - | -",
    "Cijk_Alik_Bljk_HHS_BH_MT128x128x32_MI32x32x8x1_SN_1LDSB0_APM1_ISA908_IU1": (
        "amd | Tensile | gemm | fp16 | 128x128x32 | tn | cdna1 | yes | -"
    ),
    (
        "void cunn_SoftMaxForward<4, float, float, float, at::native::(anonymous "
        "namespace)::SoftMaxForwardEpilogue>(float*, float const*, int)"
    ): "- | PyTorch | softmax | fp32 | - | - | - | - | -",
    "flash_fwd_kernel": "nvidia | FlashAttention | attention | - | - | - | - | - | flash",
    (
        "void ck::kernel_gemm_xdl_cshuffle_v1<ck::GridwiseGemm_k0mk1_k0nk1_mn_xdl_cshuffle_v1"
        "<ck::half_t, ck::half_t, float, ck::half_t> >()"
    ): "amd | CK | gemm | fp16 | - | - | - | yes | -",
    "MIOpenConvUni": "amd | MIOpen | conv | - | - | - | - | - | direct",
    (
        "fmha_cutlassF_f32_aligned_64x64_rf_sm80(PyTorchMemEffAttention::AttentionKernel<floa"
        "t, cutlass::arch::Sm80, true, 64, 64, 64, true, true>::Params)"
    ): "nvidia | xFormers | attention | fp32 | - | - | ampere | - | mem_efficient",
    "triton_per_fused__softmax_0": "- | Inductor | softmax | - | - | - | - | - | -",
    "triton_tem_fused_addmm_0": "- | Inductor | gemm | - | - | - | - | - | -",
    "Memcpy PtoP (Device -> Device)": "- | - | copy | - | - | - | - | - | PtoP",
}


#: Names of kernels the shared traces lack, as the libraries name them, each with its source.
#: Communication other than NCCL: each must read as ``communication`` of its own library.
COMMUNICATION_NAMES = {
    # DeepEP (deepseek-ai/DeepEP csrc/kernels/internode.cu, intranode.cu, internode_ll.cu;
    # names as SGLang's DeepEP trace analysis lists them from real H800/H20 runs)
    (
        "void deep_ep::internode::dispatch<false, 4, false, 7, 4>(int4*, float*, long*, float*, "
        "deep_ep::internode::SourceMeta*, int4 const*, float const*, long const*, float const*, "
        "int*, int*, int*, int*, int const*, int const*, int const*, int const*, int, int, int, "
        "int, int, bool const*, void*, int, int, void**, int, int, int, int)"
    ): ("DeepEP", "all_to_all"),
    (
        "void deep_ep::internode::combine<false, 4, __nv_bfloat16, 16, 4, 4, 16, 24>(int4*, "
        "float*, bool const*, int4 const*, float const*, int const*, int const*, "
        "deep_ep::internode::SourceMeta const*, int const*, int const*, int const*, int, int, "
        "int, int, void*, int, int, void**, int, int, int, int)"
    ): ("DeepEP", "all_to_all"),
    (
        "void deep_ep::internode::notify_dispatch<false, 4>(int const*, int*, int, int const*, "
        "int*, int const*, int*, int, bool const*, int, int, int, int, int, int, int, int*, "
        "int*, int*, int*, void*, void**, int**, int, int, int)"
    ): ("DeepEP", "all_to_all"),
    (
        "void deep_ep::internode::cached_notify<false>(int, int, int, int, int*, int, int, int "
        "const*, int const*, int*, void*, void**, int**, int, int, int, bool, int)"
    ): ("DeepEP", "all_to_all"),
    (
        "void deep_ep::internode_ll::dispatch<true, 3, 10, 7168>(void*, float*, int*, long*, "
        "int*, void*, int*, void*, void const*, long const*, int*, int*, int*, int, int, int, "
        "int, int, int, int, int)"
    ): ("DeepEP", "all_to_all"),
    "void deep_ep::intranode::cached_notify_combine<8>(void**, int*, int, int, int, int**, int)": (
        "DeepEP",
        "all_to_all",
    ),
    # DeepSeek's own profiles (deepseek-ai/profile-data, decode.json; DeepEP issue #348)
    "void dpsk::ep::internode::dispatch_ll": ("DeepEP", "all_to_all"),
    # NVSHMEM's on-stream collectives (NVIDIA/nvshmem src/include/internal/non_abi/
    # nvshmemi_h_to_d_coll_defs.cuh)
    "void alltoall_on_stream_kernel<float>(int, float*, float const*, unsigned long)": (
        "NVSHMEM",
        "all_to_all",
    ),
    "barrier_on_stream_kernel(int, int, int, long*, long*)": ("NVSHMEM", "barrier"),
    # MSCCL in RCCL and NCCL forks (src/include/msccl/msccl_kernel.h); the names as public
    # rocprof/nsys summaries print them. The name says no operation.
    "mscclKernel_Sum_hip_bfloat16_Simple_false": ("MSCCL", "other"),
    "mscclKernel_Sum_half_Simple_false(ncclDevComm*, mscclAlgo*, mscclWork*)": ("MSCCL", "other"),
    # MSCCL++ (microsoft/mscclpp src/ext/collectives/allreduce/allreduce_packet.cu)
    "void mscclpp::collective::allreducePacket<__nv_bfloat16>(__nv_bfloat16*)": (
        "MSCCL++",
        "all_reduce",
    ),
    # pplx-kernels (perplexityai/pplx-kernels csrc/all_to_all/internode_dispatch.cu)
    "void (anonymous namespace)::dispatchKernel<4, 8>(int*, unsigned long)": (
        "pplx-kernels",
        "all_to_all",
    ),
    # custom all-reduce: vLLM csrc/custom_all_reduce.cuh; AITER's as a public MI355X summary
    # prints it
    "aiter::cross_device_reduce_2stage<bf16,8,false>": ("AITER", "all_reduce"),
    # torch's symmetric memory (torch/csrc/distributed/c10d/symm_mem/CUDASymmetricMemoryOps.cu)
    (
        "void (anonymous namespace)::two_shot_all_reduce_kernel<c10::BFloat16, 16, 8>"
        "(c10::BFloat16**, unsigned long, c10::BFloat16*, unsigned long, unsigned int**, "
        "unsigned long, unsigned long)"
    ): ("PyTorch", "all_reduce"),
}
#: DeepEP's own local work is no communication (csrc/kernels/layout.cu, internode_ll.cu).
NOT_COMMUNICATION = {
    (
        "void deep_ep::internode::get_dispatch_layout<256, 32, 8>(long const*, int*, int*, "
        "int*, bool*, int, int, int, int)"
    ): "index",
    "void deep_ep::internode_ll::clean_low_latency_buffer<32>(int*, int, int*, int)": "memset",
    # casts to FP8 that transpose too (TransformerEngine transformer_engine/common/transpose/
    # cast_transpose.cu) are arithmetic, not copies
    (
        "void transformer_engine::detail::cast_transpose_kernel<8, false, float, __nv_fp8_e4m3, "
        "transformer_engine::fp32, transformer_engine::fp32>(float const*, __nv_fp8_e4m3*, "
        "__nv_fp8_e4m3*, float const*, float*, float*, unsigned long, unsigned long)"
    ): "elementwise",
}


@pytest.mark.parametrize(
    ("name", "library", "collective"),
    [(n, lib, op) for n, (lib, op) in COMMUNICATION_NAMES.items()],
    ids=[n[:50] for n in COMMUNICATION_NAMES],
)
def test_communication_beyond_nccl(name: str, library: str, collective: str) -> None:
    info = decode_kernel(name)
    assert (info.library, info.operation) == (library, "communication")
    # the step's communication (`step.comms`) times collectives by these kernels
    assert collectives.DEVICE_KERNEL.search(name)
    assert collectives.COMMUNICATION_NAME.search(name)
    assert collectives.backend_of(name) == library
    assert collectives.operation_of(name) == collective


@pytest.mark.parametrize(("name", "operation"), NOT_COMMUNICATION.items())
def test_local_kernels_of_communication_libraries(name: str, operation: str) -> None:
    assert decode_kernel(name).operation == operation
    assert not collectives.DEVICE_KERNEL.search(name)


#: FP8/FP4 GEMMs and attention kernels (forward and backward) of the libraries that write them.
#: name: vendor | library | operation | precision | tile | layout | arch | tensor cores | algorithm
LIBRARY_NAMES = {
    # CUTLASS 3.x block-scaled GEMMs (NVIDIA/cutlass python/cutlass_library/library.py,
    # 'bstensorop'), as torch._scaled_mm runs them on a B200 (NVFP4) and as the CUTLASS
    # profiler's kernel filter spells MXFP8 (ue8m0 scales, e4m3 elements)
    (
        "cutlass3x_sm100_bstensorop_s256x128x64gemm_block_scaled_ue4m3xf4_ue4m3xf4_f32_f16_f16_"
        "256x128x256_0_tnn_align32_o_vs16_2sm_bias_f16_relu"
    ): "nvidia | CUTLASS | gemm | fp4 | 256x128x256 | tn | blackwell | yes | -",
    (
        "cutlass3x_sm100_bstensorop_gemm_ue8m0xe4m3_ue8m0xe4m3_f32_void_bf16_128x128x128_1x1x1_0_"
        "tnt_align32_1sm"
    ): "nvidia | CUTLASS | gemm | fp8 | 128x128x128 | tn | blackwell | yes | -",
    # cuBLASLt's nvjet: q = e4m3 (an aten::_scaled_mm on H100), o = NVFP4 on B200
    "nvjet_sm90_qqtst_128x128_128x6_1x2_h_bz_ovscale_TNT": (
        "nvidia | cuBLAS | gemm | fp8 | 128x128_128x6 | tn | hopper | yes | -"
    ),
    "nvjet_sm100_ootst_128x256_128x4_2x1_2cta_v_bz_Avec16UE4M3_Bvec16UE4M3_TNT": (
        "nvidia | cuBLAS | gemm | fp4 | 128x256_128x4 | tn | blackwell | yes | -"
    ),
    # DeepGEMM (deepseek-ai/DeepGEMM deep_gemm/include/deep_gemm/fp8_gemm.cuh, impls/
    # sm100_fp8_fp4_gemm_1d1d.cuh), as SGLang's trace analysis and a B200 profile list them
    (
        "void deep_gemm::fp8_gemm_kernel<4096u, 7168u, 128u, 160u, 128u, 0u, 64u, 9u, 4u, 128u, "
        "128u, 1u, true, (deep_gemm::GemmType)1>(__nv_bfloat16*, float*, int*, unsigned int, "
        "CUtensorMap_st, CUtensorMap_st, CUtensorMap_st, CUtensorMap_st)"
    ): "nvidia | DeepGEMM | gemm | fp8 | - | - | - | yes | -",
    "void deep_gemm::sm100_fp8_fp4_gemm_1d1d_impl<(cute::UMMA::Major)0, (cute::UMMA::Major)0>": (
        "nvidia | DeepGEMM | gemm | fp8 | - | - | blackwell | yes | -"
    ),
    # attention backward: FlashAttention 2 (csrc/flash_attn/src/flash_bwd_kernel.h) as torch's
    # SDPA ships it, FlashAttention-3 (hopper/flash_bwd_kernel_sm90.h), xFormers' cutlassB,
    # cuDNN's SDPA, the Triton tutorial (python/tutorials/06-fused-attention.py) and
    # flash_attn/flash_attn_triton.py
    (
        "void pytorch_flash::flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel<pytorch_flash::Flash_"
        "bwd_kernel_traits<64, 128, 128, 8, 2, 4, 4, false, false, cutlass::bfloat16_t, "
        "pytorch_flash::Flash_kernel_traits<64, 128, 128, 8, cutlass::bfloat16_t> >, false, "
        "false, false, false, false, false, false>(pytorch_flash::Flash_bwd_params)"
    ): "nvidia | FlashAttention | attention | bf16 | - | - | - | - | flash",
    (
        "void pytorch_flash::flash_bwd_convert_dq_kernel<pytorch_flash::Flash_bwd_kernel_traits"
        "<64, 128, 128, 8, 2, 4, 4, false, false, cutlass::bfloat16_t, pytorch_flash::Flash_"
        "kernel_traits<64, 128, 128, 8, cutlass::bfloat16_t> > >(pytorch_flash::Flash_bwd_params, "
        "int)"
    ): "nvidia | FlashAttention | attention | bf16 | - | - | - | - | flash",
    (
        "void cutlass::device_kernel<flash::enable_sm90_or_later<flash::FlashAttnBwdSm90<flash::"
        "CollectiveMainloopBwdSm90<2, cute::tuple<cute::C<1>, cute::C<1>, cute::C<1> >, "
        "cute::tuple<cute::C<64>, cute::C<128>, cute::C<128> >, cutlass::bfloat16_t, float, "
        "cutlass::arch::Sm90> > > >()"
    ): "nvidia | FlashAttention | attention | bf16 | - | - | hopper | - | flash",
    (
        "fmha_cutlassB_bf16_aligned_64x64_k64_sm80(PyTorchMemEffAttention::AttentionBackwardKernel"
        "<cutlass::arch::Sm80, cutlass::bfloat16_t, true, false, false, 64, 64, 64, false>::Params)"
    ): "nvidia | xFormers | attention | bf16 | - | - | ampere | - | mem_efficient",
    "cudnn_generated_fort_native_sdpa_sm90_flash_bprop_wgmma_f16_knob_3_64x128x128_4x1x1": (
        "nvidia | cuDNN | attention | fp16 | - | - | hopper | yes | flash"
    ),
    "_attn_bwd": "- | Triton | attention | - | - | - | - | - | flash",
    "_bwd_kernel": "nvidia | FlashAttention | attention | - | - | - | - | - | flash",
    # SageAttention (thu-ml/SageAttention csrc/qattn/qk_int_sv_f8_cuda_sm89.cuh)
    "void qk_int_sv_f8_attn_kernel<128u, 64u, 32u, 64u, 128u, (DataType)1>": (
        "nvidia | SageAttention | attention | - | - | - | - | yes | -"
    ),
    # ROCm's blit kernels (ROCm/clr rocclr/device/blitcl.cpp), as rocprof names them
    "__amd_rocclr_copyBuffer.kd": "amd | ROCclr | copy | - | - | - | - | - | -",
    "__amd_rocclr_fillBufferAligned": "amd | ROCclr | memset | - | - | - | - | - | -",
}


@pytest.mark.parametrize(
    ("name", "spec"), LIBRARY_NAMES.items(), ids=[n[:60] for n in LIBRARY_NAMES]
)
def test_library_name_decodes_field_by_field(name: str, spec: str) -> None:
    assert fields(decode_kernel(name)) == expected(spec)


#: Inductor's kernel names (torch/_inductor/codegen/triton.py define_kernel, utils.py
#: get_fused_kernel_name): the fused ops, and the operation the ops give.
INDUCTOR_NAMES = {
    # from the shared traces
    "triton_poi_fused__to_copy_1": ("elementwise", ("_to_copy",)),
    "triton_red_fused__to_copy_add_mean_mul_pow_rsqrt_0": (
        "reduction",
        ("_to_copy", "add", "mean", "mul", "pow", "rsqrt"),
    ),
    (
        "triton_poi_fused_add_all_reduce_bitwise_and_bitwise_or_embedding_ge_lt_masked_fill_mul_"
        "sub_0"
    ): (
        "elementwise",
        (
            *("add", "all_reduce", "bitwise_and", "bitwise_or", "embedding", "ge", "lt"),
            *("masked_fill", "mul", "sub"),
        ),
    ),
    "triton_poi_fused_constant_pad_nd_moe_forward_0": (
        "elementwise",
        ("constant_pad_nd", "moe_forward"),
    ),
    "triton_poi_fused_0": ("elementwise", ()),
    # recorded by tests/test_kernels.py's compile test below, and the brief's examples
    "triton_poi_fused_add_mul_native_layer_norm_0": (
        "norm",
        ("add", "mul", "native_layer_norm"),
    ),
    "triton_red_fused__log_softmax_1": ("softmax", ("_log_softmax",)),
    "triton_per_fused__softmax_0": ("softmax", ("_softmax",)),
    "triton_tem_fused_mm_0": ("gemm", ("mm",)),
    "triton_tem_fused_addmm_relu_0": ("gemm", ("addmm", "relu")),
    "triton_tem_fused_bmm_3": ("batched_gemm", ("bmm",)),
    "triton_tem_fused_convolution_1": ("conv", ("convolution",)),
    # a pointwise kernel named convolution is the bias add peeled off cuDNN's convolution
    "triton_poi_fused_convolution_relu_2": ("elementwise", ("convolution", "relu")),
    "triton_red_fused_convolution_backward_3": ("reduction", ("convolution_backward",)),
    "triton_per_fused_native_layer_norm_native_layer_norm_backward_4": (
        "norm",
        ("native_layer_norm", "native_layer_norm_backward"),
    ),
    # a printed table cut it: the cut word is dropped
    "triton_red_fused__log_softmax__log_softmax_backward_da...": ("softmax", ("_log_softmax",)),
}


@pytest.mark.parametrize(("name", "decoded"), INDUCTOR_NAMES.items())
def test_inductor_kernels_name_their_fused_ops(
    name: str, decoded: tuple[str, tuple[str, ...]]
) -> None:
    info = decode_kernel(name)
    assert (info.library, info.operation, info.fused_ops) == ("Inductor", *decoded)
    assert inductor_ops(name) == decoded[1]


@pytest.mark.parametrize(("name", "spec"), REAL_NAMES.items(), ids=[n[:60] for n in REAL_NAMES])
def test_real_name_decodes_field_by_field(name: str, spec: str) -> None:
    assert fields(decode_kernel(name)) == expected(spec)


@pytest.mark.parametrize(
    ("name", "spec"), DOCUMENTED_NAMES.items(), ids=[n[:60] for n in DOCUMENTED_NAMES]
)
def test_documented_name_decodes_field_by_field(name: str, spec: str) -> None:
    assert fields(decode_kernel(name)) == expected(spec)


def test_every_real_name_is_from_the_shared_traces(real_kernel_names: dict[str, set[int]]) -> None:
    assert sorted(set(REAL_NAMES) - set(real_kernel_names)) == []


@pytest.mark.parametrize(
    ("name", "label"),
    [
        ("maxwell_sgemm_32x128_nn", "cuBLAS FP32 GEMM, tile 32x128, NN, Maxwell, no tensor cores"),
        (
            "5x_cudnn_maxwell_scudnn_winograd_128x128_ldg1_ldg4_tile148n_nt",
            "cuDNN FP32 convolution, Winograd, tile 128x128, NT, Maxwell, no tensor cores",
        ),
        (
            "igemm_wrw_gtcx3_nhwc_bf16_bx0_ex1_bt64x64x64_wt32x32x8_ws1x1_wr1x1_ta1x4x1x4_1x16x1x16"
            "_tb1x4x1x4_1x16x1x16_gkgs",
            "MIOpen BF16 convolution weight gradient, implicit GEMM, tile 64x64x64, CDNA3,"
            " tensor cores",
        ),
        (
            "ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)",
            "NCCL FP32 communication, allreduce ring ll",
        ),
        ("Memcpy HtoD (Pageable -> Device)", "copy, HtoD pageable"),
        ("triton_poi_fused__to_copy_1", "Inductor elementwise, fusing _to_copy"),
        (
            "triton_poi_fused_add_mul_native_layer_norm_0",
            "Inductor normalization, fusing add, mul, native_layer_norm",
        ),
        (
            "void deep_ep::internode_ll::combine<3, 10, 7168, 9>(void*, void*, int*, void*, "
            "void const*, long const*, float const*, int const*, long const*, int*, int, int*, "
            "int, int, int, int, int, int, int, int, bool)",
            # its parameters are packed buffers and the experts' weights (float const*): no
            # template argument names the payload's type, so no precision
            "DeepEP communication",
        ),
        ("_copy_page_indices_kernel", "vLLM indexing"),
        ("Kernel", "Kernel"),  # nothing decoded: the name itself
    ],
)
def test_label(name: str, label: str) -> None:
    assert decode_kernel(name).label == label


@pytest.mark.parametrize(
    ("name", "spec"),
    [
        # torch's table cuts names to 55 characters and appends "..."
        (
            "void at::native::vectorized_elementwise_kernel<4, at...",
            "- | PyTorch | elementwise | - | - | - | - | - | -",
        ),
        (
            "void at::native::elementwise_kernel<128, 2, at::nati...",
            "- | PyTorch | elementwise | - | - | - | - | - | -",
        ),
        (
            "triton_poi_fused_add_gelu_native_dropout_0",
            "- | Inductor | elementwise | - | - | - | - | - | -",
        ),
        ("Memcpy DtoH (Device -> Pinned)", "- | - | copy | - | - | - | - | - | DtoH pinned"),
    ],
)
def test_names_from_printed_tables(name: str, spec: str) -> None:
    assert fields(decode_kernel(name)) == expected(spec)


def test_unknown_name_decodes_to_nothing() -> None:
    assert fields(decode_kernel("my_custom_kernel")) == expected(
        "- | - | - | - | - | - | - | - | -"
    )


#: Real kernel names that decode to less than a library and an operation, and why.
KNOWN_UNKNOWNS = {
    # the placeholder name of the kineto docs' hand-written example trace
    "Kernel",
    # MTIA firmware rows of the inference trace: generic words, no library or op in them
    "merge",
    "remote",
    "pe_exe",
    # an SGLang trace, but the kernel has no namespace: vLLM and SGLang both ship one
    "void rotary_embedding_kernel<c10::BFloat16, true>(long const*, c10::BFloat16*, "
    "c10::BFloat16*, c10::BFloat16 const*, int, long, long, long, int, int, int)",
}
_NOT_TRACES = {"benchmark_simple_add_et.json.gz", "memory_timeline.raw.gz"}
_DEVICE_KINDS = (EventKind.KERNEL, EventKind.MEMCPY, EventKind.MEMSET)


@pytest.fixture(scope="module")
def real_kernel_names() -> dict[str, set[int]]:
    """Every distinct device-work name of the shared real traces, with its event kinds."""
    names: dict[str, set[int]] = {}
    for path in real_traces():
        if path.name not in _NOT_TRACES:
            _collect(path, names)
    return names


def _collect(path: Path, names: dict[str, set[int]]) -> None:
    events = profsight.load(path).events
    for kind in _DEVICE_KINDS:
        for index in np.unique(events.name[events.kind == kind]):
            names.setdefault(events.strings[int(index)], set()).add(int(kind))


def _decoded(name: str, kinds: set[int]) -> bool:
    info = decode_kernel(name)
    if kinds <= {EventKind.MEMCPY, EventKind.MEMSET}:
        return info.operation in ("copy", "memset")  # the driver's work: no library
    return info.operation is not None and info.library is not None


def test_every_real_kernel_decodes(real_kernel_names: dict[str, set[int]]) -> None:
    assert len(real_kernel_names) > 800
    undecoded = {n for n, kinds in real_kernel_names.items() if not _decoded(n, kinds)}
    assert sorted(undecoded - KNOWN_UNKNOWNS) == []
    # the list stays honest: each entry is still seen, and still undecoded
    assert undecoded == KNOWN_UNKNOWNS


def test_pattern_tables_stay_within_the_closed_vocabularies() -> None:
    libraries = {f.library for f in kp.FAMILIES} | {v for _, v in kp.LIBRARY_RULES}
    operations = {f.operation for f in kp.FAMILIES} | {v for _, v in kp.OPERATION_RULES}
    precisions = {*codes.DTYPE_WORDS.values(), *codes.CODE_PRECISION.values()}
    arches = {*codes.SM_ARCH.values(), *codes.AMD_ISA_ARCH.values(), *codes.GTC_ARCH.values()}
    assert libraries - {None} <= set(LIBRARIES)
    assert set(kp.LIBRARY_VENDOR) <= set(LIBRARIES)
    assert set(kp.LIBRARY_VENDOR.values()) | {v for _, v in kp.VENDOR_RULES} <= set(VENDORS)
    assert operations - {None} | set(codes.OP_WORDS.values()) <= set(OPERATIONS)
    assert precisions == set(PRECISIONS)
    assert arches | set(codes.ARCH_WORDS.values()) <= set(ARCHES)


_TILE = re.compile(r"^\d+x\d+(?:x\d+)?(?:_\d+x\d+)?$")


def test_real_kernels_decode_to_the_closed_vocabularies(
    real_kernel_names: dict[str, set[int]],
) -> None:
    closed = {
        "vendor": VENDORS,
        "library": LIBRARIES,
        "operation": OPERATIONS,
        "precision": PRECISIONS,
        "arch": ARCHES,
        "layout": ("nn", "nt", "tn", "tt"),
    }
    for name in real_kernel_names:
        info = decode_kernel(name)
        for field, allowed in closed.items():
            value = getattr(info, field)
            assert value is None or value in allowed, (name, field, value)
        assert info.tile is None or _TILE.match(info.tile), (name, info.tile)
        assert info.tile is None or info.tile in name, (name, info.tile)
