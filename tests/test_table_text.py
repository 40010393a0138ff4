"""Reading printed torch tables: every real table cell by cell, every layout torch 2.13 prints
(compared with the `FunctionEventAvg` each row came from), wrappers around tables, and
input that is not a table."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest

from profsight.errors import InputError
from profsight.loaders.table_text import looks_like_table, parse_tables
from profsight.model.printed import ParsedTable
from profsight.model.table import Row

from conftest import DATA

TABLES = DATA / "tables"


def read(name: str) -> str:
    # newline="" keeps CRLF line ends as they are in the file
    return (TABLES / name).read_bytes().decode("utf-8")


# ---- real tables, cell by cell -----------------------------------------------------------


@dataclass(frozen=True)
class R:
    """One printed row: (self CPU, CPU total) us, (self CPU %, CPU total %), device cells
    (self, self %, total) us, memory cells (CPU, self CPU, device, self device) bytes."""

    index: int
    name: str
    calls: int
    cpu: tuple[float, float]
    cpu_pct: tuple[float, float]
    device: tuple[float, float, float] = (0.0, 0.0, 0.0)
    memory: tuple[int, int, int, int] = (0, 0, 0, 0)
    shapes: str = ""
    device_total_pct: float | None = None
    """torch <= 1.6's ``CUDA total %`` (checked where given)."""


@dataclass(frozen=True)
class T:
    """One printed table of a real file."""

    file: str
    index: int
    n_rows: int
    layout: str
    title: str
    footer: dict[str, float]
    diagnostics: tuple[str, ...]
    rows: tuple[R, ...]
    truncated: int = 0
    device: bool = False
    memory: bool = False
    shapes: bool = False
    extra: dict[int, dict[str, str]] = field(default_factory=dict)


KB = 1024
MB = 1024 * KB
TRITON = "triton_practice-1.txt"
FLYDSL = "flydsl-examples-1.txt"

