"""The reading of a profiler table, step by step, as the tutorial teaches it: the columns,
what each tag marks (with this table's own rows as examples), what the residual blocks'
self-vs-total says, and the answer to "is this model too complex for its data and its
hardware?" with its evidence. Plain data (sentences); renderers lay it out."""

from __future__ import annotations

from profsight.analyses.step.table_step import printed_step
from profsight.analyses.verdict import Verdict
from profsight.knowledge.advice import MODULE_OWN_FRACTION
from profsight.knowledge.lightning_names import LIGHTNING_ACTION_PREFIX, module_class, module_label
from profsight.knowledge.phases import Phase
from profsight.knowledge.rows import RowKind
from profsight.knowledge.table_guide import (
    BLOCK_CLASSES,
    BLOCK_HIGH_SELF,
    BLOCK_LOW_SELF,
    COLUMNS,
    LIGHTNING_SELF_TIME,
    OUTSIDE_MODEL_SHARE,
    OVERLAPPED_ROWS,
    QUESTION,
    TAGS,
)
from profsight.model.row_kind import row_kind
from profsight.model.table import ProfilerTable, Row
from profsight.units import short_time


def walkthrough(
    table: ProfilerTable, verdict: Verdict | None, overlapped: bool | None = None
) -> tuple[str, ...]:
    """`overlapped`: whether ranges overlapped without nesting (a trace knows; None for a
    printed table, where Lightning's ranges say it)."""
    kinds = {id(r): row_kind(r, table) for r in table.rows}
    lines = [_columns(table)]
    lines += [_tag(kind, text, [r for r in table.rows if kinds[id(r)] is kind]) for kind, text
              in TAGS.items() if any(kinds[id(r)] is kind for r in table.rows)]  # fmt: skip
    blocks = [r for r in table.rows if kinds[id(r)] is RowKind.MODULE and _is_block(r.name)]
    if blocks:
        lines.append(_blocks(blocks))
    outside = _outside_the_model(table)
    if outside:
        lines.append(outside)
    if overlapped is None:
        overlapped = any(r.name.startswith(LIGHTNING_ACTION_PREFIX) for r in table.rows)
    holders = [r for r in table.rows if r.name.startswith(OVERLAPPED_ROWS) and r.self_cpu_us]
    if overlapped and holders:
        big = max(holders, key=lambda r: r.self_cpu_us)
        lines.append(f"{big.name} shows {short_time(big.self_cpu_us)} of self CPU: "
                     f"{LIGHTNING_SELF_TIME}.")  # fmt: skip
    if verdict is not None:
        evidence = "; ".join(verdict.evidence[:4])
        lines.append(f"{QUESTION} {verdict.summary} ({evidence})")
    return tuple(lines)


def _columns(table: ProfilerTable) -> str:
    text = [COLUMNS[0]]
    if table.has_device:
        text.append(COLUMNS[1].replace("CUDA", table.device_name))
    text.append(COLUMNS[2])
    return " ".join(text)


def _tag(kind: RowKind, text: str, rows: list[Row]) -> str:
    example = max(rows, key=lambda r: r.cpu_total_us or r.device_total_us)
    name = module_label(example.name) if kind is RowKind.MODULE else example.name
    if example.cpu_total_us:
        numbers = (
            f"self {short_time(example.self_cpu_us)} of {short_time(example.cpu_total_us)} "
            "CPU total"
        )
    else:
        numbers = f"{short_time(example.device_total_us)} on the device"
    return f"{text}. {len(rows)} here; the largest, {name}: {numbers}."


def _is_block(name: str) -> bool:
    return module_class(name).rsplit(".", 1)[-1] in BLOCK_CLASSES


def _blocks(blocks: list[Row]) -> str:
    high = [
        r
        for r in blocks
        if r.cpu_total_us and r.self_cpu_us / r.cpu_total_us >= MODULE_OWN_FRACTION
    ]
    fractions = [r.self_cpu_us / r.cpu_total_us for r in blocks if r.cpu_total_us]
    low, high_pct = (f"{min(fractions):.0%}", f"{max(fractions):.0%}") if fractions else ("", "")
    span = low if low == high_pct else f"{low} to {high_pct}"
    cls = module_class(blocks[0].name).rsplit(".", 1)[-1]
    head = f"The {len(blocks)} {cls} rows spend {span} of their CPU total in their own code."
    if high:
        names = ", ".join(module_label(r.name) for r in high[:3])
        return f"{head} {names}: {BLOCK_HIGH_SELF}."
    return f"{head} Low self, high total: {BLOCK_LOW_SELF}."


def _outside_the_model(table: ProfilerTable) -> str:
    """training_step against the model's top-level [module] rows: what runs outside them."""
    step = printed_step(table)
    forward = step.part(Phase.FORWARD) if step is not None else None
    if step is None or forward is None or not step.model_us or not forward.rows:
        return ""
    rest = forward.us - step.model_us
    if rest <= OUTSIDE_MODEL_SHARE * forward.us:
        return ""
    return (
        f"training_step takes {short_time(forward.us)} per step and your model's modules "
        f"{short_time(step.model_us)} of it: the other {rest * 100 / forward.us:.0f}% runs "
        "outside them, in the loss, metrics, logging and any other code of training_step."
    )
