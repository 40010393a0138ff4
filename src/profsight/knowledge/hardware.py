"""Peak throughput of the accelerators profiles come from, for utilisation estimates.

Figures are the vendors' dense (no structured sparsity) peaks, in TFLOP/s, and memory
bandwidth in GB/s, from their data sheets (NVIDIA V100/A100/H100/H200/B200/L4/T4/A10 and
GeForce RTX 20/30/40 architecture white papers (Turing TU102, Ampere GA102/GA104/GA106,
Ada); AMD Instinct MI210/MI250/MI250X/MI300X data
sheets). "tensor" precisions use tensor cores / matrix cores; ``fp32`` is the plain vector
rate. A device is matched by its ``deviceProperties`` name (substring rules, first match),
then by compute capability.
"""

from __future__ import annotations

import re
from typing import Any, Final

import msgspec

from profsight.lazy import regex


class Accelerator(msgspec.Struct, frozen=True):
    name: str
    vendor: str
    arch: str
    tflops: dict[str, float]
    """Peak TFLOP/s by precision: fp64, fp32, tf32, fp16, bf16, fp8, fp4, int8 (TOPS). A
    precision a device lacks falls back to its fp32 peak (`peak`): a device whose matrix
    units take FP4 lists it, or its FP4 kernels would be held to the FP32 rate."""
    bandwidth_gbs: float
    memory_gb: float
    tensor_cores: bool = True

    @property
    def max_clock_ratio(self) -> float:
        """How far above the clock its peaks are quoted at the part can run
        (`GEFORCE_CLOCK_RATIO` for a GeForce card; 1 for the data-centre parts, whose peaks
        are quoted at their highest boost clock)."""
        return GEFORCE_CLOCK_RATIO if self.name.startswith("GeForce") else 1.0

    def peak(self, precision: str) -> Peak | None:
        """The device's one peak for `precision`, which the verdict's utilisation, the
        roofline and every physics check divide by: the dense rate at the part's highest
        clock; a precision the device lacks falls back to FP32 (and says so)."""
        used = precision if self.tflops.get(precision) else "fp32"
        rated = self.tflops.get(used)
        if not rated:
            return None
        return Peak(self.name, used, rated * self.max_clock_ratio, rated)


class Peak(msgspec.Struct, frozen=True):
    """A device's peak for one precision (`Accelerator.peak`)."""

    device: str
    precision: str
    """The precision whose rate it is (FP32 where the device lacks the one asked for)."""
    tflops: float
    """Dense TFLOP/s at the part's highest clock: no kernel runs faster."""
    rated_tflops: float
    """The data sheet's dense figure, at the rated boost clock."""

    @property
    def label(self) -> str:
        """How a report names it: ``dense BF16 peak (989 TFLOP/s)``."""
        text = f"dense {self.precision.upper()} peak ({self.tflops:g} TFLOP/s"
        if self.tflops != self.rated_tflops:
            text += (
                f": {self.rated_tflops:g} rated at its boost clock, "
                f"x{self.tflops / self.rated_tflops:.2f} for the clocks the card runs above it"
            )
        return text + ")"


#: A GeForce card's peaks are quoted at its rated boost clock, which GPU Boost exceeds
#: whenever power and temperature allow: a stock RTX 4090 Founders Edition ran at 2,810-2,850
#: MHz against its rated 2,520 (TweakTown, 2022-09-22; HotHardware measured 2,730 MHz at 97%
#: load), 1.13x; a stock RTX 3090 Ti at 2,000-2,050 against 1,860, 1.10x. The most a stock
#: GeForce card runs at, over its rated boost clock (an RTX 4090 trace in tests/data does
#: FP32 GEMMs at 90.6 TFLOP/s against the 82.6 quoted).
GEFORCE_CLOCK_RATIO: Final = 1.15


def _acc(name: str, vendor: str, arch: str, bw: float, mem: float, **tf: float) -> Accelerator:
    return Accelerator(name, vendor, arch, dict(tf), bw, mem, tensor_cores="fp16" in tf)


