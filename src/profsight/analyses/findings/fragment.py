"""What a fragment of a printed table can still carry: too little to rebuild a step, yet its
rows' printed percentages are shares of the whole run's totals.

A table pasted in part (cut mid-row, its header or footer gone, a few rows of an issue
thread) gives no step, so the step's rules cannot run (`pipeline._too_little`). Three
readings hold on the rows alone, each as a share of a total the fragment does not print but
its percentages do:

* one-time start-up, where the rows show it (`table_setup.printed_startup`): a fragment is
  judged as one pass;
* the device's time by family, from the rows' ``Self CUDA %`` (a torch <= 1.6 fragment's leaf
  ops' ``CUDA total %``, `table_legacy`): collectives holding at least
  `COMMUNICATION_BOUND_SHARE` of it are the run's communication, whatever compute it did; a
  compute family holding the most of it is where the device's time goes;
* otherwise nothing: the fragment is not judged, and the finding says what to paste.
"""

from __future__ import annotations

from collections.abc import Callable

from msgspec.structs import replace

from profsight.analyses.findings.communication import fragment_communication
from profsight.analyses.findings.setup import setup_finding
from profsight.analyses.findings.table_setup import printed_startup
from profsight.analyses.step.table_device import is_device_label
from profsight.analyses.step.table_legacy import device_leaves, family_of
from profsight.knowledge import advice
from profsight.knowledge.catalogue import condition
from profsight.knowledge.kernels import decode_kernel
from profsight.knowledge.op_families import (
    COLLECTIVES,
    COMPUTE_FINDINGS,
    COPIES,
    FAMILY_LABELS,
    kernel_family,
    op_family,
)
from profsight.knowledge.ops import lookup_op
from profsight.knowledge.rows import STEP_PREFIXES, RowKind
from profsight.model.findings import Evidence, Finding, Severity
from profsight.model.row_kind import row_kind
from profsight.model.table import ProfilerTable, Row


def fragment_findings(table: ProfilerTable, inclusive: bool = False) -> list[Finding]:
    """The readings a fragment's rows carry, most telling first; a blocking "not judged"
    finding when they carry none."""
    found: list[Finding] = []
    startup, rows = printed_startup(table, inclusive)
    if startup >= advice.STARTUP_DOMINANT_PCT:
        found.append(
            replace(
                setup_finding(
                    advice.STARTUP_DOMINANT_TITLE.format(share=startup),
                    advice.PRINTED_STARTUP_EXPLANATION.format(
                        names=", ".join(r.name for r in rows)
                    ),
                    advice.PRINTED_STARTUP_ADVICE,
                ),
                severity=Severity.HIGH,
                at_stake_pct=startup,
                blocks=True,
            )
        )
    found += _device_shares(table)
    note = setup_finding(
        advice.FRAGMENT_TITLE.format(
            rows=f"{len(table.rows)} row" + ("s" * (len(table.rows) != 1))
        ),
        advice.FRAGMENT_EXPLANATION,
        advice.FRAGMENT_ADVICE,
    )
    return [*found, note] if found else [replace(note, severity=Severity.HIGH, blocks=True)]


def _device_shares(table: ProfilerTable) -> list[Finding]:
    """The device's time by family from the rows' Self CUDA % (of the whole run's device
    total): the kernels' own rows where the fragment prints any, else the ops' (an op's self
    device time is the kernels it launched: counting both would count them twice). The
    collectives are the larger of the two sums, as their kernels and their ops name them.
    A torch <= 1.6 fragment prints no Self CUDA %: its leaf ops' CUDA total % (lower bounds
    on their shares of the device's work, `table_legacy`) stand in for it."""
    kinds = {id(r): row_kind(r, table) for r in table.rows}
    if not any(r.self_device_pct > 0 for r in table.rows):
        leaves = [r for r in device_leaves(table, kinds) if r.device_total_pct > 0]
        shares = {f: sum(r.device_total_pct for r in rows) for f, rows in _grouped(leaves).items()}
        collectives = shares.get(COLLECTIVES, 0.0)
        return _readings(shares, collectives, _leaf_evidence(leaves))
    timed = [
        r
        for r in table.rows
        if r.self_device_pct > 0
        and not is_device_label(r, kinds[id(r)])
        and not r.name.startswith(STEP_PREFIXES)
        and kinds[id(r)] is not RowKind.STEP
    ]
    device_rows = [r for r in timed if not r.cpu_total_us]
    op_rows = [r for r in timed if r.cpu_total_us]
    shares = _by_family(device_rows or op_rows, kinds, device=bool(device_rows))
    collectives = max(
        _by_family(device_rows, kinds, device=True).get(COLLECTIVES, 0.0),
        _by_family(op_rows, kinds, device=False).get(COLLECTIVES, 0.0),
    )
    return _readings(shares, collectives, lambda family: _evidence(timed, kinds, family))


