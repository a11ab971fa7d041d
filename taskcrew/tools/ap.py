"""Deterministic accounts-payable helpers: amounts, dates, due dates and comparisons.

Models get number formats and date arithmetic wrong, so the file_reader hands these jobs to code.
Every result carries a ``derivation`` — the working in one line (``2026-09-12 + 30 days =
2026-10-12``) — so a report can show how a value was obtained.

The plain functions raise :class:`APInputError` (a ``ValueError``) with a message that says what
was wrong and what to pass instead; the ``*_result`` functions wrap them into a ``ToolResult``
for the agent's tools (``taskcrew.tools.reader_tools``). Nothing here imports crewai.
"""

from __future__ import annotations

import calendar
import re
from datetime import date, timedelta
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from typing import Literal

from pydantic import BaseModel

from taskcrew.tools.base import ToolResult


class APInputError(ValueError):
    """Input that cannot be interpreted unambiguously. The message tells the caller what to do."""


# --------------------------------------------------------------------------------------- amounts

AmountFormat = Literal["plain", "us", "european", "indian", "space_grouped", "swiss"]

_FORMAT_WORDS: dict[str, str] = {
    "plain": "plain number",
    "us": "',' groups thousands, '.' marks decimals",
    "european": "'.' groups thousands, ',' marks decimals",
    "indian": "Indian digit grouping (lakh/crore: 1,28,450), '.' marks decimals",
    "space_grouped": "spaces group thousands",
    "swiss": "apostrophes group thousands, '.' marks decimals",
}

# The one table of currency signs: a sign and the currencies it may stand for, the one it is read as when
# nothing beside it says which first. Many countries print their own currency with one sign — "$" the
# Canadian, Australian or Mexican dollar or peso as well as the US one, "¥" the yuan as well as the yen,
# "Rs" the rupees of Pakistan or Sri Lanka, "kr" the Scandinavian crowns — so a code written beside an
# ambiguous sign chooses among them ("$1,234.50 CAD"), and a sign with a country prefix ("A$", "CA$",
# "US$") names one. Matched longest first ("US$", "CA$", "A$" before "$"; "Rs." before "Rs"), and never
# after a letter (``_symbol``): the "$" of "A$" or "ZZ$" is no bare dollar.
_DOLLARS = "USD CAD AUD NZD MXN SGD HKD TWD ARS CLP COP UYU DOP JMD TTD BSD BBD BMD BZD KYD XCD FJD NAD"
_SYMBOLS: tuple[tuple[str, tuple[str, ...]], ...] = tuple(
    sorted(
        (
            (sign, tuple(codes.split()))
            for sign, codes in (
                ("US$", "USD"),
                ("AU$", "AUD"),
                ("A$", "AUD"),
                ("CA$", "CAD"),
                ("C$", "CAD"),
                ("HK$", "HKD"),
                ("NZ$", "NZD"),
                ("SG$", "SGD"),
                ("S$", "SGD"),
                ("NT$", "TWD"),
                ("MX$", "MXN"),
                ("R$", "BRL"),
                ("$", _DOLLARS),
                ("Rs.", "INR PKR LKR NPR MUR SCR"),
                ("Rs", "INR PKR LKR NPR MUR SCR"),
                ("kr.", "SEK NOK DKK ISK"),
                ("kr", "SEK NOK DKK ISK"),
                ("€", "EUR"),
                ("£", "GBP"),
                ("₹", "INR"),
                ("CN¥", "CNY"),
                ("¥", "JPY CNY"),
                ("円", "JPY"),  # written after the number: "12,000円"
                ("元", "CNY TWD HKD MOP"),  # "12,000元"
                ("원", "KRW"),  # "12,000원"
                ("₪", "ILS"),
                ("₩", "KRW"),
                ("₺", "TRY"),
                ("₽", "RUB"),
                ("₱", "PHP"),
                ("₫", "VND"),
                ("₴", "UAH"),
                ("₦", "NGN"),
                ("฿", "THB"),
                ("zł", "PLN"),
                ("Kč", "CZK"),
                ("S/.", "PEN"),
                ("S/", "PEN"),
                ("RM", "MYR"),
                ("Rp.", "IDR"),
                ("Rp", "IDR"),
                ("SFr.", "CHF"),
                ("SFr", "CHF"),
                ("Fr.", "CHF"),
                ("Fr", "CHF"),
            )
        ),
        key=lambda pair: -len(pair[0]),
    )
)
# signs that are also words or abbreviations ("RM" a room, "Fr." Friday or Frau, "S/N" a serial number):
# a currency in a line only against an amount ("RM 1,234.50", "1.234,50 Fr."; ``currencies_in``)
# ("円", "元", "원" are also parts of words: "円形", "单元", "직원")
_SIGN_WORDS = frozenset({"S/.", "S/", "RM", "Rp.", "Rp", "SFr.", "SFr", "Fr.", "Fr", "円", "元", "원"})
# the signs that name one currency, and it ("€": EUR, "R$": BRL; never "$", "¥", "kr" or "Rs"): what
# the verifier (``crew.evidence``) and the approval rules (``approvals.rules``) read as a currency
SIGN_CURRENCY: dict[str, str] = {symbol: codes[0] for symbol, codes in _SYMBOLS if len(codes) == 1}
# The currency codes of ISO 4217 (list one: the currencies in use, and those withdrawn so lately that
# invoices still print them; funds, precious metals and the test and "no currency" codes XTS/XXX left out)
ISO_CURRENCIES = frozenset(
    """
    AED AFN ALL AMD ANG AOA ARS AUD AWG AZN BAM BBD BDT BGN BHD BIF BMD BND BOB BRL BSD BTN BWP BYN
    BZD CAD CDF CHF CLP CNY COP CRC CUP CVE CZK DJF DKK DOP DZD EGP ERN ETB EUR FJD FKP GBP GEL GHS
    GIP GMD GNF GTQ GYD HKD HNL HTG HUF IDR ILS INR IQD IRR ISK JMD JOD JPY KES KGS KHR KMF KPW KRW
    KWD KYD KZT LAK LBP LKR LRD LSL LYD MAD MDL MGA MKD MMK MNT MOP MRU MUR MVR MWK MXN MYR MZN NAD
    NGN NIO NOK NPR NZD OMR PAB PEN PGK PHP PKR PLN PYG QAR RON RSD RUB RWF SAR SBD SCR SDG SEK SGD
    SHP SLE SLL SOS SRD SSP STN SVC SYP SZL THB TJS TMT TND TOP TRY TTD TWD TZS UAH UGX USD UYU UZS
    VED VES VND VUV WST XAF XCD XCG XOF XPF YER ZAR ZMW ZWG ZWL
    """.split()  # noqa: SIM905 (the codes as the standard lists them, easier to check than 160 strings)
)
# the currencies of ISO 4217 with no minor unit (0 decimals): "¥12,000" is twelve thousand yen, the ","
# can only group thousands (``_classify``), and a "-" closing a whole amount is no minus (``parse_amount``)
ZERO_DECIMAL_CURRENCIES = frozenset("BIF CLP DJF GNF ISK JPY KMF KRW PYG RWF UGX VND VUV XAF XOF XPF".split())  # noqa: SIM905
# codes that are also everyday words or abbreviations ("ALL", "TOP", "TRY", "PEN", "CRC", "BTN"): a
# currency only where written against an amount ("1.234,56 TRY"), in upper case; a line's word
# elsewhere ("ALL ITEMS") names no currency (``currencies_in``, and the verifier's ``crew.evidence``)
WORD_CODES = frozenset(
    "ALL AMD ANG BAM BOB BTN CRC CUP DOP ERN GEL LAK MAD MOP MUR NAD PEN PHP RON SAR SOS TOP TRY".split()  # noqa: SIM905
)
# What amounts and dates are printed with, as the readers here read them: every space a space, the minus
# sign a hyphen, and the typographic apostrophes (U+2019, the modifier letter U+02BC, the prime U+2032)
# that Swiss amounts group thousands with ("CHF 1’329.63") the ASCII one.
_PRINTED = str.maketrans(
    {
        "\u00a0": " ",
        "\u202f": " ",
        "\u2009": " ",
        "\t": " ",
        "\u2212": "-",
        "\uff0d": "-",  # the fullwidth ones of Japanese and Korean text: "￥12,000－"
        "\uffe5": "¥",
        "\uffe6": "₩",
        "\u2019": "'",
        "\u02bc": "'",
        "\u2032": "'",
    }
)


def printed(text: str) -> str:
    """``text`` as the readers here read it (``_PRINTED``): "1’234.50" is "1'234.50"."""
    return text.translate(_PRINTED)


_CODE_RE = re.compile(r"(?<![A-Za-z])([A-Za-z]{3})(?![A-Za-z])")
# The marks that close a whole amount, one list: a dash for its cents after its decimal mark ("1.234,-",
# "Fr. 15.–", "1.234,—"), and the Indian "/-" ("Rs. 1,23,456/-") and Swedish ":-"
# ("12 345:-"). A bare "-" after the digits is a minus ("950,00-", "500-": the German and the ledger
# trailing minus) but for an amount without decimals in a currency with none (``ZERO_DECIMAL_CURRENCIES``):
# "¥12,000-", "12,000円-" are whole, the way Japanese invoices close an amount; "¥12,000.00-" is negative.
WHOLE_MARKS = (",", ".", "/", ":")  # each before a dash (hyphen, en or em dash) after the digits
WHOLE_MARK = rf"(?<=\d)[{re.escape(''.join(WHOLE_MARKS))}][-\u2013\u2014]+"  # for the readers importing it
_WHOLE_MARK = re.compile(rf"{WHOLE_MARK}$")
# The accounting minus sign, the one rule for every reader of amounts (this module, the OCR'd lines of
# ``documents.ocrlines``, ``documents.provenance``): a pair of brackets around the amount, with its
# currency sign or code inside before or after the number, in any grouping — "(615.00)", "($615.00)",
# "(USD 615.00)", "USD (615.00)", "(615.00) USD", "(1.234,50 €)", "(1 234,50 EUR)", "(1.234,-)", "(Rs.
# 1,23,456/-)" — and only around an amount, with cents or grouped thousands: a credit, wherever the currency stands (a European credit
# note writes it after the number). Brackets around more leave it positive ("(invoice NW-40917: 412.50
# USD)"), as they do a footnote's or a reference's number ("(2)", "(4471)"); a bracketed currency alone
# ("(EUR) 150.00") is no sign either.
_CURRENCY_SIGN = "|".join([re.escape(symbol) for symbol, _ in _SYMBOLS] + ["[A-Za-z]{3}"])
_CURRENCY_AFTER = _CURRENCY_SIGN.replace("[A-Za-z]{3}", "(?-i:[A-Z]{3})")  # capitals: not "(5.00 net)"
GROUPS = ".,' \u00a0\u202f\u2009\u2019\u02bc\u2032"  # what groups thousands, as printed (``_PRINTED``)
NEGATIVE_IN_BRACKETS = re.compile(
    rf"\((?:(?:{_CURRENCY_SIGN})\s*)?(\d[\d{GROUPS}]*[.,]\d\d|\d{{1,3}}(?:[{GROUPS}]\d{{3}})+|\d{{1,2}}(?:,\d{{2}})+,\d{{3}})(?:{WHOLE_MARK})?"
    rf"(?:\s*(?:{_CURRENCY_AFTER}))?\)",
    re.IGNORECASE,
)

