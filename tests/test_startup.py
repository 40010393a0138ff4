"""Start-up: what a small input's run imports, and the pieces that keep it short.

A 3-event trace's ``explain`` costs start-up and little else; issue 39 asks that it stay
near ``import numpy, msgspec``. Its time is measured by ``benchmarks/bench_real.py``; here
the imports that made it slow are held out, so that they do not creep back.
"""

from __future__ import annotations

import copy
import gc
import importlib
import pickle
import re
import subprocess
import sys
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from profsight import json_text, paths
from profsight.job.executors import in_dask_worker
from profsight.job.summary import summarize
from profsight.lazy import NEEDLES, _LazyPattern, regex
from profsight.regex_needle import _branches, _inline_flags, needle
from profsight.stats import SMALL, median, percentile, setdiff, union, unique

from conftest import DATA

MINIMAL = DATA / "minimal" / "minimal.pt.trace.json"
PACKAGE = Path(__file__).resolve().parents[1] / "src" / "profsight"
#: Modules a trace's explanation as JSON has no use for: the terminal's (rich), the text
#: loaders, the other commands' and formats', numpy's masked arrays (np.median's NaN check),
#: importlib.resources' zipfile, shutil (argparse's and the terminal's width: it brings bz2
#: and lzma), traceback and signal (a failed or stopped decoding worker's), dataclasses (the
#: records are msgspec Structs), numpy.typing (for the type checker only), pathlib (with
#: urllib.parse and ipaddress: the run's paths are strings), json (`json_text` reads and writes
#: a trace's JSON fields as it does), and the libraries only tests and integrations use.
NOT_IMPORTED = (
    "rich",
    "shutil",
    "traceback",
    "signal",
    "dataclasses",
    "numpy.typing",
    "pathlib",
    "json",
    "pandas",
    "torch",
    "numpy.ma",
    "zipfile",
    "profsight.loaders.text",
    "profsight.loaders.table_text",
    "profsight.loaders.lightning_text",
    "profsight.compare.diff",
    "profsight.job",
    "profsight.renderers.html",
    "profsight.integrations",
)
_PARENTS = tuple(f"{m}." for m in NOT_IMPORTED)
#: profsight's own modules such a run imports: 162 on 2026-12-06 (168 before each command's
#: module was imported only when named, 173 before the text loaders were deferred). A new
#: import on this path must be worth its start-up.
OWN_MODULES = 164

_PROBE = """
import sys
from profsight.cli.entry import run
code = run(["explain", sys.argv[1], "--format", "json", "-o", sys.argv[2]])
print(code)
print(" ".join(sorted(sys.modules)))
"""


def test_a_small_trace_imports_only_its_path(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, str(MINIMAL), str(tmp_path / "report.json")],
        capture_output=True,
        text=True,
        check=True,
    )
    code, modules = done.stdout.splitlines()[-2:]
    assert code == "0"
    loaded = modules.split()
    found = [m for m in loaded if m in NOT_IMPORTED or m.startswith(_PARENTS)]
    assert found == []
    own = [m for m in loaded if m.split(".")[0] == "profsight"]
    assert 100 < len(own) <= OWN_MODULES, len(own)


_GC_PROBE = """
import gc, os, sys
from profsight.cli.entry import entry
end = os._exit
os._exit = lambda code: (print(code, gc.isenabled(), flush=True), end(code))
entry()
"""


@pytest.mark.parametrize(
    ("argv", "collecting"),
    [
        (["explain", str(MINIMAL), "--format", "json", "-o", "REPORT"], False),
        (["table", str(MINIMAL)], False),
        (["job", "/no/such/folder"], True),  # (a job can run for many ranks: it collects)
    ],
)
def test_a_bounded_command_runs_without_the_cyclic_collector(
    tmp_path: Path, argv: list[str], collecting: bool
) -> None:
    """The console script turns Python's cyclic garbage collector off for the commands that
    read, write and end (`entry.BOUNDED`), and leaves it on for the others."""
    argv = [str(tmp_path / "r.json") if a == "REPORT" else a for a in argv]
    done = subprocess.run([sys.executable, "-c", _GC_PROBE, *argv], capture_output=True, text=True)
    code, enabled = done.stdout.split()[-2:]
    assert (code, enabled) == ("1" if collecting else "0", str(collecting))