def _readings(
    shares: dict[str, float],
    collectives: float,
    evidence: Callable[[str], tuple[Evidence, ...]],
) -> list[Finding]:
    """What the families' shares of the device's time carry: the collectives where they
    hold half of it or the most of it, else the compute family holding the most."""
    shares[COLLECTIVES] = collectives
    largest = max(shares, key=lambda f: shares[f], default=None)
    # collectives at least half the device's time, or its largest share: where to look first
    # (a fragment cannot say how much of it compute hid)
    if collectives >= advice.COMMUNICATION_BOUND_SHARE or (
        largest == COLLECTIVES and collectives >= advice.COMMUNICATION_PCT
    ):
        return fragment_communication(collectives, evidence(COLLECTIVES))
    compute = {f: v for f, v in shares.items() if f in COMPUTE_FINDINGS}
    if not compute:
        return []
    family, share = max(compute.items(), key=lambda kv: kv[1])
    if share < advice.COMPUTE_PCT:
        return []
    category = "memcpy" if family == COPIES else COMPUTE_FINDINGS[family]
    return [
        Finding(
            category=category,
            severity=Severity.INFO,
            title=advice.FRAGMENT_COMPUTE_TITLE.format(
                family=FAMILY_LABELS[family].capitalize(), share=share
            ),
            evidence=evidence(family),
            explanation=advice.FRAGMENT_SHARES_NOTE.strip(),
            recommendation=advice.FRAGMENT_ADVICE,
            at_stake_pct=share,
            trigger=condition(category, "fragment"),
            confidence=advice.FRAGMENT_CONFIDENCE,
        )
    ]


def _grouped(leaves: list[Row]) -> dict[str, list[Row]]:
    groups: dict[str, list[Row]] = {}
    for row in leaves:
        groups.setdefault(family_of(row), []).append(row)
    return groups


def _leaf_evidence(leaves: list[Row]) -> Callable[[str], tuple[Evidence, ...]]:
    """A legacy fragment's leaf ops of a family, by their printed CUDA total %."""

    def evidence(family: str) -> tuple[Evidence, ...]:
        mine = sorted(_grouped(leaves).get(family, []), key=lambda r: -r.device_total_pct)
        return tuple(
            Evidence(
                r.name,
                f"at least {r.device_total_pct:.1f}% of the device's time "
                "(its CUDA total %, an op with no op inside it)",
                (r.name,),
            )
            for r in mine[:4]
        )

    return evidence


def _family(row: Row, kinds: dict[int, RowKind], device: bool) -> str:
    if kinds[id(row)] is RowKind.COMMUNICATION:
        return COLLECTIVES
    if device:
        return kernel_family(decode_kernel(row.name).operation)
    info = lookup_op(row.name)
    return op_family(info.category if info is not None else None)


def _by_family(rows: list[Row], kinds: dict[int, RowKind], device: bool) -> dict[str, float]:
    shares: dict[str, float] = {}
    for r in rows:
        family = _family(r, kinds, device)
        shares[family] = shares.get(family, 0.0) + r.self_device_pct
    return shares


def _evidence(rows: list[Row], kinds: dict[int, RowKind], family: str) -> tuple[Evidence, ...]:
    """The fragment's rows of `family`, by their share of the device's time."""
    mine = [r for r in rows if _family(r, kinds, not r.cpu_total_us) == family]
    return tuple(
        Evidence(r.name, f"{r.self_device_pct:.1f}% of the device's time", (r.name,))
        for r in sorted(mine, key=lambda r: -r.self_device_pct)[:4]
    )
