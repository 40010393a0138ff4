"""Which finding comes first when several explain the same time: causes before symptoms.

Findings rank by what fixing them would save in the steady step (`model.findings.ranked`).
Two rules refine that order, both from what an expert fixes first (issue 36):

* Where several host-side findings explain the same idle device, the one that names what the
  device waits on comes first: a device-to-host copy with a stream sync per element is a
  sync; thousands of 2 µs kernels launched back to back are launch overhead; Python between
  ops with the launch queue empty is module overhead; an idle device is the symptom all of
  them share, and comes after whichever of them explains it.
* The verdict ("the model is small for this hardware") is a conclusion drawn from the causes,
  never a finding that outranks them: it comes after every cause and before the notes on the
  profile itself.

This module is knowledge: it imports nothing of profsight's.
"""

from __future__ import annotations

from typing import Final

#: Host-side findings of an idle device, from the most specific (what the device waits on)
#: to the symptom they share. A finding earlier here comes before a later one whose time it
#: explains (`SAME_TIME_FRACTION`).
HOST_CAUSES: Final = (
    "data_loading",  # the device waits on the input
    "host_device_sync",  # on a host that waits on the device (a read back per element)
    "launch_overhead",  # on launches of kernels shorter than their launch
    "module_overhead",  # on Python between ops, the launch queue empty
    "per_step_overhead",  # on the step's fixed host cost
    "host_lead_in",  # on the host's work before the step's first launch
    "gpu_idle",  # the symptom: idle, whatever the host did
)
#: The verdict restated as a finding (`analyses.findings.model_habits.complexity`).
VERDICT_CATEGORY: Final = "model_complexity"
#: The category of findings about the profile itself (start-up, missing device activity,
#: the profiler's own cost).
PROFILE_CATEGORY: Final = "profiler_setup"
#: A more specific finding explains a later one's time when the time their fixes remove in
#: common is at least this share of what the later one's fix removes: it then names the
#: cause of most of that time. On a trace "in common" is measured by replaying both fixes
#: together (what each saves alone, less what they save together); a printed table cannot
#: tell, and takes the smaller saving as shared.
SAME_TIME_FRACTION: Final = 0.5


def precedence(category: str) -> int:
    """Where `category` stands among the host-side findings (`HOST_CAUSES`): smaller first;
    every other category after them, equal."""
    try:
        return HOST_CAUSES.index(category)
    except ValueError:
        return len(HOST_CAUSES)
