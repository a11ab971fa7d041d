"""Check digits of identifiers OCR reads (IBAN, VAT ids), used to choose between readings.

OCR confuses look-alike characters in identifiers (``O``/``0``, ``S``/``5``, ``I``/``l``/``1``,
``B``/``8``, ``Z``/``2``, ``G``/``6``). Where an identifier has a check digit, :func:`check` tries
the readings those confusions allow, constrained by the identifier's format (an IBAN's check digits
and a Dutch BBAN's bank code have fixed letters and digits), and says which one the checksum accepts:

    check("NL9I ABNA O417 1643 00")  # Checked(kind="IBAN", value="NL91ABNA0417164300", status="corrected")

``status`` is ``ok`` (the reading as OCR gave it passes), ``corrected`` (exactly one other reading
passes), ``ambiguous`` (several do) or ``failed`` (none does): a value no reading satisfies.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable
from typing import Literal

from pydantic import BaseModel

Status = Literal["ok", "corrected", "ambiguous", "failed"]

# what a look-alike character may really be, as a digit or as a letter
AS_DIGIT = {
    "O": "0",
    "Q": "0",
    "D": "0",
    "I": "1",
    "L": "1",
    "T": "1",
    "Z": "2",
    "S": "5",
    "G": "6",
    "B": "8",
}
AS_LETTER = {"0": "O", "1": "I", "2": "Z", "5": "S", "6": "G", "8": "B"}
MAX_READINGS = 512  # readings tried per identifier; more ambiguous characters than this is "failed"

# IBAN: length and BBAN format per country (n digits, a letters, c either), from the IBAN registry
IBAN_FORMATS = {
    "AT": "16n", "BE": "12n", "CH": "5n12c", "CZ": "20n", "DE": "18n", "DK": "14n", "ES": "20n",
    "FI": "14n", "FR": "10n11c2n", "GB": "4a14n", "IE": "4a14n", "IT": "1a10n12c", "LI": "5n12c",
    "LU": "3n13c", "NL": "4a10n", "NO": "11n", "PL": "24n", "PT": "21n", "RO": "4a16c", "SE": "20n",
    "SK": "20n", "HU": "24n", "GR": "7n16c", "HR": "17n", "SI": "15n", "BG": "4a6n8c", "EE": "16n",
    "LV": "4a13c", "LT": "16n", "IS": "22n", "MT": "4a5n18c", "CY": "8n16c", "SA": "2n18c",
}  # fmt: skip
IBAN_LIKE = re.compile(r"(?<![A-Za-z0-9])[A-Z]{2}[0-9OoIlSBZ]{2}(?:[ ]?[A-Za-z0-9]{1,4}){3,8}(?![A-Za-z0-9])")
VAT_LIKE = re.compile(r"(?<![A-Za-z0-9])(?:DE|NL|BE|AT)[ ]?[A-Z0-9][A-Z0-9 .]{7,13}[A-Z0-9](?![A-Za-z0-9])")


class Checked(BaseModel):
    kind: str  # "IBAN", "VAT id"
    value: str  # the reading chosen (as read when none passes), without spaces
    read_as: str  # what OCR read, without spaces
    status: Status

    def note(self) -> str:
        return {
            "ok": f"{self.kind} checksum ok",
            "corrected": f"{self.kind} checksum chose this reading of {self.read_as!r}",
            "ambiguous": f"several readings pass the {self.kind} checksum",
            "failed": f"fails the {self.kind} checksum: no reading of it is valid",
        }[self.status]


def find_identifiers(line: str) -> list[tuple[int, int, Checked]]:
    """(start, end, result) for each IBAN- or VAT-id-shaped string in a line of OCR text."""
    found: list[tuple[int, int, Checked]] = []
    for pattern, kind in ((IBAN_LIKE, "IBAN"), (VAT_LIKE, "VAT id")):
        for m in pattern.finditer(line):
            if any(m.start() < end and start < m.end() for start, end, _ in found):
                continue
            pieces = m.group(0).rstrip(" .").split(" ")
            best: tuple[int, int, Checked] | None = None
            for count in range(len(pieces), 0, -1):  # 'NL91 ABNA 0417 1643 00 BIC' is an IBAN and a word
                text = " ".join(pieces[:count])
                result = check(text, kind)
                if result is not None and (
                    best is None or PREFERENCE[result.status] < PREFERENCE[best[2].status]
                ):
                    best = (m.start(), m.start() + len(text), result)
            if best is not None:
                found.append(best)
    return found


def check(text: str, kind: str = "IBAN") -> Checked | None:
    """The checksum's verdict on an identifier as OCR read it, or None when it is not one of ``kind``."""
    raw = re.sub(r"[ .]", "", text).upper()
    slots = _iban_slots(raw) if kind == "IBAN" else _vat_slots(raw)
    valid: Callable[[str], bool] = iban_valid if kind == "IBAN" else vat_valid
    if sum(ch.isdigit() for ch in raw) < 6:  # 'DEUTSCHLAND' is no VAT id
        return None
    if slots is None:
        return _misfit_iban(raw) if kind == "IBAN" else None
    if valid(raw):
        return Checked(kind=kind, value=raw, read_as=raw, status="ok")
    readings = _readings(raw, slots)
    if readings is None:
        return Checked(kind=kind, value=raw, read_as=raw, status="failed")
    passing = [r for r in readings if r != raw and valid(r)]
    if len(passing) == 1:
        return Checked(kind=kind, value=passing[0], read_as=raw, status="corrected")
    return Checked(kind=kind, value=raw, read_as=raw, status="ambiguous" if passing else "failed")