REAL_TABLES = [
    T(TRITON, 0, 10, "modern", "--- Profiling Eager ---",
      {"Self CPU time total": 8188.0, "Self CUDA time total": 4431.0}, (),
      (R(0, "Eager_forward", 1, (0.0, 0.0), (0.0, 0.0), (5028.0, 113.46, 5028.0)),
       R(1, "aten::add", 2, (90.429, 2086.0), (1.10, 25.48), (2391.0, 53.97, 3346.0)),
       R(7, "Activity Buffer Request", 1, (1942.0, 1942.0), (23.72, 23.72),
         (954.620, 21.54, 954.620)),
       R(8, "void at::native::elementwise_kernel<128, 2, at::nati...", 1, (0.0, 0.0),
         (0.0, 0.0), (954.620, 21.54, 954.620)),
       R(9, "Eager_forward", 1, (2470.0, 5805.0), (30.17, 70.89), (0.0, 0.0, 5386.0))),
      truncated=4, device=True),
    T(TRITON, 1, 10, "modern", "--- Profiling Triton ---",
      {"Self CPU time total": 3947.0, "Self CUDA time total": 1451.0}, (),
      (R(0, "Triton_forward", 1, (0.0, 0.0), (0.0, 0.0), (1714.0, 118.13, 1714.0)),
       R(6, "Memcpy DtoH (Device -> Pinned)", 1, (0.0, 0.0), (0.0, 0.0), (1.760, 0.12, 1.760)),
       R(9, "aten::view", 3, (20.732, 20.732), (0.53, 0.53))),
      truncated=1, device=True),
    T(TRITON, 2, 10, "modern", "--- Profiling Compiled ---",
      {"Self CPU time total": 4284.0, "Self CUDA time total": 1403.0}, (),
      (R(0, "Compiled_forward", 1, (0.0, 0.0), (0.0, 0.0), (1502.0, 107.08, 1502.0)),
       R(7, "Torch-Compiled Region: 0/0", 1, (231.725, 2862.0), (5.41, 66.81),
         (0.0, 0.0, 1403.0)),
       R(9, "AOTDispatcher Runtime Wrapper Prologue", 1, (8.885, 8.885), (0.21, 0.21))),
      truncated=1, device=True),
    T(FLYDSL, 0, 3, "modern", "===================== [REF] =====================",
      {"Self CPU time total": 4097.0, "Self CUDA time total": 4369.0}, (),
      (R(0, "void at::native::vectorized_elementwise_kernel<4, at...", 100, (0.0, 0.0),
         (0.0, 0.0), (4369.0, 100.0, 4369.0)),
       R(1, "hipLaunchKernel", 100, (386.842, 386.842), (9.44, 9.44)),
       R(2, "hipDeviceSynchronize", 1, (3710.0, 3710.0), (90.56, 90.56))),
      truncated=1, device=True),
    T(FLYDSL, 1, 6, "modern", "===================== [FLYDSL] =====================", {},
      ("total_from_shares",),
      (R(0, "pointwise_add_kernel", 100, (0.0, 0.0), (0.0, 0.0), (3891.0, 100.0, 3891.0)),
       R(1, "hipStreamCreate", 100, (78745.0, 78745.0), (69.06, 69.06)),
       R(5, "hipDeviceSynchronize", 101, (80.387, 80.387), (0.07, 0.07))),
      device=True),
    T("chess-hackathon-bottleneck-1.txt", 0, 15, "modern",
      "autograd profiler output (CPU mode)", {"Self CPU time total": -20746.0},
      ("negative_time",),
      (R(0, "DistributedDataParallel.forward", 1, (-5088.0, 1372000.0), (24.53, -6614.21)),
       R(6, "DistributedDataParallel.forward", 1, (-15489.0, 1344000.0), (74.66, -6479.59)),
       R(9, "DistributedDataParallel.forward", 1, (3393.0, 1342000.0), (-16.35, -6470.04)),
       R(14, "DistributedDataParallel.forward", 1, (-4154.0, 1331000.0), (20.02, -6415.42)))),
    T("ngfp-bottleneck-1.txt", 0, 15, "legacy", "autograd profiler output (CUDA mode)",
      {"Self CPU time total": 39803.0, "CUDA time total": 9958.0}, (),
      (R(0, "to", 1, (3029.0, 3029.0), (7.61, 7.61), (0.0, 0.0, 544.0), shapes="[]",
         device_total_pct=5.46),
       R(1, "matmul", 1, (3024.0, 3024.0), (7.60, 7.60), (0.0, 0.0, 1912.0), shapes="[]"),
       R(4, "to", 1, (2774.0, 2774.0), (6.97, 6.97), (0.0, 0.0, 481.281), shapes="[]"),
       R(14, "to", 1, (2423.0, 2423.0), (6.09, 6.09), (0.0, 0.0, 478.0), shapes="[]")),
      device=True, shapes=True, extra={0: {}}),
    T("torchprof-3.txt", 0, 5, "legacy", "",
      {"Self CPU time total": 1671.0, "CUDA time total": 6701.0}, (),
      (R(0, "conv2d", 1, (13.370, 1671.0), (0.80, 100.0), (0.0, 0.0, 1698.0), shapes="[]"),
       R(3, "contiguous", 1, (6.970, 6.970), (0.42, 0.42), (0.0, 0.0, 7.136), shapes="[]"),
       R(4, "cudnn_convolution", 1, (1608.0, 1608.0), (96.19, 96.19), (0.0, 0.0, 1638.0),
         shapes="[]", device_total_pct=24.44)),
      device=True, shapes=True, extra={4: {}}),
    T("torchprof-1.txt", 0, 18, "transitional", "",
      {"Self CPU time total": 1832.0, "CUDA time total": 1831.0}, (),
      (R(0, "aten::conv2d", 1, (15.630, 1832.0), (0.85, 100.0), (14.176, 0.77, 1831.0),
         (0, 0, 774656, 0)),
       R(4, "aten::cudnn_convolution", 1, (1647.0, 1683.0), (89.90, 91.86),
         (1745.0, 95.27, 1750.0), (0, 0, 774656, -18 * KB)),
       R(14, "aten::empty", 1, (9.147, 9.147), (0.50, 0.50), (0.0, 0.0, 0.0),
         (0, 0, 18 * KB, 18 * KB)),
       R(17, "aten::add_", 1, (57.248, 57.248), (3.12, 3.12), (18.432, 1.01, 18.432))),
      device=True, memory=True),
    T("lightning-pytorchprofiler-genslm-deepspeed-1.txt", 0, 20, "modern",
      "Profile stats for: records",
      {"Self CPU time total": 2804000.0, "Self CUDA time total": 1037000.0}, (),
      (R(0, "ProfilerStep*", 3, (356623.0, 1411000.0), (12.72, 50.32), (0.0, 0.0, 190001.0)),
       R(2, "[pl][profile][LightningModule]DNATransformer.optimiz...", 3,
         (520449.0, 1010000.0), (18.56, 36.00), (0.0, 0.0, 310563.0)),
       R(6, "autograd::engine::evaluate_function: EmbeddingBackwa...", 3, (20.0, 371025.0),
         (0.0, 13.23), (0.0, 0.0, 512.0)),
       R(13, "aten::copy_", 2778, (32870.0, 117686.0), (1.17, 4.20), (46316.0, 4.47, 56306.0)),
       R(19, "cudaMemcpyAsync", 2052, (35825.0, 35825.0), (1.28, 1.28), (3612.0, 0.35, 3612.0))),
      truncated=7, device=True),
    T("eyeriss-lab2-flops-1.txt", 0, 10, "modern", "", {"Self CPU time total": 5112.0}, (),
      (R(0, "model_inference", 1, (963.701, 5112.0), (18.85, 100.0),
         memory=(0, round(-1.70 * MB), 0, 0), shapes="[]"),
       R(1, "aten::conv2d", 1, (2.233, 1453.0), (0.04, 28.42), memory=(64 * KB, 0, 0, 0),
         shapes="[[1, 384, 8, 8], [256, 384, 3, 3], [256], [], [], [], []]"),
       R(3, "aten::_convolution", 1, (6.712, 1444.0), (0.13, 28.25), memory=(64 * KB, 0, 0, 0),
         shapes="[[1, 384, 8, 8], [256, 384, 3, 3], [256], [], [], [], [], [], [], [], [], [], []"),
       R(9, "aten::convolution", 1, (28.413, 413.530), (0.56, 8.09),
         memory=(256 * KB, 0, 0, 0),
         shapes="[[1, 3, 32, 32], [64, 3, 3, 3], [64], [], [], [], [], [], []]")),
      memory=True, shapes=True),
    T("issue-pytorch-45209-1.txt", 0, 2, "legacy", "", {}, ("fragment", "total_from_shares"),
      (R(0, "aten::matmul", 100, (890.805, 523401.0), (0.17, 99.05), (0.0, 0.0, 791184.0)),
       R(1, "aten::mm", 100, (518336.0, 522511.0), (98.09, 98.88), (0.0, 0.0, 790885.0),
         device_total_pct=49.89)),
      device=True, extra={1: {}}),
    T("issue-clinicaldg-2-1.txt", 0, 3, "modern", "", {}, ("fragment", "total_from_shares"),
      (R(0, "enumerate(DataLoader)#_SingleProcessDataLoaderIter._...", 100,
         (78632000.0, 79116000.0), (88.64, 89.18)),
       R(2, "ConvolutionBackward0", 6000, (43187.0, 2377000.0), (0.05, 2.68),
         (0.0, 0.0, 1902000.0))),
      truncated=2, device=True),
    T("issue-pytorch-60146-1.txt", 0, 6, "modern", "", {}, ("fragment", "total_from_shares"),
      (R(0, "model_inference", 1, (8119.0, 100934.0), (8.04, 99.95)),
       R(2, "aten::convolution", 20, (115.0, 67453.0), (0.11, 66.80)),
       R(5, "aten::batch_norm", 20, (114.0, 15582.0), (0.11, 15.43)))),
    # Markdown bold around cells and inside names (issue 36): read as if unmarked
    T("louieunnie__transformer-inference-gpu-profiling__1.txt", 0, 10, "modern", "",
      {"Self CPU time total": 653411.0, "Self CUDA time total": 109261.0}, (),
      (R(0, "aten::addmm", 2400, (116634.0, 198705.0), (17.85, 30.41), (59577.0, 54.53, 59577.0)),
       R(4, "void gemv2T_kernel_val<int, int, float, float, float...", 50, (0.0, 0.0),
         (0.0, 0.0), (22173.0, 20.29, 22173.0))),
      truncated=4, device=True),
    # only the CUDA columns, three spaces after the name column, no closing rule, no footer
    T("HFAiLab__alphafold-optimized__1.txt", 0, 34, "modern", "", {},
      ("fragment", "total_from_shares", "no_calls_column"),
      (R(0, "aten::native_layer_norm", 3486, (0.0, 0.0), (0.0, 0.0), (2105000.0, 16.81, 2224000.0)),
       R(15, "ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)...", 16, (0.0, 0.0),
         (0.0, 0.0), (494207.0, 3.95, 494207.0))),
      truncated=21, device=True),
    # cut with the author's "..." after its last row; a Total MFLOPs column
    T("Unispac__Adaptive-Finetuning-Attacks__1.txt", 0, 26, "modern", "", {},
      ("fragment", "total_from_shares"),
      (R(0, "model_inference", 3, (0.0, 0.0), (0.0, 0.0), (28247000.0, 45.54, 28247000.0)),
       R(4, "ncclDevKernel_AllGather_RING_LL(ncclDevComm*, unsign...", 2106, (0.0, 0.0),
         (0.0, 0.0), (6968000.0, 11.23, 6968000.0))),
      truncated=7, device=True),
]  # fmt: skip


