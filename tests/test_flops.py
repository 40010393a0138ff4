"""FLOPs of attention, counted once per call, with each op's own layout (issue: fused
attention counted twice; the kernel's op read as (B, H, L, E) when it takes (B, L, H, E);
SageAttention and AITER without a formula; DMA rows and nested out= copies).

GIVEN traces recorded here by torch.profiler(record_shapes=True) running
scaled_dot_product_attention on known shapes, and real traces by others (TraceLens' H100
Qwen1.5 and MI300X torch.compile runs, HTA's MTIA training run),
WHEN profsight counts their FLOPs,
THEN each attention call counts once, 4·B·H·L·S·E forward (half of it causal), 2.5 times
that backward; matrix multiplies count once per call chain; copies and DMA count none.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
import torch
from torch.profiler import profile

import profsight
from profsight.analyses.step.flops import OpFlops, op_flops
from profsight.model.profile import Profile

from conftest import DATA

B, H, L, E = 2, 4, 128, 32
#: QKᵀ and (softmax)·V: two products of 2·L·S·E FLOPs per batch and head.
FORWARD = 4 * B * H * L * L * E


def _record(tmp_path: Path, run: object, name: str) -> Profile:
    with profile(record_shapes=True) as prof:
        run()  # type: ignore[operator]
    path = tmp_path / f"{name}.json"
    prof.export_chrome_trace(str(path))
    loaded = profsight.load(path)
    assert isinstance(loaded, Profile)
    return loaded


def _by_op(profile: Profile, flops: OpFlops) -> dict[str, float]:
    ev = profile.events
    total: Counter[str] = Counter()
    for e, f in zip(flops.events.tolist(), flops.flops.tolist(), strict=True):
        if f:
            total[ev.strings[ev.name[e]]] += f
    return dict(total)


def _qkv() -> list[torch.Tensor]:
    torch.manual_seed(0)
    return [torch.randn(B, H, L, E, requires_grad=True) for _ in range(3)]


@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
def test_sdpa_on_cpu_counts_once_forward_and_backward(tmp_path: Path, causal: bool) -> None:
    """CPU: scaled_dot_product_attention -> _scaled_dot_product_flash_attention_for_cpu,
    its backward _..._for_cpu_backward; torch records is_causal in Concrete Inputs."""
    q, k, v = _qkv()

    def run() -> None:
        out = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)
        out.sum().backward()

    profile_ = _record(tmp_path, run, "sdpa")
    flops = op_flops(profile_)
    forward = FORWARD / (2 if causal else 1)
    assert _by_op(profile_, flops) == {
        "aten::_scaled_dot_product_flash_attention_for_cpu": forward,
        "aten::_scaled_dot_product_flash_attention_for_cpu_backward": 2.5 * forward,
    }
    assert flops.total == 3.5 * forward
    assert flops.complete


def test_sdpa_math_fallback_is_counted_by_its_matrix_multiplies(tmp_path: Path) -> None:
    """The math backend runs two bmm per call (the full L x L scores, mask or not): they
    hold the FLOPs, the scaled_dot_product_attention around them none."""
    from torch.nn.attention import SDPBackend, sdpa_kernel

    q, k, v = (t.detach() for t in _qkv())

    def run() -> None:
        with sdpa_kernel(SDPBackend.MATH):
            torch.nn.functional.scaled_dot_product_attention(q, k, v)

    profile_ = _record(tmp_path, run, "math")
    flops = op_flops(profile_)
    assert _by_op(profile_, flops) == {"aten::bmm": FORWARD}


# --- real GPU traces by others -----------------------------------------------------------

SHARED = DATA / "shared" / "traces"


def test_flash_attention_on_h100_counted_once_causal_with_its_layout() -> None:
    """TraceLens' Qwen1.5-0.5B-Chat on an H100: 24 calls of scaled_dot_product_attention
    -> _scaled_dot_product_flash_attention, both [16, 16, 559, 64] (B, H, L, E), ->
    _flash_attention_forward [16, 559, 16, 64] (B, L, H, E), is_causal 'True' (its
    Concrete Inputs[8]). By hand: 24 x 4·16·16·559·559·64 / 2 = 245,745,057,792 FLOPs
    (it was counted twice, and the inner op as H=559, L=16: 5.056e11)."""
    profile_ = profsight.load(SHARED / "tracelens/h100/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz")
    assert isinstance(profile_, Profile)
    flops = op_flops(profile_)
    attention = {k: v for k, v in _by_op(profile_, flops).items() if "attention" in k}
    assert attention == {"aten::_flash_attention_forward": 245_745_057_792}


def test_flash_attention_on_mi300x_inner_op_read_as_batch_seq_heads_dim() -> None:
    """TraceLens' torch.compile run on an MI300X: one _scaled_dot_product_flash_attention
    [8, 16, 4096, 128] around _flash_attention_forward [8, 4096, 16, 128], not causal. By
    hand: 4·8·16·4096·4096·128 = 1,099,511,627,776 FLOPs (was that plus 4.3e9)."""
    profile_ = profsight.load(DATA / "real/torch_compile_triton_mi300x.json.gz")
    assert isinstance(profile_, Profile)
    flops = op_flops(profile_)
    attention = {k: v for k, v in _by_op(profile_, flops).items() if "attention" in k}
    assert attention == {"aten::_flash_attention_forward": 1_099_511_627_776}


def test_mtia_dma_counts_nothing_and_out_variants_once() -> None:
    """HTA's MTIA training trace: 22,361 dma_request rows (copies: no FLOPs), and each
    matrix multiply recorded twice, aten::mm around its out= variant aten::mm (same for
    addmm, bmm). By hand from its Input Dims, the outer ops only (81 mm, 46 addmm, 6 bmm):
    sum of 2·M·K·N = 96,523,780,096 FLOPs (was twice that)."""
    profile_ = profsight.load(SHARED / "hta/mtia_trace_single_rank/mtia_rank_0.json.gz")
    assert isinstance(profile_, Profile)
    flops = op_flops(profile_)
    ev = profile_.events
    counted = Counter(ev.strings[ev.name[e]] for e in flops.events[flops.flops > 0].tolist())
    assert counted == {"aten::mm": 81, "aten::addmm": 46, "aten::bmm": 6}
    assert flops.total == 96_523_780_096
    assert flops.complete


# --- SageAttention's and AITER's ops: no real trace of them is public, so the test
# registers ops of the same names and signatures (copied from the libraries; a CPU body
# that stands for their kernel)
# and records them with torch.profiler, as the libraries' own ops are recorded.


@torch.library.custom_op(
    "sageattention_sm89::qk_int8_sv_f8_accum_f32_fuse_v_scale_attn", mutates_args=("output",)
)
def _sage(
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    output: torch.Tensor,
    query_scale: torch.Tensor,
    key_scale: torch.Tensor,
    value_scale: torch.Tensor,
    tensor_layout: int,
    is_causal: int,
    qk_quant_gran: int,
    sm_scale: float,
    return_lse: int,
) -> torch.Tensor:
    """sageattention/sm89_compile.py (thu-ml/SageAttention): the value comes in FP8,
    transposed and padded. The body (the library's CUDA kernel) does no aten matmul."""
    output.copy_(query)
    return torch.empty(0)


@torch.library.custom_op("aiter::mha_fwd", mutates_args=())
def _aiter_fwd(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    dropout_p: float,
    softmax_scale: float,
    is_causal: bool,
    window_size_left: int,
    window_size_right: int,
) -> torch.Tensor:
    """aiter/ops/mha.py (ROCm/aiter): q, k, v in (B, L, H, E). The body (AITER's kernel)
    does no aten matmul."""
    return q.clone()


@pytest.mark.parametrize("layout", [0, 1], ids=["NHD", "HND"])
def test_sage_attention_counted_in_its_layout(tmp_path: Path, layout: int) -> None:
    """tensor_layout 0 is NHD (B, L, H, E), 1 HND (B, H, L, E); is_causal 1 halves it.
    L != H != E here, so a layout read wrong gives another number."""
    shape = (B, L, H, E) if layout == 0 else (B, H, L, E)
    q, k = torch.randn(shape), torch.randn(shape)
    v = torch.randn(B, H, E, L) if layout else torch.randn(B, E, H, L)  # FP8's transposed V
    one = torch.ones(1)

    def run() -> None:
        _sage(q, k, v, torch.empty(shape), one, one, one, layout, 1, 2, 0.1, 0)

    profile_ = _record(tmp_path, run, "sage")
    name = "sageattention_sm89::qk_int8_sv_f8_accum_f32_fuse_v_scale_attn"
    assert _by_op(profile_, op_flops(profile_)) == {name: FORWARD / 2}


def test_aiter_mha_fwd_counted_in_batch_seq_heads_dim(tmp_path: Path) -> None:
    q, k, v = (torch.randn(B, L, H, E) for _ in range(3))
    profile_ = _record(tmp_path, lambda: _aiter_fwd(q, k, v, 0.0, 0.1, False, -1, -1), "aiter")
    assert _by_op(profile_, op_flops(profile_)) == {"aiter::mha_fwd": FORWARD}
