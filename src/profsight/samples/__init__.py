"""Sample profiler output shipped with profsight (see ``README.md`` in this folder)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

SAMPLE_TRACE = "resnet18_lightning_cpu.pt.trace.json.gz"


def sample_trace() -> Path:
    """The bundled trace: a Lightning fit of a ResNet-18 on the CPU (torch 2.13)."""
    from pathlib import Path  # (here: a trace's run has no other use for pathlib, ~3 ms)

    return Path(os.path.dirname(__file__), SAMPLE_TRACE)