# The credit marker written after an amount, as statements and credit notes print it: "120.00 CR",
# "USD 120.00 CR", "1.234,50 € Cr" — the amount is a credit (negative), as "-120.00" and "(120.00)" are.
# Only "CR" or "Cr" (with or without a dot), last, set apart from the amount or touching its digits
# ("120.00CR"): a lower-case "cr" or a marker elsewhere is no credit read, and "DR" (debit) or the German
# "H"/"Haben" of a ledger are not read either (a letter or a word that also means other things).
# The one rule for every reader of amounts (``parse_amount``, ``documents.provenance``).
CREDIT_MARK = re.compile(r"(?:(?<=\d)|(?<=\s)|(?<=[^\w\s]))(?:CR|Cr)\.?$")

_US_INT = re.compile(r"\d{1,3}(?:,\d{3})+")
_INDIAN_INT = re.compile(r"\d{1,2}(?:,\d{2})+,\d{3}")
INDIAN_INT = _INDIAN_INT  # lakh/crore grouping (1,28,450), for the readers importing it
_EU_INT = re.compile(r"\d{1,3}(?:\.\d{3})+")
_SWISS = re.compile(r"(\d{1,3}(?:'\d{3})+)(?:\.(\d+))?")


class ParsedAmount(BaseModel):
    """An amount read from text. ``plain`` is the form ERPs accept (``1284.50``). ``currencies``: those
    the text may mean, ``currency`` first — one where a code or a one-currency sign names it, several
    where only an ambiguous sign does ("$": ``currency`` is then the sign's usual one, a guess:
    ``currency_guessed``), none where the text names no currency."""

    text: str
    value: Decimal
    currency: str | None
    format: AmountFormat
    plain: str
    derivation: str
    currencies: tuple[str, ...] = ()

    @property
    def currency_guessed(self) -> bool:
        return len(self.currencies) > 1

    def render(self) -> str:
        currency = self.currency or "(no currency in the text)"
        guess = (  # on a line of its own: "currency:" stays the code alone for whoever reads it
            f"\ncurrency guessed: the sign may also be {', '.join(self.currencies[1:])}; check the document"
            if self.currency_guessed
            else ""
        )
        return f"value: {self.plain}\ncurrency: {currency}{guess}\nformat: {self.format}\nworking: {self.derivation}"


def plain_amount(value: Decimal | int | str, decimals: int = 2) -> str:
    """``Decimal('1284.5')`` → ``'1284.50'``: no grouping, '.' decimals, rounded half up."""
    try:
        number = Decimal(str(value))
    except InvalidOperation as exc:
        raise APInputError(f"not a number: {value!r}; use parse_amount for formatted text") from exc
    quantum = Decimal(1).scaleb(-decimals)
    text = f"{number.quantize(quantum, rounding=ROUND_HALF_UP):f}"
    return text[1:] if text.startswith("-") and Decimal(text) == 0 else text


def parse_amount(text: str) -> ParsedAmount:
    """Parse ``1,284.50`` / ``1.284,50`` / ``1,28,450.00`` / ``EUR 1 284,50`` / ``CHF 1’329.63`` /
    ``1.234,- €`` / ``(150.00)`` (negative: ``NEGATIVE_IN_BRACKETS``) …"""
    original = text
    s = text.translate(_PRINTED).strip()
    if not s:
        raise APInputError("empty amount; pass the amount as printed, e.g. '1,284.50 USD'")
    negative = bracketed = False
    if credit := CREDIT_MARK.search(s):  # "120.00 CR": a credit
        s = s[: credit.start()].strip()
        if s.startswith("-") or s.endswith("-") or "(" in s:
            raise APInputError(
                f"not an amount: {original!r} marks a credit twice (a minus or brackets and 'CR'). Pass the "
                "amount as the document means it, e.g. '120.00 CR' or '-120.00'"
            )
    negative, bracketed = credit is not None, False
    if s.count("(") == 1 == s.count(")") and s.index("(") < s.index(")"):
        negative = bracketed = NEGATIVE_IN_BRACKETS.search(s) is not None  # else they set the amount off
        s = s.replace("(", " ").replace(")", " ")
    currencies, s = _take_currency(s, original)
    currency = currencies[0] if currencies else None
    # whole: closed by a whole mark (``WHOLE_MARKS``: "1.234,-", "1,23,456/-", "12,000/-"), or in a
    # currency with no decimals: a separator before three digits then groups thousands ("¥12,000")
    whole = currency in ZERO_DECIMAL_CURRENCIES
    s = " ".join(s.split())
    if mark := _WHOLE_MARK.search(s):
        whole, s = True, s[: mark.start()]
    closing_dash = False  # a "-" after a whole amount in a currency without decimals ("¥12,000-")
    if s.startswith(("-", "+")):
        negative = negative or s[0] == "-"
        s = s[1:].strip()
    elif s.endswith("-"):
        closing_dash = currency in ZERO_DECIMAL_CURRENCIES
        negative = negative or not closing_dash
        s = s[:-1].strip()
    if not s or not re.fullmatch(r"[0-9.,' ]+", s) or not re.search(r"\d", s):
        raise APInputError(
            f"not an amount: {original!r}. Pass only the amount and its currency as printed, "
            "e.g. '1,284.50 USD', '1.284,50 EUR' or '₹1,28,450.00'"
        )
    value_text, fmt = _classify(s, original, whole)
    if mark and "." in value_text:
        raise APInputError(
            f"not an amount: {original!r} closes an amount with decimals with {mark.group(0)!r}, the mark of a "
            "whole amount. Pass the amount as the document means it, e.g. '1.234,-' (whole) or '1.234,50'"
        )
    if closing_dash and "." in value_text:  # decimals: the "-" is a trailing minus ("¥12,000.00-")
        closing_dash, negative = False, True
    value = Decimal(value_text)
    if negative:
        value = -value
    plain = plain_amount(value, decimals=max(2, -int(value.as_tuple().exponent)))
    sign = (
        "negative (in brackets: a credit?), "
        if bracketed
        else "negative ('CR': a credit), "
        if credit
        else "negative, "
        if negative
        else ""
    )
    sign += f"whole (the '-' closes a {currency} amount, no minus), " if closing_dash else ""
    shown = " ".join(original.split())
    derivation = f"'{shown}': {sign}{_FORMAT_WORDS[fmt]} → {plain}" + (
        f" {currency}" if currency else " (no currency in the text)"
    )
    if len(currencies) > 1:
        derivation += f" (a guess: the sign may also be {', '.join(currencies[1:])})"
    return ParsedAmount(
        text=original,
        value=value,
        currency=currency,
        format=fmt,
        plain=plain,
        derivation=derivation,
        currencies=currencies,
    )


def currencies_in(text: str) -> set[str]:
    """The currencies a text names, as codes: its currency symbols and upper-case ISO codes
    (``Total (EUR): 1.234,50`` names EUR; a code that is also a word, ``WORD_CODES``, does not). An
    ambiguous sign names every currency it may stand for ("$": USD, CAD, AUD …)."""
    found = {code for sign, codes in _SIGN_RES if sign.search(text) for code in codes}
    return found | {m.group(1) for m in _CODE_RE.finditer(text) if m.group(1) in _NOT_WORD_CODES}


# an amount after a sign: cents or grouped thousands ("RM 1,234.50", "Rp 150.000"; not "RM 204", "Fr. 15.01.")
_MONEY_AFTER = rf"[-(]?\d[\d{GROUPS}]*(?:[.,]\d\d|[{GROUPS}]\d{{3}})(?![\d.])"


def signs_pattern(one_currency: bool = False) -> str:
    """A regex matching the currency signs of the one table (``_SYMBOLS``) as a line writes them,
    longest first (``_sign``); ``one_currency``: only those that name one currency (``SIGN_CURRENCY``).
    The verifier's and the approval rules' reading of signs: a sign known here is known there.
    Tried only where a sign's first character stands: each begins with look-behinds, and tried at
    every character of all a run read they took ~50 ms in 40 kB."""
    symbols = [symbol for symbol, codes in _SYMBOLS if not one_currency or len(codes) == 1]
    firsts = re.escape("".join(sorted({symbol[0] for symbol in symbols})))
    return f"(?=[{firsts}])(?:{'|'.join(_sign(symbol) for symbol in symbols)})"


def _sign(symbol: str) -> str:
    """A currency sign in a line (``_symbol``); one that is also a word (``_SIGN_WORDS``: "RM", "Fr.")
    only against an amount ("RM 1,234.50", "1.234,50 Fr.": ``_MONEY_AFTER``)."""
    sign = _symbol(symbol).pattern
    if symbol in _SIGN_WORDS:
        return rf"(?:{sign}(?=\s?{_MONEY_AFTER})|(?:(?<=\d)|(?<=\d\s)){sign})"
    return sign


def _symbol(symbol: str) -> re.Pattern[str]:
    """A currency sign as written: never after a letter (the "$" of "A$" is another sign's), and a
    sign of letters ("Rs", "zł", "RM") or ending in one ("S/") never before one ("S/N" is no sol)."""
    if symbol.isalpha() or symbol.endswith((".", "/")):
        return re.compile(rf"(?<![A-Za-z]){re.escape(symbol)}(?![A-Za-z])")
    return re.compile(rf"(?<![A-Za-z]){re.escape(symbol)}")


# the signs of the one table compiled once, in its order (longest first): ``currencies_in`` runs per
# word of a line (``documents.provenance``), ``_take_currency`` per amount read
_SYMBOL_RES = tuple((symbol, _symbol(symbol), codes) for symbol, codes in _SYMBOLS)
_SIGN_RES = tuple((re.compile(_sign(symbol)), codes) for symbol, codes in _SYMBOLS)
_NOT_WORD_CODES = ISO_CURRENCIES - WORD_CODES


def _take_currency(s: str, original: str) -> tuple[tuple[str, ...], str]:
    """The currencies ``s`` may be written in (``ParsedAmount.currencies``), and ``s`` without its
    signs and codes: those every sign and code written allows, the first one's order kept ("$ 5 CAD"
    is CAD; "$ 5" USD first, or another dollar); none allowed by all is a conflict ("$ 5 EUR")."""
    named: dict[str, tuple[str, ...]] = {}  # each sign or code written -> the currencies it allows
    for symbol, pattern, codes in _SYMBOL_RES:
        if pattern.search(s):
            named[symbol] = codes
            s = pattern.sub(" ", s)
    for match in _CODE_RE.finditer(s):
        code = match.group(1).upper()
        if code not in ISO_CURRENCIES or (code in WORD_CODES and code != match.group(1)):
            raise APInputError(
                f"not an amount: {original!r} contains the word {match.group(1)!r}. "
                "Pass only the amount and its currency, e.g. '1,284.50 USD'"
            )
        named[code] = (code,)
    s = _CODE_RE.sub(" ", s)
    allowed = tuple(c for c in next(iter(named.values()), ()) if all(c in codes for codes in named.values()))
    if named and not allowed:
        says = [w if codes == (w,) else f"{w} ({'/'.join(codes)})" for w, codes in named.items()]
        raise APInputError(
            f"conflicting currencies in {original!r}: {', '.join(sorted(says))}. "
            "Pass the amount with the one currency the document means, e.g. '1,284.50 CAD'"
        )
    return allowed, s


