"""The op glossary: every frequent real op name is explained, and well-known ones exactly."""

from __future__ import annotations

import pytest

from profsight.knowledge import ops_table
from profsight.knowledge.ops import CATEGORIES, OpInfo, glossary, lookup_op
from profsight.knowledge.ops_table import CHAINS, GLOSSARY

from conftest import DATA

TOP_OPS = DATA / "top_ops.txt"
SECTION_MARK = "# ["


def _sections() -> dict[str, list[str]]:
    """``tests/data/top_ops.txt`` by section (``cpu_op``, ``runtime``, ``tables``)."""
    sections: dict[str, list[str]] = {}
    current: list[str] = []
    for line in TOP_OPS.read_text(encoding="utf-8").splitlines():
        if line.startswith(SECTION_MARK):
            current = sections.setdefault(line[len(SECTION_MARK) :].rstrip("]"), [])
        elif line and not line.startswith("#"):
            current.append(line)
    return sections


def test_top_ops_list_holds_the_200_most_frequent_ops_and_more() -> None:
    sections = _sections()
    assert set(sections) == {"cpu_op", "runtime", "tables"}
    assert len(sections["cpu_op"]) >= 200
    assert len(sections["cpu_op"]) == len(set(sections["cpu_op"]))
    # the ranking starts where real training profiles do
    assert sections["cpu_op"][:3] == ["aten::empty", "aten::as_strided", "aten::add_"]


def test_every_listed_name_is_explained() -> None:
    names = [name for section in _sections().values() for name in section]
    unexplained = [name for name in names if lookup_op(name) is None]
    assert unexplained == []
    for name in names:
        info = lookup_op(name)
        assert info is not None
        assert info.category in CATEGORIES, name
        assert info.meaning.strip(), name


