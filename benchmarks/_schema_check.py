"""Holding the yardstick's schema copy (`_schema`) equal to profsight's own.

Run in bench_real.py's process before anything is timed (it imports profsight, which the
yardstick's own process must not). A field added to, removed from or changed in
``profsight.loaders.kineto_schema`` changes what the loader decodes, so the copy must follow
it, or the floor the targets are read against would decode less (or more) than profsight.
"""

from __future__ import annotations

import math

import msgspec

#: The struct options that change how (and how fast) msgspec decodes.
_OPTIONS = ("array_like", "forbid_unknown_fields", "frozen", "gc", "tag", "tag_field", "rename")


class SchemaDrift(Exception):
    """The copy in benchmarks/_schema.py no longer decodes what profsight decodes."""


def check_schema_copy() -> None:
    """Raise `SchemaDrift` naming each field where the copy and profsight's structs differ."""
    import _schema

    from profsight.loaders import kineto_schema

    problems = []
    for name in ("Args", "Event"):
        mine = describe(getattr(_schema, name))
        theirs = describe(getattr(kineto_schema, name))
        if mine != theirs:
            only_mine = [row for row in mine if row not in theirs]
            only_theirs = [row for row in theirs if row not in mine]
            problems.append(f"{name}: profsight has {only_theirs}, the copy has {only_mine}")
    if problems:
        raise SchemaDrift(
            "benchmarks/_schema.py differs from profsight.loaders.kineto_schema (copy its "
            "fields again): " + "; ".join(problems)
        )


def describe(cls: type[msgspec.Struct]) -> list[tuple[str, ...]]:
    """The struct's options, then each field: name, JSON key, type, default."""
    config = cls.__struct_config__
    rows = [("options", *(f"{a}={getattr(config, a, None)!r}" for a in _OPTIONS))]
    for f in msgspec.structs.fields(cls):
        rows.append((f.name, f.encode_name, _type(f.type), _value(f.default)))
        if f.default_factory is not msgspec.NODEFAULT:
            rows.append((f.name, "default_factory", _value(f.default_factory())))
    return rows


def _type(t: object) -> str:
    if isinstance(t, type) and issubclass(t, msgspec.Struct):
        return f"struct {t.__name__}"  # the two modules' classes differ, their names do not
    return repr(t)


def _value(v: object) -> str:
    if isinstance(v, msgspec.Raw):
        return f"Raw({bytes(v)!r})"
    if isinstance(v, float) and math.isnan(v):
        return "nan"
    if isinstance(v, msgspec.Struct):
        values = ", ".join(_value(x) for x in msgspec.structs.astuple(v))
        return f"{type(v).__name__}({values})"
    return repr(v)