def _case_id(case: T) -> str:
    return f"{case.file}#{case.index}"


@pytest.fixture(scope="module")
def real_parsed() -> dict[str, list[ParsedTable]]:
    files = {case.file for case in REAL_TABLES}
    return {name: parse_tables(read(name), name) for name in files}


def test_every_torch_table_file_is_covered() -> None:
    lightning_simple = {
        "lightning-ai-chess-bot-1.txt",
        "issue-lightning-4937-1.txt",
        "issue-laglama-51-1.txt",
    }
    on_disk = {p.name for p in TABLES.glob("*.txt")} - lightning_simple
    assert on_disk == {case.file for case in REAL_TABLES}
    tables = {name: parse_tables(read(name), name) for name in on_disk}
    for name, parsed in tables.items():
        assert len(parsed) == sum(case.file == name for case in REAL_TABLES), name


@pytest.mark.parametrize("case", REAL_TABLES, ids=_case_id)
def test_real_table(case: T, real_parsed: dict[str, list[ParsedTable]]) -> None:
    parsed = real_parsed[case.file][case.index]
    table = parsed.table
    assert len(table) == case.n_rows == table.total_rows
    assert parsed.layout == case.layout
    assert parsed.title == case.title
    assert parsed.footer == pytest.approx(case.footer)
    assert tuple(d.code for d in parsed.diagnostics) == case.diagnostics
    assert parsed.truncated_names == case.truncated
    assert (table.has_device, table.has_memory, table.has_shapes) == (
        case.device,
        case.memory,
        case.shapes,
    )
    assert table.group_by == ("shape" if case.shapes else "name")
    for expected in case.rows:
        _check_row(table.rows[expected.index], expected)
    for index, cells in case.extra.items():
        assert parsed.extra_cells[index] == cells
    # totals: the footer where printed; else the one the largest Self CPU % (1% or more)
    # implies, or the rows' own sum when that is within the share's rounding of it
    summed = sum(r.self_cpu_us for r in table)
    top = max(table, key=lambda r: r.self_cpu_pct)
    implied = top.self_cpu_us * 100 / top.self_cpu_pct if top.self_cpu_pct >= 1.0 else summed
    cpu_total = case.footer.get("Self CPU time total", max(summed, implied))
    assert table.self_cpu_total_us == pytest.approx(cpu_total, rel=0.005)
    assert table.longest_name == max(len(r.name) for r in table)


