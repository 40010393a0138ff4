"""``profsight tune``: profile a short run of the user's training, apply the fixes its findings
ask for one at a time (each in a fresh process, same seed, same steps), measure each, combine
the ones that helped, and say what they save per step, per epoch and in device-hours.

Needs torch. ``profsight.tune`` is imported only by the ``tune`` command and by the user.
"""

from __future__ import annotations

from profsight.tune.loop import LightningTraining, Training
from profsight.tune.session import tune
from profsight.tune.view import Tuned

__all__ = ["LightningTraining", "Training", "Tuned", "tune"]
