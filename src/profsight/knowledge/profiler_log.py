"""What Kineto's own log, kept in the trace, says about the recording.

Kineto collects the messages it logs while profiling and writes them into the trace's
top-level fields, one list per level (``"INFO"``, ``"WARNING"``, ``"ERROR"``: libkineto's
``LoggerCollector``, added by ``CuptiActivityProfiler`` when it finalizes the trace), each
message with glog's prefix (``ERROR:2024-11-11 10:03:10 3100453:3100453
DeviceProperties.cpp:47] gpuGetDeviceCount failed with code 35``: HTA's MTIA traces).

Three of its warnings say that device records were lost (libkineto's ``CuptiActivityApi``
and ``RoctracerLogger``):

* ``Dropped N activity records``: CUPTI had no room for N records of a buffer (logged from
  CUPTI's own count, ``cuptiActivityGetNumDroppedRecords``);
* ``Exceeded max GPU buffer count (...) - terminating tracing``: the activity buffers reached
  their cap (``ACTIVITIES_MAX_GPU_BUFFER_SIZE_MB``, 128 MB by default) and device tracing
  stopped there;
* ``... activity collection was stopped early ...``: the same stop, said at the end.
"""

from __future__ import annotations

import re
from typing import Final

from profsight.lazy import regex

#: The trace's top-level fields that hold Kineto's log, by level (INFO is left out: it
#: narrates the session, it does not say anything went wrong).
LOG_LEVELS: Final = ("WARNING", "ERROR")

#: glog's prefix on each message: level, date, time, pid:tid, file:line].
LOG_PREFIX: Final = regex(r"^[A-Z]+:\S+ \S+ \d+:\d+ \S+\] ")

#: Messages that say device records were lost; group 1, where present, is how many.
LOST_RECORDS: Final = regex(
    r"Dropped (\d+) activity records"
    r"|Exceeded max GPU buffer count.*terminating tracing"
    r"|activity collection was stopped early",
    re.IGNORECASE,
)

LOST_MESSAGE: Final = (
    "the profiler's own log says it lost device records ({first}{more}): the device's "
    "time of the window is short by what they ran, and work after the stop is missing"
)
LOST_DROPPED: Final = "; {count:,} records dropped in all"
LOST_REMEDY: Final = (
    "profile fewer steps at once (a shorter active phase in the schedule), or give Kineto "
    "larger activity buffers (ACTIVITIES_MAX_GPU_BUFFER_SIZE_MB in a KINETO_CONFIG file)"
)
LOGGED_MESSAGE: Final = 'the profiler logged {count} {what} while recording{which}: "{first}"'
LOGGED_FIRST: Final = " (the first shown)"


def message_text(line: str) -> str:
    """A logged message without glog's prefix."""
    return LOG_PREFIX.sub("", line, count=1).strip()


__all__ = [
    "LOGGED_FIRST",
    "LOGGED_MESSAGE",
    "LOG_LEVELS",
    "LOG_PREFIX",
    "LOST_DROPPED",
    "LOST_MESSAGE",
    "LOST_RECORDS",
    "LOST_REMEDY",
    "message_text",
]