def _check_row(row: Row, expected: R) -> None:
    assert row.name == expected.name
    assert row.event_kind == "unknown"
    assert row.calls == expected.calls
    assert (row.self_cpu_us, row.cpu_total_us) == pytest.approx(expected.cpu)
    assert (row.self_cpu_pct, row.cpu_total_pct) == pytest.approx(expected.cpu_pct)
    device = (row.self_device_us, row.self_device_pct, row.device_total_us)
    assert device == pytest.approx(expected.device)
    if expected.device_total_pct is not None:
        assert row.device_total_pct == pytest.approx(expected.device_total_pct)
    memory = (row.cpu_mem, row.self_cpu_mem, row.device_mem, row.self_device_mem)
    assert memory == expected.memory
    assert row.shapes == expected.shapes
    assert not row.is_device


def test_real_table_details(real_parsed: dict[str, list[ParsedTable]]) -> None:
    flops = real_parsed["eyeriss-lab2-flops-1.txt"][0].flops
    assert flops[:2] == (None, 113246208.0)
    assert flops[5:7] == (3538944.0, 84934656.0)
    flydsl = real_parsed[FLYDSL][1].table
    assert flydsl.self_cpu_total_us == pytest.approx(78745.0 + 854.424 + 6093.0 + 28247.0 + 80.387)
    assert flydsl.self_device_total_us == pytest.approx(3891.0)
    assert real_parsed["ngfp-bottleneck-1.txt"][0].table.self_device_total_us == 9958.0
    assert real_parsed["torchprof-1.txt"][0].table.has_device_memory
    chess = real_parsed["chess-hackathon-bottleneck-1.txt"][0].diagnostics[0]
    assert chess.count == 7  # six rows and the footer
    fragment = real_parsed["issue-pytorch-45209-1.txt"][0].diagnostics[0]
    assert "mid-row" in fragment.message and "2 complete rows" in fragment.message
    assert real_parsed[TRITON][0].table.device_name == "CUDA"


def test_a_table_without_footer_takes_its_total_from_the_shares(
    real_parsed: dict[str, list[ParsedTable]],
) -> None:
    """torch prints each row's Self CPU % as its share of the Self CPU time total: a fragment
    cut before its footer still says the total (from its largest share, to 0.5%); a closed
    table whose shares add up to all of it is its rows' exact sum."""
    cut = real_parsed["issue-pytorch-60146-1.txt"][0]
    assert cut.total_from_shares
    assert cut.table.self_cpu_total_us == pytest.approx(66887.0 * 100 / 66.24)
    # another column says the same total: model_inference's CPU total is 99.95% of it
    assert cut.table.self_cpu_total_us == pytest.approx(100934.0 / 0.9995, rel=0.005)
    closed = real_parsed[FLYDSL][1]
    assert closed.total_from_shares
    assert closed.table.self_cpu_total_us == sum(r.self_cpu_us for r in closed.table.rows)
    assert not real_parsed[FLYDSL][0].total_from_shares  # its footer says it


def test_lightning_pytorchprofiler_report_is_a_table() -> None:
    text = read("lightning-pytorchprofiler-genslm-deepspeed-1.txt")
    assert looks_like_table(text)
    from profsight.loaders.lightning_text import (
        looks_like_lightning_report,
        parse_lightning_report,
    )

    assert not looks_like_lightning_report(text)
    with pytest.raises(InputError, match="parse_tables"):
        parse_lightning_report(text, "genslm")


# ---- wrappers around a table ----------------------------------------------------------------

BASE = read(TRITON).split("--- Profiling Triton ---")[0].split("--- Profiling Eager ---")[1]


def _rows(parsed: Sequence[ParsedTable]) -> list[Row]:
    return [r for t in parsed for r in t.table]


WRAPPERS: dict[str, Callable[[str], str]] = {
    "quoted": lambda t: "\n".join("> " + line for line in t.splitlines()),
    "quoted_bare_blank_lines": lambda t: "\n".join(
        "> " + line if line.strip() else ">" for line in t.splitlines()
    ),
    "tab": lambda t: "\n".join("\t" + line for line in t.splitlines()),
    "diff": lambda t: "+=========\n" + "\n".join("+" + line for line in t.splitlines()),
    "markdown_list": lambda t: "* output:\n\n" + "\n".join("    " + ln for ln in t.splitlines()),
    "glued_runner_text": lambda t: "tests/test_x.py::test_profile PASSED" + t.lstrip("\n"),
    "crlf": lambda t: t.replace("\n", "\r\n"),
    "code_fence": lambda t: "```\n" + t + "```\n",
    "glued_after_footer": lambda t: t.rstrip() + "PASSED [100%]\n",
}


