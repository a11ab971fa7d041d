"""Typed recipe parameters: each type's validation and normal form, with errors that say what to pass.

A value comes in as the text a person typed; it goes out as the text the task is written with
(dates as YYYY-MM-DD, amounts as plain decimals, currencies as ISO codes, choices as declared).
"""

from __future__ import annotations

import re
from typing import Literal

from taskcrew.terminal import CONTROLS, LAYOUT

ParamType = Literal["text", "vendor", "date", "amount", "currency", "choice"]

METAVARS: dict[str, str] = {
    "text": "TEXT",
    "vendor": "VENDOR",
    "date": "DATE",
    "amount": "AMOUNT",
    "currency": "CODE",
    "choice": "CHOICE",
}
TEXT_LIMIT = 300
VENDOR_LIMIT = 120
CURRENCY = re.compile(r"^[A-Z]{3}$")


class ParamValueError(ValueError):
    """A value a parameter does not accept; the message says what to pass instead."""


def _clean(raw: str, limit: int) -> str:
    # a value becomes part of the task, which every surface shows: none of ``terminal.CONTROLS`` (a
    # line break or a tab is read as a space)
    found = [f"U+{ord(ch):04X}" for ch in dict.fromkeys(raw) if ch in CONTROLS and ch not in LAYOUT]
    if found:
        raise ParamValueError(f"contains control characters ({', '.join(found)}): type plain text")
    value = " ".join(raw.split())
    if not value:
        raise ParamValueError("is empty")
    if len(value) > limit:
        raise ParamValueError(f"is {len(value)} characters long; at most {limit} are allowed")
    return value


def _text(raw: str, choices: list[str]) -> str:
    return _clean(raw, TEXT_LIMIT)


def _vendor(raw: str, choices: list[str]) -> str:
    value = _clean(raw, VENDOR_LIMIT)
    if not any(ch.isalpha() for ch in value):
        raise ParamValueError(f"{value!r} is not a vendor name (it has no letters)")
    return value


def _date(raw: str, choices: list[str]) -> str:
    from taskcrew.tools.ap import APInputError, parse_date

    value = _clean(raw, 60)
    try:
        return parse_date(value).value.isoformat()
    except APInputError as exc:
        raise ParamValueError(
            f"{value!r} is not a date: write it as 2026-10-10 or '10 October 2026'"
        ) from exc


def _amount(raw: str, choices: list[str]) -> str:
    from taskcrew.tools.ap import APInputError, parse_amount

    value = _clean(raw, 60)
    try:
        parsed = parse_amount(value)
    except APInputError as exc:
        raise ParamValueError(f"{value!r} is not an amount: {exc}") from exc
    if parsed.value <= 0:
        raise ParamValueError(f"{value!r} is not a positive amount")
    return parsed.plain


def _currency(raw: str, choices: list[str]) -> str:
    value = _clean(raw, 10).upper()
    if not CURRENCY.match(value):
        raise ParamValueError(f"{raw.strip()!r} is not a currency code: use three letters such as USD or EUR")
    if choices and value not in choices:
        raise ParamValueError(f"{value} is not one of {', '.join(choices)}")
    return value


def _choice(raw: str, choices: list[str]) -> str:
    value = _clean(raw, TEXT_LIMIT)
    for choice in choices:
        if choice.casefold() == value.casefold():
            return choice
    raise ParamValueError(f"{value!r} is not one of: {', '.join(choices)}")


CHECKS = {
    "text": _text,
    "vendor": _vendor,
    "date": _date,
    "amount": _amount,
    "currency": _currency,
    "choice": _choice,
}


def check_value(kind: ParamType, raw: str, choices: list[str] | None = None) -> str:
    """``raw`` in its normal form for ``kind``; raises ParamValueError saying what is wrong."""
    if not isinstance(raw, str):
        raise ParamValueError(f"expected text, got {type(raw).__name__}")
    return CHECKS[kind](raw, choices or [])