@pytest.mark.parametrize(
    ("name", "category", "says"),
    [
        ("aten::conv2d", "convolution", ["four levels", "self time is tiny"]),
        ("aten::convolution", "convolution", ["aten::_convolution"]),
        ("aten::cudnn_convolution", "convolution", ["cuDNN", "device time"]),
        ("aten::mkldnn_convolution", "convolution", ["oneDNN", "CPU"]),
        ("aten::convolution_backward", "convolution", ["twice the forward"]),
        ("aten::addmm", "matmul", ["GEMM", "nn.Linear"]),
        ("aten::linear", "matmul", ["addmm"]),
        ("aten::batch_norm", "normalization", ["_batch_norm_impl_index"]),
        ("aten::_batch_norm_impl_index", "normalization", ["backend"]),
        ("aten::layer_norm", "normalization", ["native_layer_norm"]),
        ("aten::add.Tensor", "pointwise", ["elementwise", "skip connection"]),
        ("aten::add_", "pointwise", ["in-place", ".grad"]),
        ("aten::sqrt", "pointwise", ["Adam"]),
        ("aten::relu", "activation", ["max(x, 0)", "clamp_min"]),
        ("aten::threshold_backward", "activation", ["ReLU's gradient"]),
        ("aten::sum", "reduction", ["broadcast gradient"]),
        ("aten::_log_softmax", "softmax", ["log-softmax"]),
        ("aten::cross_entropy_loss", "loss", ["log_softmax", "nll_loss"]),
        ("aten::max_pool2d", "pooling", ["max_pool2d_with_indices"]),
        ("aten::dropout", "dropout", ["1/(1−p)", "native_dropout"]),
        ("aten::embedding", "embedding", ["index_select"]),
        ("aten::scaled_dot_product_attention", "attention", ["softmax", "backend"]),
        ("aten::nonzero", "indexing", ["synchronises"]),
        ("aten::view", "view", ["no data moves"]),
        ("aten::to", "copy", ["aten::_to_copy", "device-to-host"]),
        ("aten::copy_", "copy", ["device-to-host"]),
        ("aten::empty", "allocation", ["caching allocator"]),
        ("aten::bernoulli_", "random", ["dropout"]),
        ("aten::_fused_adam_", "optimizer", ["Adam", "fused"]),
        ("aten::addcdiv_", "optimizer", ["Adam"]),
        ("aten::_foreach_add_", "optimizer", ["multi-tensor", "aten::add_"]),
        ("Optimizer.step#AdamW.step", "optimizer", ["AdamW.step", "_foreach_"]),
        ("aten::item", "sync", ["synchronisation", "loss.item()"]),
        ("aten::_local_scalar_dense", "sync", ["synchronisation", "device-to-host"]),
        ("ConvolutionBackward0", "autograd", ["differentiates aten::convolution"]),
        ("AddmmBackward0", "autograd", ["differentiates aten::addmm"]),
        ("ReluBackward1", "autograd", ["differentiates aten::relu"]),
        ("MaxPool2DWithIndicesBackward0", "autograd", ["aten::max_pool2d_with_indices"]),
        ("NllLossBackward0", "autograd", ["aten::nll_loss"]),
        ("torch::autograd::AccumulateGrad", "autograd", [".grad", "aten::detach"]),
        (
            "autograd::engine::evaluate_function: ConvolutionBackward0",
            "autograd",
            ["ConvolutionBackward0", "differentiates aten::convolution"],
        ),
        (
            "autograd::engine::evaluate_function: AddmmBackward0",
            "autograd",
            ["differentiates aten::addmm", "aten::sum"],
        ),
        (
            "autograd::engine::evaluate_function: torch::autograd::AccumulateGrad",
            "autograd",
            ["torch::autograd::AccumulateGrad"],
        ),
        ("PreBackwardFunctionBackward", "autograd", ["DeepSpeed", "parameters"]),
        ("FooBarBackward0", "autograd", ["custom torch.autograd.Function"]),
        ("torch::autograd::CppNode<SplitLookupFunction_rowwise_adagrad_Op>", "autograd", ["C++"]),
        ("cudaLaunchKernel", "runtime", ["launch overhead"]),
        ("cudaLaunchKernelExC", "runtime", ["enqueue only"]),
        ("cuLaunchKernel", "runtime", ["Triton"]),
        ("cuLaunchKernelEx", "runtime", ["enqueue only"]),
        ("hipLaunchKernel", "runtime", ["launch overhead"]),
        ("hipExtModuleLaunchKernel", "runtime", ["ROCm"]),
        ("urEnqueueKernelLaunch", "runtime", ["XPU", "cudaLaunchKernel"]),
        ("cudaGraphLaunch", "runtime", ["CUDA graph"]),
        ("cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags", "runtime", ["SM"]),
        ("cudaStreamSynchronize", "sync", ["blocks the CPU", "waiting for the GPU"]),
        ("cudaDeviceSynchronize", "sync", ["blocks the CPU"]),
        ("cudaEventSynchronize", "sync", ["blocks the CPU"]),
        ("cudaStreamWaitEvent", "sync", ["the CPU does not block"]),
        ("hipStreamSynchronize", "sync", ["counterpart of cudaStreamSynchronize"]),
        ("hipMemcpyWithStream", "sync", ["synchronisation"]),
        ("urQueueFinish", "sync", ["XPU"]),
        ("cudaMemcpyAsync", "memcpy", ["pinned", "cudaStreamSynchronize"]),
        ("cudaMemsetAsync", "memcpy", ["fill"]),
        ("cudaMalloc", "allocation", ["caching allocator"]),
        ("cudaHostAlloc", "allocation", ["pinned"]),
        ("record_param_comms", "communication", ["collective"]),
        ("nccl:all_reduce", "communication", ["NCCL", "all ranks", "enqueues"]),
        ("gloo:all_reduce", "communication", ["Gloo", "CPU threads"]),
        ("nccl:all_gather", "communication", ["every rank"]),
        ("nccl:reduce_scatter", "communication", ["shard"]),
        ("nccl:send 0->1", "communication", ["peer rank"]),
        ("c10d::allreduce_", "communication", ["c10d", "all_reduce"]),
        ("c10d::broadcast_", "communication", ["broadcast", "rank 0"]),
        ("c10d::_allgather_base_", "communication", ["all_gather"]),
        ("c10d::barrier", "communication", ["slowest rank"]),
        ("c10d::recv_", "communication", ["waiting for the sender"]),
        ("ProfilerStep#7", "profiler", ["step 7", "prof.step()"]),
        ("Activity Buffer Request", "profiler", ["profiler overhead"]),
        ("aten::stride", "other", ["metadata"]),
        ("TorchDynamo Cache Lookup", "other", ["guard"]),
        ("triton_red_fused_add_mean_mul_pow_rsqrt_0", "reduction", ["Inductor", "add, mean, mul"]),
        ("prims::where", "pointwise", ["elementwise select", "prims::"]),
    ],
)
def test_meaning(name: str, category: str, says: list[str]) -> None:
    info = lookup_op(name)
    assert info is not None
    assert info.category == category
    for words in says:
        assert words in info.meaning