def _classify(s: str, original: str, whole: bool = False) -> tuple[str, AmountFormat]:
    """Return the number as a plain decimal string and the format it was written in. ``whole``: the
    amount has no decimals (``parse_amount``), so one separator before three digits groups thousands."""
    if " " in s:
        return _space_grouped(s, original)
    if "'" in s:
        m = _SWISS.fullmatch(s)
        if not m:
            raise _grouping_error(original)
        return m.group(1).replace("'", "") + (f".{m.group(2)}" if m.group(2) else ""), "swiss"
    has_comma, has_dot = "," in s, "." in s
    if has_comma and has_dot:
        cut = max(s.rfind(","), s.rfind("."))
        int_part, frac = s[:cut], s[cut + 1 :]
        if not frac.isdigit():
            raise _grouping_error(original)
        if s[cut] == ".":
            return _comma_grouped(int_part, original) + "." + frac, _comma_format(int_part)
        if not _EU_INT.fullmatch(int_part):
            raise _grouping_error(original)
        return int_part.replace(".", "") + "." + frac, "european"
    if has_comma:
        if s.count(",") > 1:
            return _comma_grouped(s, original), _comma_format(s)
        int_part, frac = s.split(",")
        if not int_part.isdigit() or not frac.isdigit():
            raise _grouping_error(original)
        if len(frac) == 3 and len(int_part) <= 3 and not int_part.startswith("0"):
            if whole:
                return int_part + frac, "us"
            raise APInputError(
                f"ambiguous amount {original!r}: it is {int_part}{frac} if ',' groups thousands, "
                f"or {int_part}.{frac} if ',' is a decimal comma. Check how the document writes its other "
                f"amounts, then pass an unambiguous form such as '{int_part},{frac}.00' or '{int_part}{frac}'"
            )
        return f"{int_part}.{frac}", "european"
    if has_dot:
        if s.count(".") > 1:
            if not _EU_INT.fullmatch(s):
                raise _grouping_error(original)
            return s.replace(".", ""), "european"
        int_part, frac = s.split(".")
        if not frac.isdigit() or (int_part and not int_part.isdigit()):
            raise _grouping_error(original)
        if len(frac) == 3 and 0 < len(int_part) <= 3 and not int_part.startswith("0"):
            if whole:
                return int_part + frac, "european"
            raise APInputError(
                f"ambiguous amount {original!r}: it is {int_part}.{frac} as a plain decimal, or "
                f"{int_part}{frac} if '.' groups thousands (European style). Check how the document writes "
                f"its other amounts, then pass an unambiguous form such as '{int_part}{frac},00' or "
                f"'{int_part}.{frac}0'"
            )
        return f"{int_part or '0'}.{frac}", "plain"
    return s, "plain"


def _space_grouped(s: str, original: str) -> tuple[str, AmountFormat]:
    groups = s.split(" ")
    last = groups[-1]
    m = re.fullmatch(r"(\d{3})(?:[.,](\d+))?", last)
    if (
        not m
        or not re.fullmatch(r"\d{1,3}", groups[0])
        or any(len(g) != 3 or not g.isdigit() for g in groups[1:-1])
    ):
        raise _grouping_error(original)
    frac = m.group(2) or ""
    digits = "".join(groups[:-1]) + m.group(1)
    return digits + (f".{frac}" if frac else ""), "space_grouped"


def _comma_grouped(int_part: str, original: str) -> str:
    if _US_INT.fullmatch(int_part) or _INDIAN_INT.fullmatch(int_part):
        return int_part.replace(",", "")
    if int_part.isdigit():
        return int_part
    raise _grouping_error(original)


def _comma_format(int_part: str) -> AmountFormat:
    if "," not in int_part:
        return "plain"
    return "us" if _US_INT.fullmatch(int_part) else "indian"


def _grouping_error(original: str) -> APInputError:
    return APInputError(
        f"not a recognised amount format: {original!r}. Known formats: 1,284.50 / 1.284,50 / "
        "1 284,50 / 1'284.50 / 1,28,450.00 (Indian) / 1284.50; pass the amount exactly as printed"
    )


# ----------------------------------------------------------------------------------------- dates

# the month names each locale prints, January first: data, one table (a name two locales share names
# the same month in both; a name that is also an everyday English word, such as Portuguese "out" or
# Italian "set", is left out: "3 out 2026" is no date to read)
MONTH_NAMES: dict[str, str] = {
    "en": "january jan, february feb, march mar, april apr, may, june jun, july jul, august aug, september sep sept,"
    " october oct, november nov, december dec",
    "de": "januar jän jänner, februar feber, märz maerz mär, april, mai, juni, juli, august, september, oktober okt,"
    " november, dezember dez",
    "fr": "janvier janv, février fevrier févr fevr, mars, avril avr, mai, juin, juillet juil, août aout, septembre,"
    " octobre, novembre, décembre decembre déc",
    "es": "enero ene, febrero, marzo, abril abr, mayo, junio, julio, agosto ago, septiembre setiembre, octubre,"
    " noviembre, diciembre dic",
    "it": "gennaio gen, febbraio, marzo, aprile, maggio mag, giugno giu, luglio lug, agosto ago, settembre sett,"
    " ottobre ott, novembre, dicembre dic",
    "pt": "janeiro, fevereiro fev, março marco, abril abr, maio, junho, julho, agosto ago, setembro, outubro,"
    " novembro, dezembro dez",
    "nl": "januari, februari, maart mrt, april, mei, juni, juli, augustus, september, oktober okt, november, december",
    "sv": "januari, februari, mars, april, maj, juni, juli, augusti, september, oktober okt, november, december",
    "no/da": "januar, februar, mars marts, april, mai maj, juni, juli, august, september, oktober okt, november,"
    " desember december",
    "fi": "tammikuuta tammikuu, helmikuuta helmikuu, maaliskuuta maaliskuu, huhtikuuta huhtikuu, toukokuuta"
    " toukokuu, kesäkuuta kesäkuu, heinäkuuta heinäkuu, elokuuta elokuu, syyskuuta syyskuu, lokakuuta lokakuu,"
    " marraskuuta marraskuu, joulukuuta joulukuu",
    "pl": "stycznia styczeń styczen, lutego luty, marca marzec, kwietnia kwiecień kwiecien, maja maj, czerwca"
    " czerwiec, lipca lipiec, sierpnia sierpień sierpien, września wrzesień wrzesnia wrzesien, października"
    " październik pazdziernika pazdziernik, listopada listopad, grudnia grudzień grudzien",
}
_MONTHS: dict[str, int] = {}
for _locale, _names in MONTH_NAMES.items():
    if len(_names.split(",")) != 12:
        raise ValueError(f"MONTH_NAMES[{_locale!r}] does not name twelve months")
    for _number, _words in enumerate(_names.split(","), start=1):
        for _name in _words.split():
            if _MONTHS.setdefault(_name, _number) != _number:
                raise ValueError(f"month name {_name!r} ({_locale}) names two months in MONTH_NAMES")

_MONTH_RE = "|".join(sorted((re.escape(m) for m in _MONTHS), key=len, reverse=True))
MONTHS, MONTH_PATTERN = _MONTHS, _MONTH_RE  # every month name (lower case) → its number; a regex of them
_DATE_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("iso", re.compile(r"(?<!\d)(?P<y>\d{4})[-/.](?P<m>\d{1,2})[-/.](?P<d>\d{1,2})(?!\d)")),
    ("dotted_dmy", re.compile(r"(?<![\d.])(?P<d>\d{1,2})\.(?P<m>\d{1,2})\.(?P<y>\d{4})(?!\d)")),
    # dd.mm.yy, the one two-digit year read (as 20yy): European day first, a valid day and month in
    # two digits each, not part of a longer dotted number ("v1.10.26", "192.168.10.26")
    (
        "dotted_dmy_short",
        re.compile(r"(?<![\w.])(?P<d>0[1-9]|[12]\d|3[01])\.(?P<m>0[1-9]|1[0-2])\.(?P<y>\d{2})(?!\w|\.\d)"),
    ),
    ("numeric", re.compile(r"(?<![\d/-])(?P<a>\d{1,2})[/-](?P<b>\d{1,2})[/-](?P<y>\d{4})(?!\d)")),
    # 10/20/26, 15/10/26: slashes and the year in two digits (20yy), not part of a longer number or
    # code ("1/10/26/3", "v2/10/26"; with hyphens, "12-10-26", a reference as often as a date: not read);
    # day and month read as in "numeric" (an order the numbers do not give is refused)
    (
        "numeric_short",
        re.compile(r"(?<![\w/.-])(?P<a>\d{1,2})/(?P<b>\d{1,2})/(?P<y>\d{2})(?![\w/]|[.-]\d)"),
    ),
    (
        "day_month_name",
        re.compile(
            rf"(?<!\d)(?P<d>\d{{1,2}})(?:st|nd|rd|th|er|re|°|º|ª)?\.?[\s-]*(?:de\s+)?(?P<mon>{_MONTH_RE})\.?,?[\s-]*"
            rf"(?:del?\s+)?(?P<y>\d{{4}})(?!\d)",  # "13 de noviembre de 2026", "13 de dezembro de 2026"
            re.IGNORECASE,
        ),
    ),
    (
        "month_name_day",
        re.compile(
            rf"(?<![A-Za-z])(?P<mon>{_MONTH_RE})\.?\s+(?P<d>\d{{1,2}})(?:st|nd|rd|th)?,?\s+(?P<y>\d{{4}})(?!\d)",
            re.IGNORECASE,
        ),
    ),
    # 2026年11月13日 (Japanese, Chinese), 2026년 11월 13일 (Korean)
    ("cjk", re.compile(r"(?<!\d)(?P<y>\d{4})\s*[年년]\s*(?P<m>\d{1,2})\s*[月월]\s*(?P<d>\d{1,2})\s*[日일]")),
)


class ParsedDate(BaseModel):
    text: str
    value: date
    format: str
    derivation: str

    def render(self) -> str:
        return f"date: {self.value.isoformat()}\nworking: {self.derivation}"


def parse_date(text: str) -> ParsedDate:
    """Parse one date written as 2026-09-12, 12.09.2026, 12 Sep 2026, September 12, 2026, 09/30/2026 …

    Numeric dates with '/' where both day and month could be ≤ 12 (10/05/2026) are ambiguous and
    refused: the caller should check the document's other dates or ask.
    """
    found = find_dates(text)
    if not found:
        raise APInputError(f"not a date: {text!r}; pass a date such as '2026-09-12' or '12 Sep 2026'")
    if len({d.value for d in found}) > 1:
        listed = ", ".join(d.value.isoformat() for d in found)
        raise APInputError(f"more than one date in {text!r} ({listed}); pass a single date")
    return found[0]


