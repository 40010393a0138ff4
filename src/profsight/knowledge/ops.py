"""The op glossary: what an operator, autograd node or device runtime call in a profile does.

`lookup_op` answers from the exact names of `ops_table.GLOSSARY` first, then from rules,
tried in order; each rule is a small function ``name -> OpInfo | None`` that returns
``None`` when the name is not its business:

1. a name the printed table cut off (``...``) is matched by its unique prefix;
2. autograd: ``autograd::engine::evaluate_function: X`` and backward nodes
   (``ConvolutionBackward0``, ``CppNode<X>``) are explained through what they differentiate;
3. collectives of every backend (``nccl:all_reduce``, ``gloo:barrier``, ``c10d::allreduce_``);
4. name families: ``aten::_foreach_*``, Inductor's ``triton_*`` kernels, ``ProfilerStep#N``,
   ``Optimizer.step#...``, ... (`ops_table.PREFIX_RULES`);
5. device runtime and driver calls: versioned names, HIP and driver calls through their CUDA
   counterpart, the rest by what their name says they do (`ops_table.RUNTIME_KEYWORDS`);
6. spellings of a known op: an overload (``aten::add.Tensor``), an in-place form
   (``aten::add_``), a ``prims::`` primitive, or a bare name from old tables (``conv2d``).

A name no table or rule knows gives ``None``: callers show it without an explanation
rather than with a made-up one.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Final

import msgspec

from profsight.knowledge.kernels import inductor_ops
from profsight.knowledge.ops_table import (
    BACKWARD_COST,
    BACKWARD_COST_DEFAULT,
    BACKWARD_FORWARD_OPS,
    CHAINS,
    COLLECTIVE_ALIASES,
    COLLECTIVE_PREFIXES,
    COLLECTIVES,
    GLOSSARY,
    IN_PLACE_NOTE,
    OUT_NOTE,
    PREFIX_RULES,
    PRIMS_NOTE,
    RUNTIME_DEFAULT,
    RUNTIME_FAMILIES,
    RUNTIME_KEYWORDS,
    TRITON_KINDS,
    VERSIONED_NOTE,
)
from profsight.lazy import regex

#: What kind of work an op is; the keys of `ops_table.GLOSSARY`, in display order.
CATEGORIES: Final[tuple[str, ...]] = (
    "convolution",
    "matmul",
    "normalization",
    "activation",
    "pointwise",
    "reduction",
    "softmax",
    "loss",
    "pooling",
    "dropout",
    "embedding",
    "attention",
    "indexing",
    "view",
    "copy",
    "allocation",
    "random",
    "optimizer",
    "communication",
    "autograd",
    "runtime",
    "sync",
    "memcpy",
    "profiler",
    "other",
)


class OpInfo(msgspec.Struct, frozen=True):
    """What one op name means, for someone reading a profiler table."""

    category: str
    """One of `CATEGORIES`."""
    meaning: str
    """One plain-English sentence, without a final full stop: what the op does and, where
    it helps, what its self and total time tell."""
    chain: tuple[str, ...] = ()
    """For dispatch chains: the names of the same call at deeper levels, outermost first."""


_ENTRIES: Final[dict[str, OpInfo]] = {
    name: OpInfo(category, meaning, CHAINS.get(name, ()))
    for category, group in GLOSSARY.items()
    for name, meaning in group.items()
}


def glossary() -> Mapping[str, OpInfo]:
    """Every exact entry (name -> `OpInfo`), read-only; rules add more names on top."""
    return MappingProxyType(_ENTRIES)


# -- name syntax the rules recognise ---------------------------------------------------------

#: torch's printed table cuts long names to its column width and ends them with this.
TRUNCATION_MARK: Final = "..."
EVALUATE_FUNCTION_PREFIX: Final = "autograd::engine::evaluate_function: "
_BACKWARD_NODE: Final = regex(r"^(?:torch::autograd::)?([A-Z][A-Za-z0-9_]*?)Backward\d*$")
#: A backward node's name cut off by a printed table: ``EmbeddingBackwa...``.
_CUT_BACKWARD_NODE: Final = regex(r"^([A-Z][A-Za-z0-9_]*?)Backw")
_CPP_NODE: Final = regex(r"^torch::autograd::CppNode<(.+)>$")
_TRITON_KERNEL: Final = regex(r"^triton_([a-z]+)_(?:fused_)?(.+?)(?:_\d+)?$")
_FOREACH: Final = regex(r"^aten::_foreach_(\w+?)(?:\.\w+)?$")
_RUNTIME_CALL: Final = regex(r"^(cuda|cu|hip|ur|pi|ze|nvrtc)([A-Z]\w*)$")
_VERSION_SUFFIX: Final = regex(r"(?:_v\d+|_ptsz|_ptds|R\d{4})$")
_OVERLOAD: Final = regex(r"^(\w+(?:::\w+)+)\.(\w+)$")
_IN_PLACE: Final = regex(r"^[\w:]*[A-Za-z0-9]_$")
_BARE_ATEN: Final = regex(r"^_?[a-z][a-z0-9_]*$")
ATEN_PREFIX: Final = "aten::"
PRIMS_PREFIX: Final = "prims::"

Rule = Callable[[str], OpInfo | None]


@functools.lru_cache(maxsize=8192)
def lookup_op(name: str) -> OpInfo | None:
    """What the op, autograd node or runtime call ``name`` is, or ``None`` if unknown."""
    name = name.strip()
    if not name:
        return None
    known = _ENTRIES.get(name)
    if known is not None:
        return known
    for rule in _RULES:
        info = rule(name)
        if info is not None:
            return info
    return None


def _truncated(name: str) -> OpInfo | None:
    if not name.endswith(TRUNCATION_MARK):
        return None
    prefix = name[: -len(TRUNCATION_MARK)]
    if prefix.startswith(EVALUATE_FUNCTION_PREFIX):
        node = prefix[len(EVALUATE_FUNCTION_PREFIX) :]
        completions = [entry for entry in _ENTRIES if entry.startswith(node)]
        if len(completions) == 1:
            return lookup_op(EVALUATE_FUNCTION_PREFIX + completions[0])
        match = _CUT_BACKWARD_NODE.match(node)
        forward = _forward_op(match.group(1)) if match is not None else None
        return _engine_row(f"a backward node the table cut off ({node}...)", forward, ())
    completions = [entry for entry in _ENTRIES if entry.startswith(prefix)]
    # Only a unique completion is safe: torch cuts names at a fixed width, not at a boundary.
    return _ENTRIES[completions[0]] if len(completions) == 1 else None


def _evaluate_function(name: str) -> OpInfo | None:
    if not name.startswith(EVALUATE_FUNCTION_PREFIX):
        return None
    node = name[len(EVALUATE_FUNCTION_PREFIX) :]
    match = _BACKWARD_NODE.match(node)
    forward = _forward_op(match.group(1)) if match is not None else None
    return _engine_row(f"the backward node {node}", forward, (node,))


def _engine_row(node: str, forward: str | None, chain: tuple[str, ...]) -> OpInfo:
    what = f", which differentiates {forward}" if forward is not None else ""
    return OpInfo(
        "autograd",
        f"the autograd engine running {node}{what}: the node's own row is its child, and "
        f"this row's extra self time is the engine's bookkeeping around it (input buffers, "
        f"hooks, and an aten::sum when a broadcast gradient must be reduced to its input's "
        f"shape)",
        chain,
    )


def _snake_case(stem: str) -> str:
    stem = re.sub(r"(\d)D", r"\1d", stem)  # MaxPool2DWithIndices -> max_pool2d_with_indices
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", stem).lower()


def _forward_op(stem: str) -> str | None:
    snake = _snake_case(stem)
    candidates = (
        BACKWARD_FORWARD_OPS.get(stem),
        f"{ATEN_PREFIX}{snake}",
        f"{ATEN_PREFIX}_{snake}",
        stem,  # custom autograd.Functions that have a glossary entry (TorchRec's comm ops)
    )
    return next((c for c in candidates if c is not None and c in _ENTRIES), None)


def _backward_node(name: str) -> OpInfo | None:
    match = _BACKWARD_NODE.match(name)
    if match is None:
        return None
    stem = match.group(1)
    forward = _forward_op(stem)
    if forward is None:
        return OpInfo(
            "autograd",
            f"autograd node running the backward of {stem}, a custom torch.autograd.Function "
            f"or an op this glossary does not know; its children are the ops of that backward",
        )
    cost = BACKWARD_COST.get(_ENTRIES[forward].category, BACKWARD_COST_DEFAULT)
    return OpInfo(
        "autograd",
        f"autograd node that differentiates {forward}: from the gradient of its output it "
        f"computes the gradients of its inputs ({cost}); the node's self time is autograd "
        f"overhead and its total is the backward work done by its children",
    )


def _cpp_node(name: str) -> OpInfo | None:
    match = _CPP_NODE.match(name)
    if match is None:
        return None
    return OpInfo(
        "autograd",
        f"autograd node running the backward of {match.group(1)}, a custom autograd function "
        f"written in C++ (e.g. by FBGEMM or TorchRec); its children are the ops of that "
        f"backward",
    )


def _collective(name: str) -> OpInfo | None:
    for prefix, (who, cost) in COLLECTIVE_PREFIXES.items():
        if not name.startswith(prefix):
            continue
        # "nccl:send 0->1": the peer follows the op after a space.
        op = name[len(prefix) :].split(" ", 1)[0].strip("_")
        op = COLLECTIVE_ALIASES.get(op, op)
        what = COLLECTIVES.get(op)
        if what is None:
            return None
        return OpInfo("communication", f"{who} {op}: {what}; {cost}")
    return None


def _foreach(name: str) -> OpInfo | None:
    match = _FOREACH.match(name)
    if match is None:
        return None
    base = f"{ATEN_PREFIX}{match.group(1)}"
    info = lookup_op(base)
    if info is None:
        return None
    return OpInfo(
        "optimizer",
        f"multi-tensor (foreach) form of {base}, applied to every tensor of a list in one "
        f"call, as torch.optim's foreach implementations (the default on CUDA) and "
        f"clip_grad_norm_ do: on GPU a few large kernels instead of one per parameter, on CPU "
        f"a loop whose children are the per-tensor ops; per tensor: {info.meaning}",
    )


def _triton(name: str) -> OpInfo | None:
    match = _TRITON_KERNEL.match(name)
    if match is None or match.group(1) not in TRITON_KINDS:
        return None
    category, kind = TRITON_KINDS[match.group(1)]
    ops = inductor_ops(name)
    fused = ", ".join(ops) if ops else f"the ops named in '{match.group(2)}'"
    return OpInfo(
        category,
        f"a {kind} Triton kernel generated by torch.compile (Inductor), fusing {fused}; the CPU "
        f"row is its launch and its device time is the fused kernel's",
    )


def _prefix(name: str) -> OpInfo | None:
    for prefix, category, meaning in PREFIX_RULES:
        if name.startswith(prefix):
            return OpInfo(category, meaning.format(rest=name[len(prefix) :]))
    return None


def _runtime(name: str) -> OpInfo | None:
    match = _RUNTIME_CALL.match(name)
    if match is None:
        return None
    family, rest = match.groups()
    unversioned = _VERSION_SUFFIX.sub("", name)
    if unversioned != name and unversioned in _ENTRIES:
        info = _ENTRIES[unversioned]
        return OpInfo(info.category, info.meaning + VERSIONED_NOTE)
    # HIP mirrors the CUDA runtime (and its module API the driver API) name for name.
    mirrors = {"hip": ("cuda", "cu"), "cu": ("cuda",)}.get(family, ())
    for mirror in (f"{m}{_VERSION_SUFFIX.sub('', rest)}" for m in mirrors):
        if mirror in _ENTRIES:
            info = _ENTRIES[mirror]
            api = RUNTIME_FAMILIES[family]
            return OpInfo(info.category, f"{api} counterpart of {mirror}: {info.meaning}")
    api = RUNTIME_FAMILIES[family]
    for word, category, meaning in RUNTIME_KEYWORDS:
        if word in rest:
            return OpInfo(category, meaning.format(api=api))
    category, meaning = RUNTIME_DEFAULT
    return OpInfo(category, meaning.format(api=api))


def _overload(name: str) -> OpInfo | None:
    match = _OVERLOAD.match(name)
    if match is None:
        return None
    base, overload = match.groups()
    info = lookup_op(base)
    if info is None or overload != "out":
        return info
    return OpInfo(info.category, info.meaning + OUT_NOTE)


def is_in_place(name: str) -> bool:
    """An op's in-place form (``aten::add_``): it overwrites its first operand, with no new
    tensor to allocate."""
    return "::" in name and _IN_PLACE.match(name) is not None


def _in_place(name: str) -> OpInfo | None:
    if _IN_PLACE.match(name) is None or "::" not in name:
        return None
    info = lookup_op(name[:-1])
    if info is None:
        return None
    return OpInfo(info.category, info.meaning + IN_PLACE_NOTE)


def _prims(name: str) -> OpInfo | None:
    if not name.startswith(PRIMS_PREFIX):
        return None
    info = lookup_op(ATEN_PREFIX + name[len(PRIMS_PREFIX) :])
    if info is None:
        return None
    return OpInfo(info.category, info.meaning + PRIMS_NOTE)


def _bare(name: str) -> OpInfo | None:
    # Tables from torch <= 1.4 print ATen ops without their namespace ("conv2d", "to").
    if _BARE_ATEN.match(name) is None:
        return None
    return lookup_op(ATEN_PREFIX + name)


_RULES: Final[tuple[Rule, ...]] = (
    _truncated,
    _evaluate_function,
    _backward_node,
    _cpp_node,
    _collective,
    _foreach,
    _triton,
    _prefix,
    _runtime,
    _overload,
    _in_place,
    _prims,
    _bare,
)