PREFERENCE = {"ok": 0, "corrected": 1, "ambiguous": 2, "failed": 3}


def _misfit_iban(raw: str) -> Checked | None:
    """An IBAN of a known country one or two characters too long or short: OCR added a character
    (``NL911 ABNA …``) — the one deletion the checksum accepts is taken — or lost one."""
    fmt = IBAN_FORMATS.get(raw[:2])
    if fmt is None:
        return None
    extra = len(raw) - 4 - _format_length(fmt)
    if abs(extra) > 2 or extra == 0:
        return None
    passing: set[str] = set()
    if extra == 1:
        for cut in {raw[:i] + raw[i + 1 :] for i in range(2, len(raw))}:
            slots = _iban_slots(cut)
            readings = _readings(cut, slots) if slots else None
            passing.update(r for r in readings or [] if iban_valid(r))
    if len(passing) == 1:
        return Checked(kind="IBAN", value=passing.pop(), read_as=raw, status="corrected")
    return Checked(kind="IBAN", value=raw, read_as=raw, status="ambiguous" if passing else "failed")


def iban_valid(iban: str) -> bool:
    """ISO 13616 mod-97 (and the country's length, where known)."""
    if not re.fullmatch(r"[A-Z]{2}[0-9]{2}[A-Z0-9]{11,30}", iban):
        return False
    fmt = IBAN_FORMATS.get(iban[:2])
    if fmt is not None and len(iban) != 4 + _format_length(fmt):
        return False
    digits = "".join(str(int(ch, 36)) for ch in iban[4:] + iban[:4])
    return int(digits) % 97 == 1


def vat_valid(vat: str) -> bool:
    """Check digits of German, Dutch, Belgian and Austrian VAT ids."""
    country, body = vat[:2], vat[2:]
    if country == "DE" and re.fullmatch(r"[1-9]\d{8}", body):
        product = 10
        for ch in body[:8]:
            total = (int(ch) + product) % 10 or 10
            product = (2 * total) % 11
        return (11 - product) % 10 == int(body[8])
    if country == "NL" and re.fullmatch(r"\d{9}B\d{2}", body):
        weighted = sum(int(d) * w for d, w in zip(body[:8], range(9, 1, -1), strict=True))
        if weighted % 11 % 10 == int(body[8]) and weighted % 11 != 10:
            return True
        return int("".join(str(int(ch, 36)) for ch in "NL" + body)) % 97 == 1  # sole traders since 2020
    if country == "BE" and re.fullmatch(r"[01]\d{9}", body):
        return 97 - int(body[:8]) % 97 == int(body[8:])
    if country == "AT" and re.fullmatch(r"U\d{8}", body):
        digits = [int(d) for d in body[1:]]
        total = sum(d if i % 2 == 0 else d * 2 // 10 + d * 2 % 10 for i, d in enumerate(digits[:7]))
        return (96 - total) % 10 == digits[7]
    return False


def _format_length(fmt: str) -> int:
    return sum(int(n) for n in re.findall(r"\d+", fmt))


def _iban_slots(raw: str) -> str | None:
    """What each position must be (n digit, a letter, c either), or None when it is no IBAN."""
    country = raw[:2]
    if not country.isalpha():
        return None
    fmt = IBAN_FORMATS.get(country)
    if fmt is None:  # a country whose format we do not know: not taken for an IBAN
        return None
    slots = "aann" + "".join(kind * int(n) for n, kind in re.findall(r"(\d+)([nac])", fmt))
    return slots if len(slots) == len(raw) else None


def _vat_slots(raw: str) -> str | None:
    shapes = {"DE": "aannnnnnnnn", "NL": "aannnnnnnnnann", "BE": "aannnnnnnnnn", "AT": "aaannnnnnnn"}
    slots = shapes.get(raw[:2])
    return slots if slots is not None and len(slots) == len(raw) else None


def _readings(raw: str, slots: str) -> list[str] | None:
    """Every reading the look-alike characters allow in their slots, or None when there are too many
    (or a character fits no reading of its slot)."""
    choices: list[list[str]] = []
    for ch, slot in zip(raw, slots, strict=True):
        options = [ch]
        if slot == "n" and not ch.isdigit():
            options = [AS_DIGIT[ch]] if ch in AS_DIGIT else []
        elif slot == "a" and not ch.isalpha():
            options = [AS_LETTER[ch]] if ch in AS_LETTER else []
        elif slot == "c" and ch in AS_DIGIT:  # a letter where either may stand: perhaps a digit
            options = [ch, AS_DIGIT[ch]]
        if not options:
            return None
        choices.append(options)
    count = 1
    for options in choices:
        count *= len(options)
    if count > MAX_READINGS:
        return None
    return ["".join(r) for r in itertools.product(*choices)]


def grouped(value: str) -> str:
    """An IBAN in its printed form: groups of four."""
    return " ".join(value[i : i + 4] for i in range(0, len(value), 4))