@pytest.mark.parametrize("wrap", WRAPPERS.values(), ids=WRAPPERS.keys())
def test_wrapped_table_reads_as_the_bare_one(wrap: Callable[[str], str]) -> None:
    bare = parse_tables(BASE, "bare")
    wrapped = parse_tables(wrap(BASE), "wrapped")
    assert _rows(wrapped) == _rows(bare)
    assert wrapped[0].footer == bare[0].footer
    assert wrapped[0].diagnostics == ()


def test_fragments_and_unreadable_rows() -> None:
    lines = BASE.strip("\n").splitlines()
    cut_mid_row = "\n".join(lines[:6]) + "\n" + lines[6][:70]
    parsed = parse_tables(cut_mid_row, "cut")[0]
    assert len(parsed.table) == 3
    assert [d.code for d in parsed.diagnostics] == ["fragment", "total_from_shares"]
    assert "mid-row" in parsed.diagnostics[0].message
    no_rule = parse_tables("\n".join(lines[:7]) + "\n\nSome prose after it.\n", "cut")[0]
    assert len(no_rule.table) == 4
    assert "without its closing rule" in no_rule.diagnostics[0].message
    with_junk = "\n".join([*lines[:5], "[21/77]", *lines[5:]])
    parsed = parse_tables(with_junk, "pager")[0]
    assert len(parsed.table) == 10
    assert [(d.code, d.count) for d in parsed.diagnostics] == [("unreadable_row", 1)]


def test_right_aligned_legacy_layout() -> None:
    """torch <= 1.3 (2019): right-aligned 15-wide cells; 'Self CPU total %' overflows."""
    titles = ["Name", "Self CPU total %", "Self CPU total", "CPU total %", "CPU total",
              "CPU time avg", "Number of Calls"]  # fmt: skip
    widths = [13] + [15] * 6

    def line(cells: list[str]) -> str:
        return "".join(f"{c:>{w}}  " for c, w in zip(cells, widths, strict=True))

    rule = "".join("-" * w + "  " for w in widths)
    text = "\n".join([
        rule, line(titles), rule,
        line(["conv2d", "10.00%", "100.000us", "100.00%", "1.000ms", "1.000ms", "1"]),
        line(["add", "90.00%", "900.000us", "90.00%", "900.000us", "450.000us", "2"]),
        rule, "Self CPU time total: 1.000ms",
    ])  # fmt: skip
    parsed = parse_tables(text, "2019")[0]
    assert parsed.layout == "legacy"
    assert [(r.name, r.calls, r.self_cpu_us, r.cpu_total_us) for r in parsed.table] == [
        ("conv2d", 1, 100.0, 1000.0),
        ("add", 2, 900.0, 900.0),
    ]


# ---- malformed input ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("", "is empty"),
        ("  \n\t\n", "is empty"),
        ("The profiler said nothing useful today.\nName: Bob\n", "no printed profiler table"),
        ("\n".join(BASE.strip("\n").splitlines()[:3]) + "\n", "header but no readable rows"),
        (
            "\n".join(BASE.strip("\n").splitlines()[:3] + BASE.strip("\n").splitlines()[-3:]),
            "header but no readable rows",
        ),
    ],
    ids=["empty", "blank", "prose", "header_only", "header_rule_footer"],
)
def test_not_a_table(text: str, reason: str) -> None:
    with pytest.raises(InputError, match=reason) as err:
        parse_tables(text, "bad.txt")
    assert err.value.source == "bad.txt"
    assert "\n" not in err.value.reason


def test_looks_like_table() -> None:
    assert looks_like_table(BASE)
    assert looks_like_table(read("ngfp-bottleneck-1.txt"))
    assert not looks_like_table("Name  Self CPU % are words in prose")
    assert not looks_like_table(read("lightning-ai-chess-bot-1.txt"))


# ---- round trip with torch 2.13: every layout it prints --------------------------------------

torch = pytest.importorskip("torch")


def _model_run() -> None:
    model = torch.nn.Sequential(
        torch.nn.Conv2d(3, 4, 3), torch.nn.ReLU(), torch.nn.Flatten(), torch.nn.Linear(144, 5)
    )
    x = torch.randn(2, 3, 8, 8)
    with torch.profiler.record_function("a block with a long name and spaces in it, to be cut"):
        model(x).sum().backward()


@pytest.fixture(scope="module")
def profiles() -> dict[str, Any]:
    from torch._C._profiler import _ExperimentalConfig
    from torch.profiler import ProfilerActivity, profile

    made = {}
    for name, kwargs in {
        "memory": dict(record_shapes=True, profile_memory=True),
        "flops": dict(record_shapes=True, with_flops=True),
        # verbose: torch keeps Python stacks on the op events (the Source Location column)
        "stack": dict(with_stack=True, experimental_config=_ExperimentalConfig(verbose=True)),
    }.items():
        with profile(activities=[ProfilerActivity.CPU], **kwargs) as prof:
            _model_run()
        made[name] = prof
    return made


