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
    _ext_of: dict[int, int] = field(default_factory=dict)

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
        stream: int = STREAM,
        tid: int = HOST,
    ) -> int:
        """A launch call on the host (inside whatever op is open there) and its kernel; a
        blocking call (a read back to the host) lasts `launch_dur`, until its work ends.
        Returns the launch's correlation id."""
        corr = self.runtime(launch, launch_ts, launch_dur, tid=tid)
        self.device_item(name, ts, dur, corr, cat=cat, nbytes=nbytes, stream=stream)
        return corr

    def runtime(self, name: str, ts: float, dur: float = 2.0, tid: int = HOST) -> int:
        """A device runtime call on the host (``cudaEventRecord``, ``cudaStreamWaitEvent``,
        a launch); returns its correlation id."""
        self._corr += 1
        self._ext_of[self._corr] = self.host(
            name, ts, dur, cat="cuda_runtime", tid=tid, correlation=self._corr
        )
        return self._corr

    def device_item(
        self,
        name: str,
        ts: float,
        dur: float,
        corr: int,
        cat: str = "kernel",
        nbytes: int = 0,
        stream: int = STREAM,
    ) -> None:
        """Device work linked to the call whose correlation id is `corr` (a graph's kernels
        share their ``cudaGraphLaunch``'s)."""
        self.events.append(
            {
                "ph": "X",
                "cat": cat,
                "name": name,
                "pid": 0,
                "tid": stream,
                "ts": ts,
                "dur": dur,
                "args": {
                    # as torch writes it for work it cannot place: its launch call's own id
                    **({"External id": self._ext_of[corr]} if corr in self._ext_of else {}),
                    "correlation": corr,
                    "device": 0,
                    "stream": stream,
                    **({"bytes": nbytes} if nbytes else {}),
                },
            }
        )

    def stream_wait(self, ts: float, stream: int, on_stream: int, record: int) -> int:
        """``cudaStreamWaitEvent``: `stream` waits for the event the call with correlation
        `record` recorded on `on_stream`, with the device's own record of the wait (a
        ``cuda_sync`` ``Stream Wait Event``, as torch >= 2.2 writes it)."""
        corr = self.runtime("cudaStreamWaitEvent", ts, 2.0)
        self.events.append(
            {
                "ph": "X",
                "cat": "cuda_sync",
                "name": "Stream Wait Event",
                "pid": 0,
                "tid": stream,
                "ts": ts + 1.0,
                "dur": 0.5,
                "args": {
                    "cuda_sync_kind": "Stream Wait Event",
                    "wait_on_stream": on_stream,
                    "wait_on_cuda_event_record_corr_id": record,
                    "stream": stream,
                    "correlation": corr,
                    "device": 0,
                },
            }
        )
        return corr

    def counters(self, name: str, ts: float, dur: float) -> None:
        """A kernel measured by CUPTI's range profiler (``cuda_profiler_range``)."""
        self.events.append(
            {
                "ph": "X",
                "cat": "cuda_profiler_range",
                "name": name,
                "pid": 0,
                "tid": 0,
                "ts": ts,
                "dur": dur,
                "args": {"smsp__sass_thread_inst_executed_op_ffma_pred_on.sum": 1 << 20},
            }
        )

    def memory(
        self,
        ts: float,
        nbytes: int,
        allocated: int,
        device_type: int = 1,
        reserved: int = -1,
        addr: int = -1,
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
                    **({"Addr": addr} if addr >= 0 else {}),
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
