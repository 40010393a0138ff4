"""Hand-written Chrome traces in torch 2.x's layout, for tests of thresholds.

A trace is written event by event (times in µs, as the file has them), so that a test
states every number its rule sees. These are real trace files, read by the real loader.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HOST = 100
STREAM = 7


@dataclass
class TraceBuilder:
    events: list[dict[str, Any]] = field(default_factory=list)
    devices: list[dict[str, Any]] = field(default_factory=list)
    _ext: int = 0
    _corr: int = 1000

    def host(
        self, name: str, ts: float, dur: float, cat: str = "cpu_op", tid: int = HOST, **args: Any
    ) -> int:
        self._ext += 1
        self.events.append(
            {
                "ph": "X",
                "cat": cat,
                "name": name,
                "pid": HOST,
                "tid": tid,
                "ts": ts,
                "dur": dur,
                "args": {"External id": self._ext, **args},
            }
        )
        return self._ext

    def step(self, n: int, ts: float, dur: float) -> None:
        self.host(f"ProfilerStep#{n}", ts, dur, cat="user_annotation")

    def kernel(
        self,
        name: str,
        launch_ts: float,
        ts: float,
        dur: float,
        cat: str = "kernel",
        launch: str = "cudaLaunchKernel",
        launch_dur: float = 2.0,
        nbytes: int = 0,
    ) -> None:
        """A launch call on the host (inside whatever op is open there) and its kernel; a
        blocking call (a read back to the host) lasts `launch_dur`, until its work ends."""
        self._corr += 1
        ext = self.host(launch, launch_ts, launch_dur, cat="cuda_runtime", correlation=self._corr)
        self.events.append(
            {
                "ph": "X",
                "cat": cat,
                "name": name,
                "pid": 0,
                "tid": STREAM,
                "ts": ts,
                "dur": dur,
                "args": {
                    "External id": ext,
                    "correlation": self._corr,
                    "device": 0,
                    "stream": STREAM,
                    **({"bytes": nbytes} if nbytes else {}),
                },
            }
        )

    def memory(
        self, ts: float, nbytes: int, allocated: int, device_type: int = 1, reserved: int = -1
    ) -> None:
        self.events.append(
            {
                "ph": "i",
                "s": "t",
                "cat": "cpu_instant_event",
                "name": "[memory]",
                "pid": HOST,
                "tid": HOST,
                "ts": ts,
                "args": {
                    "Bytes": nbytes,
                    "Total Allocated": allocated,
                    **({"Total Reserved": reserved} if reserved >= 0 else {}),
                    "Device Type": device_type,
                    "Device Id": 0,
                },
            }
        )

    def gpu(self, name: str = "NVIDIA A100-SXM4-80GB", memory: int = 80 * 2**30) -> None:
        self.devices.append(
            {"id": 0, "name": name, "totalGlobalMem": memory, "computeMajor": 8, "computeMinor": 0}
        )

    def write(self, path: Path) -> Path:
        doc = {"schemaVersion": 1, "deviceProperties": self.devices, "traceEvents": self.events}
        path.write_text(json.dumps(doc))
        return path