@dataclass(frozen=True)
class Layout:
    profile: str = "memory"
    averages: dict[str, Any] = field(default_factory=dict)
    """Keyword arguments of ``prof.key_averages``."""
    table: dict[str, Any] = field(default_factory=dict)
    """Keyword arguments of ``.table``."""


LAYOUTS = {
    "default": Layout(),
    "sort_self_cpu": Layout(table=dict(sort_by="self_cpu_time_total")),
    "sort_cpu_total": Layout(table=dict(sort_by="cpu_time_total")),
    "sort_count": Layout(table=dict(sort_by="count")),
    "sort_cpu_avg": Layout(table=dict(sort_by="cpu_time")),
    "sort_cpu_memory": Layout(table=dict(sort_by="cpu_memory_usage")),
    "sort_self_cpu_memory": Layout(table=dict(sort_by="self_cpu_memory_usage")),
    "row_limit": Layout(table=dict(sort_by="cpu_time_total", row_limit=4)),
    "by_input_shape": Layout(averages=dict(group_by_input_shape=True)),
    "by_input_shape_narrow": Layout(
        averages=dict(group_by_input_shape=True),
        table=dict(max_shapes_column_width=12, max_name_column_width=16),
    ),
    "top_level_only": Layout(table=dict(top_level_events_only=True)),
    "narrow_names": Layout(table=dict(max_name_column_width=14)),
    "time_unit_ms": Layout(table=dict(time_unit="ms")),
    "time_unit_us": Layout(table=dict(time_unit="us")),
    "time_unit_s": Layout(table=dict(time_unit="s")),
    "header": Layout(table=dict(header="My run: eager", top_level_events_only=True)),
    "with_flops": Layout("flops", table=dict(sort_by="self_cpu_time_total")),
    "with_flops_by_shape": Layout("flops", averages=dict(group_by_input_shape=True)),
    "stack_source_location": Layout(
        "stack", averages=dict(group_by_stack_n=2), table=dict(sort_by="self_cpu_time_total")
    ),
}


@pytest.mark.parametrize("layout", LAYOUTS.values(), ids=LAYOUTS.keys())
def test_round_trip(layout: Layout, profiles: dict[str, Any]) -> None:
    prof = profiles[layout.profile]
    averages = prof.key_averages(**layout.averages)
    text = averages.table(**layout.table)
    parsed = parse_tables(text, "torch")
    assert len(parsed) == 1
    table = parsed[0]
    expected = _printed_events(averages, layout.table)
    assert len(table.table) == len(expected) > 0
    unit = layout.table.get("time_unit")
    name_width = layout.table.get("max_name_column_width", 55)
    all_self = sum(e.self_cpu_time_total for e in averages)
    for row, event in zip(table.table, expected, strict=True):
        if len(event.key) >= name_width - 3:
            assert row.name == event.key[: name_width - 3] + "..."
        else:
            assert row.name == event.key
        assert row.calls == event.count
        _close_time(row.self_cpu_us, event.self_cpu_time_total, unit)
        _close_time(row.cpu_total_us, event.cpu_time_total, unit)
        assert row.self_cpu_pct == pytest.approx(
            event.self_cpu_time_total * 100 / all_self, abs=0.0051
        )
        assert row.cpu_mem == pytest.approx(event.cpu_memory_usage, abs=_memory_tol(row.cpu_mem))
        self_mem = event.self_cpu_memory_usage
        assert row.self_cpu_mem == pytest.approx(self_mem, abs=_memory_tol(row.self_cpu_mem))
    _check_layout_extras(layout, table, expected, list(averages))
    _close_time(table.footer["Self CPU time total"], all_self, unit)
    assert table.layout == "modern"
    assert not table.table.has_device


def _check_layout_extras(
    layout: Layout, table: ParsedTable, expected: list[Any], every: list[Any]
) -> None:
    memory = layout.profile == "memory"
    assert table.table.has_memory == memory
    if layout.averages.get("group_by_input_shape"):
        width = layout.table.get("max_shapes_column_width", 80)
        shapes_width = min(max(len(str(e.input_shapes)) for e in every) + 4, width)
        assert table.table.has_shapes and table.table.group_by == "shape"
        assert [r.shapes for r in table.table] == [
            str(e.input_shapes)[:shapes_width].strip() for e in expected
        ]
    if layout.profile == "flops":
        assert any(f is not None for f in table.flops)
        for flops, event in zip(table.flops, expected, strict=True):
            if event.flops > 0:
                assert flops == pytest.approx(event.flops, rel=1e-6, abs=1.0)
            else:
                assert flops is None
    if layout.profile == "stack":
        cells = [extra.get("Source Location", "") for extra in table.extra_cells]
        width = max(len(entry) for e in every for entry in e.stack) + 4
        stacks = [
            "\n".join(_trim_path(entry, min(width, 75)) for entry in e.stack) for e in expected
        ]
        assert cells == stacks
        assert any("\n" in c for c in cells)
    if "header" in layout.table:
        assert table.title == layout.table["header"]
    else:
        assert table.title == ""
    assert table.diagnostics == () or [d.code for d in table.diagnostics] == ["negative_time"]