#: (pattern on the lower-cased device name, accelerator); first match wins.
ACCELERATORS: Final[tuple[tuple[re.Pattern[str], Accelerator], ...]] = tuple(
    (regex(p), a)
    for p, a in (
        (
            r"h200",
            _acc(
                "H200",
                "nvidia",
                "hopper",
                4800,
                141,
                fp64=67,
                fp32=67,
                tf32=494.7,
                fp16=989.4,
                bf16=989.4,
                fp8=1978.9,
                int8=1978.9,
            ),
        ),
        (
            r"h100.*pcie",
            _acc(
                "H100 PCIe",
                "nvidia",
                "hopper",
                2000,
                80,
                fp64=51,
                fp32=51,
                tf32=378,
                fp16=756,
                bf16=756,
                fp8=1513,
                int8=1513,
            ),
        ),
        (
            r"h100|h800|gh200",
            _acc(
                "H100 SXM",
                "nvidia",
                "hopper",
                3350,
                80,
                fp64=67,
                fp32=67,
                tf32=494.7,
                fp16=989.4,
                bf16=989.4,
                fp8=1978.9,
                int8=1978.9,
            ),
        ),
        (
            r"b200|gb200",
            _acc(
                "B200",
                "nvidia",
                "blackwell",
                8000,
                180,
                fp64=40,
                fp32=80,
                tf32=1100,
                fp16=2250,
                bf16=2250,
                fp8=4500,
                # NVIDIA DGX B200 data sheet: 144 PFLOPS FP4 for 8 GPUs with sparsity: 9 dense
                fp4=9000,
                int8=4500,
            ),
        ),
        (
            r"a100.*pcie",
            _acc(
                "A100 PCIe",
                "nvidia",
                "ampere",
                1935,
                80,
                fp64=19.5,
                fp32=19.5,
                tf32=156,
                fp16=312,
                bf16=312,
                int8=624,
            ),
        ),
        (
            r"a100|a800",
            _acc(
                "A100 SXM",
                "nvidia",
                "ampere",
                2039,
                80,
                fp64=19.5,
                fp32=19.5,
                tf32=156,
                fp16=312,
                bf16=312,
                int8=624,
            ),
        ),
        (
            r"\ba10\b|a10g",
            _acc(
                "A10",
                "nvidia",
                "ampere",
                600,
                24,
                fp32=31.2,
                tf32=62.5,
                fp16=125,
                bf16=125,
                int8=250,
            ),
        ),
        (
            r"\bl4\b",
            _acc(
                "L4",
                "nvidia",
                "ada",
                300,
                24,
                fp32=30.3,
                tf32=60,
                fp16=121,
                bf16=121,
                fp8=242.5,
                int8=242.5,
            ),
        ),
        (r"\bt4\b", _acc("T4", "nvidia", "turing", 320, 16, fp32=8.1, fp16=65, int8=130)),
        (r"v100", _acc("V100", "nvidia", "volta", 900, 32, fp64=7.8, fp32=15.7, fp16=125)),
        (
            r"4090",
            _acc(
                "GeForce RTX 4090",
                "nvidia",
                "ada",
                1008,
                24,
                fp32=82.6,
                tf32=82.6,
                fp16=165.2,
                bf16=165.2,
                fp8=330.3,
                int8=660.6,
            ),
        ),
        (
            r"3090",
            _acc(
                "GeForce RTX 3090",
                "nvidia",
                "ampere",
                936,
                24,
                fp32=35.6,
                tf32=35.6,
                fp16=71,
                bf16=71,
                int8=284,
            ),
        ),
        # GeForce Ampere (GA102/GA104/GA106 whitepaper): tensor FP16/BF16 with FP32
        # accumulate, as autocast runs, is half the FP16-accumulate figure
        (
            r"3080",
            _acc(
                "GeForce RTX 3080",
                "nvidia",
                "ampere",
                760,
                10,
                fp32=29.8,
                tf32=29.8,
                fp16=59.5,
                bf16=59.5,
                int8=238,
            ),
        ),
        (
            r"3070",
            _acc(
                "GeForce RTX 3070",
                "nvidia",
                "ampere",
                448,
                8,
                fp32=20.3,
                tf32=20.3,
                fp16=40.6,
                bf16=40.6,
                int8=162.6,
            ),
        ),
        (
            r"3060",
            _acc(
                "GeForce RTX 3060",
                "nvidia",
                "ampere",
                360,
                12,
                fp32=12.7,
                tf32=12.7,
                fp16=25.6,
                bf16=25.6,
                int8=102.4,
            ),
        ),
        # GeForce Ada (Ada whitepaper): FP16 with FP32 accumulate at twice the FP32 rate
        (
            r"4080",
            _acc(
                "GeForce RTX 4080",
                "nvidia",
                "ada",
                717,
                16,
                fp32=48.7,
                tf32=48.7,
                fp16=97.5,
                bf16=97.5,
                fp8=194.9,
                int8=389.9,
            ),
        ),
        (
            r"4070",
            _acc(
                "GeForce RTX 4070",
                "nvidia",
                "ada",
                504,
                12,
                fp32=29.1,
                tf32=29.1,
                fp16=58.3,
                bf16=58.3,
                fp8=116.6,
                int8=233.2,
            ),
        ),
        (
            r"4060",
            _acc(
                "GeForce RTX 4060",
                "nvidia",
                "ada",
                272,
                8,
                fp32=15.1,
                tf32=15.1,
                fp16=30.2,
                bf16=30.2,
                fp8=60.4,
                int8=120.8,
            ),
        ),
        # GeForce Turing (TU102 whitepaper): FP16 tensor with FP32 accumulate
        (
            r"2080 ti",
            _acc("GeForce RTX 2080 Ti", "nvidia", "turing", 616, 11, fp32=13.4, fp16=53.8),
        ),
        (r"gp100", _acc("Quadro GP100", "nvidia", "pascal", 720, 16, fp64=5.2, fp32=10.3)),
        (r"1080", _acc("GeForce GTX 1080", "nvidia", "pascal", 320, 8, fp32=8.9)),
        (
            r"mi300",
            _acc(
                "MI300X",
                "amd",
                "cdna3",
                5300,
                192,
                fp64=163.4,
                fp32=163.4,
                tf32=653.7,
                fp16=1307.4,
                bf16=1307.4,
                fp8=2614.9,
                int8=2614.9,
            ),
        ),
        (
            r"mi250x",
            _acc(
                "MI250X",
                "amd",
                "cdna2",
                3277,
                128,
                fp64=95.7,
                fp32=95.7,
                fp16=383,
                bf16=383,
                int8=383,
            ),
        ),
        (
            r"mi250",
            _acc(
                "MI250",
                "amd",
                "cdna2",
                3277,
                128,
                fp64=90.5,
                fp32=90.5,
                fp16=362.1,
                bf16=362.1,
                int8=362.1,
            ),
        ),
        (
            r"mi210",
            _acc(
                "MI210",
                "amd",
                "cdna2",
                1638,
                64,
                fp64=45.3,
                fp32=45.3,
                fp16=181,
                bf16=181,
                int8=181,
            ),
        ),
    )
)

