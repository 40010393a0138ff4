"""What to do about each kind of bottleneck: the rules' thresholds, sources and advice.

Thresholds cite where they come from: the TensorBoard profiler plugin's recommendation
rules (``torch_tb_profiler/profiler/data.py``: DataLoader > 5% of the step, communication
> 10%, GPU utilisation < 50%, tensor-core eligible work on FP32, memory > 90% of the
device), or profsight's own measurement on the planted-bottleneck runs of
``tests/scenarios.py`` (noted "measured").

The constants live by concern in this package's modules; this module names them all, so
that ``advice.NAME`` reads any of them.
"""

from __future__ import annotations

from profsight.knowledge.advice.finding_texts import *  # noqa: F403
from profsight.knowledge.advice.setup_texts import *  # noqa: F403
from profsight.knowledge.advice.table_texts import *  # noqa: F403
from profsight.knowledge.advice.thresholds import *  # noqa: F403
from profsight.knowledge.advice.verdict_texts import *  # noqa: F403