def find_dates(text: str) -> list[ParsedDate]:
    """All dates in a piece of text, in order of appearance. Raises on ambiguous or invalid ones."""
    return [_date_from_match(fmt, m) for fmt, m in _date_matches(text)]


def date_spans(text: str) -> list[tuple[int, int]]:
    """Where dates are written in a piece of text (start, end), valid or not, in order."""
    return [(m.start(), m.end()) for _, m in _date_matches(text)]


def _date_matches(text: str) -> list[tuple[str, re.Match[str]]]:
    spans: list[tuple[int, int]] = []
    results: list[tuple[str, re.Match[str]]] = []
    for fmt, pattern in _DATE_PATTERNS:
        for m in pattern.finditer(text):
            if any(m.start() < end and start < m.end() for start, end in spans):
                continue
            spans.append((m.start(), m.end()))
            results.append((fmt, m))
    return sorted(results, key=lambda r: r[1].start())


def _date_from_match(fmt: str, m: re.Match[str]) -> ParsedDate:
    raw = m.group(0)
    groups = m.groupdict()
    year = int(groups["y"]) + (2000 if fmt in ("dotted_dmy_short", "numeric_short") else 0)
    if fmt in ("numeric", "numeric_short"):
        a, b = int(groups["a"]), int(groups["b"])
        if a > 12 >= b:
            day, month, how = a, b, "day/month/year (the first number is over 12)"
        elif b > 12 >= a:
            day, month, how = b, a, "month/day/year (the second number is over 12)"
        elif a == b:
            day, month, how = a, b, "day and month are the same"
        else:
            raise APInputError(
                f"ambiguous date {raw!r}: {a}/{b} may be day/month or month/day. Check how the document "
                "writes other dates (e.g. a date with a day over 12) or ask; then pass it as YYYY-MM-DD"
            )
        if fmt == "numeric_short":
            how += ", the year in two digits (20yy)"
    else:
        day = int(groups["d"])
        month = int(groups["m"]) if "m" in groups and groups.get("m") else _MONTHS[groups["mon"].lower()]
        how = {
            "iso": "year-month-day",
            "dotted_dmy": "day.month.year",
            "dotted_dmy_short": "day.month.year with the year in two digits (20yy)",
            "day_month_name": "day month-name year",
            "month_name_day": "month-name day, year",
            "cjk": "year年month月day日",
        }[fmt]
    try:
        value = date(year, month, day)
    except ValueError as exc:
        raise APInputError(f"not a valid calendar date: {raw!r} ({exc})") from exc
    return ParsedDate(text=raw, value=value, format=fmt, derivation=f"{raw!r} read as {how} → {value}")


def _as_date(value: date | str) -> date:
    return value if isinstance(value, date) else parse_date(value).value


# ------------------------------------------------------------------------------------- due dates

DueRule = Literal["net_days", "end_of_month_plus_days", "on_receipt", "explicit_date", "day_of_next_month"]

_ON_RECEIPT = re.compile(
    r"\b(?:due|payable|zahlbar|fällig)?\s*(?:up)?on\s+receipt\b|\bimmediate(?:ly)?\b|\bsofort\b"
    r"|\bbei\s+erhalt\b|\bà\s+réception\b|\bcash\s+on\s+delivery\b|\bupon\s+presentation\b",
    re.IGNORECASE,
)
# cash terms, due at once as on receipt: "COD" (in capitals: "cod" is a fish), "Netto Kasse", "Paiement
# comptant", "pago al contado", "Rimessa diretta", "Vista fattura" — the terms only where they give no
# day count and no date ("Paiement à 30 jours. Pas d'escompte pour paiement comptant" is due in 30 days)
_PAY_NOW = re.compile(
    r"(?-i:\bC\.?O\.?D\b\.?)|\bnetto\s+kasse\b|\b(?:au\s+)?comptant\b|\b(?:al|de)\s+contado\b"
    r"|\brimessa\s+diretta\b|\b(?:a\s+)?vista\s+fattura\b",
    re.IGNORECASE,
)
_EOM = re.compile(
    r"\be\.?\s?o\.?\s?m\b\.?|\bend\s+of\s+(?:the\s+)?month\b|\bmonth[-\s]?end\b|\bmonatsende\b|\bfin\s+de\s+mois\b",
    re.I,
)
# a day of the month after the invoice's ("Net 15th of following month", "10th prox", "Net 10th proximo"):
# the terms only where they give no day count and no date
_NEXT_MONTH_DAY = re.compile(
    r"(?<!\d)(?P<d>\d{1,2})(?:st|nd|rd|th)\s+(?:day\s+)?(?:of\s+(?:the\s+)?(?:following|next)\s+month|prox(?:imo)?\b)",
    re.IGNORECASE,
)
# the end of the month a count ends in ("30 gg d.f.f.m.", "30 giorni fine mese", "30 días fin de mes"):
# another reckoning than the end of the invoice month plus the count (``_EOM``), not computed here
_COUNT_TO_MONTH_END = re.compile(
    r"\bfine\s+mese\b|\bf\.\s?m\.|\bfm\b|\bfin\s+de\s+mes\b|\beinde\s+(?:van\s+de\s+)?maand\b", re.I
)
# the word of a day count: "30 days", "14 Tage", "30 jours", "30 días", "30 giorni", "30 gg", "14 dagen",
# "30 dagar", "8 dage", "30 dager", "14 päivää", "14 pv", "14 dni", "30 gün", "30日", "30天"
_DAYS_WORD = (
    r"(?:(?:calendar\s+)?(?:days?|tage?n?|jours|d[íi]as|giorni|gg|dag(?:en|ar|e|er)?|p[äa]iv[äa][äa]|pv|dni|dn[íů]"
    r"|g[üu]n)\b|日|天)"
)
# a count of working days ("10 working days", "8 Werktage", "5 jours ouvrés"): not calendar days, never
# counted as such (it would give a date before the due date): refused where they are the count the terms
# give, a remark anywhere else ("allow 3 business days for transfer": ``_counted_working_days``)
_WORKING_DAYS = re.compile(
    r"\d+\s*(?:working|business|bank)\s+days?|\d+\s*(?:werk|arbeits|bank)tage?n?|\d+\s*jours\s+ouvr"
    r"|\d+\s*d[íi]as\s+h[áa]biles|\d+\s*giorni\s+lavorativi|\d+\s*werkdagen|\d+\s*arbe(?:tsdagar|idsdager)"
    r"|\d+\s*hverdage|\d+\s*dni\s+robocz",
    re.IGNORECASE,
)
# "n/30", "n30": the US shorthand of net 30 ("2/10, n/30"); "n 30" only right after a discount ("2/10 n 30",
# "2% 10, n 30": read as "n/30", ``_N_AFTER_DISCOUNT``), never a lone "n <number>" ("contract N 45")
_DAY_NUMBER = re.compile(
    rf"\bnet(?:to|o)?\s*(?P<a>\d+)\b|\bn(?:\s?/\s?)?(?P<b>\d+)\b|(?P<c>\d+)\s*{_DAYS_WORD}"
    r"|\b(?:within|innerhalb(?:\s+von)?|binnen|inom|innen|inden(?:\s+for)?|in)\s+(?P<d>\d+)\b|(?:\+|plus)\s*(?P<e>\d+)\b",
    re.IGNORECASE,
)
_N_AFTER_DISCOUNT = re.compile(
    r"(?P<discount>(?:\d+(?:[.,]\d+)?\s*%\s*/?\s*|\b\d+/)\d+\s*,?\s*)\bn\s+(?=\d)", re.I
)
# the end of the month as the start of the count: only tied to it ("30 days EOM", "Net 30 days after
# month end", "30 Tage nach Monatsende", "30 jours fin de mois", "EOM + 30", "end of month + 30"), or with
# no day count at all ("EOM"); a month end named elsewhere ("Net 30, statements issued at month end")
# starts no count (``_month_end``)
_EOM_COUNT = re.compile(
    rf"\d+\s*(?:{_DAYS_WORD})?\s*(?:net(?:to|o)?\s+)?(?:(?:after|from|following|past|of|since|nach|ab|vom|dem"
    rf"|après|à\s+compter\s+d[eu]|à\s+partir\s+d[eu]|de|la|le|du|the|des)\s+)*(?:{_EOM.pattern})"
    rf"|(?:{_EOM.pattern})\s*(?:\+|plus)?\s*(?:net(?:to|o)?\s+)?\d+",
    re.IGNORECASE,
)


def _month_end(text: str, numbers: set[int]) -> bool:
    """Whether the day count of the terms (``numbers``, read in ``text``) runs from the end of the
    invoice month (``_EOM_COUNT``)."""
    return bool(_EOM_COUNT.search(text) or (not numbers and _EOM.search(text)))


