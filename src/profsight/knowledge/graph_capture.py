"""CUDA (and HIP) graph capture: the calls that open and close it, and what a window holding it
says.

Between ``cudaStreamBeginCapture`` and ``cudaStreamEndCapture`` a stream records the work
launched on it into a graph instead of running it (CUDA runtime API, "Graph Management" and
"Stream Management": ``cudaStreamBeginCapture`` "begin graph capture on a stream ... work
captured is not enqueued for execution"); ``cudaGraphInstantiate`` then turns the graph into
an executable one that ``cudaGraphLaunch`` replays. HIP has the same calls with ``hip``
(ROCm's ``hipStreamBeginCapture``, ``hipGraphInstantiateWithFlags``); the driver API has
``cuStreamBeginCapture``. torch.cuda.graph (``CUDAGraph.capture_begin``), torch.compile's
``mode="reduce-overhead"`` (cudagraph trees record with ``CUDAGraphNode.record``), vLLM's and
SGLang's start-up (``capture_model``: one graph per batch size, TraceLens names the profiled
capture ``capture_<batch>_<mode>``) all capture so.

Profiled, a capture shows the host running the model's Python and ops once, its launch
calls queuing nothing, and (almost) no kernel on the device: not a step the hardware ran.
Names as Kineto records the runtime calls (libkineto's CUPTI callback names: the ``_ptsz``
per-thread-stream forms too) and as roctracer records HIP's.
"""

from __future__ import annotations

from typing import Final

from profsight.lazy import regex

#: Calls that start recording a stream into a graph.
CAPTURE_BEGIN: Final = regex(
    r"^(?:cuda|hip)StreamBeginCapture(?:ToGraph)?(?:_ptsz|_spt)?$"
    r"|^cuStreamBeginCapture(?:ToGraph)?(?:_v2)?(?:_ptsz)?$"
)
#: Calls that stop it and hand back the graph.
CAPTURE_END: Final = regex(
    r"^(?:cuda|hip)StreamEndCapture(?:_ptsz|_spt)?$|^cuStreamEndCapture(?:_ptsz)?$"
)
#: Calls that make a captured graph executable (once per graph, before its replays).
GRAPH_INSTANTIATE: Final = regex(
    r"^(?:cuda|hip)GraphInstantiate(?:WithFlags|WithParams)?$"
    r"|^cuGraphInstantiate(?:WithFlags|WithParams)?(?:_v2)?$"
)

#: Ranges that frameworks record around their capture phase, its warm-up runs included:
#: torch.compile's cudagraph trees (torch/_inductor/cudagraph_trees.py, ``CUDAGraphNode.
#: record`` under ``dynamo_timed``), SGLang's ``capture_graph_bs_<n>`` (model_runner's
#: ``mark_trace``) and the ``capture_<batch>_<mode>`` ranges of vLLM's and SGLang's profiled
#: captures (TraceLens's inference test traces: ``capture_32_FULL``, ``capture_8192_PIECEWISE``,
#: ``capture_32_DECODE``).
CAPTURE_RANGES: Final = regex(
    r"^CUDAGraphNode\.record\b|^capture_graph_bs_\d+$|^capture_\d+_[A-Z][A-Z_]*$"
)

#: Past this share of the steps (or of the window, without steps), the profile shows a graph
#: capture rather than steps: the one-time rule of `advice.STARTUP_DOMINANT_PCT` (a capture
#: is one-time work: the model runs once on the host to be recorded), for the same reason:
#: what is left beside it is too little to judge the run by.
CAPTURE_DOMINANT_PCT: Final = 50.0

CAPTURE_TITLE: Final = "The profile records a CUDA-graph capture, not steps: not judged"
CAPTURE_PART_TITLE: Final = "A CUDA-graph capture inside the profiled window"
CAPTURE_EXPLANATION: Final = (
    "While a stream is captured, the kernels launched on it are recorded into a graph, not "
    "run: the host runs the model's Python and ops once, and the device does (almost) "
    "nothing. That is one-time set-up, as vLLM, SGLang and torch.compile's reduce-overhead "
    "mode do at start-up; no step ran, so no FLOP/s, utilisation or roofline is judged from "
    "it, and the host's time here says nothing of the replays' cost."
)
CAPTURE_ADVICE: Final = (
    "Not judged: profile the replays. Start the profiler after the capture (vLLM and SGLang "
    "capture their graphs at start-up; torch.compile's reduce-overhead mode on its first "
    "calls) and record a few steps that launch the graphs (cudaGraphLaunch), with "
    "schedule=torch.profiler.schedule(wait=1, warmup=1, active=3)."
)
CAPTURE_VERDICT: Final = (
    "Not judged: the profiled window is a CUDA-graph capture (the host runs the model once "
    "to record it; the device runs almost nothing), not a step. Profile the replays: start "
    "the profiler after the capture and record a few steps that launch the graphs."
)
CAPTURE_PART_ADVICE: Final = (
    "Judge the steps outside the capture; to see the replays alone, start the profiler "
    "after the graphs are captured."
)

__all__ = [
    "CAPTURE_ADVICE",
    "CAPTURE_BEGIN",
    "CAPTURE_DOMINANT_PCT",
    "CAPTURE_END",
    "CAPTURE_EXPLANATION",
    "CAPTURE_PART_ADVICE",
    "CAPTURE_PART_TITLE",
    "CAPTURE_RANGES",
    "CAPTURE_TITLE",
    "CAPTURE_VERDICT",
    "GRAPH_INSTANTIATE",
]
