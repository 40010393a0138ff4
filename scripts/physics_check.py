"""Physics on the raw figures over every trace under the given folders (default: the real
profiles of ../shared/data/real, the labelled corpus included): each figure that breaks what
the hardware can do (`profsight.analyses.physics`), and a header whose device busy time does
not fit its window.

    .venv/bin/python scripts/physics_check.py [FOLDER ...]

Prints one line per break and the count; exits 1 when there is any. `tests/test_physics.py`
checks the same on tests/data.
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import profsight
from profsight.analyses.pipeline import diagnose
from profsight.errors import ProfsightError
from profsight.model.overview import overview
from profsight.model.profile import Profile

ROOT = Path(__file__).resolve().parent.parent
DEFAULT = ROOT.parent / "shared" / "data" / "real"


def _traces(folders: list[Path]) -> list[Path]:
    found = {p for f in folders for p in f.rglob("*.json*") if p.is_file()}
    return sorted(p for p in found if "malformed" not in p.parts)


def main(folders: list[Path]) -> int:
    breaks = checked = 0
    for path in _traces(folders):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                profile = profsight.load(path)
                if not isinstance(profile, Profile):
                    continue
                diagnosis = diagnose(profile)
                o = overview(profile)
        except ProfsightError:
            continue  # not a trace profsight reads (a report, an execution trace)
        checked += 1
        found = [d.message for d in diagnosis.diagnostics]
        if o.device_busy_us > o.window_us + 1e-3:
            busy, window = o.device_busy_us, o.window_us
            found.append(f"device busy {busy:.1f} µs over a {window:.1f} µs window")
        for message in found:
            print(f"{path}: {message}")
        breaks += len(found)
    print(f"{breaks} figure(s) break physics in {checked} traces")
    return 1 if breaks else 0


if __name__ == "__main__":
    sys.exit(main([Path(a) for a in sys.argv[1:]] or [DEFAULT]))
