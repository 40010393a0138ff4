"""Numbers as people read them: torch's table formats (``1.234ms``, ``-1.70 MB``) and short ones."""

from __future__ import annotations

import math
from typing import Any

_KB = 1024
_MB = 1024 * _KB
_GB = 1024 * _MB


def torch_time(us: float) -> str:
    """``123.456us``, ``1.234ms``, ``1.234s``: torch's ``_format_time``."""
    if us >= 1_000_000:
        return f"{us / 1_000_000:.3f}s"
    if us >= 1000:
        return f"{us / 1000:.3f}ms"
    return f"{us:.3f}us"


def torch_memory(nbytes: int) -> str:
    """``0 B``, ``64.00 KB``, ``-1.70 MB``: torch's ``_format_memory``, binary units with
    torch's labels, for the table as torch prints it only (`short_bytes` everywhere else)."""
    size = abs(nbytes)
    if size >= _GB:
        return f"{nbytes / _GB:.2f} GB"
    if size >= _MB:
        return f"{nbytes / _MB:.2f} MB"
    if size >= _KB:
        return f"{nbytes / _KB:.2f} KB"
    return f"{nbytes} B"


def torch_percent(value: float, total_nonzero: bool = True) -> str:
    return f"{value:.2f}%" if total_nonzero else "NaN"


def short_time(us: float) -> str:
    """Compact time for trees and notes: ``812 µs``, ``12.3 ms``, ``1.52 s``."""
    if us >= 1_000_000:
        return f"{us / 1_000_000:.2f} s"
    if us >= 10_000:
        return f"{us / 1000:.1f} ms"
    if us >= 1000:
        return f"{us / 1000:.2f} ms"
    return f"{us:.0f} µs" if us >= 10 else f"{us:.1f} µs"


def short_bytes(n: float) -> str:
    """Bytes in IEC units, labelled as such (``1.20 GiB``, ``51.0 GiB``, ``340 KiB``): two
    decimals under 10, one under 100, none above, as the page's ``fmtBytes`` writes them, so
    a size reads the same in every format. A bandwidth stays decimal (`short_rate`), as
    links are quoted; torch's own table keeps its labels (`torch_memory`)."""
    size = abs(n)
    for unit, scale in (("GiB", _GB), ("MiB", _MB), ("KiB", _KB)):
        if size >= scale:
            value = n / scale
            digits = 2 if abs(value) < 10 else 1 if abs(value) < 100 else 0
            return f"{value:.{digits}f} {unit}"
    return f"{n:.0f} B"


def short_rate(gb_per_s: float) -> str:
    """A bandwidth in decimal units: ``3.35 TB/s``, ``12.3 GB/s``, ``180 MB/s``, ``2.7 KB/s``."""
    for unit, size in (("TB/s", 1e3), ("GB/s", 1.0), ("MB/s", 1e-3), ("KB/s", 1e-6)):
        if gb_per_s >= size:
            return f"{gb_per_s / size:.3g} {unit}"
    return f"{gb_per_s * 1e9:.3g} B/s"


def short_flops(flops: float, per_second: bool = False) -> str:
    """An amount of floating-point work in decimal units, three digits: ``1.23 GFLOP``,
    ``440 MFLOP``, ``12.4 TFLOP/s`` (never ``0.00 GFLOP`` for a small model's step)."""
    suffix = "FLOP/s" if per_second else "FLOP"
    for prefix, size in (("P", 1e15), ("T", 1e12), ("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if flops >= size:
            return f"{flops / size:.3g} {prefix}{suffix}"
    return f"{flops:.3g} {suffix}"


def clean_floats(value: Any) -> Any:
    """Floats rounded to the nanosecond (µs with 3 decimals); NaN and infinities as null."""
    if isinstance(value, float):
        return round(value, 3) if math.isfinite(value) else None
    if isinstance(value, dict):
        return {str(k): clean_floats(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [clean_floats(v) for v in value]
    return value
