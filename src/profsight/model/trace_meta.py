"""A trace's top-level fields (`TraceMeta`) and how it was read (`LoadStats`)."""

from __future__ import annotations

from typing import Any

import msgspec


class TraceMeta(msgspec.Struct, frozen=True):
    """The trace's top-level fields (everything except the events)."""

    header: dict[str, Any] = msgspec.field(default_factory=dict)

    @property
    def schema_version(self) -> int | None:
        value = self.header.get("schemaVersion")
        return value if isinstance(value, int) else None

    @property
    def devices(self) -> list[dict[str, Any]]:
        """``deviceProperties`` (``computeProperties`` in some 1.9 files)."""
        props = self.header.get("deviceProperties", self.header.get("computeProperties"))
        if not isinstance(props, list):
            return []
        return [p for p in props if isinstance(p, dict)]

    @property
    def distributed(self) -> dict[str, Any]:
        info = self.header.get("distributedInfo")
        return info if isinstance(info, dict) else {}

    @property
    def trace_name(self) -> str:
        value = self.header.get("traceName")
        return value if isinstance(value, str) else ""

    def flag(self, name: str) -> bool | None:
        """A profiler option the trace records (``record_shapes``, ``profile_memory``, ...)."""
        value = self.header.get(name)
        return None if value is None else bool(value)


class LoadStats(msgspec.Struct, frozen=True):
    """How the input was read (for ``--verbose`` output and tests)."""

    size: int = 0
    """Bytes decoded (after decompression)."""
    chunks: int = 0
    workers: int = 1
    """Processes that decoded it."""
    lax_events: int = 0
    """Events read one by one in Python, because a field had a type the typed decoder does
    not take (0 for every real trace in tests/data: `kineto_schema` takes their variants)."""
