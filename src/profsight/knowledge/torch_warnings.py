"""The lines torch's C++ side prints to stderr while profiling, and what profsight says of them.

Two writers, both straight to file descriptor 2 (not through Python's ``warnings``: on
torch 2.13's CPU build a profiler stopped twice prints ``[W1205 14:39:14.804528620
profiler_kineto.cpp:942] disableProfiler called but no active profiling session found...``
and no Python warning is raised):

* c10's logging (``TORCH_WARN``, ``LOG(WARNING)``): ``[W224 07:00:55.984698439
  collection.cpp:1116] Warning: ROCTracer produced duplicate flow start: 1 (function
  operator())``: a level letter (``I``, ``W``, ``E``), the date as MMDD, the time, the source
  file and line; ``TORCH_WARN`` adds ``Warning:`` and the function;
* Kineto's logger: ``WARNING:2024-11-11 10:03:10 3100453:3100453 CuptiActivityApi.cpp:94]
  ...``; its ``INFO`` lines and the ``USDT`` trace points (``profiler_start``,
  ``profiler_stop``, printed at every start and stop) narrate the session and are not shown.
"""

from __future__ import annotations

from typing import Final

from profsight.lazy import regex

#: c10's log line; ``level`` is one letter.
C10_LINE: Final = regex(
    r"^\[(?P<level>[IWEF])\d{3,4} [\d:.]+(?: \d+)? (?P<where>[\w.\-/]+:\d+)\] "
    r"(?:Warning: )?(?P<message>.*?)(?: \(function [^()]*(?:\(\))?[^()]*\))?\s*$"
)
#: Kineto's log line; ``level`` is a word.
KINETO_LINE: Final = regex(
    r"^(?P<level>[A-Z]+):\d{4}-\d\d-\d\d [\d:.]+ \d+:\d+ (?P<where>[\w.\-/]+:\d+)\] "
    r"(?P<message>.*?)\s*$"
)
#: The levels shown (c10's letters and Kineto's words); the others narrate.
SHOWN_LEVELS: Final = frozenset({"W", "E", "F", "WARNING", "ERROR"})
#: The levels shown as a warning; a warning of torch's (a flow linked another way, a
#: profiler stopped twice) is a note about the recording.
ERROR_LEVELS: Final = frozenset({"E", "F", "ERROR"})

#: The diagnostic's code, and its text: one per distinct message, with its count.
NATIVE_CODE: Final = "profiler_warning"
NATIVE_MESSAGE: Final = "torch's profiler warned{times} while recording: {message} ({where})"
NATIVE_TIMES: Final = " {count:,} times"

__all__ = [
    "C10_LINE",
    "ERROR_LEVELS",
    "KINETO_LINE",
    "NATIVE_CODE",
    "NATIVE_MESSAGE",
    "NATIVE_TIMES",
    "SHOWN_LEVELS",
]