def _trim_path(path: str, width: int) -> str:
    """torch's ``trim_path``: a long source location keeps its end, marked with ``...``."""
    if len(path) > width:
        path = path[len(path) - width :]
        path = "..." + path[3:] if len(path) > 3 else path
    return path


def _printed_events(averages: Any, kwargs: dict[str, Any]) -> list[Any]:
    """The events torch's `_build_table` prints, in its order."""
    events = list(averages)
    sort_by = kwargs.get("sort_by")
    if sort_by is not None:
        events = sorted(events, key=lambda e: getattr(e, sort_by), reverse=True)
    printed: list[Any] = []
    for event in events:
        if len(printed) == kwargs.get("row_limit", 100):
            break
        if kwargs.get("top_level_events_only") and event.cpu_parent is not None:
            continue
        printed.append(event)
    return printed


def _close_time(parsed: float, exact: float, unit: str | None) -> None:
    """Within half a unit of the last printed digit (torch prints 3 decimals)."""
    if unit is None:
        unit = "s" if exact >= 1e6 else "ms" if exact >= 1e3 else "us"
    scale = {"us": 1.0, "ms": 1e3, "s": 1e6}[unit]
    assert parsed == pytest.approx(exact, abs=0.0005 * scale * 1.0001 + 1e-9)


def _memory_tol(printed: int) -> float:
    size = abs(printed)
    for unit in (1024**3, 1024**2, 1024):
        if size >= unit * 0.995:
            return 0.005 * unit + 1
    return 0


def test_synthetic_device_tables() -> None:
    """torch's own table code on hand-made events: CUDA and XPU columns, device memory,
    ``Overload Name`` with empty cells, ``Node ID``, and ``NaN`` shares of a zero total."""
    from torch.autograd import DeviceType
    from torch.autograd.profiler_util import EventList, FunctionEvent

    for use_device, device_type, label in [
        ("cuda", DeviceType.CUDA, "CUDA"),
        ("xpu", DeviceType.XPU, "XPU"),
    ]:
        common = dict(use_device=use_device, stack=[], node_id=3, overload_name="")
        events = EventList(
            [
                FunctionEvent(1, "aten::mm", 1, 0, 120, cpu_memory_usage=4096,
                              device_memory_usage=2 * MB, **common),
                FunctionEvent(2, "aten::add", 1, 130, 170,
                              **{**common, "overload_name": "Tensor"}),
                FunctionEvent(3, "void at::native::vectorized_elementwise_kernel<4, at::native"
                              "::AddFunctor<float>>", 7, 140, 190, device_type=device_type,
                              **common),
                FunctionEvent(4, "Memcpy HtoD (Pageable -> Device)", 7, 10, 30,
                              device_type=device_type, **common),
            ],
            use_device=use_device,
            profile_memory=True,
        )  # fmt: skip
        events._build_tree()
        text = events.key_averages(group_by_overload_name=True).table()
        parsed = parse_tables(text, label)[0]
        table = parsed.table
        assert table.device_name == label and table.has_device and table.has_device_memory
        assert parsed.footer == {"Self CPU time total": 160.0, f"Self {label} time total": 70.0}
        assert [r.name for r in table] == [
            "aten::mm",
            "aten::add",
            "void at::native::vectorized_elementwise_kernel<4, at...",
            "Memcpy HtoD (Pageable -> Device)",
        ]
        mm, add, kernel, memcpy = table.rows
        assert (mm.cpu_mem, mm.device_mem, mm.self_device_mem) == (4096, 2 * MB, 2 * MB)
        assert (kernel.self_device_us, kernel.self_device_pct) == (50.0, 71.43)
        assert (memcpy.device_total_us, memcpy.self_device_pct) == (20.0, 28.57)
        assert parsed.extra_cells[0] == {"Node ID": "3"}
        assert parsed.extra_cells[1] == {"Overload Name": "Tensor", "Node ID": "3"}
        assert add.self_cpu_pct == 25.0

    zero = EventList(
        [FunctionEvent(1, "aten::empty", 1, 5, 5, stack=[], overload_name="")],
        use_device=None,
    )
    zero._build_tree()
    parsed = parse_tables(zero.key_averages().table(), "zero")[0]
    row = parsed.table.rows[0]
    assert math.isnan(row.self_cpu_pct) and math.isnan(row.cpu_total_pct)
    assert parsed.footer == {"Self CPU time total": 0.0}


def test_several_tables_in_one_text(profiles: dict[str, Any]) -> None:
    averages = profiles["memory"].key_averages()
    one = averages.table(row_limit=3, header="first")
    two = averages.table(row_limit=5, sort_by="count")
    text = f"--- Profiling Eager ---\n{one}\nsome log line\n{two}\n"
    parsed = parse_tables(text, "two")
    assert [p.title for p in parsed] == ["first", ""]
    assert [len(p.table) for p in parsed] == [3, 5]


# ---- a pasted table with one column deleted ------------------------------------------------