def test_conv2d_is_one_call_seen_at_several_levels() -> None:
    info = lookup_op("aten::conv2d")
    assert info is not None
    assert info.chain[:3] == ("aten::convolution", "aten::_convolution", "aten::cudnn_convolution")
    assert "aten::mkldnn_convolution" in info.chain
    batch_norm = lookup_op("aten::batch_norm")
    assert batch_norm is not None
    assert batch_norm.chain[0] == "aten::_batch_norm_impl_index"


def test_chains_only_name_known_ops() -> None:
    for name, chain in CHAINS.items():
        assert name in glossary()
        assert chain and all(level in glossary() for level in chain), name


def test_variants_adapt_the_meaning_of_their_base() -> None:
    sub = lookup_op("aten::sub")
    assert sub is not None
    assert lookup_op("aten::sub.Tensor") == sub
    assert lookup_op("aten::sub_") == OpInfo("pointwise", sub.meaning + ops_table.IN_PLACE_NOTE)
    assert lookup_op("aten::sub_.Scalar") == lookup_op("aten::sub_")
    assert lookup_op("aten::sub.out") == OpInfo("pointwise", sub.meaning + ops_table.OUT_NOTE)
    assert lookup_op("prims::sub") == OpInfo("pointwise", sub.meaning + ops_table.PRIMS_NOTE)
    # torch <= 1.4 printed ATen ops without their namespace
    assert lookup_op("sub") == sub
    assert lookup_op("  aten::sub  ") == sub


def test_runtime_calls_are_explained_through_their_cuda_counterpart() -> None:
    memcpy = lookup_op("cudaMemcpyAsync")
    launch = lookup_op("cudaLaunchKernel")
    assert memcpy is not None and launch is not None
    hip = lookup_op("hipMemcpyAsync")
    assert hip == OpInfo("memcpy", f"HIP (ROCm) counterpart of cudaMemcpyAsync: {memcpy.meaning}")
    assert lookup_op("cudaLaunchKernel_ptsz") == OpInfo(
        "runtime", launch.meaning + ops_table.VERSIONED_NOTE
    )
    # calls without an entry or a counterpart go by what their name says they do
    assert lookup_op("urEnqueueUSMMemcpy2D") is not None
    assert lookup_op("hipFooSynchronize") == OpInfo(
        "sync", ops_table.RUNTIME_KEYWORDS[0][2].format(api="HIP (ROCm)")
    )


def test_names_cut_off_by_printed_tables() -> None:
    embedding = lookup_op("autograd::engine::evaluate_function: EmbeddingBackwa...")
    assert embedding is not None
    assert embedding.category == "autograd"
    assert "differentiates aten::embedding" in embedding.meaning
    assert lookup_op("aten::convolution_backwa...") == lookup_op("aten::convolution_backward")
    # a prefix that more than one name completes is not guessed
    assert lookup_op("aten::conv...") is None


@pytest.mark.parametrize(
    "name",
    [
        "",
        "aten::definitely_not_an_op",
        "aten::definitely_not_an_op_",
        "model_inference",
        "my_custom_range",
        "c10d::not_a_collective",
        "nccl:not_a_collective",
        "triton_xyz_fused_add_0",
        "volta_sgemm_32x128_tn",
    ],
)
def test_unknown_names_are_not_guessed(name: str) -> None:
    assert lookup_op(name) is None


def test_every_category_is_used() -> None:
    assert set(GLOSSARY) == set(CATEGORIES)
    assert {info.category for info in glossary().values()} == set(CATEGORIES)
    rule_categories = (
        {category for _, category, _ in ops_table.PREFIX_RULES}
        | {category for category, _ in ops_table.TRITON_KINDS.values()}
        | {category for _, category, _ in ops_table.RUNTIME_KEYWORDS}
        | {ops_table.RUNTIME_DEFAULT[0]}
    )
    assert rule_categories <= set(CATEGORIES)
    assert set(ops_table.BACKWARD_COST) <= set(CATEGORIES)


def test_meanings_are_single_sentences_without_full_stop() -> None:
    for name, info in glossary().items():
        assert info.meaning == info.meaning.strip(), name
        assert not info.meaning.endswith("."), name
        assert "\n" not in info.meaning, name
        # a glossary entry that explained nothing would be filler
        assert len(info.meaning) >= 20, name