# an early-payment discount's rate: one written with its day count ("2/10", "1%/10", "2% 10 Net 30"), or one in a
# part of the terms that speaks of a discount ("2 % Skonto", "less 2%", "2% if paid within 10 days"): that
# part's day count is the discount's (``_day_counts``)
_RATE = re.compile(
    r"(?P<pct>\d+(?:[.,]\d+)?)\s*%(?:\s*/?\s*(?P<days>\d+)\b(?!\s*%|[.,]\d))?|\b(?P<pct2>\d+)/(?P<days2>\d+)\b"
)
# a tax's rate ("7% VAT", "incl. 19 % MwSt.", "21% de IVA", "VAT 20%", "TVA : 20 %"): never an
# early-payment discount, and no part of the terms' reading (``_day_counts``). The tax words: one list,
# also the provenance's (``documents.provenance``: "(VAT 20%)" sets off a tax's amount)
TAX_WORDS = "vat|tax|mwst|ust|gst|hst|pst|tva|iva|btw|moms|alv"
TAX_WORD = re.compile(TAX_WORDS, re.IGNORECASE)
_TAX_RATE = re.compile(
    rf"\d+(?:[.,]\d+)?\s*%\s*(?:[^\W\d_]+\.?\s+)?(?:{TAX_WORDS})\b\.?"
    rf"|\b(?:{TAX_WORDS})\b\.?\s*:?\s*\d+(?:[.,]\d+)?\s*%",
    re.IGNORECASE,
)
_DISCOUNT_WORD = re.compile(
    r"discount|skonto|rabatt|escompte|remise|descuento|sconto|desconto|korting|rabat|alennus|\bless\b"
    r"|abz(?:ü|ue)glich|abzgl|\b(?:if|when)\s+paid\b|\bbei\s+zahlung\b",
    re.IGNORECASE,
)
# what makes a date in the terms the due date: a label right before it ("Due date: 2026-10-20", "payment
# due by …", "payable before …", "zahlbar bis 07.10.2026", "fällig am …", "échéance le …", "vence el …",
# "Vervaldatum: …", "Zahlungsfrist: …"), or a word of paying and, in the same clause, one of a deadline
# right before the date (``_PAY_BY``: "Please remit by …", "Bitte überweisen Sie den Betrag bis zum …",
# "Payment deadline: …", "À régler avant le …", "te betalen vóór …", "pagar antes del …", "pagamento
# entro il …") — never a word of delivering, invoicing or issuing between them ("payment terms: goods
# delivered by …" labels a delivery date)
_PAY_WORD = (
    r"(?:pay|payment|payable|remit(?:tance)?|settle(?:ment)?|transfer|(?:be)?zahl(?:en|bar|ung)|zahlungs\w*"
    r"|[üu]e?berweis(?:en|ung)|begleichen|payer|pa(?:ie|ye)ment|r[ée]gler|r[èée]glement|virement|versement"
    r"|acquitter|betal(?:en|ing|a|as|ning|es)|betaalbaar|voldoen|overmaken|overschrijv(?:en|ing)|pagar|pago|pagadero"
    r"|abonar|pagare|pagamento|pagabile|saldare|versare|versamento|bonifico|maksu\w*|maksettava|p[łl]atn\w*"
    r"|zap[łl]at\w*)"
)
_BY_WORD = (
    r"(?:by|before|until|till|no\s+later\s+than|on\s+or\s+before|deadline"
    r"|bis(?:\s+(?:zum|sp[äa]testens(?:\s+(?:am|zum))?))?|sp[äa]testens(?:\s+(?:am|bis(?:\s+zum)?))?|vor\s+dem|frist"
    r"|avant(?:\s+le)?|au\s+plus\s+tard(?:\s+le)?|jusqu['’]au|(?:date\s+)?limite"
    r"|v[óo]{1,2}r|uiterlijk(?:\s+op)?|tot(?:\s+en\s+met)?"
    r"|antes\s+del?|hasta(?:\s+el)?|a\s+m[áa]s\s+tardar(?:\s+el)?|fecha\s+l[íi]mite"
    r"|entro(?:\s+e\s+non\s+oltre)?(?:\s+il)?|prima\s+del|termine|senast|innen|inden|viimeist[äa][äa]n)"
)
_NOT_DUE_WORD = (
    r"\w*(?:deliver|liefer|livr|lever|entreg|consegn|ship|versand|versend|invoic|rechnung|factur|fattur"
    r"|dated|issued|ausgestellt|datiert|[ée]mis|emitid|emess)"
)
_PAY_BY = rf"\b{_PAY_WORD}\b(?:[\s:]+(?!{_NOT_DUE_WORD})[^\s.,;:()\[\]]+){{0,6}}?[\s:]+{_BY_WORD}"
DUE_LABEL = re.compile(
    r"(?:\bdue(?:\s+date)?(?:\s+(?:on|by|before))?|\bpay(?:able|ment)?\s+(?:by|on|before|until|no\s+later\s+than)"
    r"|\bf[äa]llig(?:keit(?:sdatum)?)?(?:\s+(?:am|bis|zum|bis\s+zum))?|\bzahlbar\s+(?:bis|am)(?:\s+zum)?"
    r"|\bzahlung\s+bis(?:\s+zum)?|\bzahlungsziel|\bsp[äa]testens(?:\s+am|\s+bis)?"
    r"|[ée]ch[ée]ance(?:\s+(?:le|au))?|\b(?:payable|à\s+payer)\s+(?:le|avant\s+le|au\s+plus\s+tard\s+le)"
    r"|\bvencimiento|\bvence\s+el|\bpagadero\s+(?:el|antes\s+del|hasta\s+el)|\bscadenza(?:\s+il)?"
    r"|\bpagabile\s+entro\s+il|\bvencimento(?:\s+em)?"
    r"|\b(?:remit(?:tance)?|settle(?:ment)?)(?:\s+(?:by|on|before|until|no\s+later\s+than))?|\b(?:up)?on\s+receipt"
    r"|\bzahlungs(?:frist|termin)(?:\s+(?:bis(?:\s+zum)?|am))?|\bverval(?:datum|dag|t(?:\s+op)?)"
    r"|\buiterste\s+betaal(?:datum|dag)|\bscade(?:\s+il)?|\bf[öo]rfallo(?:datum|dag)|\bforfall(?:sdato|sdag)"
    r"|\bforfald(?:sdato|sdag)|\bsista\s+betalningsdag(?:en)?|\ber[äa]p[äa]iv[äa]|\btermin\s+p[łl]atno[śs]ci"
    r"|\bp[łl]atn[ey]\s+do|\bzap[łl]ata\s+do|\b(?:datum\s+)?splatnost(?:i)?|支払(?:い)?(?:期限|期日)|付款(?:期限|日期)"
    r"|到期日|(?:지급|납부|결제)\s*(?:기한|기일)|" + _PAY_BY + ")"
    r"\s*[:.(：]?\s*$",
    re.IGNORECASE,
)
# a label of the discount's deadline, not the due date: "(discount until 2026-10-24)", "2% if paid by …"
_DISCOUNT_CLAUSE = re.compile(r"discount|skonto|rabatt|escompte|descuento|sconto|desconto|%", re.IGNORECASE)
# the start of a day count: "Net 30 from 2026-10-20", "30 Tage ab 20.10.2026", "30 jours à compter du …",
# "30 days of invoice date 14.10.2026", "ab Rechnungsdatum (14.10.2026)", "from the invoice dated …"
# a date in a clause about paying late ("Late payments after 2026-11-13 incur 1.5% interest", "Verzugszinsen
# ab …", "pénalités de retard après le …"): when a penalty starts, never a due date nor a day count's start
_LATE = re.compile(
    r"\b(?:late|overdue|past\s+due|interest|penalt|surcharge|fees?\b|verzug|zinsen|mahn|s[äa]umnis|versp[äa]t"
    r"|retard|int[ée]r[êe]ts?|p[ée]nalit|majoration|mora\b|inter[ée]s(?:es)?\b|recargo|interessi|ritardo|rente\b"
    r"|boete|te\s+laat|unpaid|dr[öo]jsm[åa]l|forsinkelse|morarente|viiv[äa]stys|odsetk|延滞|遅延)",
    re.IGNORECASE,
)
_SENTENCE_BREAK = re.compile(r";|\.\s+(?=[A-ZÀ-Þ])")  # a full stop before a capital ("8% p.a. is" goes on)
_CLAUSE_BREAK = re.compile(r"[,()\[\]]|" + _SENTENCE_BREAK.pattern)
_COUNT_FROM = re.compile(
    r"(?:\b(?:from|after|starting|ab|nach|vom|à\s+compter\s+du|à\s+partir\s+du|a\s+partir\s+del?|desde(?:\s+el)?"
    r"|dal(?:la)?)|\b(?:from|of|after|ab|nach|vom|à\s+compter\s+de|à\s+partir\s+de|a\s+partir\s+de|desde|de)"
    r"\s+(?:the\s+|la\s+|dem\s+)?(?:invoice\s+dated?|date\s+of\s+(?:the\s+)?invoice|rechnungsdatum|date\s+de\s+(?:la\s+)?facture"
    r"|fecha\s+de\s+(?:la\s+)?factura))\s*[:.(]?\s*(?:the\s+)?$",
    re.IGNORECASE,
)


# three numbers joined by one separator twice ("10/20/2", "2026/10"): a date, written in a way
# ``_DATE_PATTERNS`` does not read; in terms never a rate ("2/10") or a day count
_DATE_SHAPED = re.compile(r"(?<![\w/.-])\d{1,4}([/.-])\d{1,2}\1\d{1,4}(?![\w/])")


def _clause_of(text: str, m: re.Match[str], breaks: re.Pattern[str] = _CLAUSE_BREAK) -> str:
    """The clause of ``text`` a date match stands in (up to a comma, semicolon, bracket or the end of
    a sentence; ``breaks``: other ends, e.g. only a sentence's)."""
    return breaks.split(text[: m.start()])[-1] + " " + breaks.split(text[m.end() :])[0]


