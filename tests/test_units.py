"""Sizes read the same everywhere: one byte formatter, IEC units labelled as such."""

from __future__ import annotations

import pytest

from profsight.units import short_bytes, short_rate, torch_memory


@pytest.mark.parametrize(
    ("nbytes", "text"),
    [
        (0, "0 B"),
        (1023, "1023 B"),
        (1024, "1.00 KiB"),
        (106_000, "104 KiB"),
        (20_447_232, "19.5 MiB"),
        (54_802_667_524, "51.0 GiB"),  # the snapshot that read "51.04 GB"
        (23_100_000_000, "21.5 GiB"),  # the trace read "23.1 GB" and "21.52 GB"
        (-1_782_579, "-1.70 MiB"),
    ],
)
def test_sizes_are_iec_and_labelled_so(nbytes: int, text: str) -> None:
    assert short_bytes(nbytes) == text


def test_rates_stay_decimal_and_torch_keeps_its_own_labels() -> None:
    """A link's bandwidth is quoted in decimal units; torch's table labels 4,096 bytes
    "4.00 KB", and profsight's table is torch's."""
    assert short_rate(12.3) == "12.3 GB/s"
    assert torch_memory(4096) == "4.00 KB"
