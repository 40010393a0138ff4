"""Where a tune's baseline writes its traces."""

from __future__ import annotations


def stack_trace(trace: str) -> str:
    """Where the baseline's pass with the Python stack is written, beside `trace`: the
    lines its advice names."""
    return trace.replace(".pt.trace.json", ".stack.pt.trace.json")