# Each day count and discount rate is read in the part of the terms it stands in (``_day_counts``):
# parts end at a clause's end, at "or"/"otherwise" and at a dash between spaces ("… 2 % Skonto | oder
# innerhalb von 30 Tagen ohne Abzug"); a part ends too where it turns to paying late, from the late word,
# the rate before it or a count "after" it ("Net 30 days | 1.5% interest on overdue amounts", "Payments
# | after 45 days incur a 2% late fee") to the part's end: that text gives no day count and no discount.
# Only sentences about paying are read (``_about_paying``): with a word of paying or of a discount, or
# with nothing but day counts and rates ("30 days", "Within 30 days after receipt", "2% within 10
# days"); "Returns accepted within 14 days", "Warranty 90 days", "Delivery within 5 working days" give
# no day count — unless no sentence is about paying ("30 Tage nach Lieferung": all are read).
_PART_BREAK = re.compile(
    _CLAUSE_BREAK.pattern
    # "Net 10. 2% within 10 days": a full stop after a count, before a number, ends a part too (not one
    # after an abbreviation: "abzgl. 2% Skonto", "inkl. 7% MwSt")
    + r"|(?:(?<=\d)|(?<=days)|(?<=tage)|(?<=tagen)|(?<=jours)|(?<=d[ií]as)|(?<=giorni)|(?<=dagen))\.\s+(?=\d)"
    + r"|\s[-–—]\s"
    + r"|\b(?:or|oder|ou|eller|tai|lub|albo|otherwise|sonst|ansonsten|andernfalls|sinon|altrimenti|anders)\b",
    re.IGNORECASE,
)
_LATE_START = re.compile(
    rf"(?:\b(?:after|beyond|over|past|exceeding|more\s+than|nach|über|après|au-del[àa]\s+de|dopo|oltre"
    rf"|despu[ée]s\s+de|m[áa]s\s+de|na|efter|etter)\s+\d+\s*{_DAYS_WORD}[^;]*?)?"  # "Payments after 45 days incur …"
    r"(?:\d+(?:[.,]\d+)?\s*%\s*)?" + _LATE.pattern,
    re.IGNORECASE,
)
_TERMS_WORD = re.compile(
    rf"\b{_PAY_WORD}\b|\b(?:due|net(?:to|o)?|n(?:\s?/\s?)?\d+|terms|paid|f[äa]llig\w*|[ée]ch[ée]ance|vencimiento|scadenza"
    r"|verval\w*|betal\w*|f[öo]rfall\w*|forfald\w*|er[äa]p[äa]iv[äa]|splatn\w*|eom)\b|支払|付款|支付|지급|결제|납부",
    re.IGNORECASE,
)
# what a day count runs from, where the terms say so right after it ("30 days after delivery", "Net 30 from
# receipt of goods", "30 Tage nach Lieferung", "30 jours après réception de la marchandise", "30 días desde
# la entrega", "30 giorni dalla consegna", "30 dagen na levering", "30 giorni data fattura"): the invoice
# (``_INVOICE_WORD``, ``_OPEN_WORD``) or anything else (``_count_start``)
_COUNT_START = re.compile(
    rf"\s*(?:{_DAYS_WORD}\s*)?(?:net(?:to|o)?\s+)?"
    r"(?:after|from|following|of|since|upon|nach|ab|seit|vom|von|après|à\s+compter\s+d[eu]|à\s+partir\s+d[eu]|dès"
    r"|desde|a\s+partir\s+del?|despu[ée]s\s+del?|tras|dalla|dal|dall['’]|dopo|da|na|vanaf|sinds|efter|från|etter"
    r"|fra|date|data|fecha)(?![^\W\d_])(?P<what>[^,;()\[\]]*)",
    re.IGNORECASE,
)
# the invoice as a count's start: a word of the invoice (its date, its issue, its receipt: "invoice date",
# "date of issue", "date d'émission", "fecha de emisión", "Ausstellungsdatum", "Rechnungserhalt", "date de
# facture", "data fattura", "date hereof"), or a word that names no event of its own — receipt (of the
# invoice, as "due on receipt" is), a date, the end of the month (``_EOM``) — unless the word joined to it
# names another ("receipt of goods", "date of delivery", "Erhalt der Ware")
_INVOICE_WORD = re.compile(
    r"invoic|rechnung|factur|fattur|factuur|faktur|lasku|^issu|[ée]mission|emisi[óo]n|ausstellung|uitgifte"
    r"|^(?:billing|statement|hereof)$",
    re.I,
)
_OPEN_WORD = re.compile(
    r"receipt|receiving|date|datum|erhalt|eingang|zugang|empfang|r[ée]ception|recepci[óo]n|fecha|ricevimento"
    r"|ricezione|data|ontvangst|end|month|eom|monatsende|ende|fin|mois|mes|mese|maand|einde|ultimo",
    re.IGNORECASE,
)
DATE_WORD = re.compile(r"date|datum|data|fecha", re.IGNORECASE)
# the words joining what a count's start names: "of" and the like (what a word is of: "delivery of the
# invoice", ``_of_invoice``) and "and" ("delivery and invoice": both)
_OF_WORDS = (
    r"of|the|this|our|your|its|an?|der|die|das|dem|den|des|de|du|del|della|dello|di|la|le|les|l|d|el|il|lo|het|van"
    r"|von|do|da|af|av"
)
_JOINING_WORD = re.compile(_OF_WORDS + r"|and|und|et|y|e|en|och|og", re.IGNORECASE)
# an event other than the invoice a count may run from: delivery, goods (their receipt), shipment, acceptance,
# completion, installation, a service ("30 days post delivery", "within 30 days once goods are delivered",
# "30 Tage nach Wareneingang", "30 jours fin de mois après livraison") — unless it is the invoice's
# ("delivery of invoice", ``_of_invoice``) or a cost ("shipping charges", "Versandkosten"). Its word anywhere
# in the sentence of a day count or month end refuses the terms unless they give its date (``_other_event``)
EVENT_WORD = re.compile(
    r"\b(?:(?:deliver|(?:ge)?liefer(?!ant)|livr|(?:ge)?lever(?!an(?:cier|t))|aflever|entreg|consegn|ship|d[ie]spatch"
    r"|versand|versend|exp[ée]di|spedi|dostaw|toimit|arriv|ware|marchandis|merchandis|mercanc|mercader"
    r"|instal(?!l?ment)|servic|serviz|leistung|prestat|prestaci)(?!\w*(?:kosten|geb[üu]hr|adresse))\w*"
    r"|goods|goederen|merce|env[ií]os?|embarque|acceptance|acceptation|aceptaci[óo]n|accettazione|abnahme"
    r"|collaudo|oplevering|completion|completed|fertigstellung|ach[èe]vement|completamento|montage)\b"
    r"(?!\s+(?:and\s+handling\s+)?(?:charges?|fees?|costs?|address))",
    re.IGNORECASE,
)
# a count from the later or the earlier of two events ("… from the invoice date or delivery, whichever is
# later"): not computed, even where the terms date the other event
_WHICHEVER = re.compile(
    r"\bwhichever\b|\bje\s+nachdem\b|\bla\s+plus\s+(?:tardive|tard|t[ôo]t)\b|\blo\s+que\s+(?:ocurra|suceda)\b",
    re.IGNORECASE,
)
_WORD_AFTER = re.compile(rf"(?:[\s'’]+(?:{_OF_WORDS})(?![^\W\d_]))*[\s'’]+(?P<word>[^\W\d_]+)", re.IGNORECASE)


def _of_invoice(text: str, word: re.Match[str]) -> bool:
    """Whether ``word`` (a match in ``text``) is of the invoice: an invoice word after it, "of" and the
    like between ("delivery of the invoice", "receipt of a correct invoice"), or right before it
    ("invoice delivery")."""
    after = _WORD_AFTER.match(text, word.end())
    before = re.search(r"([^\W\d_]+)\s+$", text[: word.start()])
    return any(m and _INVOICE_WORD.search(m.group(1)) for m in (after, before))


def _other_event(read: str) -> str:
    """The word of an event other than the invoice (``EVENT_WORD``) in a sentence of ``read`` (the terms'
    parts about paying, ``_day_counts``) that gives a day count or a month end, "" for none."""
    for sentence in _SENTENCE_BREAK.split(read):
        if _DAY_NUMBER.search(sentence) or _EOM.search(sentence):
            for word in EVENT_WORD.finditer(sentence):
                if not _of_invoice(sentence, word):
                    return word.group(0)
    return ""


def _count_start(text: str) -> str:
    """What a day count in ``text`` runs from, where that is not the invoice (its date or its
    receipt): the words that say so ("after delivery", "from receipt of goods"), "" for none."""
    for count in _DAY_NUMBER.finditer(text):
        start = _COUNT_START.match(text, count.end())
        if not start:
            continue
        joined, previous = True, ""  # whether the next word names the start too, and the word before
        words = list(re.finditer(r"[^\W\d_]+", start.group("what")))
        for found in words:
            word = found.group(0)
            if _JOINING_WORD.fullmatch(word):
                joined = True
                continue
            if not (joined or DATE_WORD.fullmatch(previous)):
                break  # a word after the start ("from receipt unless …"), but what a date is of ("data consegna")
            if _of_invoice(start.group("what"), found):
                continue  # a word of the invoice ("receipt of a correct invoice", "delivery of invoice")
            if not (_INVOICE_WORD.search(word) or _OPEN_WORD.fullmatch(word)):
                return " ".join(text[count.start() : start.start("what") + found.end()].split())
            joined, previous = False, word
    return ""


def _counts_from_its_date(before: str) -> str:
    """The count and the event it runs from (``_count_start``) where the terms give, right after them,
    the event's date (``before``: the text before the date), "" for none: "30 days after delivery on
    2026-10-05", "30 Tage nach Lieferung am 05.10.2026", "Net 30 from delivery date: …", "30 jours après
    livraison (…)"."""
    other = _count_start(before)
    after = r"\s*(?:on|dated|am|vom|le|du|el|del|il|op|date|datum)?\s*[:(]?\s*$"
    dated = other and re.search(re.escape(other) + after, " ".join(before.split()), re.I)
    return other if dated else ""


# The one rule for a rate beside a day count (``_day_counts``): a tax's rate (``_TAX_RATE``) is none; a
# rate is an early-payment discount where a discount word says so (``_DISCOUNT_WORD``: "2% Skonto
# within 10 days", "less 2%", "2% if paid within 10 days"), or in the fixed forms "2/10", "2% 10",
# "2% within 10 days" — a rate of at most ``DISCOUNT_MOST`` %, with nothing else in its part but its
# day count, a net count and a label ("Terms:"; ``_bare``) — beside a net count no shorter than the
# discount's ("2/10 Net 30", "Net 30, 2% within 10 days", "Net 10. 2% within 10 days"). Any other rate
# with a day count is refused (ask a human): it may be a part to pay early, not a discount to take
# ("Prepayment 10% within 7 days, Net 30", "Pay 10% within 7 days, remainder Net 30", "Deposit 50%
# within 7 days", "5% within 10 days, 95% within 30 days", "Net 30. 5% within 60 days").
DISCOUNT_MOST = Decimal(10)
_TERMS_LABEL = re.compile(
    r"(?:payment\s+)?terms?|zahlungs(?:bedingungen|konditionen|ziel)|conditions?(?:\s+de\s+(?:paiement|r[èe]glement))?"
    r"|condiciones(?:\s+de\s+pago)?|condizioni(?:\s+di\s+pagamento)?|(?:betalings)?voorwaarden|betalningsvillkor"
    r"|betalingsbetingelser",
    re.IGNORECASE,
)
# the words a day count's start is written with ("after receipt", "from the invoice date", "fin de mois")
_START_WORD = re.compile(
    r"after|from|following|since|upon|nach|ab|seit|vom|après|dès|desde|tras|dalla|dal|dopo|na|vanaf|sinds"
    r"|efter|från|etter|fra|days?|net(?:to|o)?",
    re.IGNORECASE,
)


def _bare(part: str) -> bool:
    """Whether ``part`` says nothing but day counts and rates: its words, without its counts, rates, a
    label ("Terms:") and a count's start in another event ("after delivery": ``_count_start``), all of a
    count's start ("30 days after receipt", "2% within 10 days", "2/10 Net 30", "30 jours fin de mois");
    "Delivery within 45 days" or "Pay 10% within 7 days" say more."""
    started = _count_start(part)  # "n/30 after delivery": refused as such (``_check_count_start``)
    rest = _TERMS_LABEL.sub(
        " ", _DAY_NUMBER.sub(" ", _RATE.sub(" ", part.replace(started, " ") if started else part))
    )
    return all(
        _JOINING_WORD.fullmatch(word)
        or _OPEN_WORD.fullmatch(word)
        or _START_WORD.fullmatch(word)
        or _INVOICE_WORD.search(word)
        or re.fullmatch(_DAYS_WORD, word, re.IGNORECASE)
        for word in re.findall(r"[^\W\d_]+", rest)
    )


def _about_paying(part: str) -> bool:
    """Whether a part of the terms is about paying: a word of paying or of a discount, or nothing but
    day counts and rates (``_bare``)."""
    return bool(_TERMS_WORD.search(part) or _DISCOUNT_WORD.search(part)) or (
        _bare(part) and bool(_DAY_NUMBER.search(part) or _RATE.search(part))
    )


def _count(m: re.Match[str]) -> int:
    return int(next(g for g in m.groups() if g))


def _counted_working_days(parts: list[str], other: bool) -> str:
    """The working days (``_WORKING_DAYS``) the terms count by, "" for none: those whose number is the
    day count its part gives ("payable within 10 working days", "Zahlbar innerhalb 10 Werktagen"), or any
    where the terms give nothing ``other`` to go by (no other count, date, EOM or "on receipt": "10
    Werktage"). Anywhere else they are a remark ("Net 30. Please allow 3 business days for payment
    processing"): ignored."""
    for part in parts:
        for working in _WORKING_DAYS.finditer(part):
            read = [m.span(g) for m in _DAY_NUMBER.finditer(part) for g in m.groupdict() if m.group(g)]
            read += [m.span(g) for m in _RATE.finditer(part) for g in ("days", "days2") if m.group(g)]
            if not other or any(working.start() <= s < working.end() for s, _ in read):
                return working.group(0)
    return ""