def test_output_cut_short_ends_quietly() -> None:
    """The console script exits at once after flushing (no teardown): a reader that stops
    early (``| head -1``) gets its line and no "Exception ignored" from the interpreter."""
    script = Path(sys.executable).with_name("profsight")
    done = subprocess.run(
        f"'{script}' explain '{MINIMAL}' | head -1",
        shell=True,
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout.startswith("Source: ")
    assert "Exception" not in done.stderr and "Traceback" not in done.stderr


@pytest.mark.parametrize("kind", ["float", "int", "nan", "ties"])
def test_median_is_numpys(kind: str) -> None:
    rng = np.random.default_rng(7)
    for n in range(1, 40):
        if kind == "float":
            values = rng.random(n) * 10.0 ** rng.integers(-6, 13)
        elif kind == "int":
            values = rng.integers(-(10**15), 10**15, n)
        elif kind == "ties":
            values = rng.integers(0, 3, n).astype(np.float64)
        else:
            values = rng.random(n)
            values[rng.integers(0, n)] = np.nan
        expected = float(np.median(values))
        got = median(values)
        assert got == expected or (np.isnan(got) and np.isnan(expected)), (values, got)
    assert np.isnan(median(np.array([])))


def test_a_lazy_regex_is_a_compiled_one() -> None:
    lazy = regex(r"^(?P<arch>sm\d+)_", re.IGNORECASE)
    assert repr(lazy) == "regex('^(?P<arch>sm\\\\d+)_')"
    assert lazy.pattern == r"^(?P<arch>sm\d+)_"  # known before it is compiled
    # copied and pickled before compiling (a dunder probe must not compile or recurse)
    assert copy.copy(lazy).pattern == lazy.pattern
    again = pickle.loads(pickle.dumps(lazy))
    match = lazy.search("SM80_xmma_gemm")
    assert match is not None and match["arch"] == "SM80"
    assert lazy.flags == re.compile(lazy.pattern, re.IGNORECASE).flags
    assert lazy.sub("", "sm90_gemm") == "gemm"
    assert again.match("sm75_x") is not None
    assert pickle.loads(pickle.dumps(lazy)).groupindex == {"arch": 1}


def _top_level_branches(source: str, flags: int) -> list[list[str]]:
    """For each top-level alternative the scan splits a pattern into, `re`'s own parse of it
    alone: its runs of literals at the top level, each of which every match contains. A
    split inside a group, a class or an escape would leave a piece `re` cannot compile."""
    start, inline = _inline_flags(source)
    pieces = _branches(source, start)
    return [_literal_runs(list(re._parser.parse(p, flags | inline))) for p in pieces]  # type: ignore[attr-defined]


def _literal_runs(items: list[tuple[Any, Any]]) -> list[str]:
    """Adjacent literals; a literal repeated at least once (``a+``) ends its run."""
    constants = re._constants  # type: ignore[attr-defined]
    runs, run = [], ""
    for op, value in items:
        if op is constants.LITERAL:
            run += chr(value)
            continue
        repeated = op in (constants.MAX_REPEAT, constants.MIN_REPEAT)
        if repeated and value[0] >= 1 and [i[0] for i in value[2]] == [constants.LITERAL]:
            run += chr(value[2][0][1])
        runs.append(run)
        run = ""
    return [r for r in (*runs, run) if r]


def _package_patterns() -> list[tuple[str, int]]:
    """Every lazy pattern in the package's modules."""
    for module in sorted(p for p in PACKAGE.rglob("*.py")):
        dotted = ".".join(module.relative_to(PACKAGE.parent).with_suffix("").parts)
        if "__main__" not in dotted and ".integrations" not in dotted:
            importlib.import_module(dotted.removesuffix(".__init__"))
    return [(p.pattern, p._flags) for p in gc.get_objects() if type(p) is _LazyPattern]


def test_every_needle_is_text_each_match_holds() -> None:
    """A lazy pattern rules a string out, uncompiled, when it lacks the pattern's needle
    (`regex_needle`). Each of the package's needles lies inside a run of literals that `re`'s
    own parser finds at the pattern's top level, so no string it rules out could match."""
    patterns = _package_patterns()
    assert len(patterns) > 250
    screened = 0
    for source, flags in patterns:
        found = needle(source, flags)
        if found is None:
            continue
        needles, folded = found
        assert folded == bool(re.compile(source, flags).flags & re.IGNORECASE), source
        branches = _top_level_branches(source, flags)
        assert len(branches) == len(needles), (source, needles)
        for text, runs in zip(needles, branches, strict=True):
            assert any(text in (r.lower() if folded else r) for r in runs), (source, text, runs)
        screened += 1
    assert screened > 150  # most of the kernel and collective tables


def test_the_needle_table_is_the_scan_of_every_pattern() -> None:
    """``regex_needles.json`` holds each of the package's lazy patterns once, with the
    needle the scan gives it, and nothing else (checked by the script that writes it, in a
    process of its own: patterns the tests make do not count). A pattern it lacks is
    scanned at its first use."""
    script = PACKAGE.parents[1] / "scripts" / "needles.py"
    done = subprocess.run([sys.executable, str(script), "--check"], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert len(NEEDLES) > 250
    assert all(NEEDLES[key] == needle(*key) for key in NEEDLES)


@pytest.mark.parametrize(
    ("source", "flags", "expected"),
    [
        (r"ab?c", 0, (("a",), False)),  # b may be absent: "ac" would rule out "abc"
        (r"xyab*c", 0, (("xya",), False)),
        (r"ab+cd", 0, (("ab",), False)),  # b repeats: "abcd" would rule out "abbcd"
        (r"abc{2}def", 0, (("def",), False)),
        (r"(?i)FooBar_x", 0, (("foobar_x",), True)),
        (r"FooBar", re.IGNORECASE, (("foobar",), True)),
        (r"lib\.so\d", 0, (("lib.so",), False)),
        (r"[)(|]abc(?:x|yz)_d", 0, (("abc",), False)),
        (r"^Memset\b", 0, (("Memset",), False)),
        (r"abc|x\|yz|(?:a|b)cd", 0, (("abc", "x|yz", "cd"), False)),
        (r"abc|[ab]", 0, None),
        (r"(?s)(?i)NCCL", 0, (("nccl",), True)),  # every leading flag group read
        (r"(?s)(?x) abc # c", 0, None),
        (r"ab(?#c)?", 0, None),  # a comment: its quantifier applies to the b
        ("(?x:a#)xyz\n)bc", 0, None),  # verbose inside a group
        (r"abc", re.VERBOSE, None),
        (r"foo{bar}", 0, None),
        (r"(?:a|b)[0-9]", 0, None),
    ],
)
def test_a_needle_is_what_every_match_holds(
    source: str, flags: int, expected: tuple[tuple[str, ...], bool] | None
) -> None:
    assert needle(source, flags) == expected


def test_a_screened_pattern_answers_as_the_compiled_one() -> None:
    """Before and after the first compile, on strings with and without the needle, and
    under ignore-case on a string `re` folds to ASCII ("\u017f" matches "s")."""
    cases = [
        ("cutlass_(?P<sm>\\d+)_", 0),
        ("Sgemm_(?P<t>\\d+)", re.IGNORECASE),
        ("^volta_|cutlass_|\\u017f", 0),
    ]
    strings = ["sm80_cutlass_80_x", "nothing", "volta_SGEMM_128", "\u017fgemm_1", "cutlass_"]
    for source, flags in cases:
        compiled = re.compile(source, flags)
        lazy = regex(source, flags)
        for string in [*strings, *strings]:  # the second pass runs on the compiled pattern
            for method in ("search", "match", "fullmatch"):
                ours, theirs = getattr(lazy, method)(string), getattr(compiled, method)(string)
                assert (ours and ours.span()) == (theirs and theirs.span()), (source, string)
        bounded = (lazy.search("xx_cutlass_7_", 2), compiled.search("xx_cutlass_7_", 2))
        assert [m and m.span() for m in bounded] == [(3, 13), (3, 13)] or source != cases[0][0]


@pytest.mark.parametrize("size", [0, 5, 3000, 9000])
def test_set_operations_are_numpys(size: int) -> None:
    """`profsight.stats`' unique, setdiff and union give numpy's arrays (values and dtype),
    on both sides of `SMALL`."""
    rng = np.random.default_rng(size)
    for a, b in (
        (rng.integers(0, size + 3, size), rng.integers(0, size + 3, size // 2)),
        (rng.random(size).round(2), rng.random(size // 3).round(2)),
    ):
        if size:
            a[0] = b[0] if len(b) else a[0]
        if size > 2 and a.dtype.kind == "f":  # NaNs: numpy keeps one, at the end
            a[1] = a[2] = np.nan
        for ours, theirs in (
            (unique(a), np.unique(a)),
            (setdiff(a, b), np.setdiff1d(a, b)),
            (union(a, b), np.union1d(a, b)),
        ):
            assert ours.dtype == theirs.dtype
            assert np.array_equal(ours, theirs, equal_nan=True)
    assert 3000 < SMALL < 9000  # the sizes above take both of unique's paths


def test_percentile_is_numpys() -> None:
    rng = np.random.default_rng(3)
    for n in range(1, 60):
        for values in (
            rng.random(n) * 10.0 ** rng.integers(-3, 9),
            rng.integers(-(10**9), 10**9, n),
            rng.integers(0, 4, n).astype(np.float64),
        ):
            for q in (10, 50, 90, 99):
                assert percentile(values, q) == float(np.percentile(values, q)), (values, q)
    assert np.isnan(percentile(np.array([1.0, np.nan]), 90))


def test_the_parser_imports_no_numpy() -> None:
    """``profsight --help`` and a usage error answer before numpy and the model load: each
    command imports its own path when it runs."""
    probe = (
        "import sys\n"
        "from profsight.cli.main import build_parser\n"
        "build_parser()\n"
        "print(' '.join(sorted(sys.modules)))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    loaded = done.stdout.split()
    assert "numpy" not in loaded
    assert not [m for m in loaded if m.startswith(("profsight.loaders", "profsight.model"))]


#: What a job's worker has no use for: the report's and the command line's modules, the
#: text loaders, and the libraries of the terminal, of tests and of the cluster itself.
WORKER_NOT_IMPORTED = (
    "rich",
    "pandas",
    "torch",
    "numpy.ma",
    "profsight.cli",
    "profsight.report",
    "profsight.renderers",
    "profsight.compare",
    "profsight.integrations",
    "profsight.loaders.text",
    "profsight.loaders.table_text",
)
#: profsight's modules a worker imports for its first rank: 136 on 2026-12-05.
WORKER_OWN_MODULES = 140

_WORKER_PROBE = """
import pickle, sys
task = pickle.loads(sys.stdin.buffer.read())
print(type(task(sys.argv[1])).__name__)
print(" ".join(sorted(sys.modules)))
"""


def test_a_job_worker_imports_only_a_ranks_analysis() -> None:
    """A spawned pool worker or a Dask worker gets the task pickled, as Dask sends it: it
    imports what loading and diagnosing a rank needs, and nothing of the report's."""
    done = subprocess.run(
        [sys.executable, "-c", _WORKER_PROBE, str(MINIMAL)],
        input=pickle.dumps(partial(in_dask_worker, summarize)),
        capture_output=True,
        check=True,
    )
    kind, modules = done.stdout.decode().splitlines()[-2:]
    assert kind == "RankSummary"
    loaded = modules.split()
    parents = tuple(f"{m}." for m in WORKER_NOT_IMPORTED)
    assert [m for m in loaded if m in WORKER_NOT_IMPORTED or m.startswith(parents)] == []
    own = [m for m in loaded if m.split(".")[0] == "profsight"]
    assert 100 < len(own) <= WORKER_OWN_MODULES, len(own)


_JSON_TEXTS = [
    "[[8, 16], [4, 16]]",
    "[[], [1024], []]",
    '["float", "c10::Half", ""]',
    "[1, 1]",
    "[true, false]",
    "NaN",
    "[-Infinity, 1]",
    "[1e400]",
    "1" + "0" * 400 + ".0",
    '"\\ud800"',
    "float",
    "",
    "[1,]",
    '{"a": 1, "a": 2}',
    "[0.1, -0.0, 2.5e-308]",
    "[" + "9" * 60 + ", -" + "1" * 40 + "]",
]


@pytest.mark.parametrize("text", _JSON_TEXTS)
def test_json_text_reads_as_json_does(text: str) -> None:
    """`json_text.loads` gives json's value or raises where json raises, NaN, infinities and
    lone surrogates included (msgspec refuses those: json reads them)."""
    import json

    try:
        expected: Any = json.loads(text)
    except ValueError:
        with pytest.raises(ValueError):
            json_text.loads(text)
        return
    found = json_text.loads(text)
    assert repr(found) == repr(expected) and type(found) is type(expected)
    as_bytes = json_text.loads(text.encode())  # (the loaders' bytes)
    assert repr(as_bytes) == repr(expected)


@pytest.mark.parametrize(
    "value", [[8, 16], [[1, 2], [3]], [], [True, 1], [1.5, None], ["a", "\u00e9"], 7, -3]
)
def test_json_text_writes_as_json_does(value: Any) -> None:
    import json

    assert json_text.dumps(value) == json.dumps(value)


def test_json_text_agrees_with_json_on_random_numbers() -> None:
    import json

    rng = np.random.default_rng(11)
    for exponent in rng.integers(-320, 320, 3000):
        text = f"[{rng.random():.17f}e{exponent}, {int(rng.integers(-(2**62), 2**62))}]"
        assert repr(json_text.loads(text)) == repr(json.loads(text)), text


def test_paths_are_spelled_as_pathlib_spells_them() -> None:
    """`profsight.paths` (the run's paths without pathlib's imports): the path, its name,
    parent and suffix as `PurePosixPath` gives them, over every path of up to four parts
    of these, with no, one, two or three leading slashes and with or without a trailing one."""
    import itertools
    from pathlib import PurePosixPath

    parts = ["a", "b.c", ".", "..", "", "x.json", ".json", "report."]
    checked = 0
    for count in range(5):
        for combo in itertools.product(parts, repeat=count):
            for lead, trail in itertools.product(("", "/", "//", "///"), ("", "/")):
                text = lead + "/".join(combo) + trail
                ref = PurePosixPath(text)
                found = (paths.pure(text), paths.name(text), paths.parent(text))
                assert found == (str(ref), ref.name, str(ref.parent)), text
                assert paths.suffix(text) == ref.suffix, text
                checked += 1
    assert checked > 30_000