#: Compute capability -> architecture, for devices whose name matches no rule.
ARCH_BY_CC: Final[dict[tuple[int, int], str]] = {
    (6, 0): "pascal",
    (6, 1): "pascal",
    (7, 0): "volta",
    (7, 5): "turing",
    (8, 0): "ampere",
    (8, 6): "ampere",
    (8, 9): "ada",
    (9, 0): "hopper",
    (10, 0): "blackwell",
    (12, 0): "blackwell",
}
#: Architectures with tensor cores that run FP32 GEMMs in TF32 when allowed.
TF32_ARCHS: Final = frozenset({"ampere", "ada", "hopper", "blackwell"})
TENSOR_CORE_ARCHS: Final = frozenset({"volta", "turing", *TF32_ARCHS, "cdna2", "cdna3"})


def accelerator(props: dict[str, Any]) -> Accelerator | None:
    """The accelerator a ``deviceProperties`` entry describes, if profsight knows it."""
    name = str(props.get("name", "")).lower()
    for pattern, acc in ACCELERATORS:
        if pattern.search(name):
            return acc
    return None


def architecture(props: dict[str, Any]) -> str | None:
    acc = accelerator(props)
    if acc is not None:
        return acc.arch
    major, minor = props.get("computeMajor"), props.get("computeMinor")
    if isinstance(major, int) and isinstance(minor, int):
        return ARCH_BY_CC.get((major, minor))
    return None