def _fixed_discount(rate: re.Match[str], part: str, nets: set[int]) -> bool:
    """Whether ``rate`` (no discount word in its ``part``) is an early-payment discount in a fixed form
    ("2/10", "2% 10", "2% within 10 days"): at most ``DISCOUNT_MOST`` %, its part ``_bare``, and one of
    ``nets`` (the net counts beside it) no shorter than its day count."""
    pct = rate.group("pct") or rate.group("pct2")
    written = rate.group("days") or rate.group("days2")
    rest = part[: rate.start()] + " " + part[rate.end() :]
    theirs = {_count(m) for m in _DAY_NUMBER.finditer(rest)}
    if written:
        days, nets = int(written), nets | theirs
    elif len(theirs) == 1:
        days = theirs.pop()
    else:
        return False
    return Decimal(pct.replace(",", ".")) <= DISCOUNT_MOST and _bare(part) and any(n >= days for n in nets)


def _day_counts(terms: str, undated: str, dated: bool = False) -> tuple[set[int], str, int | None, str]:
    """The net day counts of the terms (their dates taken out), the early-payment discount's rate and
    day count, and the text they were read in (the parts not about paying late). Of a discount and a
    net count the smaller is the discount's and the larger the net, whatever their order ("Zahlbar
    innerhalb von 10 Tagen abzüglich 2 % Skonto oder innerhalb von 30 Tagen ohne Abzug", "2/10 Net 30")."""
    sentences = [
        [
            part[: late.start()] if (late := _LATE_START.search(part)) else part
            for part in _PART_BREAK.split(_TAX_RATE.sub(" ", one))
        ]
        for one in _SENTENCE_BREAK.split(undated)
    ]
    # the sentences about paying (``_about_paying``), every one where none is ("30 Tage nach Lieferung",
    # "E.O.M.": the words of a count's start are read by ``_count_start``), and of each part its rate
    read_sentences = [sentence for sentence in sentences if any(map(_about_paying, sentence))] or sentences
    read = [part for sentence in read_sentences for part in sentence]
    rated = [(part, rate) for part in read if (rate := _RATE.search(part))]
    counts: set[int] = set()  # the net counts: those of the parts with no rate
    plain: set[int] = set()  # of them, those a part says nothing else with ("Net 30", not "remainder Net 30")
    for part in read:
        if not _RATE.search(part):
            counts |= (found := {_count(m) for m in _DAY_NUMBER.finditer(part)})
            plain |= found if _bare(_TERMS_WORD.sub(" ", part)) else set()
    rates: list[str] = []
    own: set[int] = set()  # the discount's day counts: those in the part that gives its rate
    for part, rate in rated:
        rest = part[: rate.start()] + " " + part[rate.end() :]
        written = rate.group("days") or rate.group("days2")
        if not (written or _DAY_NUMBER.search(rest) or _DISCOUNT_WORD.search(part)):
            continue  # a rate with no day count decides nothing ("Net 30, 10% deposit")
        if not (_DISCOUNT_WORD.search(part) or _fixed_discount(rate, part, plain)):
            raise _terms_error(
                terms,
                f"{' '.join(part.split())!r} gives a rate with a day count that is no early-payment discount "
                "(no discount word, and not '2/10 Net 30' or 'Net 30, 2% within 10 days'): it may be a "
                "part of the amount to pay early",
            )
        rates.append(rate.group("pct") or rate.group("pct2"))
        if written:
            own.add(int(written))
        own |= {_count(m) for m in _DAY_NUMBER.finditer(rest)}
    text = " ; ".join(" , ".join(sentence) for sentence in read_sentences)  # parts of a sentence stay one
    other = bool(counts | own) or dated or bool(_EOM.search(text) or _ON_RECEIPT.search(text))
    if working := _counted_working_days(read, other):
        raise _terms_error(terms, f"{working!r} counts working days, not calendar days")
    if month_end := _COUNT_TO_MONTH_END.search(text):
        raise _terms_error(
            terms, f"{month_end.group(0)!r}: the end of the month a count ends in is not computed"
        )
    every = counts | own
    if not own or len(set(rates)) > 1 or len(every) > 2:  # no discount count, or several: not chosen between
        return every, "", None, text
    if len(own) == 1 and len(counts - own) == 1 and min(own) > max(counts):
        raise _terms_error(
            terms, f"the discount's day count ({min(own)}) is longer than the net count ({max(counts)})"
        )
    if len(every) == 2:
        return {max(every)}, rates[0], min(every), text
    return counts, rates[0], min(own), text


class DueDate(BaseModel):
    """A due date and how it follows from the invoice date and the terms."""

    invoice_date: date
    terms: str
    rule: DueRule
    days: int | None
    due_date: date
    derivation: str
    note: str | None = None

    def render(self) -> str:
        text = f"due date: {self.due_date.isoformat()}\nrule: {self.rule}\nworking: {self.derivation}"
        return text + (f"\nnote: {self.note}" if self.note else "")


def due_date(invoice_date: date | str, terms: str) -> DueDate:
    """Due date from the invoice date and the payment terms as printed.

    Understood: "Net 30", "net 30 days", "30 days", "payable within 14 days", "zahlbar innerhalb 14
    Tagen", "2/10 Net 30" (discount noted, due at 30), "30 days EOM" / "EOM + 30" / "end of month + 30"
    (the last day of the invoice month plus N days), "EOM", "due on receipt", a day count from a date
    the terms give ("Net 30 from 2026-10-20", "30 days of invoice date …", "ab Rechnungsdatum (…)"), the
    invoice date itself (the count's start or the receipt date, no other date), a date the terms label
    as the due date ("Due date: 2026-10-20", "payable by …", "remit by …", "on receipt (…)", "zahlbar
    bis 07.10.2026", "échéance le …", "Vervaldatum: …", "Payment deadline: …", "Bitte überweisen Sie den
    Betrag bis zum …", "À régler avant le …": ``DUE_LABEL``), any date beside a day count that gives that very date ("zahlbar
    innerhalb 14 Tagen bis …"; a labelled one beside a count only then) and a discount's deadline ("2% 10 Net 30
    (discount until …)", "2 % Skonto … 10 Tagen (bis 08.10.2026), netto 30 Tage (bis …)": the net date is
    counted). Any other date in the terms (a delivery date, a due date the day count contradicts) is refused: ask a human.
    "2/10, n/30", "2% 10, n 30": "n/30" is the net count ("n 30" only after a discount: "contract N 45" is
    none). A day count runs from the invoice date, also where the terms count from the invoice's issue or
    receipt ("30 days from date of issue", "30 days after receipt (of invoice)", as "due on receipt": the
    receipt date is on no document, and no earlier than the invoice's); one from another event ("30 days
    after delivery", "from receipt of goods", "30 Tage nach Lieferung", "30 jours après livraison":
    ``_count_start``), or in a sentence naming one anywhere ("30 days post delivery", "Net 30 EOM after
    delivery": ``_other_event``), is refused unless the terms give that event's date ("… after delivery on
    2026-10-05"); one from the later of the invoice and such an event ("whichever is later") always.
    Day counts and discounts are read part by part (``_day_counts``): the smaller of a discount's and the
    net count is the discount's, whatever their order; what is said of paying late gives no day count, no
    discount and no due date, though a date labelled as due beside it stays the due date. A rate is a
    discount only where a discount word says so or in the fixed forms "2/10", "2% within 10 days" beside a
    net count; a tax's ("7% VAT") is none; any other rate with a day count is refused (a part payment?).
    Only sentences about paying are read ("Warranty 90 days" is no net count). The month end starts the
    count only where tied to it ("30 days EOM", "EOM + 30"). Cash terms ("COD", "Netto Kasse", "Paiement
    comptant") with no count are due on the invoice date; "Net 15th of following month" / "10th prox" on
    that day of the next month. A date in the terms is never a rate or a count ("Due Date: 10/20/26").
    """
    start = _as_date(invoice_date)
    clean = " ".join(terms.translate(_PRINTED).split())
    if not clean:
        raise APInputError("no terms given; pass the payment terms exactly as printed (e.g. 'Net 30')")
    matches = _date_matches(clean)
    # a date in a clause about paying late is when charges start, unless labelled as the due date
    # ("Please pay by 2026-11-13 to avoid late charges", "Zahlbar bis 13.11.2026 – danach Verzugszinsen")
    late = [
        m
        for _, m in matches
        if _LATE.search(_clause_of(clean, m)) and not DUE_LABEL.search(clean[: m.start()])
    ]
    if late:  # the due date is what the terms say without them, and no penalty starts before it
        cleaned = clean
        for m in reversed(late):
            cleaned = cleaned[: m.start()] + " " + cleaned[m.end() :]
        penalties = sorted({_date_from_match(f, m).value for f, m in matches if m in late})
        try:
            counted = due_date(start, cleaned)
        except APInputError as exc:
            raise APInputError(
                f"the terms {terms!r} name a date for charges on paying late "
                f"({', '.join(map(str, penalties))}), which is no due date, and otherwise: {exc}"
            ) from exc
        if early := [d for d in penalties if d < counted.due_date]:
            raise APInputError(
                f"the terms {terms!r} charge for paying late from {early[0]}, before the due date they "
                f"give ({counted.due_date}: {counted.derivation}); ask a human which date is due"
            )
        said = ", ".join(map(str, penalties))
        return counted.model_copy(
            update={
                "terms": terms,
                "derivation": f"{counted.derivation} (late-payment charges from {said}: no due date)",
            }
        )
    rest = clean
    for m in reversed([m for _, m in matches]):  # a date's digits are no day count
        rest = rest[: m.start()] + " " + rest[m.end() :]
    if shaped := _DATE_SHAPED.search(rest):  # never read as a rate or a day count ("2/10/2")
        raise _terms_error(terms, f"{shaped.group(0)!r} looks like a date but is none this reader reads")
    undated = _N_AFTER_DISCOUNT.sub(lambda m: m.group("discount") + "n/", rest)
    numbers, pct, ddays, rest = _day_counts(terms, undated, bool(matches))
    # the discount's deadline beside a net count ("… 10 Tagen (bis …), netto 30") is no due date
    if ddays is not None and numbers:
        matches = [
            (f, m) for f, m in matches if _date_from_match(f, m).value != start + timedelta(days=ddays)
        ]
    # the invoice date printed in the terms ("30 days of invoice date 14.10.2026", "due on receipt
    # (14.10.2026)") is the count's start or the receipt date, no other date: left out, unless it is
    # all the terms give
    others = [(fmt, m) for fmt, m in matches if _date_from_match(fmt, m).value != start]
    if others or numbers or _month_end(rest, numbers) or _ON_RECEIPT.search(clean):
        matches = others
    dates = [_date_from_match(fmt, m) for fmt, m in matches]
    if len({d.value for d in dates}) > 1:
        distinct = sorted({d.value for d in dates})
        raise APInputError(
            f"the terms {terms!r} name several dates ({', '.join(map(str, distinct))}); "
            "pass the one printed as the due date"
        )

    base, dated = start, ""  # what a day count runs from, and the event the terms date for it
    if dates:
        # a date is the due date only where the terms label it so and give no day count to count
        # instead; the start of a day count only where they say the count runs from it ("from …")
        when, before = dates[0].value, clean[: matches[0][1].start()]
        clause = re.split(r"[,;()\[\]]", before)[-1]
        if numbers and (_COUNT_FROM.search(before) or (dated := _counts_from_its_date(before))):
            _check_count_start(terms, rest, dated)  # no event but the one dated, no "whichever is later"
            if _LATE.search(_clause_of(clean, matches[0][1], _SENTENCE_BREAK)):
                raise APInputError(
                    f"the terms {terms!r} count from {when}, and speak of paying late in the same "
                    "sentence: the date may be when charges start, not where the count begins; ask a human"
                )
            base = when
        elif (
            not numbers
            and not _month_end(rest, numbers)
            and DUE_LABEL.search(before)
            and not _DISCOUNT_CLAUSE.search(clause)
        ):
            if when < start:
                raise APInputError(
                    f"the date in the terms ({when}) is before the invoice date ({start}); "
                    "check which date is the due date and ask a human if unsure"
                )
            return DueDate(
                invoice_date=start,
                terms=terms,
                rule="explicit_date",
                days=(when - start).days,
                due_date=when,
                derivation=f"due date printed in the terms: {when} ({(when - start).days} days after {start})",
            )
        elif numbers and _DISCOUNT_CLAUSE.search(clause):
            pass  # the discount's deadline ("2% 10 Net 30 (discount until …)"): the due date is counted
        elif numbers:
            # a date beside a day count ("Net 30, due 2026-11-13", "zahlbar innerhalb 14 Tagen bis …"):
            # taken when the count gives that very date, never chosen between when they differ
            _check_count_start(terms, rest)
            counted = due_date(start, undated)
            if counted.due_date == when:
                return counted.model_copy(
                    update={
                        "terms": terms,
                        "derivation": f"{counted.derivation}, the due date the terms print",
                    }
                )
            if DUE_LABEL.search(before):
                raise APInputError(
                    f"the terms {terms!r} label {when} as the due date, but their day count gives "
                    f"{counted.due_date} ({counted.derivation}): ask a human which one is due"
                )
            raise APInputError(
                f"the terms {terms!r} give a day count ({', '.join(map(str, sorted(numbers)))}) and a date "
                f"({when}) they do not say the count runs from (as in 'from {when}'): the date may be a "
                "discount deadline, a delivery date or the due date. Pass the due date the document prints "
                "as such, or ask a human"
            )
        else:
            raise APInputError(
                f"the terms {terms!r} give a date ({when}) they do not label as the due date (as in 'due …', "
                "'payable by …', 'zahlbar bis …'): the date may be a discount deadline, a delivery date "
                "or the due date. Pass the due date the document prints as such, or ask a human"
            )

    if base == start:  # a count from another event ("30 days after delivery") with no date for it
        _check_count_start(terms, rest)
    cash = None if numbers or dates else _PAY_NOW.search(clean)
    if _ON_RECEIPT.search(clean) or cash:
        return DueDate(
            invoice_date=start,
            terms=terms,
            rule="on_receipt",
            days=0,
            due_date=start,
            derivation=f"due on receipt → the invoice date {start}"
            if _ON_RECEIPT.search(clean) or cash is None
            else f"cash terms ({cash.group(0)!r}): due at once, as on receipt → the invoice date {start}",
        )

    note = None
    if ddays is not None:
        note = (
            f"early-payment discount: {pct}% if paid within {ddays} days "
            f"(by {base + timedelta(days=ddays)}); the due date below is the net date"
        )
    if next_day := _NEXT_MONTH_DAY.search(clean):
        if numbers or ddays is not None or base != start:
            raise _terms_error(terms, f"{next_day.group(0)!r} and a day count besides: not chosen between")
        next_year, next_month = (start.year + 1, 1) if start.month == 12 else (start.year, start.month + 1)
        day = int(next_day.group("d"))
        if not 1 <= day <= calendar.monthrange(next_year, next_month)[1]:
            raise _terms_error(
                terms, f"{next_day.group(0)!r}: the month after the invoice's has no day {day}"
            )
        due = date(next_year, next_month, day)
        return DueDate(
            invoice_date=start,
            terms=terms,
            rule="day_of_next_month",
            days=(due - start).days,
            due_date=due,
            derivation=f"day {day} of the month after the invoice month ({start:%Y-%m}) = {due}",
        )
    if _month_end(rest, numbers):
        if len(numbers) > 1:
            raise _terms_error(terms, f"several day counts ({sorted(numbers)})")
        days = numbers.pop() if numbers else 0
        month_end = base.replace(day=calendar.monthrange(base.year, base.month)[1])
        due = month_end + timedelta(days=days)
        month = (
            "the invoice month" if base == start else f"the month of {base} (the date the terms count from)"
        )
        return DueDate(
            invoice_date=start,
            terms=terms,
            rule="end_of_month_plus_days",
            days=days,
            due_date=due,
            derivation=f"end of {month} {month_end} + {days} days = {due}",
            note=note,
        )
    if not numbers and ddays is not None:
        raise _terms_error(
            terms, f"a day count only for the discount ({pct}% within {ddays} days), no net count"
        )
    if not numbers:
        raise _terms_error(terms, "no day count, date or 'on receipt'")
    if len(numbers) > 1:
        raise _terms_error(terms, f"several day counts ({sorted(numbers)})")
    days = numbers.pop()
    if days > 366:
        raise _terms_error(terms, f"{days} days is not a plausible payment term")
    due = base + timedelta(days=days)
    return DueDate(
        invoice_date=start,
        terms=terms,
        rule="net_days",
        days=days,
        due_date=due,
        derivation=f"{base}{'' if base == start else ' (the date the terms count from)'} + {days} days = {due}",
        note=note,
    )


