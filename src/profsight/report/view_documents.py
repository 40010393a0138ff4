"""The table and the call tree as documents (JSON ``profsight/table/1``, ``profsight/tree/1``):
what the JSON renderers write and the MCP server returns."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from profsight.model.table import ProfilerTable
from profsight.model.tree import CallTree

TABLE_SCHEMA = "profsight/table/1"

#: Per (op, input shapes): roofline fields a table grouped by shape adds to its rows
#: (`analyses.roofline.by_op_and_shapes`).
RooflineFields = Mapping[tuple[str, str], Mapping[str, Any]]
ROOFLINE_COLUMNS = ("tflops", "tbps", "intensity", "bound", "roof_pct")


def table_records(table: ProfilerTable, roof: RooflineFields | None) -> list[dict[str, Any]]:
    records = table.to_records()
    if roof is None:
        return records
    for record in records:
        found = roof.get((record["name"], record["shapes"]), {})
        record.update({c: found.get(c) for c in ROOFLINE_COLUMNS})
    return records


def table_document(table: ProfilerTable, roof: RooflineFields | None = None) -> dict[str, Any]:
    """``{"schema", "group_by", "totals", "rows": [{"name", "calls", "self_cpu_us", ...}]}``;
    grouped by shape on a device profsight knows, each row's roofline (`ROOFLINE_COLUMNS`,
    null for an op without a formula)."""
    doc = {
        "schema": TABLE_SCHEMA,
        "group_by": table.group_by,
        "device_name": table.device_name,
        "self_cpu_total_us": table.self_cpu_total_us,
        "self_device_total_us": table.self_device_total_us,
        "total_rows": table.total_rows,
        "rows": table_records(table, roof),
    }
    return doc


def tree_document(tree: CallTree) -> dict[str, Any]:
    return {"schema": TREE_SCHEMA, "cut_at": tree.cut_at, "root": tree.root.to_dict()}


TREE_SCHEMA = "profsight/tree/1"

__all__ = [
    "ROOFLINE_COLUMNS",
    "TABLE_SCHEMA",
    "TREE_SCHEMA",
    "RooflineFields",
    "table_document",
    "table_records",
    "tree_document",
]