def tensor_core_speedup(acc: Accelerator) -> float | None:
    """How much faster the device's peak runs matrix math on tensor cores (the fastest of TF32,
    BF16 and FP16, as mixed precision would use them) than in FP32: the most an FP32 GEMM can
    gain (memory-bound kernels gain less)."""
    slow = acc.tflops.get("fp32")
    fast = max(acc.tflops.get(p) or 0.0 for p in ("tf32", "bf16", "fp16"))
    if not slow or not fast or fast <= slow:
        return None
    return fast / slow


def arch_speedup(arch: str | None) -> float | None:
    """`tensor_core_speedup` of the slowest-gaining known device of `arch` (a printed table
    names the architecture by its kernels, not the device)."""
    ratios = [
        r
        for _, acc in ACCELERATORS
        if acc.arch == arch and (r := tensor_core_speedup(acc)) is not None
    ]
    return min(ratios) if ratios else None


#: Per direction (GB/s), the links a peer-to-peer copy can take, by architecture: PCIe x16
#: (gen 3/4/5: 16/32/64 GB/s) and the GPU-to-GPU fabric where the architecture has one. From
#: the vendors' datasheets, whose figures are both directions together: NVLink 2 (V100 SXM2,
#: 300 GB/s), NVLink 3 (A100 SXM, 600), NVLink 4 (H100/H200 SXM, 900), NVLink 5 (B200,
#: 1,800); AMD Infinity Fabric (MI250X, 800; MI300X, 896). Consumer and PCIe cards have no
#: such fabric or a bridge only, so a slower copy there is the PCIe path.
PEER_LINKS_GBS: Final[dict[str, tuple[float, float | None]]] = {
    "volta": (16.0, 150.0),
    "turing": (16.0, None),
    "ampere": (32.0, 300.0),
    "ada": (32.0, None),
    "hopper": (64.0, 450.0),
    "blackwell": (64.0, 900.0),
    "cdna2": (32.0, 400.0),
    "cdna3": (64.0, 448.0),
}

#: Operations a stream's launch queue holds before a launch call blocks until one completes:
#: the CUDA driver's default, as Holistic Trace Analysis's queue length analysis takes it
#: ("the maximum queue length is 1024"). A trace whose depth plateaus within
#: `QUEUE_PLATEAU_FRACTION` below it (or above it, on a driver with a deeper queue) measured
#: its own limit: that plateau is used instead.
LAUNCH_QUEUE_DEPTH: Final = 1024
QUEUE_PLATEAU_FRACTION: Final = 0.1
"""The spread of one run's recordings (`advice.BORDERLINE_FRACTION`): a few entries of the
queue are the driver's own, and depth counted from a trace is off by the items whose
completion and the next launch fall in the same microsecond (HTA's ns_resolution trace:
2,065 launches at 1,021-1,022)."""

#: Points of a copy direction's bandwidth-over-time series (`analyses.device_work`): enough
#: for a chart the width of a page, few enough for the JSON.
COPY_SERIES_POINTS: Final = 120
