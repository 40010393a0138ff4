"""Sample profiler output shipped with profsight (see ``README.md`` in this folder)."""

from __future__ import annotations

from pathlib import Path

SAMPLE_TRACE = "resnet18_lightning_cpu.pt.trace.json.gz"


def sample_trace() -> Path:
    """The bundled trace: a Lightning fit of a ResNet-18 on the CPU (torch 2.13)."""
    return Path(__file__).with_name(SAMPLE_TRACE)