def _check_count_start(terms: str, read: str, dated: str = "") -> None:
    """Refuse terms whose day count runs, or may run, from another event than the invoice: one named
    right after the count (``_count_start``) or anywhere in its sentence (``_other_event``), unless the
    terms give its date (``dated``: the count and the event they date, ``_counts_from_its_date``); and
    a count from the later or earlier of the invoice and such an event (``_WHICHEVER``), dated or not.
    The event's date is not the invoice's: a due date counted from the invoice date would be made up."""
    whichever = _WHICHEVER.search(read)
    if dated and not whichever and (count := _DAY_NUMBER.match(dated)):
        read = read.replace(dated, count.group(0), 1)  # the event dated is the count's start
    event = _other_event(read)
    if event and whichever:
        raise _terms_error(
            terms,
            f"the day count runs from the earlier or later of the invoice and {event!r} "
            f"({whichever.group(0)!r}): not computed",
        )
    if other := _count_start(read):
        raise _terms_error(
            terms,
            f"{other!r} counts from another event than the invoice (its date or its receipt), and the "
            "terms give no date for it",
        )
    if event:
        raise _terms_error(
            terms,
            f"{event!r} in the sentence of the day count: it may count from another event than the "
            "invoice (its date or its receipt), and the terms give no date for it",
        )


def _terms_error(terms: str, why: str) -> APInputError:
    return APInputError(
        f"payment terms not understood: {terms!r} ({why}). Understood forms: 'Net 30', '30 days', "
        "'payable within 14 days', '30 days EOM', 'due on receipt', or an explicit due date. "
        "If the document prints a due date, pass that; otherwise ask a human"
    )


# ---------------------------------------------------------------------------------- comparisons

Relation = Literal["equal", "a_greater", "b_greater"]


class Comparison(BaseModel):
    """Two amounts or two dates compared. For dates "greater" means later; difference is a − b."""

    kind: Literal["amount", "date"]
    a: str
    b: str
    relation: Relation
    difference: str
    derivation: str

    def render(self) -> str:
        word = {"equal": "equal", "a_greater": "a is larger", "b_greater": "b is larger"}[self.relation]
        if self.kind == "date":
            word = {"equal": "same date", "a_greater": "a is later", "b_greater": "b is later"}[self.relation]
        return f"{self.kind}s: a = {self.a}, b = {self.b}\nresult: {word}\nworking: {self.derivation}"


def compare(a: str | Decimal | date, b: str | Decimal | date) -> Comparison:
    """Compare two amounts (any format, same currency) or two dates (any format)."""
    a_date, b_date = _maybe_date(a), _maybe_date(b)
    if a_date is not None and b_date is not None:
        days = (a_date - b_date).days
        relation: Relation = "equal" if days == 0 else ("a_greater" if days > 0 else "b_greater")
        return Comparison(
            kind="date",
            a=a_date.isoformat(),
            b=b_date.isoformat(),
            relation=relation,
            difference=f"{days} days",
            derivation=f"{a_date} − {b_date} = {days} days",
        )
    if (a_date is None) != (b_date is None):
        raise APInputError(f"cannot compare a date with an amount: {a!r} vs {b!r}")
    pa, pb = _as_amount(a), _as_amount(b)
    # the currencies both may be in ("$5.00" and "CAD 5.00": CAD); either's where the other names none
    both = [c for c in pa.currencies if c in pb.currencies or not pb.currencies] or list(pb.currencies)
    if pa.currencies and pb.currencies and not set(pa.currencies) & set(pb.currencies):
        raise APInputError(
            f"cannot compare amounts in different currencies ({pa.currency} vs {pb.currency}) "
            "without an exchange rate"
        )
    diff = pa.value - pb.value
    relation = "equal" if diff == 0 else ("a_greater" if diff > 0 else "b_greater")
    currency = both[0] if both else None
    suffix = f" {currency}" if currency else ""
    places = max(2, -int(pa.value.as_tuple().exponent), -int(pb.value.as_tuple().exponent))
    return Comparison(
        kind="amount",
        a=pa.plain + (f" {currency}" if pa.currency else ""),
        b=pb.plain + (f" {currency}" if pb.currency else ""),
        relation=relation,
        difference=plain_amount(diff, places) + suffix,
        derivation=f"{pa.plain} − {pb.plain} = {plain_amount(diff, places)}{suffix}",
    )


def _maybe_date(value: str | Decimal | date) -> date | None:
    if isinstance(value, date):
        return value
    if isinstance(value, Decimal):
        return None
    found = find_dates(value)
    if not found:
        return None
    if len(found) > 1:
        raise APInputError(f"more than one date in {value!r}; pass a single date")
    remainder = value.replace(found[0].text, "").strip(" ,.:;")
    if remainder and re.search(r"\d", remainder):
        raise APInputError(f"cannot tell whether {value!r} is a date or an amount; pass just one value")
    return found[0].value


def _as_amount(value: str | Decimal | date) -> ParsedAmount:
    if isinstance(value, Decimal):
        return ParsedAmount(
            text=str(value),
            value=value,
            currency=None,
            format="plain",
            plain=plain_amount(value),
            derivation="",
        )
    return parse_amount(str(value))


# ----------------------------------------------------------------------------- tool-facing forms


def parse_amount_result(text: str) -> ToolResult:
    try:
        return ToolResult.success(parse_amount(text))
    except APInputError as exc:
        return ToolResult.failure(str(exc))


def due_date_result(invoice_date: str, terms: str) -> ToolResult:
    try:
        return ToolResult.success(due_date(invoice_date, terms))
    except APInputError as exc:
        return ToolResult.failure(str(exc))


def compare_result(a: str, b: str) -> ToolResult:
    try:
        return ToolResult.success(compare(a, b))
    except APInputError as exc:
        return ToolResult.failure(str(exc))