def _drop_column(text: str, title: str) -> str:
    """`text` with the column `title` deleted from its table, as a user deletes it in an
    editor: its cells and the two spaces before them, on every line from the top rule to
    the bottom one (the other columns keep the widths torch printed them at)."""
    import re

    lines = text.splitlines()
    rule = re.compile(r"-+(?:  -+)+ *")
    head = next(
        i
        for i, line in enumerate(lines)
        if " Name " in f" {line} " and i + 1 < len(lines) and rule.fullmatch(lines[i + 1])
    )
    segments = [(m.start(), m.end()) for m in re.finditer(r"-+", lines[head + 1])]
    # a title wider than its column (``CUDA time avg``) shifts the titles after it right
    titles = list(re.finditer(r"\S+(?: \S+)*", lines[head]))
    k = next(k for k, m in enumerate(titles) if m.group() == title)
    start, end = segments[k - 1][1], segments[k][1]
    last = max(i for i, line in enumerate(lines) if rule.fullmatch(line))
    cut = [
        line[:start] + line[end:] if head - 1 <= i <= last else line for i, line in enumerate(lines)
    ]
    title_end = titles[k].end()
    cut[head] = lines[head][: title_end - (end - start)] + lines[head][title_end:]
    assert title not in re.findall(r"\S+(?: \S+)*", cut[head])
    return "\n".join(cut) + "\n"


_SAME_FIELDS = (
    "name",
    "calls",
    "self_cpu_us",
    "cpu_total_us",
    "self_cpu_pct",
    "cpu_total_pct",
    "self_device_us",
    "device_total_us",
    "self_device_pct",
    "cpu_mem",
    "self_cpu_mem",
)


def _compare_without(text: str, title: str, field: str) -> None:
    from profsight.loaders import load_text

    full = parse_tables(text, "full")[0]
    cut_text = _drop_column(text, title)
    assert looks_like_table(cut_text)
    profile = load_text(cut_text, "cut")  # what `profsight table` and `explain` read
    cut = parse_tables(cut_text, "cut")[0]
    assert title not in cut.columns
    assert len(cut.table.rows) == len(full.table.rows) > 3
    assert cut.table.self_cpu_total_us == full.table.self_cpu_total_us
    assert [r.name for r in profile.table().rows] == [r.name for r in full.table.rows]
    total = {False: full.table.self_cpu_total_us, True: full.table.self_device_total_us}
    for a, b in zip(full.table.rows, cut.table.rows, strict=True):
        for name in _SAME_FIELDS:
            if name != field:
                assert getattr(b, name) == getattr(a, name), (a.name, name)
        if field == "calls":  # from the total and the printed average
            assert abs(b.calls - a.calls) <= max(1, 0.005 * a.calls), a.name
        elif field == "cpu_mem":  # no other column gives it
            assert b.cpu_mem == 0
        elif field.endswith("_pct"):  # from the row's time (printed to 4 digits: 0.05%)
            # and the footer's total (torch divides by its own sum, a little off the footer)
            assert getattr(b, field) == pytest.approx(getattr(a, field), rel=1e-3, abs=0.02)
        elif field != EXTRA:  # a time from its share (printed to 0.01%; torch divides by
            # its own sum of the rows, up to 0.03% off the footer in a loaded run) of the total;
            # the row's time and the footer's are each printed to 3 decimals of their unit
            device = "device" in field
            printed = (_printed_step(getattr(a, field)) + _printed_step(total[device])) / 2
            assert getattr(b, field) == pytest.approx(
                getattr(a, field), abs=0.0005 * total[device] + printed + 1e-6
            ), a.name


def _printed_step(us: float) -> float:
    """The step of a time as torch's table prints it (``_format_time``: 3 decimals of s, ms
    or us): a run that crosses 1 s (a loaded machine's) prints its total to the ms."""
    return 1000.0 if us >= 1e6 else 1.0 if us >= 1e3 else 1e-3


EXTRA = ""


@pytest.mark.parametrize(
    ("title", "field"),
    [
        ("Self CPU %", "self_cpu_pct"),
        ("CPU total %", "cpu_total_pct"),
        ("Self CPU", "self_cpu_us"),
        ("CPU total", "cpu_total_us"),
        ("CPU time avg", EXTRA),
        ("CPU Mem", "cpu_mem"),
        ("# of Calls", "calls"),
    ],
)
def test_a_recorded_table_with_a_column_deleted(
    title: str, field: str, recorded_plain: Any
) -> None:
    """torch's own table of a run recorded in this session (profile_memory=True), printed by
    ``key_averages().table()``, with one column deleted."""
    _compare_without(recorded_plain.table_text, title, field)


@pytest.mark.parametrize(
    ("title", "field"),
    [("Self CUDA %", "self_device_pct"), ("Self CUDA", "self_device_us"), ("# of Calls", "calls")],
)
def test_a_real_gpu_table_with_a_column_deleted(title: str, field: str) -> None:
    """A real A100-class table from tests/data/gpu_tables (README: bclarkson-code/flow_matching)."""
    path = DATA / "gpu_tables" / "bclarkson-code__flow_matching__1.txt"
    _compare_without(path.read_text(encoding="utf-8"), title, field)
