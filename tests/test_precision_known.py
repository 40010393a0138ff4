"""Precision known: an FP8 run's kernels say FP8 (issue 36, "Precision known").

GIVEN real profiles by others whose matrix math already runs in FP8 or FP4: DeepSeek's EP64
training trace on H800s (DeepGEMM's grouped FP8 GEMMs as ``dpsk::grouped_gemm::...fp8_...``,
DeepEP's dispatch and combine), an MXFP8 nanoGPT's printed tables on an RTX 5090 (CUTLASS's
block-scaled ``cutlass3x_sm120_bstensorop_...`` GEMMs and FlashAttention-3's MXFP8 kernels, cut
at 55 characters), and TraceLens's B200 trace (TensorRT-LLM's MXFP4 MoE GEMMs),
WHEN profsight decodes their kernel names and explains them,
THEN the GEMMs carry their precision, DeepEP's kernels are communication with no compute
precision, no FP8 run is told to try FP8 or mixed precision, and an FP4 GEMM on a B200 is held
to the FP4 peak, not the FP32 one.
"""

from __future__ import annotations

import numpy as np

import profsight
from profsight.knowledge.hardware import accelerator
from profsight.knowledge.kernels import decode_kernel, matrix_precision
from profsight.knowledge.trace_schema import EventKind
from profsight.loaders import load

from conftest import DATA, SHARED_REAL

DEEPSEEK = DATA / "gpu_unseen/deepseek-ai__profile-data__1.json.gz"
NANOGPT = DATA / "precision/chenwg2000__nanogpt-fp8-mxfp8__profile_output.txt"
B200 = SHARED_REAL / "traces/tracelens/b200/eager_trace.json.gz"


def _kernel_times(path: str) -> dict[str, float]:
    """Each kernel name of a trace, with its device time (µs)."""
    ev = load(path).events
    kernels = np.flatnonzero(ev.kind == EventKind.KERNEL)
    times: dict[str, float] = {}
    for i in kernels.tolist():
        name = ev.strings[ev.name[i]]
        times[name] = times.get(name, 0.0) + float(ev.dur[i]) / 1000.0
    return times


def test_deepseeks_grouped_gemms_are_fp8_and_deepep_is_communication() -> None:
    times = _kernel_times(str(DEEPSEEK))
    gemms = [n for n in times if "dpsk::grouped_gemm::cuda::" in n and "GemmKernel" in n]
    assert len(gemms) == 3  # fp8_dptp128c_acc, m_grouped_fp8_ptp128c, fp8_ptp128c
    for name in gemms:
        k = decode_kernel(name)
        assert (k.library, k.operation, k.precision, k.tensor_cores) == (
            "DeepGEMM",
            "batched_gemm",
            "fp8",
            True,
        )
    # its tensor-map set-up is no GEMM
    (setup,) = [n for n in times if "fill_tensormaps_kernel" in n]
    assert decode_kernel(setup).operation == "other"
    # DeepEP moves packed bytes (int4*) and their float scales: no FP32 compute
    dispatch = [n for n in times if "dpsk::ep::internode::dispatch<" in n]
    assert dispatch and all(
        (decode_kernel(n).operation, decode_kernel(n).precision) == ("communication", None)
        for n in dispatch
    )
    (combine,) = [n for n in times if "dpsk::ep::internode::combine<" in n]
    assert decode_kernel(combine).precision == "bf16"  # its template argument names the data
    (cast_back,) = [n for n in times if "cast_back_impl<__nv_fp8x2_e4m3>" in n]
    assert decode_kernel(cast_back).precision == "fp8"
    # the run's matrix math is FP8 (74.5 ms of GEMMs against 21 ms of BF16 attention): its
    # ceiling on an H800 is the FP8 peak
    assert matrix_precision(times.items()) == "fp8"
    device = accelerator(load(str(DEEPSEEK)).meta.devices[0])
    assert device is not None and device.peak("fp8").tflops == 1978.9


def test_deepseeks_fp8_run_is_not_told_to_try_fp8() -> None:
    report = profsight.explain(str(DEEPSEEK))
    assert report.findings[0].category == "compute_matmul"
    advice = report.findings[0].recommendation
    assert advice.startswith("The matrix math already runs in FP8 on the matrix units")
    assert "autocast" not in advice and "also runs FP8" not in advice
    assert "low_precision" not in {f.category for f in report.findings}


def test_mxfp8_tables_read_as_fp8_matrix_math() -> None:
    report = profsight.explain(str(NANOGPT))
    gemm = "cutlass3x_sm120_bstensorop_s16832gemm_block_scaled_u..."
    k = decode_kernel(gemm)
    assert (k.library, k.operation, k.precision, k.tensor_cores, k.arch) == (
        "CUTLASS",
        "gemm",
        "fp8",
        True,
        "blackwell",
    )
    flash = decode_kernel("void cutlass::device_kernel<flash::enable_sm120_or_l...")
    assert (flash.library, flash.operation) == ("FlashAttention", "attention")
    # GEMMs 2.27 s and FlashAttention 1.07 s of 6.84 s of CUDA time: matrix math leads
    first = report.findings[0]
    assert first.category == "compute_matmul"
    assert first.recommendation.startswith("The matrix math already runs in FP8")
    assert "low_precision" not in {f.category for f in report.findings}


def test_an_fp4_gemm_on_a_b200_is_held_to_the_fp4_peak() -> None:
    times = _kernel_times(str(B200))
    moe = [n for n in times if n.startswith("bmm_") and "E2m1" in n]
    assert moe and all(decode_kernel(n).precision == "fp4" for n in moe)
    assert matrix_precision(times.items()) == "fp4"
    device = accelerator(load(str(B200)).meta.devices[0])
    assert device is not None and device.name == "B200"
    assert device.peak("fp4").tflops == 9000.0  # not the FP32 rate it fell back to (80)


def test_cublas_gemv_path_kernels_take_their_operands_precision() -> None:
    """cuBLAS's gemmSN/gemmk1 kernels name their compute type first (float) and the operands'
    after it: an FP16 GEMM is not FP32 matrix math."""
    path = DATA / "gpu_traces/harryjmoss__particle_transformer"
    names = _kernel_times(str(path / "single_epoch_forward_pass_batch_size_512.json.gz"))
    half = [n for n in names if "cublasGemvTensorStridedBatched<__half const>" in n]
    assert half and all(decode_kernel(n).precision == "fp16" for n in half)
    assert not any(decode_kernel(n).fp32_off_tensor_cores for n in half)
