"""Amounts are stored as integer cents and shown as plain numbers with two decimals."""

from __future__ import annotations

import re

PLAIN_AMOUNT = re.compile(r"^\d+(\.\d{1,2})?$")
MAX_CENTS = 99_999_999_999  # 999999999.99


def to_cents(plain: str) -> int:
    """Cents of an amount that already matched ``PLAIN_AMOUNT`` ("1284.5" -> 128450)."""
    if not PLAIN_AMOUNT.match(plain):
        raise ValueError(f"not a plain amount: {plain!r}")
    whole, _, frac = plain.partition(".")
    return int(whole) * 100 + int((frac + "00")[:2])


def format_cents(cents: int) -> str:
    sign = "-" if cents < 0 else ""
    cents = abs(cents)
    return f"{sign}{cents // 100}.{cents % 100:02d}"
